#pragma once
// Morton (Z-order) keys of bodies in a cube. The key arithmetic is the suite's, shared with the GPU
// tree (nbody/morton_keys.hpp); here are the host's bounding cube of a body set and the key of a
// body.
#include <algorithm>
#include <cstdint>
#include <span>

#include "nbody/bodies.hpp"
#include "nbody/cpu/tree/precision.hpp"
#include "nbody/morton_keys.hpp"

namespace nbody::cpu::tree {

using nbody::BoundingCube;
using nbody::cell_cube;
using nbody::child_octant;
using nbody::compact_bits_by_three;
using nbody::interleave_morton;
using nbody::kDeepestLevel;
using nbody::kMortonBitsPerAxis;
using nbody::kMortonCellsPerAxis;
using nbody::morton_cell_index;
using nbody::spread_bits_by_three;

// The smallest axis-aligned cube, anchored at the bodies' lowest coordinates, that holds every
// body. Computed in float64 (TreeFloat64): every float32 coordinate, and the difference of two of
// them at the scales of an N-body set, is exact there, so the cube of a float32 set contains every
// body exactly; in float32, min + size can round below the largest coordinate and leave the
// outermost bodies outside the cube their keys describe.
template <class T>
BoundingCube bounding_cube(std::span<const Body<T>> bodies) {
  if (bodies.empty()) return {};
  TreeFloat64 low[3] = {bodies[0].x, bodies[0].y, bodies[0].z};
  TreeFloat64 high[3] = {low[0], low[1], low[2]};
  for (const Body<T>& b : bodies) {
    const TreeFloat64 p[3] = {b.x, b.y, b.z};
    for (int axis = 0; axis < 3; ++axis) {
      low[axis] = std::min(low[axis], p[axis]);
      high[axis] = std::max(high[axis], p[axis]);
    }
  }
  const TreeFloat64 extent = std::max({high[0] - low[0], high[1] - low[1], high[2] - low[2]});
  // All bodies at one point (or one body): any positive side puts them all in cell 0.
  return {low[0], low[1], low[2], extent > 0 ? extent : 1};
}

template <class T>
std::uint64_t morton_key(const Body<T>& body, const BoundingCube& cube) {
  return morton_key_of(body.x, body.y, body.z, cube);
}

}  // namespace nbody::cpu::tree
