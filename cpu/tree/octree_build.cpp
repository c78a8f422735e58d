// The octree build: Morton keys, a parallel sort (nbody/cpu/tree/key_sort.hpp), the cells (the
// top level by level, then a subtree a task), the upward pass.
#include <algorithm>
#include <array>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <utility>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include "nbody/cpu/tree/key_sort.hpp"
#include "nbody/cpu/tree/octree_build.hpp"
#include "nbody/steady_clock.hpp"
#include "nbody/tree_groups.hpp"

namespace nbody::cpu::tree {
namespace {

// The finest each parallel loop is split: ten microseconds of work a task or more, so that a small
// tree's build stays on the calling thread rather than waking the pool's workers for a few
// microseconds of work each (a wake costs about as much).
constexpr std::size_t kBodiesATask = 2048;
constexpr std::uint32_t kCellsATask = 128;

// bounding_cube, its extremes found in parallel.
template <class T>
BoundingCube parallel_bounding_cube(std::span<const Body<T>> bodies) {
  const Extremes extremes = tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, bodies.size(), kBodiesATask), extremes_of(bodies.first(1)),
      [&](const tbb::blocked_range<std::size_t>& range, const Extremes& so_far) {
        return merge_extremes(so_far, extremes_of(bodies.subspan(range.begin(), range.size())));
      },
      merge_extremes);
  return cube_around(extremes);
}

// The bodies' Morton keys and input indices, as two arrays of the tree, to be sorted by key.
template <class T>
void morton_keys(std::span<const Body<T>> bodies, Octree<T>& tree) {
  tree.keys.resize(bodies.size());
  tree.input_index.resize(bodies.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, bodies.size(), kBodiesATask),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      for (std::size_t i = range.begin(); i != range.end(); ++i) {
                        tree.keys[i] = morton_key(bodies[i], tree.cube);
                        tree.input_index[i] = static_cast<std::uint32_t>(i);
                      }
                    });
}

// The bodies are read in the order of their keys, at random in the input's order: a miss each,
// which the hardware cannot foresee. They are asked for this many bodies ahead, so that many
// misses overlap (64 to 256 ahead gave about the same at 1M; 8 and 16 no gain).
constexpr std::size_t kBodiesAheadOfTheirGather = 128;

template <class T>
void gather_sorted(std::span<const Body<T>> bodies, Octree<T>& tree) {
  tree.sorted_bodies.resize(bodies.size());
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, bodies.size(), kBodiesATask),
      [&](const tbb::blocked_range<std::size_t>& range) {
        for (std::size_t k = range.begin(); k != range.end(); ++k) {
          if (k + kBodiesAheadOfTheirGather < range.end()) {
            __builtin_prefetch(&bodies[tree.input_index[k + kBodiesAheadOfTheirGather]]);
          }
          tree.sorted_bodies[k] = bodies[tree.input_index[k]];
        }
      });
}

// Where each octant of `cell` starts in the sorted keys, and where the last one ends: octant o
// holds [bounds[o], bounds[o + 1]). The keys of a cell share their prefix, so the octant is
// monotone over its range: a small cell's octants are counted in one pass (no branch a key), a
// large one's found by binary searches (whose branches a small cell would mispredict at every
// step, for as many steps as a pass takes keys).
using OctantBounds = std::array<std::uint32_t, 9>;

constexpr std::uint32_t kCountedKeys = 256;

OctantBounds octant_bounds(const Cell& cell, std::span<const std::uint64_t> keys) {
  OctantBounds bounds{};
  if (cell.body_count() <= kCountedKeys) {
    std::array<std::uint32_t, 8> count{};
    for (std::uint32_t k = cell.begin; k < cell.end; ++k)
      ++count[child_octant(keys[k], cell.level)];
    bounds[0] = cell.begin;
    for (unsigned octant = 0; octant < 8; ++octant)
      bounds[octant + 1] = bounds[octant] + count[octant];
    return bounds;
  }
  const auto first = keys.begin() + cell.begin;
  const auto last = keys.begin() + cell.end;
  for (unsigned octant = 0; octant < 8; ++octant) {
    const auto start = std::partition_point(
        first, last, [&](std::uint64_t key) { return child_octant(key, cell.level) < octant; });
    bounds[octant] = static_cast<std::uint32_t>(start - keys.begin());
  }
  bounds[8] = cell.end;
  return bounds;
}

bool splits(const Cell& cell, const TreeSettings& settings) {
  return cell.body_count() > settings.leaf_capacity && cell.level < kDeepestLevel;
}

