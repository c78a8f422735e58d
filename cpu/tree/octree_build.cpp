// The octree build: Morton keys, a parallel sort (nbody/cpu/tree/key_sort.hpp), the cells level
// by level, the upward pass.
#include <algorithm>
#include <array>
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

template <class T>
void gather_sorted(std::span<const Body<T>> bodies, Octree<T>& tree) {
  tree.sorted_bodies.resize(bodies.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, bodies.size(), kBodiesATask),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      for (std::size_t k = range.begin(); k != range.end(); ++k) {
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

// Appends the children of the cells [first, last) (one level) after them, setting each parent's
// first_child and child_count. The octants are found in parallel; the offsets by a scan.
void split_level(std::uint32_t first, std::uint32_t last, std::span<const std::uint64_t> keys,
                 const TreeSettings& settings, std::vector<OctantBounds>& bounds,
                 std::vector<Cell>& cells) {
  bounds.resize(last - first);
  tbb::parallel_for(tbb::blocked_range<std::uint32_t>(first, last, kCellsATask),
                    [&](const tbb::blocked_range<std::uint32_t>& range) {
                      for (std::uint32_t c = range.begin(); c != range.end(); ++c) {
                        if (splits(cells[c], settings))
                          bounds[c - first] = octant_bounds(cells[c], keys);
                      }
                    });
  auto next = static_cast<std::uint32_t>(cells.size());
  for (std::uint32_t c = first; c < last; ++c) {
    Cell& parent = cells[c];
    if (!splits(parent, settings)) continue;
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
                        const OctantBounds& b = bounds[c - first];
                        std::uint32_t child = parent.first_child;
                        for (unsigned octant = 0; octant < 8; ++octant) {
                          if (b[octant] == b[octant + 1]) continue;
                          cells[child++] =
                              Cell{.begin = b[octant],
                                   .end = b[octant + 1],
                                   .level = static_cast<std::uint8_t>(parent.level + 1)};
                        }
                      }
                    });
}

std::uint32_t group_capacity_of(const TreeSettings& settings) {
  return static_cast<std::uint32_t>(
      std::min<std::size_t>(settings.group_capacity, std::numeric_limits<std::uint32_t>::max()));
}

bool can_be_group(const Cell& cell, const TreeSettings& settings) {
  return can_be_target_group(cell.body_count(), cell.is_leaf(), group_capacity_of(settings));
}

// The groups below `c`, a cell that cannot be one (nbody/tree_groups.hpp): runs of its children
// that can be, and the groups below the others. Depth first, children in octant order, so that the
// groups come in the sorted order of their bodies and neighbouring walks, which visit mostly the
// same cells, run in turn.
template <class T>
void collect_groups_below(std::uint32_t c, const TreeSettings& settings, Octree<T>& tree) {
  const Cell cell = tree.cells[c];
  TargetGroup run{};
  std::uint32_t run_bodies = 0;
  const auto close_run = [&] {
    if (run.cell_count > 0) tree.groups.push_back(run);
    run = {};
    run_bodies = 0;
  };
  for (std::uint32_t child = cell.first_child; child < cell.first_child + cell.child_count;
       ++child) {
    const Cell& sibling = tree.cells[child];
    if (!can_be_group(sibling, settings)) {
      close_run();
      collect_groups_below(child, settings, tree);
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

// The leaves depth first, children in octant order: in the sorted order of their bodies.
template <class T>
void collect_leaves_and_groups(const TreeSettings& settings, Octree<T>& tree) {
  std::vector<std::uint32_t> stack{0};
  while (!stack.empty()) {
    const std::uint32_t c = stack.back();
    stack.pop_back();
    const Cell& cell = tree.cells[c];
    if (cell.is_leaf()) tree.leaves.push_back(c);
    for (std::uint32_t k = cell.child_count; k-- > 0;) stack.push_back(cell.first_child + k);
  }
  if (can_be_group(tree.cells[0], settings)) {
    tree.groups.push_back({.first_cell = 0, .cell_count = 1});
  } else {
    collect_groups_below(0, settings, tree);
  }
}

template <class T>
void build_cells(const TreeSettings& settings, Octree<T>& tree, BuildScratch& scratch) {
  tree.cells.assign(1, Cell{.begin = 0, .end = static_cast<std::uint32_t>(tree.keys.size())});
  tree.level_begin.assign(1, 0);
  tree.leaves.clear();
  tree.groups.clear();
  // At most kDeepestLevel + 1 levels: a cell of the deepest level is never split.
  while (tree.level_begin.back() < tree.cells.size()) {
    const std::uint32_t first = tree.level_begin.back();
    const auto last = static_cast<std::uint32_t>(tree.cells.size());
    tree.level_begin.push_back(last);
    split_level(first, last, tree.keys, settings, scratch.octant_bounds, tree.cells);
  }
  collect_leaves_and_groups(settings, tree);
}

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
