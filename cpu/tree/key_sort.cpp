// The build's key sort: most-significant-digit passes while a range is larger than a core's
// cache, least-significant-digit passes within it. The keys and indices are 12 bytes a body; a
// least-significant-digit sort of all of them reads and writes every one 8 times through memory,
// where this reads and writes each about twice (once for the first digit, once for its range's
// sort in cache, more only for a range still larger after its first digit), and the ranges are
// sorted in parallel.
#include "nbody/cpu/tree/key_sort.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstring>
#include <utility>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/task_arena.h>

namespace nbody::cpu::tree {
namespace {

constexpr int kDigitBits = 8;
constexpr std::size_t kDigits = std::size_t{1} << kDigitBits;
constexpr int kKeyBits = 64;
// A range of this many keys and indices (384 KB) is sorted within a core's cache.
constexpr std::size_t kCachedKeys = std::size_t{1} << 15;
// A range of this many is sorted by insertion: fewer steps than counting 256 digits a pass.
constexpr std::size_t kInsertedKeys = 32;
// The parallel pass's blocks: each counts and scatters its own part.
constexpr std::size_t kSmallestBlock = 16384;

// A range's keys and indices, in either of the two buffers.
struct KeyRange {
  std::uint64_t* keys;
  std::uint32_t* index;
  KeyRange at(std::size_t offset) const { return {keys + offset, index + offset}; }
  bool operator==(const KeyRange&) const = default;
};

std::size_t digit_of(std::uint64_t key, int shift) {
  return static_cast<std::size_t>(key >> shift) & (kDigits - 1);
}

void copy_range(KeyRange from, KeyRange to, std::size_t n) {
  if (from == to) return;
  std::memcpy(to.keys, from.keys, n * sizeof(std::uint64_t));
  std::memcpy(to.index, from.index, n * sizeof(std::uint32_t));
}

// The bits in which keys [begin, end) differ from `first`.
std::uint64_t differing_bits(const std::uint64_t* keys, std::size_t begin, std::size_t end,
                             std::uint64_t first) {
  std::uint64_t differ = 0;
  for (std::size_t i = begin; i < end; ++i) differ |= keys[i] ^ first;
  return differ;
}

// The highest bit set in `differ`, or -1 where it is 0 (the keys all equal).
int highest_bit(std::uint64_t differ) {
  return differ == 0 ? -1 : kKeyBits - 1 - std::countl_zero(differ);
}

// The highest bit in which the n keys differ, or -1 where they are all equal.
int highest_varying_bit(const std::uint64_t* keys, std::size_t n) {
  return highest_bit(differing_bits(keys, 1, n, keys[0]));
}

int parallel_highest_varying_bit(const std::uint64_t* keys, std::size_t n) {
  return highest_bit(tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, n, kSmallestBlock), std::uint64_t{0},
      [&](const tbb::blocked_range<std::size_t>& r, std::uint64_t so_far) {
        return so_far | differing_bits(keys, r.begin(), r.end(), keys[0]);
      },
      [](std::uint64_t a, std::uint64_t b) { return a | b; }));
}

// Moves keys [begin, end) of `from` to `to` by their digit at `shift`, each to its digit's next
// position (advanced as it is taken): one stable counting pass's scatter.
void scatter(KeyRange from, KeyRange to, std::size_t begin, std::size_t end, int shift,
             std::uint32_t* position) {
  for (std::size_t i = begin; i < end; ++i) {
    const std::uint32_t at = position[digit_of(from.keys[i], shift)]++;
    to.keys[at] = from.keys[i];
    to.index[at] = from.index[i];
  }
}

void insertion_sort(KeyRange r, std::size_t n) {
  for (std::size_t i = 1; i < n; ++i) {
    const std::uint64_t key = r.keys[i];
    const std::uint32_t index = r.index[i];
    std::size_t j = i;
    for (; j > 0 && r.keys[j - 1] > key; --j) {
      r.keys[j] = r.keys[j - 1];
      r.index[j] = r.index[j - 1];
    }
    r.keys[j] = key;
    r.index[j] = index;
  }
}

// The in-cache sort's passes cover the range's 32 highest varying bits at most; the keys that share
// them are then sorted by the bits below, run by run: in a tree's keys such runs are a few bodies
// of one leaf (32 bits are 10 2/3 levels), so the passes for the bits below are saved. The GPU's
// sort takes the keys alike (gpu/tree/gpu_tree.cu, "by halves").
constexpr int kSortedHighBits = 32;

void sort_in_cache(KeyRange data, KeyRange spare, KeyRange result, std::size_t n, int top);

// Sorts, stably, each run of `r`'s n keys that share their bits from `low` up by the bits below
// `low` (`spare`: n keys' room beside them).
void sort_runs_below(KeyRange r, KeyRange spare, std::size_t n, int low) {
  for (std::size_t begin = 0; begin < n;) {
    std::size_t end = begin + 1;
    while (end < n && (r.keys[end] >> low) == (r.keys[begin] >> low)) ++end;
    if (end - begin > 1)
      sort_in_cache(r.at(begin), spare.at(begin), r.at(begin), end - begin, low - 1);
    begin = end;
  }
}