// The cells phase splits the top of the tree level by level, each level's cells in parallel, down
// to cells of at most kBodiesASubtree bodies. Each of these that splits roots a subtree, which one
// task builds whole, level by level while its keys are in its core's cache, with its groups. The
// subtrees' cells of each level are then placed among the top's (a level's cells are in the order
// of their bodies, so a subtree's are consecutive there), and a second task a subtree copies them
// there and collects its leaves. The tasks wait for one another twice rather than twice a level,
// and the serial work is the top's, a few cells a subtree. The tree is the level-by-level build's,
// cell for cell.
constexpr std::uint32_t kBodiesASubtree = 8192;
constexpr std::uint32_t kNoSubtree = std::numeric_limits<std::uint32_t>::max();

bool splits_at_top(const Cell& cell, const TreeSettings& settings) {
  return cell.body_count() > kBodiesASubtree && splits(cell, settings);
}

// The children of `parent` (its nonempty octants, in order) written from `out` on; their count.
template <class Out>
std::uint8_t write_children(const Cell& parent, const OctantBounds& bounds, Out out) {
  std::uint8_t count = 0;
  for (unsigned octant = 0; octant < 8; ++octant) {
    if (bounds[octant] == bounds[octant + 1]) continue;
    *out++ = Cell{.begin = bounds[octant],
                  .end = bounds[octant + 1],
                  .level = static_cast<std::uint8_t>(parent.level + 1)};
    ++count;
  }
  return count;
}

// Appends the children of the cells [first, last) (one level) after them, setting each parent's
// first_child and child_count. The octants are found in parallel; the offsets by a scan.
void split_top_level(std::uint32_t first, std::uint32_t last, std::span<const std::uint64_t> keys,
                     const TreeSettings& settings, std::vector<OctantBounds>& bounds,
                     std::vector<Cell>& cells) {
  bounds.resize(last - first);
  tbb::parallel_for(tbb::blocked_range<std::uint32_t>(first, last, kCellsATask),
                    [&](const tbb::blocked_range<std::uint32_t>& range) {
                      for (std::uint32_t c = range.begin(); c != range.end(); ++c) {
                        if (splits_at_top(cells[c], settings))
                          bounds[c - first] = octant_bounds(cells[c], keys);
                      }
                    });
  auto next = static_cast<std::uint32_t>(cells.size());
  for (std::uint32_t c = first; c < last; ++c) {
    Cell& parent = cells[c];
    if (!splits_at_top(parent, settings)) continue;
    parent.first_child = next;
    const OctantBounds& b = bounds[c - first];
    unsigned nonempty = 0;
    for (unsigned octant = 0; octant < 8; ++octant) nonempty += b[octant] != b[octant + 1];
    parent.child_count = static_cast<std::uint8_t>(nonempty);
    next += nonempty;
  }
  cells.resize(next);
  tbb::parallel_for(tbb::blocked_range<std::uint32_t>(first, last, kCellsATask),
                    [&](const tbb::blocked_range<std::uint32_t>& range) {
                      for (std::uint32_t c = range.begin(); c != range.end(); ++c) {
                        const Cell& parent = cells[c];
                        if (parent.is_leaf()) continue;
                        write_children(parent, bounds[c - first],
                                       cells.begin() + parent.first_child);
                      }
                    });
}

// The top of the tree, breadth first: `level_begin` as Octree's, `placed` each cell's index among
// the tree's cells of its level, `subtree` the subtree each root (kNoSubtree for the others).
struct TopCells {
  std::vector<Cell> cells;
  std::vector<std::uint32_t> level_begin, placed, subtree;
};

std::uint8_t append_children(const Cell& parent, std::span<const std::uint64_t> keys,
                             std::vector<Cell>& cells) {
  return write_children(parent, octant_bounds(parent, keys), std::back_inserter(cells));
}

std::uint32_t group_capacity_of(const TreeSettings& settings) {
  return static_cast<std::uint32_t>(
      std::min<std::size_t>(settings.group_capacity, std::numeric_limits<std::uint32_t>::max()));
}

bool can_be_group(const Cell& cell, const TreeSettings& settings) {
  return can_be_target_group(cell.body_count(), cell.is_leaf(), group_capacity_of(settings));
}

