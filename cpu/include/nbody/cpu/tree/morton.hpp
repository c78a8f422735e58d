#pragma once
// Morton (Z-order) keys of bodies in a cube. The key arithmetic is the suite's, shared with the GPU
// tree (nbody/morton_keys.hpp); here are the host's bounding cube of a body set and the key of a
// body.
#include <algorithm>
#include <array>
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

// The lowest and highest coordinates of a set of bodies, in float64 (TreeFloat64).
struct Extremes {
  TreeFloat64 low[3];
  TreeFloat64 high[3];
};

// The extremes of `bodies` (at least one). Compared in T: converting to float64 keeps every value
// and its order, so the extremes are those of the converted coordinates, with one conversion each
// at the end rather than three a body.
template <class T>
Extremes extremes_of(std::span<const Body<T>> bodies) {
  T low[3] = {bodies[0].x, bodies[0].y, bodies[0].z};
  T high[3] = {bodies[0].x, bodies[0].y, bodies[0].z};
  for (const Body<T>& b : bodies) {
    const T p[3] = {b.x, b.y, b.z};
    for (int axis = 0; axis < 3; ++axis) {
      low[axis] = std::min(low[axis], p[axis]);
      high[axis] = std::max(high[axis], p[axis]);
    }
  }
  return {{low[0], low[1], low[2]}, {high[0], high[1], high[2]}};
}

// The extremes of two sets together: exact, so any split of a set gives its own extremes.
inline Extremes merge_extremes(const Extremes& a, const Extremes& b) {
  Extremes e = a;
  for (int axis = 0; axis < 3; ++axis) {
    e.low[axis] = std::min(e.low[axis], b.low[axis]);
    e.high[axis] = std::max(e.high[axis], b.high[axis]);
  }
  return e;
}

// The smallest axis-aligned cube, anchored at the bodies' lowest coordinates, that holds every
// body, from their extremes. Computed in float64: every float32 coordinate, and the difference of
// two of them at the scales of an N-body set, is exact there, so the cube of a float32 set contains
// every body exactly; in float32, min + size can round below the largest coordinate and leave the
// outermost bodies outside the cube their keys describe.
inline BoundingCube cube_around(const Extremes& e) {
  const TreeFloat64 extent =
      std::max({e.high[0] - e.low[0], e.high[1] - e.low[1], e.high[2] - e.low[2]});
  // All bodies at one point (or one body): any positive side puts them all in cell 0.
  return {e.low[0], e.low[1], e.low[2], extent > 0 ? extent : 1};
}

template <class T>
BoundingCube bounding_cube(std::span<const Body<T>> bodies) {
  if (bodies.empty()) return {};
  return cube_around(extremes_of(bodies));
}

// spread_bits_by_three of every 7-bit value.
inline constexpr std::array<std::uint64_t, 128> kSpreadSevenBits = [] {
  std::array<std::uint64_t, 128> spread{};
  for (std::uint32_t bits = 0; bits < 128; ++bits) spread[bits] = spread_bits_by_three(bits);
  return spread;
}();

// spread_bits_by_three by three lookups of 7 bits, in place of five rounds of shifts and masks:
// the same bits (tree_test checks every 21-bit index) in a third of the instructions, which the
// build's loop over every body's key was spending most of its time on.
inline std::uint64_t spread_bits_by_three_looked_up(std::uint32_t index) {
  return kSpreadSevenBits[index & 127] | (kSpreadSevenBits[(index >> 7) & 127] << 21) |
         (kSpreadSevenBits[(index >> 14) & 127] << 42);
}

// morton_key_of's key, its bits spread by spread_bits_by_three_looked_up.
template <class T>
std::uint64_t morton_key(const Body<T>& body, const BoundingCube& cube) {
  return morton_key_of(body.x, body.y, body.z, cube,
                       [](std::uint32_t index) { return spread_bits_by_three_looked_up(index); });
}

}  // namespace nbody::cpu::tree
