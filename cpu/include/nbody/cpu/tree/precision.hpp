#pragma once
// What the tree code computes in float64 whatever the bodies' precision, in one place, so that a
// report can say it (FAIRNESS.md rule 2 compares float32 with float32: the float64 parts of a
// float32 tree must be named).
//
// - The bounding cube of the Morton keys: the cube of a float32 set must contain every body
//   exactly (nbody/cpu/tree/morton.hpp says why float32 cannot promise that).
// - The cells' moments (mass, centre of mass, quadrupole, and the b_max of the opening criterion),
//   accumulated over up to N bodies: a float32 sum of N masses or of N m x x terms loses about
//   u √N of its value, and the quadrupole of a large cell is a small difference of large sums
//   (the parallel-axis shifts of its children), which float32 would swamp.
// - The opening decision (distances against b_max), so that rounding never accepts a cell that
//   holds the target group's own bodies.
//
// The interactions themselves (body-body and body-cell) and the sums of each target's acceleration
// run in the bodies' precision T: the moments are rounded to T once, after the upward pass.
#include <string_view>

namespace nbody::cpu::tree {

using TreeFloat64 = double;

inline constexpr std::string_view kTreeFloat64Parts =
    "bounding cube of the Morton keys, cell moments (mass, centre of mass, quadrupole, b_max) and "
    "the opening criterion in float64; interactions and acceleration sums in the bodies' precision";

}  // namespace nbody::cpu::tree