// The groups among the children of `cell` (which cannot be one; nbody/tree_groups.hpp): runs of
// those that can be, given to `group`, and the others given to `below`. Depth first, children in
// octant order, so that the groups come in the sorted order of their bodies and neighbouring
// walks, which visit mostly the same cells, run in turn.
template <class Group, class Below>
void collect_group_runs(const Cell& cell, std::span<const Cell> cells, const TreeSettings& settings,
                        Group&& group, Below&& below) {
  TargetGroup run{};
  std::uint32_t run_bodies = 0;
  const auto close_run = [&] {
    if (run.cell_count > 0) group(run);
    run = {};
    run_bodies = 0;
  };
  for (std::uint32_t child = cell.first_child; child < cell.first_child + cell.child_count;
       ++child) {
    const Cell& sibling = cells[child];
    if (!can_be_group(sibling, settings)) {
      close_run();
      below(child);
      continue;
    }
    if (starts_new_group_run(run.cell_count, run_bodies, sibling.body_count(),
                             group_capacity_of(settings))) {
      close_run();
      run.first_cell = child;
    }
    ++run.cell_count;
    run_bodies += sibling.body_count();
  }
  close_run();
}

void collect_groups_below(const Cell& cell, std::span<const Cell> cells,
                          const TreeSettings& settings, std::vector<TargetGroup>& groups) {
  collect_group_runs(
      cell, cells, settings, [&](const TargetGroup& group) { groups.push_back(group); },
      [&](std::uint32_t child) { collect_groups_below(cells[child], cells, settings, groups); });
}

// The leaves below `cell` depth first, children in octant order: in the sorted order of their
// bodies. A path down holds at most kDeepestLevel + 1 cells, so the stack at most 7 cells a level
// and 8 more.
void collect_leaves_below(const Cell& cell, std::span<const Cell> cells, std::uint32_t* leaves) {
  std::array<std::uint32_t, 8 * (kDeepestLevel + 2)> stack;
  std::size_t size = 0;
  for (std::uint32_t k = cell.child_count; k-- > 0;) stack[size++] = cell.first_child + k;
  while (size > 0) {
    const std::uint32_t c = stack[--size];
    const Cell& below = cells[c];
    if (below.is_leaf()) *leaves++ = c;
    for (std::uint32_t k = below.child_count; k-- > 0;) stack[size++] = below.first_child + k;
  }
}

// Builds the cells below `subtree.root` breadth first, and collects their leaves and groups.
void build_subtree(std::span<const std::uint64_t> keys, const TreeSettings& settings,
                   SubtreeCells& subtree) {
  std::vector<Cell>& cells = subtree.cells;
  cells.clear();
  subtree.level_start.fill(0);
  Cell root = subtree.root;
  // The subtree's keys are asked for at once, so that their misses overlap: its largest cells'
  // octants are found by binary searches, each step of which would otherwise wait for its miss.
  for (std::uint32_t k = root.begin; k < root.end; k += 8) __builtin_prefetch(&keys[k]);
  root.first_child = 0;
  root.child_count = append_children(root, keys, cells);
  std::uint32_t first = 0;
  for (int level = root.level + 1; level <= kDeepestLevel; ++level) {
    subtree.level_start[level] = first;
    const auto last = static_cast<std::uint32_t>(cells.size());
    for (std::uint32_t c = first; c < last; ++c) {
      if (!splits(cells[c], settings)) continue;
      const Cell parent = cells[c];
      cells[c].first_child = static_cast<std::uint32_t>(cells.size());
      cells[c].child_count = append_children(parent, keys, cells);
    }
    first = last;
  }
  subtree.level_start[kDeepestLevel + 1] = first;
  subtree.leaf_count = static_cast<std::uint32_t>(
      std::count_if(cells.begin(), cells.end(), [](const Cell& cell) { return cell.is_leaf(); }));
  subtree.groups.clear();
  if (!can_be_group(root, settings)) collect_groups_below(root, cells, settings, subtree.groups);
  subtree.root.child_count = root.child_count;
}

std::uint32_t level_size(const SubtreeCells& subtree, std::size_t level) {
  return subtree.level_start[level + 1] - subtree.level_start[level];
}