// Sorts the n keys of `data` by their bits [0, top], passing between `data` and `spare` (two
// ranges of n), the result in `result` (one of the two). Every pass's digits are counted in one
// read, and a pass whose digit all keys share is skipped.
void sort_in_cache(KeyRange data, KeyRange spare, KeyRange result, std::size_t n, int top) {
  if (n <= kInsertedKeys) {
    copy_range(data, result, n);
    insertion_sort(result, n);
    return;
  }
  const int low = std::max(0, top + 1 - kSortedHighBits);
  const int passes = (top - low) / kDigitBits + 1;
  std::array<std::array<std::uint32_t, kDigits>, kKeyBits / kDigitBits> counts{};
  for (std::size_t i = 0; i < n; ++i) {
    for (int p = 0; p < passes; ++p) ++counts[p][digit_of(data.keys[i], low + p * kDigitBits)];
  }
  KeyRange from = data, to = spare;
  for (int p = 0; p < passes; ++p) {
    std::array<std::uint32_t, kDigits>& position = counts[p];
    if (std::find(position.begin(), position.end(), n) != position.end()) continue;
    std::uint32_t next = 0;
    for (std::uint32_t& c : position) next += std::exchange(c, next);
    scatter(from, to, 0, n, low + p * kDigitBits, position.data());
    std::swap(from, to);
  }
  if (low > 0) sort_runs_below(from, to, n, low);
  copy_range(from, result, n);
}

// One stable pass of n keys from `from` to `to` by the digit at `shift`, in parallel blocks;
// returns where each digit's keys begin in `to` (and n after the last).
std::array<std::size_t, kDigits + 1> distribute(KeyRange from, KeyRange to, std::size_t n,
                                                int shift, std::vector<std::uint32_t>& positions) {
  const auto threads = static_cast<std::size_t>(tbb::this_task_arena::max_concurrency());
  const std::size_t blocks = std::clamp<std::size_t>(n / kSmallestBlock, 1, 4 * threads);
  const auto block_begin = [&](std::size_t b) { return n * b / blocks; };
  positions.assign(blocks * kDigits, 0);
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    std::uint32_t* counts = positions.data() + b * kDigits;
    for (std::size_t i = block_begin(b); i < block_begin(b + 1); ++i)
      ++counts[digit_of(from.keys[i], shift)];
  });
  // Digit-major, block-minor: the blocks' runs of one digit follow each other in block order.
  std::array<std::size_t, kDigits + 1> starts{};
  std::uint32_t next = 0;
  for (std::size_t d = 0; d < kDigits; ++d) {
    starts[d] = next;
    for (std::size_t b = 0; b < blocks; ++b)
      next += std::exchange(positions[b * kDigits + d], next);
  }
  starts[kDigits] = n;
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    scatter(from, to, block_begin(b), block_begin(b + 1), shift, positions.data() + b * kDigits);
  });
  return starts;
}

// The caller's arrays, where every range's result ends, and the spare ones.
struct SortBuffers {
  KeyRange sorted;
  KeyRange spare;
};

// Sorts [begin, end), whose keys agree above bit `top` and lie in the spare buffers where
// `in_spare`, into the caller's arrays.
void sort_range(const SortBuffers& buffers, bool in_spare, std::size_t begin, std::size_t end,
                int top, std::vector<std::uint32_t>& positions) {
  const std::size_t n = end - begin;
  const KeyRange data = (in_spare ? buffers.spare : buffers.sorted).at(begin);
  const KeyRange other = (in_spare ? buffers.sorted : buffers.spare).at(begin);
  const KeyRange result = buffers.sorted.at(begin);
  if (top < 0 || n <= 1) return copy_range(data, result, n);
  if (n <= kCachedKeys) return sort_in_cache(data, other, result, n, top);
  const int shift = std::max(0, top + 1 - kDigitBits);
  const std::array<std::size_t, kDigits + 1> starts = distribute(data, other, n, shift, positions);
  tbb::parallel_for(std::size_t{0}, kDigits, [&](std::size_t d) {
    const std::size_t count = starts[d + 1] - starts[d];
    if (count == 0) return;
    // A range left larger than the cache takes its own first digit: its highest varying bit,
    // so that no pass moves it whole into one digit.
    const int below =
        count > kCachedKeys ? highest_varying_bit(other.keys + starts[d], count) : shift - 1;
    std::vector<std::uint32_t> own_positions;
    sort_range(buffers, !in_spare, begin + starts[d], begin + starts[d + 1], below, own_positions);
  });
}

}  // namespace

void sort_keys(std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& index,
               KeySortScratch& scratch) {
  const std::size_t n = keys.size();
  scratch.keys.resize(n);
  scratch.index.resize(n);
  const SortBuffers buffers{.sorted = {keys.data(), index.data()},
                            .spare = {scratch.keys.data(), scratch.index.data()}};
  sort_range(buffers, false, 0, n, parallel_highest_varying_bit(keys.data(), n),
             scratch.digit_positions);
}

}  // namespace nbody::cpu::tree
