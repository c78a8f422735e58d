#pragma once
// The sparse octree of a body set, built from Morton-sorted keys as Bonsai builds it (Bédorf,
// Gaburov & Portegies Zwart 2012): every cell is a contiguous range of the sorted bodies, split
// into its non-empty octants while it holds more than the leaf capacity, and its moments come from
// an upward pass over the levels.
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nbody/bodies.hpp"
#include "nbody/cpu/tree/key_sort.hpp"
#include "nbody/cpu/tree/morton.hpp"
#include "nbody/cpu/tree/multipole.hpp"
#include "nbody/tree_groups.hpp"

namespace nbody::cpu::tree {

struct TreeSettings {
  // A cell with more bodies than this is split, unless it is at the deepest level: its bodies
  // share one key (they lie within 2^-21 of the cube's side), and no split could separate them.
  std::size_t leaf_capacity = kDefaultLeafCapacity;
  // The targets that share one walk of the tree (as Bonsai's groups): runs of consecutive sibling
  // cells of at most this many bodies together, or a leaf holding more (TargetGroup). Larger
  // groups walk less often and fill the SIMD lanes better, but their lists are longer (the
  // criterion is met from the group's box).
  std::size_t group_capacity = kDefaultGroupCapacity;
  // The ISA of the walk's interactions, as ExecutionOptions::isa spells it ("sse4.2", "avx2",
  // "avx512f"); empty: the widest this CPU has, as the all-pairs SIMD formulations choose it.
  std::string isa;
};

struct Cell {
  std::uint32_t begin = 0, end = 0;  // its bodies: [begin, end) of the sorted order
  std::uint32_t first_child = 0;     // its children are cells [first_child, first_child + count)
  std::uint8_t child_count = 0;      // 0 for a leaf
  std::uint8_t level = 0;            // the root is level 0; its side is the cube's over 2^level

  bool is_leaf() const { return child_count == 0; }
  std::uint32_t body_count() const { return end - begin; }
};

// The targets of one walk: the sibling cells [first_cell, first_cell + cell_count), whose bodies
// are one range of the sorted order. Each cell of such a run holds at most group_capacity bodies
// (or is a leaf holding more, alone in its run), and the run as many as fit together: the children
// of a cell just over the capacity form one or two groups rather than eight small ones, which
// would leave most SIMD lanes idle and walk the tree four times as often.
struct TargetGroup {
  std::uint32_t first_cell = 0;
  std::uint32_t cell_count = 0;
};

// What the walk's opening criterion reads of a cell: the float64 centre of mass and b_max^2 of its
// CellMoments, packed apart from their 152 bytes so that a walk touches 32 bytes a cell in place
// of two cache lines. The same values (b_max^2 rounded as the criterion rounded it), so the same
// decisions, which the GPU tree reproduces.
struct CellCriterion {
  Vec3<TreeFloat64> centre;
  TreeFloat64 b_max_squared = 0;
};

// Seconds of each phase of the build, apart from the traversal.
struct BuildSeconds {
  double keys = 0;     // bounding cube and Morton keys
  double sort = 0;     // sorting the keys, and gathering the bodies in that order
  double build = 0;    // the cells, level by level
  double moments = 0;  // the upward pass (and in evaluate_tree, rounding the moments to T)
  double total() const { return keys + sort + build + moments; }
};

template <class T>
struct Octree {
  BoundingCube cube;
  std::vector<Body<T>> sorted_bodies;
  std::vector<std::uint64_t> keys;         // of the sorted bodies, ascending
  std::vector<std::uint32_t> input_index;  // input_index[k]: the input index of sorted body k
  // Breadth first: the root is cell 0, the cells of level L are [level_begin[L], level_begin[L +
  // 1]), and a cell's children are contiguous.
  std::vector<Cell> cells;
  std::vector<std::uint32_t> level_begin;
  std::vector<std::uint32_t> leaves;    // the leaf cells, in the sorted order of their bodies
  std::vector<TargetGroup> groups;      // the target groups (TreeSettings), in the same order
  std::vector<CellMoments> moments;     // of each cell, float64
  std::vector<CellCriterion> criteria;  // of each cell, from its moments

  int depth() const { return static_cast<int>(level_begin.size()) - 2; }
  std::uint32_t group_begin(const TargetGroup& group) const {
    return cells[group.first_cell].begin;
  }
  std::uint32_t group_end(const TargetGroup& group) const {
    return cells[group.first_cell + group.cell_count - 1].end;
  }
  // The tightest box around the group's bodies: its cells' boxes together.
  Box group_box(const TargetGroup& group) const {
    Box box = moments[group.first_cell].box;
    for (std::uint32_t k = 1; k < group.cell_count; ++k) {
      widen_box(box, moments[group.first_cell + k].box);
    }
    return box;
  }
  TreeFloat64 cell_size(const Cell& cell) const { return std::ldexp(cube.size, -cell.level); }
};

// The cells below one cell of the tree's top, built by one task of the cells phase
// (cpu/tree/octree_build.cpp says how), with their groups and the count of their leaves.
struct SubtreeCells {
  Cell root;  // as the top holds it, without its children
  std::uint32_t top_index = 0;
  std::vector<Cell> cells;  // below the root, breadth first; first_child indexes these
  // Its cells of level L are [level_start[L], level_start[L + 1]) of `cells`, and the tree's cells
  // of level L from placed_at[L] on (counted from the level's first).
  std::array<std::uint32_t, kDeepestLevel + 2> level_start{}, placed_at{};
  std::uint32_t root_placed = 0;             // the root's index among the tree's cells of its level
  std::uint32_t leaf_count = 0;              // of `cells`
  std::vector<TargetGroup> groups;           // of `cells` (none where the root can be a group)
  std::size_t leaves_at = 0, groups_at = 0;  // where they go in the tree's leaves and groups
};

// What a build needs besides the tree: the key sort's second buffers, the split's octant bounds
// and the subtrees of the cells phase. Kept with the tree between builds (TreeEvaluator), so that
// a run that rebuilds its tree every evaluation allocates its memory, and the OS zeroes it, once
// rather than at every build.
struct BuildScratch {
  KeySortScratch sort;
  std::vector<std::array<std::uint32_t, 9>> octant_bounds;
  std::vector<SubtreeCells> subtrees;
};

// Builds the octree of `bodies` (at least one, fewer than 2^32) into `tree`, reusing its buffers
// and those of `scratch`; its phases are timed into `seconds`.
template <class T>
void rebuild_octree(std::span<const Body<T>> bodies, const TreeSettings& settings, Octree<T>& tree,
                    BuildScratch& scratch, BuildSeconds& seconds);

// The octree of `bodies`, in fresh buffers.
template <class T>
Octree<T> build_octree(std::span<const Body<T>> bodies, const TreeSettings& settings,
                       BuildSeconds& seconds) {
  Octree<T> tree;
  BuildScratch scratch;
  rebuild_octree(bodies, settings, tree, scratch, seconds);
  return tree;
}

extern template void rebuild_octree<float>(std::span<const Body<float>>, const TreeSettings&,
                                           Octree<float>&, BuildScratch&, BuildSeconds&);
extern template void rebuild_octree<double>(std::span<const Body<double>>, const TreeSettings&,
                                            Octree<double>&, BuildScratch&, BuildSeconds&);

}  // namespace nbody::cpu::tree