// The top of the tree: the cells of more than kBodiesASubtree bodies split level by level, and a
// subtree for each of their children that splits, in the order of their bodies.
template <class T>
void build_top(const Octree<T>& tree, const TreeSettings& settings, BuildScratch& scratch,
               TopCells& top) {
  top.cells.assign(1, Cell{.begin = 0, .end = static_cast<std::uint32_t>(tree.keys.size())});
  top.level_begin.assign(1, 0);
  while (top.level_begin.back() < top.cells.size()) {
    const std::uint32_t first = top.level_begin.back();
    const auto last = static_cast<std::uint32_t>(top.cells.size());
    top.level_begin.push_back(last);
    split_top_level(first, last, tree.keys, settings, scratch.octant_bounds, top.cells);
  }
  std::vector<std::uint32_t> roots;
  for (std::uint32_t t = 0; t < top.cells.size(); ++t) {
    if (top.cells[t].is_leaf() && splits(top.cells[t], settings)) roots.push_back(t);
  }
  std::sort(roots.begin(), roots.end(), [&](std::uint32_t a, std::uint32_t b) {
    return top.cells[a].begin < top.cells[b].begin;
  });
  top.subtree.assign(top.cells.size(), kNoSubtree);
  scratch.subtrees.resize(roots.size());
  for (std::uint32_t s = 0; s < roots.size(); ++s) {
    scratch.subtrees[s].root = top.cells[roots[s]];
    scratch.subtrees[s].top_index = roots[s];
    top.subtree[roots[s]] = s;
  }
}

// Each level's cells, the top's and the subtrees', placed in the order of their bodies (a
// subtree's after every top cell that begins before its root); the tree's level_begin from them.
template <class T>
void place_levels(TopCells& top, std::span<SubtreeCells> subtrees, Octree<T>& tree) {
  const std::size_t top_levels = top.level_begin.size() - 1;
  std::size_t levels = top_levels;
  for (const SubtreeCells& subtree : subtrees) {
    while (levels <= kDeepestLevel && level_size(subtree, levels) > 0) ++levels;
  }
  top.placed.resize(top.cells.size());
  tree.level_begin.assign(1, 0);
  for (std::size_t level = 0; level < levels; ++level) {
    std::uint32_t placed = 0;
    std::size_t s = 0;
    const auto place_subtrees_before = [&](std::uint32_t body) {
      for (; s < subtrees.size() && subtrees[s].root.begin < body; ++s) {
        subtrees[s].placed_at[level] = placed;
        placed += level_size(subtrees[s], level);
      }
    };
    if (level < top_levels) {
      for (std::uint32_t t = top.level_begin[level]; t < top.level_begin[level + 1]; ++t) {
        place_subtrees_before(top.cells[t].begin);
        top.placed[t] = placed++;
      }
    }
    place_subtrees_before(std::numeric_limits<std::uint32_t>::max());
    tree.level_begin.push_back(tree.level_begin.back() + placed);
  }
}

template <class T>
std::uint32_t placed_top_cell(const TopCells& top, std::uint32_t t, const Octree<T>& tree) {
  return tree.level_begin[top.cells[t].level] + top.placed[t];
}

// Copies the top's cells to their places in the tree, each root given its subtree's children.
template <class T>
void place_top_cells(const TopCells& top, std::span<SubtreeCells> subtrees, Octree<T>& tree) {
  for (std::uint32_t t = 0; t < top.cells.size(); ++t) {
    Cell cell = top.cells[t];
    const std::size_t below = cell.level + std::size_t{1};
    if (top.subtree[t] != kNoSubtree) {
      cell.first_child = tree.level_begin[below] + subtrees[top.subtree[t]].placed_at[below];
    } else if (!cell.is_leaf()) {
      cell.first_child = tree.level_begin[below] + top.placed[cell.first_child];
    }
    tree.cells[placed_top_cell(top, t, tree)] = cell;
    if (top.subtree[t] != kNoSubtree) subtrees[top.subtree[t]].root_placed = top.placed[t];
  }
}

// One of the top's leaves or groups (of top cells), or in its place (subtree) a subtree's.
template <class Item>
struct TopEntry {
  Item item{};
  std::uint32_t subtree = kNoSubtree;
};

// The top's leaves and subtrees depth first (collect_leaves_below).
void collect_top_leaves(const TopCells& top, std::vector<TopEntry<std::uint32_t>>& entries) {
  std::array<std::uint32_t, 8 * (kDeepestLevel + 2)> stack{0};
  std::size_t size = 1;
  while (size > 0) {
    const std::uint32_t t = stack[--size];
    const Cell& cell = top.cells[t];
    if (top.subtree[t] != kNoSubtree) {
      entries.push_back({.subtree = top.subtree[t]});
      continue;
    }
    if (cell.is_leaf()) entries.push_back({.item = t});
    for (std::uint32_t k = cell.child_count; k-- > 0;) stack[size++] = cell.first_child + k;
  }
}

