#pragma once
// The moments of an octree cell and the interaction of a target body with a cell accepted by the
// opening criterion. The arithmetic is the suite's, shared with the GPU tree
// (nbody/multipole_physics.hpp); here are its span forms for the CPU build.
#include <span>

#include "nbody/bodies.hpp"
#include "nbody/cpu/tree/morton.hpp"
#include "nbody/cpu/tree/precision.hpp"
#include "nbody/multipole_physics.hpp"

namespace nbody::cpu::tree {

using nbody::accumulate_cell;
using nbody::Box;
using nbody::box_of;
using nbody::CellMoments;
using nbody::CellMultipole;
using nbody::centre_of_mass;
using nbody::distance;
using nbody::farthest_corner_distance;
using nbody::round_multipole;
using nbody::TracelessQuadrupole;
using nbody::widen_box;

// The moments of one leaf (at least one body) in the cube `cube`.
template <class T>
CellMoments moments_of_bodies(std::span<const Body<T>> bodies, const BoundingCube& cube) {
  return nbody::moments_of_bodies<T>(bodies.data(), bodies.size(), box_of(cube));
}

// The moments of a cell (in the cube `cube`) from its children's (at least one).
inline CellMoments moments_of_children(std::span<const CellMoments> children,
                                       const BoundingCube& cube) {
  return nbody::moments_of_children(children.data(), children.size(), box_of(cube));
}

}  // namespace nbody::cpu::tree
