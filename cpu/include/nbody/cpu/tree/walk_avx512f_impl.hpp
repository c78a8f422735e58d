#pragma once
// The walk of traversal.cpp in AVX-512F: an opened cell's children (at most 8) are decided
// together, 8 float64 lanes, and listed or queued by compressed stores, where the scalar walk pops
// and tests them one at a time behind a branch each (about 14 cycles a test on the dev VM: a
// quarter of the traversal). Include only from cpu/tree/interactions_avx512f.cpp: everything here
// has internal linkage. It reads the tree's cells as plain words and never calls their member
// functions, which the baseline files instantiate.
//
// The same cells accepted and leaves opened: the criterion is the scalar one lane by lane (the
// same operations, never fused: the _round forms are builtins that FMA contraction does not see).
// The order differs: the cells to open wait in a queue, breadth first (a sum of the same terms in
// another order, within rounding). The queued cells were decided long before they are opened, so
// their loads need not wait on the decisions just made, and the accepted cells come in ascending
// index order.
#include <immintrin.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "nbody/cpu/tree/interaction_kernels.hpp"

namespace nbody::cpu::tree {
namespace {

static_assert(sizeof(CellCriterion) == 4 * sizeof(double), "a criterion is read as 4 doubles");
static_assert(sizeof(BodyRange) == 8 && offsetof(BodyRange, end) == 4);
// A cell is read as two 64-bit words: its bodies, as a BodyRange, and its children, as a
// WalkWork::queue entry.
static_assert(sizeof(Cell) == 16 && offsetof(Cell, end) == 4 && offsetof(Cell, first_child) == 8 &&
              offsetof(Cell, child_count) == 12);

inline std::uint32_t first_child_of(std::uint64_t children) {
  return static_cast<std::uint32_t>(children);
}
inline std::uint32_t child_count_of(std::uint64_t children) {
  return static_cast<std::uint32_t>(children >> 32) & 0xffu;
}

// The group's box and theta^2 in every lane.
struct LaneBox {
  __m512d low_x, low_y, low_z, high_x, high_y, high_z, theta_squared;
};

// GCC 12's unmasked forms of these trip -Wmaybe-uninitialized (PR 105593, as
// interactions_avx512f.cpp says of sqrt): the zero-masked forms with every lane set, and no FMA
// contraction (the operations of traversal.cpp's scalar criterion, which its ISO C++ build never
// fuses).
constexpr __mmask8 kAllLanes = 0xff;
constexpr int kRounding = _MM_FROUND_CUR_DIRECTION;

inline __m512d larger(__m512d a, __m512d b) {
  return _mm512_maskz_max_pd(kAllLanes, a, b);
}
inline __m512d product(__m512d a, __m512d b) {
  return _mm512_maskz_mul_round_pd(kAllLanes, a, b, kRounding);
}
inline __m512d sum(__m512d a, __m512d b) {
  return _mm512_maskz_add_round_pd(kAllLanes, a, b, kRounding);
}

// max(low - p, 0, p - high) as traversal.cpp's `gap` takes it: maxpd(a, b) is a > b ? a : b, as
// its maxsd is.
inline __m512d box_gap(__m512d low, __m512d high, __m512d p) {
  const __m512d below = larger(_mm512_setzero_pd(), _mm512_sub_pd(low, p));
  return larger(_mm512_sub_pd(p, high), below);
}

// theta^2 |box to centre|^2 > b_max^2 for each of `count` (1 to 8) cells from `first`.
inline std::uint32_t accepted_cells(const CellCriterion* criteria, const LaneBox& box,
                                    std::uint32_t first, std::uint32_t count) {
  // Two cells a load, then transposed: x, y, z and b_max^2 of the 8 cells, in the cells' order.
  const double* source = &criteria[first].centre.x;
  const std::uint64_t words = (std::uint64_t{1} << (4 * count)) - 1;  // 4 a cell
  const __m512d r0 = _mm512_maskz_loadu_pd(static_cast<__mmask8>(words), source);
  const __m512d r1 = _mm512_maskz_loadu_pd(static_cast<__mmask8>(words >> 8), source + 8);
  const __m512d r2 = _mm512_maskz_loadu_pd(static_cast<__mmask8>(words >> 16), source + 16);
  const __m512d r3 = _mm512_maskz_loadu_pd(static_cast<__mmask8>(words >> 24), source + 24);
  const __m512d xz01 = _mm512_maskz_unpacklo_pd(kAllLanes, r0, r1);  // x0 x2 z0 z2 x1 x3 z1 z3
  const __m512d yb01 = _mm512_maskz_unpackhi_pd(kAllLanes, r0, r1);
  const __m512d xz23 = _mm512_maskz_unpacklo_pd(kAllLanes, r2, r3);
  const __m512d yb23 = _mm512_maskz_unpackhi_pd(kAllLanes, r2, r3);
  const __m512i first_of_pair = _mm512_setr_epi64(0, 4, 1, 5, 8, 12, 9, 13);
  const __m512i second_of_pair = _mm512_setr_epi64(2, 6, 3, 7, 10, 14, 11, 15);
  const __m512d x = _mm512_permutex2var_pd(xz01, first_of_pair, xz23);
  const __m512d z = _mm512_permutex2var_pd(xz01, second_of_pair, xz23);
  const __m512d y = _mm512_permutex2var_pd(yb01, first_of_pair, yb23);
  const __m512d b_max_squared = _mm512_permutex2var_pd(yb01, second_of_pair, yb23);
  const __m512d dx = box_gap(box.low_x, box.high_x, x);
  const __m512d dy = box_gap(box.low_y, box.high_y, y);
  const __m512d dz = box_gap(box.low_z, box.high_z, z);
  const __m512d squared = sum(sum(product(dx, dx), product(dy, dy)), product(dz, dz));
  const __m512d scaled = product(box.theta_squared, squared);
  const auto valid = static_cast<__mmask8>((1u << count) - 1);
  return _mm512_mask_cmp_pd_mask(valid, scaled, b_max_squared, _CMP_GT_OQ);
}

// The bits set in a byte. (-mavx512f does not imply POPCNT.)
constexpr std::array<std::uint8_t, 256> kBitsSet = [] {
  std::array<std::uint8_t, 256> bits{};
  for (std::size_t byte = 1; byte < bits.size(); ++byte) {
    bits[byte] = static_cast<std::uint8_t>(bits[byte / 2] + (byte & 1));
  }
  return bits;
}();

// The walk's lists and queue as they fill.
struct WalkLists {
  std::uint32_t* accepted;
  BodyRange* ranges;
  std::uint64_t* queue;
  std::size_t cells = 0, range_count = 0, queued = 0;
};

// Lists the bodies of the leaves `leaves` (bits of the 8 children whose cells' bodies are
// `bodies`, a BodyRange a lane): a run of adjacent leaves as one range.
inline void list_leaves(__m512i bodies, std::uint32_t leaves, WalkLists& lists) {
  const std::uint32_t starts = leaves & ~(leaves << 1);
  const std::uint32_t ends = leaves & ~(leaves >> 1);
  const __m512i first = _mm512_maskz_compress_epi64(static_cast<__mmask8>(starts), bodies);
  const __m512i last = _mm512_maskz_compress_epi64(static_cast<__mmask8>(ends), bodies);
  _mm512_storeu_si512(lists.ranges + lists.range_count,
                      _mm512_mask_blend_epi32(0xaaaa, first, last));  // first's begins, last's ends
  lists.range_count += kBitsSet[starts];
}

// The tree as the walk reads it, its pointers copied out of WalkWork: read through `work` they
// are loaded again after every store to the lists, which might alias them.
struct WalkTree {
  const Cell* cells;
  const CellCriterion* criteria;
};

// Decides the `count` (1 to 8) children of a cell from `first`: lists those accepted and the
// bodies of the leaves among the others, and queues the rest.
inline void decide_children(const WalkTree& tree, const LaneBox& box, std::uint32_t first,
                            std::uint32_t count, WalkLists& lists) {
  const std::uint32_t accepted = accepted_cells(tree.criteria, box, first, count);
  // The children's cells, two 64-bit words each: bodies (a BodyRange) and children.
  const auto* words = reinterpret_cast<const long long*>(tree.cells + first);
  const std::uint64_t lanes = (std::uint64_t{1} << (2 * count)) - 1;
  const __m512i low = _mm512_maskz_loadu_epi64(static_cast<__mmask8>(lanes), words);
  const __m512i high = _mm512_maskz_loadu_epi64(static_cast<__mmask8>(lanes >> 8), words + 8);
  const __m512i bodies =
      _mm512_permutex2var_epi64(low, _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), high);
  const __m512i children =
      _mm512_permutex2var_epi64(low, _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15), high);
  const std::uint32_t parents = _mm512_test_epi64_mask(
      children, _mm512_set1_epi64(static_cast<long long>(std::uint64_t{0xff} << 32)));
  const std::uint32_t rest = ~accepted & ((1u << count) - 1);
  const std::uint32_t opened = rest & parents;
  const __m512i index =
      _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(first)),
                       _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  _mm512_storeu_si512(lists.accepted + lists.cells,
                      _mm512_maskz_compress_epi32(static_cast<__mmask16>(accepted), index));
  lists.cells += kBitsSet[accepted];
  _mm512_storeu_si512(lists.queue + lists.queued,
                      _mm512_maskz_compress_epi64(static_cast<__mmask8>(opened), children));
  lists.queued += kBitsSet[opened];
  list_leaves(bodies, rest & ~parents, lists);
}