// The top's groups and subtrees (collect_group_runs).
void collect_top_groups_below(const Cell& cell, const TopCells& top, const TreeSettings& settings,
                              std::vector<TopEntry<TargetGroup>>& entries) {
  collect_group_runs(
      cell, top.cells, settings, [&](const TargetGroup& group) { entries.push_back({group}); },
      [&](std::uint32_t child) {
        if (top.subtree[child] != kNoSubtree) {
          entries.push_back({.subtree = top.subtree[child]});
        } else {
          collect_top_groups_below(top.cells[child], top, settings, entries);
        }
      });
}

void collect_top_groups(const TopCells& top, const TreeSettings& settings,
                        std::vector<TopEntry<TargetGroup>>& entries) {
  if (can_be_group(top.cells[0], settings)) {
    entries.push_back({TargetGroup{.first_cell = 0, .cell_count = 1}});
  } else if (top.subtree[0] != kNoSubtree) {
    entries.push_back({.subtree = top.subtree[0]});
  } else {
    collect_top_groups_below(top.cells[0], top, settings, entries);
  }
}

// Sizes `out` for the top's entries with the subtrees' in their place, and writes the top's own
// (`place` turns one into the tree's numbering) and where each subtree's go.
template <class Item, class Count, class Place>
void place_entries(std::span<const TopEntry<Item>> entries, std::span<SubtreeCells> subtrees,
                   Count&& count, std::size_t SubtreeCells::*at, Place&& place,
                   std::vector<Item>& out) {
  std::size_t total = 0;
  for (const TopEntry<Item>& entry : entries) {
    total += entry.subtree == kNoSubtree ? 1 : count(subtrees[entry.subtree]);
  }
  out.resize(total);
  std::size_t next = 0;
  for (const TopEntry<Item>& entry : entries) {
    if (entry.subtree == kNoSubtree) {
      out[next++] = place(entry.item);
    } else {
      subtrees[entry.subtree].*at = next;
      next += count(subtrees[entry.subtree]);
    }
  }
}

// Copies a subtree's cells, leaves and groups to their places in the tree.
template <class T>
void place_subtree(const SubtreeCells& subtree, Octree<T>& tree) {
  // What each level's cells add to their index here to have it in the tree (modulo 2^32).
  std::array<std::uint32_t, kDeepestLevel + 2> shift{};
  const std::size_t levels = tree.level_begin.size() - 1;
  for (std::size_t level = subtree.root.level + std::size_t{1}; level < levels; ++level) {
    shift[level] = tree.level_begin[level] + subtree.placed_at[level] - subtree.level_start[level];
  }
  for (std::size_t level = subtree.root.level + std::size_t{1}; level < levels; ++level) {
    for (std::uint32_t c = subtree.level_start[level]; c < subtree.level_start[level + 1]; ++c) {
      // Copied whole and then given its first child: a copy of a Cell built on the stack would
      // read its 14 bytes across the two stores that wrote them, which the core cannot forward.
      Cell& cell = tree.cells[c + shift[level]];
      cell = subtree.cells[c];
      if (!cell.is_leaf()) cell.first_child += shift[level + 1];
    }
  }
  // The leaves depth first here, from the cells just copied, rather than copied from a list of
  // the task that built the subtree: a leaf's place would cost a lookup of its level.
  const Cell& root = tree.cells[tree.level_begin[subtree.root.level] + subtree.root_placed];
  collect_leaves_below(root, tree.cells, tree.leaves.data() + subtree.leaves_at);
  for (std::size_t k = 0; k < subtree.groups.size(); ++k) {
    TargetGroup group = subtree.groups[k];
    group.first_cell += shift[subtree.cells[group.first_cell].level];
    tree.groups[subtree.groups_at + k] = group;
  }
}

