#pragma once
// The octree's cells read from the sorted Morton keys body by body, with no level waiting for the
// one above it (as Karras 2012 reads a radix tree's nodes from the keys): a cell of level L holds
// the keys sharing their top 3 L bits; it exists where its parent holds more than the leaf
// capacity and lies above the deepest level. A cell of more than `capacity` bodies then holds
// `capacity` + 1 consecutive keys that share its prefix, so whether the cell of level L around
// body i splits is read from the windows of capacity + 1 keys around i alone. The tree is the
// level-by-level build's, cell for cell.
#include <cstdint>

#include "nbody/host_device.hpp"
#include "nbody/morton_keys.hpp"

namespace nbody {

inline constexpr int kMortonKeyBits = 3 * kMortonBitsPerAxis;  // 63

// The leading bits two keys share, of the key's 63 (63 where they are equal).
NBODY_HOST_DEVICE inline int shared_key_bits(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t differ = a ^ b;
  if (differ == 0) return kMortonKeyBits;
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(differ)) - (64 - kMortonKeyBits);
#else
  return __builtin_clzll(differ) - (64 - kMortonKeyBits);
#endif
}

// The shallowest level whose cells part two keys: kDeepestLevel + 1 where none does.
NBODY_HOST_DEVICE inline int first_level_apart(std::uint64_t a, std::uint64_t b) {
  return shared_key_bits(a, b) / 3 + 1;
}

// The level from which sorted body i begins a cell: 0 for the first body, else the shallowest
// level whose cells part it from the body before it.
NBODY_HOST_DEVICE inline int first_level_begun(const std::uint64_t* keys, std::uint32_t i) {
  return i == 0 ? 0 : first_level_apart(keys[i - 1], keys[i]);
}

// A leaf's level from the most bits any capacity + 1 consecutive keys around its body share (-1:
// no such window): below the deepest cell that holds such a window whole.
NBODY_HOST_DEVICE inline int leaf_level_of_shared_bits(int shared) {
  if (shared < 0) return 0;
  const int level = shared / 3 + 1;
  return level < kDeepestLevel ? level : kDeepestLevel;
}

// The deepest level at which a cell holds sorted body i (its leaf's level): the cell of level L
// splits where some capacity + 1 consecutive keys around i share its prefix of 3 L bits.
NBODY_HOST_DEVICE inline int leaf_level_of_body(const std::uint64_t* keys, std::uint32_t n,
                                                std::uint32_t i, std::uint32_t capacity) {
  if (n <= capacity) return 0;
  const std::uint32_t first = i >= capacity ? i - capacity : 0;
  const std::uint32_t last = i < n - 1 - capacity ? i : n - 1 - capacity;
  int shared = -1;
  for (std::uint32_t a = first; a <= last; ++a) {
    const int bits = shared_key_bits(keys[a], keys[a + capacity]);
    if (shared < bits) shared = bits;
  }
  return leaf_level_of_shared_bits(shared);
}

// The end of the cell of level `level` that begins at sorted body `begin`: the first body past it
// whose key leaves the cell's prefix, found by doubling steps and then halving them, as a leaf's
// few bodies are found in a few steps.
NBODY_HOST_DEVICE inline std::uint32_t cell_end(const std::uint64_t* keys, std::uint32_t n,
                                                std::uint32_t begin, int level) {
  if (level == 0) return n;
  const int dropped = kMortonKeyBits - 3 * level;
  const std::uint64_t prefix = keys[begin] >> dropped;
  std::uint32_t inside = begin;  // the last body known to be inside
  std::uint32_t step = 1;
  std::uint32_t outside = n;  // the first body known to be outside (or n)
  while (inside + step < n) {
    if ((keys[inside + step] >> dropped) != prefix) {
      outside = inside + step;
      break;
    }
    inside += step;
    step *= 2;
  }
  while (outside - inside > 1) {
    const std::uint32_t middle = inside + (outside - inside) / 2;
    if ((keys[middle] >> dropped) == prefix) {
      inside = middle;
    } else {
      outside = middle;
    }
  }
  return outside;
}

}  // namespace nbody
