#pragma once
// The build's sort of the Morton keys and their bodies' indices, by key, stable.
#include <cstdint>
#include <vector>

namespace nbody::cpu::tree {

// The sort's second buffers, kept between builds (BuildScratch holds them).
struct KeySortScratch {
  std::vector<std::uint64_t> keys;
  std::vector<std::uint32_t> index;
  std::vector<std::uint32_t> digit_positions;
};

// Sorts `keys` and `index` together by key, stably (equal keys keep their order, so coincident
// bodies come in the same order on every run), in parallel with oneTBB: one most-significant-digit
// pass over the bits the keys differ in while a range is larger than a core's cache, then each
// range in cache by least-significant-digit passes. The same order as one stable sort by key.
void sort_keys(std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& index,
               KeySortScratch& scratch);

// What the sort must move through memory a body, for the build's bound: its 8-byte key read for
// the bits the keys differ in; one distributing pass (the key read to count, then key and 4-byte
// index read and written); its range's sort in cache (read, and written in order). A range still
// larger than the cache after its first digit is distributed again, which this leaves out.
inline constexpr double kKeySortBytesPerBody = 8 + (8 + 2 * 12) + 2 * 12;

}  // namespace nbody::cpu::tree