template <class T>
void build_cells(const TreeSettings& settings, Octree<T>& tree, BuildScratch& scratch) {
  TopCells top;
  build_top(tree, settings, scratch, top);
  const std::span<SubtreeCells> subtrees(scratch.subtrees);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, subtrees.size(), 1),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      for (std::size_t s = range.begin(); s != range.end(); ++s) {
                        build_subtree(tree.keys, settings, subtrees[s]);
                      }
                    });
  for (const SubtreeCells& subtree : subtrees) {
    top.cells[subtree.top_index].child_count = subtree.root.child_count;
  }
  place_levels(top, subtrees, tree);
  tree.cells.resize(tree.level_begin.back());
  place_top_cells<T>(top, subtrees, tree);
  const auto place_cell = [&](std::uint32_t t) { return placed_top_cell(top, t, tree); };
  std::vector<TopEntry<std::uint32_t>> leaf_entries;
  collect_top_leaves(top, leaf_entries);
  place_entries<std::uint32_t>(
      leaf_entries, subtrees, [](const SubtreeCells& subtree) { return subtree.leaf_count; },
      &SubtreeCells::leaves_at, place_cell, tree.leaves);
  std::vector<TopEntry<TargetGroup>> group_entries;
  collect_top_groups(top, settings, group_entries);
  place_entries<TargetGroup>(
      group_entries, subtrees, [](const SubtreeCells& subtree) { return subtree.groups.size(); },
      &SubtreeCells::groups_at,
      [&](TargetGroup group) {
        group.first_cell = place_cell(group.first_cell);
        return group;
      },
      tree.groups);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, subtrees.size(), 1),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      for (std::size_t s = range.begin(); s != range.end(); ++s) {
                        place_subtree(subtrees[s], tree);
                      }
                    });
}

// A cell's cube comes from the key of its first body, a line the upward pass reads for nothing
// else: a miss a cell at 1M, which the core would wait for. The keys are asked for this many cells
// ahead, so that their misses overlap with the arithmetic of the cells before (2 to 16 ahead gave
// about the same).
constexpr std::uint32_t kCellsAheadOfTheirKeys = 4;

// The upward pass: each level from the deepest up, its cells in parallel, a leaf from its bodies
// and any other cell from its children (finished one level below).
template <class T>
void compute_moments(Octree<T>& tree) {
  tree.moments.resize(tree.cells.size());
  tree.criteria.resize(tree.cells.size());
  const std::span<const Body<T>> bodies(tree.sorted_bodies);
  for (std::size_t level = tree.level_begin.size() - 1; level-- > 0;) {
    tbb::parallel_for(
        tbb::blocked_range<std::uint32_t>(tree.level_begin[level], tree.level_begin[level + 1],
                                          kCellsATask),
        [&](const tbb::blocked_range<std::uint32_t>& range) {
          for (std::uint32_t c = range.begin(); c != range.end(); ++c) {
            if (c + kCellsAheadOfTheirKeys < range.end()) {
              __builtin_prefetch(&tree.keys[tree.cells[c + kCellsAheadOfTheirKeys].begin]);
            }
            const Cell& cell = tree.cells[c];
            const BoundingCube cube = cell_cube(tree.keys[cell.begin], cell.level, tree.cube);
            const CellMoments moments =
                cell.is_leaf()
                    ? moments_of_bodies(bodies.subspan(cell.begin, cell.body_count()), cube)
                    : moments_of_children(std::span<const CellMoments>(tree.moments)
                                              .subspan(cell.first_child, cell.child_count),
                                          cube);
            tree.moments[c] = moments;
            tree.criteria[c] = {moments.centre, moments.b_max * moments.b_max};
          }
        });
  }
}

}  // namespace

template <class T>
void rebuild_octree(std::span<const Body<T>> bodies, const TreeSettings& settings, Octree<T>& tree,
                    BuildScratch& scratch, BuildSeconds& seconds) {
  if (bodies.empty() || bodies.size() >= std::numeric_limits<std::uint32_t>::max()) {
    throw std::invalid_argument("build_octree: needs between 1 and 2^32 - 2 bodies");
  }
  if (settings.leaf_capacity == 0 || settings.group_capacity == 0) {
    throw std::invalid_argument("build_octree: a leaf or group capacity of 0");
  }
  SteadyClock::time_point start = SteadyClock::now();
  tree.cube = parallel_bounding_cube(bodies);
  morton_keys(bodies, tree);
  seconds.keys = seconds_since(start);
  start = SteadyClock::now();
  sort_keys(tree.keys, tree.input_index, scratch.sort);
  gather_sorted<T>(bodies, tree);
  seconds.sort = seconds_since(start);
  start = SteadyClock::now();
  build_cells(settings, tree, scratch);
  seconds.build = seconds_since(start);
  start = SteadyClock::now();
  compute_moments(tree);
  seconds.moments = seconds_since(start);
}

template void rebuild_octree<float>(std::span<const Body<float>>, const TreeSettings&,
                                    Octree<float>&, BuildScratch&, BuildSeconds&);
template void rebuild_octree<double>(std::span<const Body<double>>, const TreeSettings&,
                                     Octree<double>&, BuildScratch&, BuildSeconds&);

}  // namespace nbody::cpu::tree
