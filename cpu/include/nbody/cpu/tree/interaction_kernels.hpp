#pragma once
// The interface of the walk's interaction evaluation, compiled once per ISA in
// cpu/tree/interactions_*.cpp with that ISA's flags and chosen at run time as the all-pairs SIMD
// kernels are (nbody/cpu/simd_kernels.hpp). Only plain pointers, sizes and aggregates without
// member functions cross it: an inline function instantiated both here and in a wider-ISA file
// could be linked from the wrong one and fault on a narrower CPU.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "nbody/bodies.hpp"
#include "nbody/cpu/tree/multipole.hpp"
#include "nbody/cpu/tree/octree_build.hpp"
#include "nbody/isas.hpp"

namespace nbody::cpu::tree {

// Bodies [begin, end) of the sorted order.
struct BodyRange {
  std::uint32_t begin, end;
};

// One group's targets and the interaction lists of its walk.
template <class T>
struct GroupWork {
  const Body<T>* sources;                  // the sorted bodies
  const std::uint32_t* input_index;        // input_index[k]: the input index of sorted body k
  std::uint32_t target_begin, target_end;  // the group's bodies, in the sorted order
  const BodyRange* ranges;                 // the bodies of opened leaves
  std::size_t range_count;
  const std::uint32_t* cells;  // accepted cells, indices into multipoles
  std::size_t cell_count;
  const CellMultipole<T>* multipoles;
  T softening_squared;
  Vec3<T>* accelerations;  // written at each target's input index
};

// Writes the acceleration of every target of `work` from its lists: each target's sum in T, in the
// lists' order (bodies, then cells), with the all-pairs kernels' full-accuracy 1/sqrt in float32
// (rsqrt and a Newton step) and the exact one in float64.
template <class T>
using GroupKernel = void (*)(const GroupWork<T>& work);

// One walk of the tree for a group of targets, as traversal.cpp's walk takes it: an ISA file may
// bring its own, which must accept the same cells and open the same leaves (in any order: a sum
// of the same terms within rounding). The lists are written from the start of `accepted` and
// `ranges`, whose room the caller sizes, as that of `queue`, the walk's own.
struct WalkWork {
  const Cell* cells;
  const CellCriterion* criteria;
  Box group;
  TreeFloat64 theta_squared;
  std::uint32_t* accepted;  // room for every cell of the tree and kWalkSlack more
  BodyRange* ranges;        // room for every leaf of the tree and kWalkSlack more
  std::uint64_t* queue;     // room for every cell of the tree and kWalkSlack more
};

// Entries past its count a walk may write in each array (a vector's worth at a time).
inline constexpr std::size_t kWalkSlack = 16;

struct WalkCounts {
  std::size_t cells;
  std::size_t ranges;
};

using TreeWalk = WalkCounts (*)(const WalkWork& work);

// The arithmetic vector instructions (FMA, add, subtract, multiply, divide, square root, rsqrt:
// what the all-pairs hot-loop census counts) of one term of the group kernels' inner loops as
// compiled: one source body, or one cell, against `lanes` targets. Every batch count (one, two
// or three batches a pass) compiles to the same instructions a term. The walk's bound prices its
// terms at these over the ISA's measured issue rate (docs/perf-notes.md, "Tree codes");
// tests/tree_costs_test.cpp counts them in the built library's disassembly and fails where a
// change of the kernels or of the compiler moved them.
struct TermInstructions {
  int lanes;
  int body_body;
  int body_cell;
};

// One ISA's group kernels, and its walk where it brings one (null: traversal.cpp's). Returned by
// a function of the ISA's own file, called only once the CPU is known to run the ISA.
struct GroupKernels {
  GroupKernel<float> f32;
  GroupKernel<double> f64;
  TreeWalk walk = nullptr;
};

// The instructions of their terms as the ISA's file counted them (GCC 12 at -O3, objdump of
// evaluate_group<T, Arch, ...>): constant data of that file, readable on any CPU.
struct GroupTerms {
  TermInstructions f32, f64;
};

// Defined in cpu/tree/interactions_<id>.cpp for every ISA of the list (nbody/isas.hpp).
#define NBODY_ISA(id, ...)           \
  GroupKernels group_kernels_##id(); \
  extern const GroupTerms group_terms_##id;
#include NBODY_ISAS_INC
#undef NBODY_ISA

// The group kernels of `isa`, which this CPU must run.
GroupKernels group_kernels_for(Isa isa);
// The terms' instructions of the group kernels of `isa`, on any CPU.
const GroupTerms& group_terms_for(Isa isa);

// The terms' instructions of the group kernel of `isa` (as TreeSettings::isa names it, empty: the
// widest this CPU has) in float32 or float64. Throws UsageError as group_kernel does.
TermInstructions term_instructions(std::string_view isa, bool float64);

}  // namespace nbody::cpu::tree