// The queue's decisions are independent, but each waits on its children's criteria and cells
// (mostly in the L3 beyond a few thousand bodies) and only about three fit the core's window: so
// they are asked for a few decisions ahead (the walk alone at 256K, Plummer: 11.5 -> 9.2 ms; 3 to
// 10 ahead alike, 16 slower).
constexpr std::size_t kPrefetchAhead = 4;

// Every line of the children's criteria and cells (each contiguous), and none past them.
inline void prefetch_children(const WalkTree& tree, std::uint64_t children) {
  const std::size_t count = child_count_of(children);
  const auto* criteria = reinterpret_cast<const char*>(tree.criteria + first_child_of(children));
  const auto* cells = reinterpret_cast<const char*>(tree.cells + first_child_of(children));
  const std::size_t criteria_bytes = count * sizeof(CellCriterion);
  for (std::size_t line = 0; line < criteria_bytes; line += 64) {
    _mm_prefetch(criteria + line, _MM_HINT_T0);
  }
  _mm_prefetch(criteria + criteria_bytes - 1, _MM_HINT_T0);
  _mm_prefetch(cells, _MM_HINT_T0);
  _mm_prefetch(cells + count * sizeof(Cell) - 1, _MM_HINT_T0);
}

WalkCounts walk_avx512f(const WalkWork& work) {
  const LaneBox box{.low_x = _mm512_set1_pd(work.group.low.x),
                    .low_y = _mm512_set1_pd(work.group.low.y),
                    .low_z = _mm512_set1_pd(work.group.low.z),
                    .high_x = _mm512_set1_pd(work.group.high.x),
                    .high_y = _mm512_set1_pd(work.group.high.y),
                    .high_z = _mm512_set1_pd(work.group.high.z),
                    .theta_squared = _mm512_set1_pd(work.theta_squared)};
  const WalkTree tree{.cells = work.cells, .criteria = work.criteria};
  WalkLists lists{.accepted = work.accepted, .ranges = work.ranges, .queue = work.queue};
  decide_children(tree, box, 0, 1, lists);  // the root, as the one child of none
  for (std::size_t next = 0; next != lists.queued; ++next) {
    if (next + kPrefetchAhead < lists.queued) {
      prefetch_children(tree, lists.queue[next + kPrefetchAhead]);
    }
    const std::uint64_t children = lists.queue[next];
    decide_children(tree, box, first_child_of(children), child_count_of(children), lists);
  }
  return {.cells = lists.cells, .ranges = lists.range_count};
}

}  // namespace
}  // namespace nbody::cpu::tree
