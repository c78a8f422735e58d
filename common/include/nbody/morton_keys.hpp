#pragma once
// Morton (Z-order) keys of bodies in a cube: 21 bits per axis, interleaved into 63 bits, so that
// sorting by key puts every octree cell's bodies in one contiguous range (the cell of level L is
// the set of keys sharing their top 3 L bits). Pure arithmetic, for host and device alike: the
// CPU and the GPU tree codes quantize with these very functions, so that both build the same tree
// from the same bodies.
#include <cmath>
#include <cstdint>

#include "nbody/host_device.hpp"

namespace nbody {

inline constexpr int kMortonBitsPerAxis = 21;
// The deepest level of the octree: a cell there has one key, so it cannot be split.
inline constexpr int kDeepestLevel = kMortonBitsPerAxis;
inline constexpr std::uint32_t kMortonCellsPerAxis = std::uint32_t{1} << kMortonBitsPerAxis;

// The cube the keys quantize: its lowest corner and its side, in float64 (nbody/cpu/tree/
// precision.hpp says why).
struct BoundingCube {
  double x = 0, y = 0, z = 0;
  double size = 1;
};

// The cell index along one axis, 0 .. 2^21 - 1: floor((coordinate - low) cells_per_length). A
// body on the cube's upper face lands in the last cell (clamped), which is closed on that side;
// the clamp also keeps a rounding at the faces from producing an index outside the 21 bits.
// Clamped first, the value is at least 0, where truncation is floor: the same index as floor
// then clamp, without a call to floor (a library call in a baseline x86-64 build). (std::clamp's
// comparisons, spelled out for the device.)
NBODY_HOST_DEVICE inline std::uint32_t morton_cell_index(double coordinate, double low,
                                                         double cells_per_length) {
  const double scaled = (coordinate - low) * cells_per_length;
  const double last = static_cast<double>(kMortonCellsPerAxis - 1);
  const double clamped = scaled < 0.0 ? 0.0 : (last < scaled ? last : scaled);
  return static_cast<std::uint32_t>(clamped);
}

// The 21 low bits of `index` spread to every third bit of a 63-bit word (bit k to bit 3 k).
NBODY_HOST_DEVICE constexpr std::uint64_t spread_bits_by_three(std::uint32_t index) {
  std::uint64_t v = index & (kMortonCellsPerAxis - 1);
  v = (v | (v << 32)) & 0x1f00000000ffffULL;
  v = (v | (v << 16)) & 0x1f0000ff0000ffULL;
  v = (v | (v << 8)) & 0x100f00f00f00f00fULL;
  v = (v | (v << 4)) & 0x10c30c30c30c30c3ULL;
  v = (v | (v << 2)) & 0x1249249249249249ULL;
  return v;
}

// The inverse of spread_bits_by_three: every third bit of `bits` (bit 3 k to bit k).
NBODY_HOST_DEVICE constexpr std::uint32_t compact_bits_by_three(std::uint64_t bits) {
  std::uint64_t v = bits & 0x1249249249249249ULL;
  v = (v | (v >> 2)) & 0x10c30c30c30c30c3ULL;
  v = (v | (v >> 4)) & 0x100f00f00f00f00fULL;
  v = (v | (v >> 8)) & 0x1f0000ff0000ffULL;
  v = (v | (v >> 16)) & 0x1f00000000ffffULL;
  v = (v | (v >> 32)) & 0x1fffffULL;
  return static_cast<std::uint32_t>(v);
}

// spread_bits_by_three as a policy: interleave_morton and morton_key_of take another way to the
// same bits where a device has a faster one (the CPU's build looks them up).
struct ShiftedSpread {
  NBODY_HOST_DEVICE constexpr std::uint64_t operator()(std::uint32_t index) const {
    return spread_bits_by_three(index);
  }
};

// x in the highest bit of each triple, then y, then z: the octant of a cell's child is the next
// three bits below the cell's common prefix.
template <class Spread = ShiftedSpread>
NBODY_HOST_DEVICE constexpr std::uint64_t interleave_morton(std::uint32_t ix, std::uint32_t iy,
                                                            std::uint32_t iz, Spread spread = {}) {
  return (spread(ix) << 2) | (spread(iy) << 1) | spread(iz);
}

// The key of the point (x, y, z) in `cube` (each coordinate exact in float64).
template <class Spread = ShiftedSpread>
NBODY_HOST_DEVICE inline std::uint64_t morton_key_of(double x, double y, double z,
                                                     const BoundingCube& cube, Spread spread = {}) {
  const double cells_per_length = static_cast<double>(kMortonCellsPerAxis) / cube.size;
  return interleave_morton(morton_cell_index(x, cube.x, cells_per_length),
                           morton_cell_index(y, cube.y, cells_per_length),
                           morton_cell_index(z, cube.z, cells_per_length), spread);
}

// The cube of the level-`level` cell (the root is level 0) that holds the keys sharing `key`'s top
// 3 level bits. Its sides are divided by powers of two, which is exact as ldexp is (and rounds as
// ldexp does below the normal range), without ldexp's library call on the host.
NBODY_HOST_DEVICE inline BoundingCube cell_cube(std::uint64_t key, int level,
                                                const BoundingCube& cube) {
  const int dropped = kMortonBitsPerAxis - level;
  const double cell_side = cube.size / static_cast<double>(kMortonCellsPerAxis);
  const auto corner = [&](std::uint64_t axis_bits, double low) {
    const std::uint32_t index = (compact_bits_by_three(axis_bits) >> dropped) << dropped;
    return low + static_cast<double>(index) * cell_side;
  };
  return {corner(key >> 2, cube.x), corner(key >> 1, cube.y), corner(key, cube.z),
          cube.size / static_cast<double>(std::uint32_t{1} << level)};
}

// The octant (0 .. 7) of the child of a level-`level` cell that holds `key`.
NBODY_HOST_DEVICE constexpr unsigned child_octant(std::uint64_t key, int level) {
  return static_cast<unsigned>(key >> (3 * (kDeepestLevel - 1 - level))) & 7u;
}

}  // namespace nbody
