#pragma once
// Morton (Z-order) keys of bodies in a cube: 21 bits per axis, interleaved into 63 bits, so that
// sorting by key puts every octree cell's bodies in one contiguous range (the cell of level L is
// the set of keys sharing their top 3 L bits).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>

#include "nbody/bodies.hpp"
#include "nbody/cpu/tree/precision.hpp"

namespace nbody::cpu::tree {

inline constexpr int kMortonBitsPerAxis = 21;
// The deepest level of the octree: a cell there has one key, so it cannot be split.
inline constexpr int kDeepestLevel = kMortonBitsPerAxis;
inline constexpr std::uint32_t kMortonCellsPerAxis = std::uint32_t{1} << kMortonBitsPerAxis;

// The cube the keys quantize: its lowest corner and its side.
struct BoundingCube {
  TreeFloat64 x = 0, y = 0, z = 0;
  TreeFloat64 size = 1;
};

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

// The cell index along one axis, 0 .. 2^21 - 1. A body on the cube's upper face lands in the last
// cell (clamped), which is closed on that side; the clamp also keeps a rounding at the faces from
// producing an index outside the 21 bits.
inline std::uint32_t morton_cell_index(TreeFloat64 coordinate, TreeFloat64 low,
                                       TreeFloat64 cells_per_length) {
  const TreeFloat64 scaled = std::floor((coordinate - low) * cells_per_length);
  const TreeFloat64 clamped =
      std::clamp(scaled, TreeFloat64{0}, static_cast<TreeFloat64>(kMortonCellsPerAxis - 1));
  return static_cast<std::uint32_t>(clamped);
}

// The 21 low bits of `index` spread to every third bit of a 63-bit word (bit k to bit 3 k).
constexpr std::uint64_t spread_bits_by_three(std::uint32_t index) {
  std::uint64_t v = index & (kMortonCellsPerAxis - 1);
  v = (v | (v << 32)) & 0x1f00000000ffffULL;
  v = (v | (v << 16)) & 0x1f0000ff0000ffULL;
  v = (v | (v << 8)) & 0x100f00f00f00f00fULL;
  v = (v | (v << 4)) & 0x10c30c30c30c30c3ULL;
  v = (v | (v << 2)) & 0x1249249249249249ULL;
  return v;
}

// The inverse of spread_bits_by_three: every third bit of `bits` (bit 3 k to bit k).
constexpr std::uint32_t compact_bits_by_three(std::uint64_t bits) {
  std::uint64_t v = bits & 0x1249249249249249ULL;
  v = (v | (v >> 2)) & 0x10c30c30c30c30c3ULL;
  v = (v | (v >> 4)) & 0x100f00f00f00f00fULL;
  v = (v | (v >> 8)) & 0x1f0000ff0000ffULL;
  v = (v | (v >> 16)) & 0x1f00000000ffffULL;
  v = (v | (v >> 32)) & 0x1fffffULL;
  return static_cast<std::uint32_t>(v);
}

// x in the highest bit of each triple, then y, then z: the octant of a cell's child is the next
// three bits below the cell's common prefix.
constexpr std::uint64_t interleave_morton(std::uint32_t ix, std::uint32_t iy, std::uint32_t iz) {
  return (spread_bits_by_three(ix) << 2) | (spread_bits_by_three(iy) << 1) |
         spread_bits_by_three(iz);
}

template <class T>
std::uint64_t morton_key(const Body<T>& body, const BoundingCube& cube) {
  const TreeFloat64 cells_per_length = static_cast<TreeFloat64>(kMortonCellsPerAxis) / cube.size;
  return interleave_morton(morton_cell_index(body.x, cube.x, cells_per_length),
                           morton_cell_index(body.y, cube.y, cells_per_length),
                           morton_cell_index(body.z, cube.z, cells_per_length));
}

// The cube of the level-`level` cell (the root is level 0) that holds the keys sharing `key`'s top
// 3 level bits.
inline BoundingCube cell_cube(std::uint64_t key, int level, const BoundingCube& cube) {
  const int dropped = kMortonBitsPerAxis - level;
  const auto corner = [&](std::uint64_t axis_bits, TreeFloat64 low) {
    const std::uint32_t index = (compact_bits_by_three(axis_bits) >> dropped) << dropped;
    return low + static_cast<TreeFloat64>(index) * std::ldexp(cube.size, -kMortonBitsPerAxis);
  };
  return {corner(key >> 2, cube.x), corner(key >> 1, cube.y), corner(key, cube.z),
          std::ldexp(cube.size, -level)};
}

// The octant (0 .. 7) of the child of a level-`level` cell that holds `key`.
constexpr unsigned child_octant(std::uint64_t key, int level) {
  return static_cast<unsigned>(key >> (3 * (kDeepestLevel - 1 - level))) & 7u;
}

}  // namespace nbody::cpu::tree
