// GpuTreeEvaluator: the device buffers of one body count and the phases of an evaluation, enqueued
// on one stream and timed by events between them, with nothing read back before the end. The
// cells' buffers hold as many as the last tree had (half the bodies at first); a tree of more is
// found at the end and evaluated again in larger ones.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include "nbody/gpu/cuda_check.hpp"
#include "nbody/gpu/cuda_resources.hpp"
#include "nbody/gpu/tree/gpu_tree.hpp"
#include "nbody/physics.hpp"
#include "tree_kernels.cuh"

namespace nbody::gpu::tree {

using namespace detail;

namespace {

struct KeyLess {
  __device__ bool operator()(std::uint64_t a, std::uint64_t b) const { return a < b; }
};

// How the keys are sorted by default: few by the rank sort; up to kMergeSortCapacity by CUB's
// merge sort (stable, in place); above, by the radix sort's passes over the keys' high half, then
// the runs sharing it, which from 64K take less than the merge sort and from 64K to 4M 0.56 to
// 0.68 of the time of the radix sort's passes over every bit (measured on the H200:
// docs/perf-notes.md, "Tree codes").
constexpr std::size_t kMergeSortCapacity = 32768;

GpuKeySort key_sort_by_n(std::size_t n) {
  if (n <= kRankSortCapacity) return GpuKeySort::rank;
  if (n <= kMergeSortCapacity) return GpuKeySort::merge;
  return GpuKeySort::radix_by_halves;
}

// Where teams of warps take walks of 64 targets, few each, a group of cells an eighth of the root
// cube's side or larger (levels 0 to 3: there, only the sparse outskirts) is walked in shorter
// runs: its long walk had held the launch at 64K. Below 32K the walks take 32 targets or fewer, and
// those levels hold a uniform input's ordinary groups (measured on the H200: docs/perf-notes.md,
// "Tree codes").
int shallow_group_levels(std::size_t n, const GpuTreeSettings& settings) {
  if (settings.shallow_group_levels >= 0) return settings.shallow_group_levels;
  return n > 32768 && n <= 131072 ? 4 : 0;
}

struct IsWalk {
  __device__ bool operator()(const WalkItem& item) const { return item.first_target != kNoWalk; }
};

// Makes `buffer` hold at least `size` elements, keeping its first `keep` (copied on `stream`).
template <class E>
void grow(DeviceBuffer<E>& buffer, std::size_t size, std::size_t keep, const Stream& stream) {
  if (buffer.size() >= size) return;
  DeviceBuffer<E> larger(std::max(size, buffer.size() * 2));
  if (keep > 0) {
    check_cuda(cudaMemcpyAsync(larger.data(), buffer.data(), keep * sizeof(E),
                               cudaMemcpyDeviceToDevice, stream.get()));
  }
  stream.synchronize();
  buffer = std::move(larger);
}

// The warps that walk each group together, and the targets a walk takes at most. Where the groups
// are few, a sparse group whose box opens most of the tree would keep one warp busy long after the
// others are done, so its cells' tests and terms are shared by more warps, and its targets by
// more walks (each from the whole group's box: the same lists, more SMs); where they are many, a
// team's rounds wait on its slowest warp for nothing, and each walk repeats the tests (measured on
// the H200: docs/perf-notes.md, "Tree codes").
struct WalkShape {
  int warps;
  std::uint32_t targets;
};

template <class T>
WalkShape walk_shape_by_n(std::size_t n) {
  const bool f32 = std::is_same_v<T, float>;
  if (n <= 4096 && f32) return {8, 16};
  if (n <= 8192 && !f32) return {16, 32};
  if (n <= 32768) return {8, 32};
  if (n <= 131072) return {4, kTargetsPerWalk};
  if (n <= 262144) return {2, kTargetsPerWalk};
  return {1, kTargetsPerWalk};
}

template <class T>
WalkShape walk_shape(std::size_t n, const GpuTreeSettings& settings) {
  WalkShape shape = walk_shape_by_n<T>(n);
  if (settings.warps_per_walk != 0) shape.warps = settings.warps_per_walk;
  if (settings.targets_per_walk != 0) {
    shape.targets = static_cast<std::uint32_t>(settings.targets_per_walk);
  }
  return shape;
}

// The upward pass's lanes a cell. Up to 32K bodies the levels of one cooperative launch, each
// waiting on its slowest cell's float64 operations over its items, which a team of 8 lanes shares;
// above, a thread a cell, climbing from the leaves with no wait for the grid (measured on the
// H200: docs/perf-notes.md, "Tree codes").
int moments_lanes(std::size_t n, const GpuTreeSettings& settings) {
  if (settings.moments_lanes != 0) return settings.moments_lanes;
  return n <= 32768 ? 8 : 1;
}

// As many blocks as hold a team (or a climbing thread) for every four bodies (the leaves are
// about a fifth of them) at once; in the cooperative launch at most one an SM: the fewer blocks,
// the cheaper each wait for a level.
template <class T>
MomentsLaunch moments_launch(std::size_t n, const GpuTreeSettings& settings) {
  const int lanes = moments_lanes(n, settings);
  const std::size_t threads = n / 4 * static_cast<std::size_t>(lanes);
  const std::size_t blocks = (threads + kMomentsThreads - 1) / kMomentsThreads;
  const std::size_t climbing_blocks =
      lanes == 1 ? std::max<std::size_t>(1, (threads + kClimbingThreads - 1) / kClimbingThreads)
                 : 0;
  return {.lanes = lanes,
          .blocks = static_cast<int>(std::clamp<std::size_t>(
              blocks, 1, static_cast<std::size_t>(moments_blocks<T>(settings.gpu_device)))),
          .climbing_blocks = static_cast<int>(climbing_blocks)};
}

// Phases, in order: the events between them time each.
enum Phase { kStart, kKeys, kSort, kBuild, kMoments, kTraversal, kPhaseEvents };

}  // namespace

// The walks' order: where teams walk, the few walks of each team are led by the longest; above,
// one warp walks each of many short walks, which gain more from the walks running at once sharing
// their cells (measured on the H200: docs/perf-notes.md, "Tree codes").
GpuWalkOrder walk_order_for(std::size_t n, const GpuTreeSettings& settings) {
  if (settings.walk_order != GpuWalkOrder::by_n) return settings.walk_order;
  return n <= 131072 ? GpuWalkOrder::shallowest_first : GpuWalkOrder::targets;
}

std::optional<std::string> gpu_tree_unavailable_reason(int ordinal) {
  int count = 0;
  if (const cudaError_t status = cudaGetDeviceCount(&count); status != cudaSuccess) {
    cudaGetLastError();
    return std::string("cudaGetDeviceCount: ") + cudaGetErrorString(status);
  }
  if (ordinal < 0 || ordinal >= count) {
    return "no device " + std::to_string(ordinal) + ": this machine has " + std::to_string(count);
  }
  return std::nullopt;
}

template <class T>
struct GpuTreeEvaluator<T>::State {
  State(std::size_t body_count, const GpuTreeSettings& tree_settings)
      : n(body_count), settings(tree_settings) {}

  std::size_t n;
  GpuTreeSettings settings;
  Stream stream;
  Event events[kPhaseEvents];
  DeviceBuffer<Body<T>> input_bodies{n};
  DeviceBuffer<Body<T>> sorted_bodies{n};
  DeviceBuffer<std::uint64_t> unsorted_keys{n}, keys{n};
  DeviceBuffer<std::uint32_t> unsorted_indices{n}, input_index{n};
  DeviceBuffer<BoundsPartial> bounds_partials{kMaxBoundsBlocks};
  DeviceBuffer<BoundingCube> cube{1};
  DeviceBuffer<std::byte> cub_scratch;
  // The cells and their build's scratch, cell_capacity of each.
  std::uint32_t cell_capacity = 0;
  DeviceBuffer<std::uint32_t> cell_counts{n}, inclusive_cell_counts{n};
  DeviceBuffer<GpuCell> cells, emitted_cells;
  DeviceBuffer<std::uint32_t> parents, arrivals;
  DeviceBuffer<std::uint8_t> emitted_levels, sorted_levels;
  DeviceBuffer<std::uint32_t> emitted_slots, sorted_slots, place_of_slot;
  DeviceBuffer<std::byte> cell_build_cub;
  DeviceBuffer<CellMoments> moments;
  DeviceBuffer<CellCriterion> criterion;
  DeviceBuffer<CellMultipole<T>> multipoles;
  DeviceBuffer<WalkItem> walk_heads{n}, walks{n};
  DeviceBuffer<TreeCounters> counters{1};
  DeviceBuffer<std::uint32_t> stacks;
  DeviceBuffer<Vec3<T>> accelerations{n};
  PinnedBuffer<TreeCounters> host_counters{1};
  TraversalLaunch walk_launch;
  MomentsLaunch moments_launch;
  // Each phase as one graph, once an evaluation has sized every buffer: at small N their tens of
  // short kernels otherwise wait on their launches. Captured for one theta and softening; the
  // events between the phases are recorded apart (an event recorded in a graph cannot time).
  bool warmed_up = false;
  GraphExec phase_graphs[kPhaseEvents - 1];
  std::pair<double, double> captured_for{-1, -1};
  // Set once a sort by halves has met a run too long to order: every later sort takes all bits.
  bool whole_keys = false;

  // CUB's temporary storage, grown to `bytes`.
  void* scratch(std::size_t bytes) {
    grow(cub_scratch, bytes, 0, stream);
    return cub_scratch.data();
  }

  GpuKeySort key_sort() const {
    const GpuKeySort chosen =
        settings.key_sort == GpuKeySort::by_n ? key_sort_by_n(n) : settings.key_sort;
    return chosen == GpuKeySort::radix_by_halves && whole_keys ? GpuKeySort::radix : chosen;
  }
  // The phases enqueued afresh at the next evaluation, and captured again after it.
  void forget_graphs();
  void reserve_cells(std::uint32_t capacity);
  void enqueue_keys();
  void enqueue_sort();
  void enqueue_cells_and_groups();
  void enqueue_upward_pass(double softening_squared);
  void enqueue_walks(double theta_squared, T softening_squared);
  void enqueue_phase(int phase, double theta, double softening_squared);
  const TreeCounters& evaluate_once(double theta, double softening_squared);
};

template <class T>
void GpuTreeEvaluator<T>::State::forget_graphs() {
  stream.synchronize();
  for (GraphExec& graph : phase_graphs) graph = GraphExec();
  warmed_up = false;
}

template <class T>
void GpuTreeEvaluator<T>::State::reserve_cells(std::uint32_t capacity) {
  forget_graphs();
  cell_capacity = capacity;
  cells = DeviceBuffer<GpuCell>(capacity);
  parents = DeviceBuffer<std::uint32_t>(capacity);
  arrivals = DeviceBuffer<std::uint32_t>(capacity);
  emitted_cells = DeviceBuffer<GpuCell>(capacity);
  emitted_levels = DeviceBuffer<std::uint8_t>(capacity);
  sorted_levels = DeviceBuffer<std::uint8_t>(capacity);
  for (DeviceBuffer<std::uint32_t>* buffer : {&emitted_slots, &sorted_slots, &place_of_slot}) {
    *buffer = DeviceBuffer<std::uint32_t>(capacity);
  }
  cell_build_cub = DeviceBuffer<std::byte>(
      std::max<std::size_t>(1, cell_build_cub_bytes(static_cast<std::uint32_t>(n), capacity)));
  moments = DeviceBuffer<CellMoments>(capacity);
  criterion = DeviceBuffer<CellCriterion>(capacity);
  multipoles = DeviceBuffer<CellMultipole<T>>(capacity);
}

template <class T>
void GpuTreeEvaluator<T>::State::enqueue_keys() {
  const auto count = static_cast<std::uint32_t>(n);
  check_cuda(cudaMemsetAsync(counters.data(), 0, sizeof(TreeCounters), stream.get()));
  enqueue_bounding_cube<T>(input_bodies.data(), count, bounds_partials.data(), cube.data(),
                           stream.get());
  // The merge sort sorts in place: the keys go straight where they are sorted.
  const bool in_place = key_sort() == GpuKeySort::merge;
  enqueue_morton_keys<T>(input_bodies.data(), count, cube.data(),
                         in_place ? keys.data() : unsorted_keys.data(),
                         in_place ? input_index.data() : unsorted_indices.data(), stream.get());
}

template <class T>
void GpuTreeEvaluator<T>::State::enqueue_sort() {
  const auto count = static_cast<std::uint32_t>(n);
  // Stable, so that coincident bodies (equal keys) keep their input order, as the CPU's sort by
  // (key, index) orders them. 63 bits: three of 21 per axis.
  const GpuKeySort method = key_sort();
  if (method == GpuKeySort::rank) {
    enqueue_rank_sort<T>(unsorted_keys.data(), input_bodies.data(), count, keys.data(),
                         input_index.data(), sorted_bodies.data(), stream.get());
    return;
  }
  std::size_t bytes = 0;
  if (method == GpuKeySort::merge) {
    check_cuda(cub::DeviceMergeSort::StableSortPairs(
        nullptr, bytes, keys.data(), input_index.data(), count, KeyLess{}, stream.get()));
    check_cuda(cub::DeviceMergeSort::StableSortPairs(
        scratch(bytes), bytes, keys.data(), input_index.data(), count, KeyLess{}, stream.get()));
    enqueue_gather<T>(input_bodies.data(), input_index.data(), count, sorted_bodies.data(),
                      stream.get());
    return;
  }
  const bool by_halves = method == GpuKeySort::radix_by_halves;
  const int first_bit = by_halves ? kUnsortedLowKeyBits : 0;
  check_cuda(cub::DeviceRadixSort::SortPairs(nullptr, bytes, unsorted_keys.data(), keys.data(),
                                             unsorted_indices.data(), input_index.data(), count,
                                             first_bit, kMortonKeyBits, stream.get()));
  check_cuda(cub::DeviceRadixSort::SortPairs(
      scratch(bytes), bytes, unsorted_keys.data(), keys.data(), unsorted_indices.data(),
      input_index.data(), count, first_bit, kMortonKeyBits, stream.get()));
  if (by_halves) {
    enqueue_sort_key_runs_and_gather<T>(keys.data(), input_index.data(), input_bodies.data(), count,
                                        sorted_bodies.data(), counters.data(), stream.get());
  } else {
    enqueue_gather<T>(input_bodies.data(), input_index.data(), count, sorted_bodies.data(),
                      stream.get());
  }
}

// The cells from the sorted keys, and the groups, and their walks in walk_order_for's order.
template <class T>
void GpuTreeEvaluator<T>::State::enqueue_cells_and_groups() {
  const auto count = static_cast<std::uint32_t>(n);
  const CellBuildScratch build{.capacity = cell_capacity,
                               .counts = cell_counts.data(),
                               .inclusive_counts = inclusive_cell_counts.data(),
                               .emitted = emitted_cells.data(),
                               .emitted_levels = emitted_levels.data(),
                               .sorted_levels = sorted_levels.data(),
                               .emitted_slots = emitted_slots.data(),
                               .sorted_slots = sorted_slots.data(),
                               .place_of_slot = place_of_slot.data(),
                               .cub_scratch = cell_build_cub.data(),
                               .cub_bytes = cell_build_cub.size()};
  enqueue_cells(keys.data(), count, static_cast<std::uint32_t>(settings.leaf_capacity), build,
                cells.data(), parents.data(), counters.data(), stream.get());
  const std::uint32_t targets_per_walk = walk_shape<T>(n, settings).targets;
  const auto group_capacity = static_cast<std::uint32_t>(settings.group_capacity);
  if (walk_order_for(n, settings) == GpuWalkOrder::shallowest_first) {
    const WalkRuns runs{
        .targets = targets_per_walk,
        .shallow_levels = static_cast<std::uint32_t>(shallow_group_levels(n, settings)),
        .shallow_targets = static_cast<std::uint32_t>(settings.shallow_group_targets)};
    enqueue_appended_walks(cells.data(), cell_capacity, group_capacity, runs, walks.data(),
                           counters.data(), stream.get());
    return;
  }
  check_cuda(cudaMemsetAsync(walk_heads.data(), 0xff, walk_heads.bytes(), stream.get()));
  enqueue_walk_heads(cells.data(), cell_capacity, group_capacity, targets_per_walk,
                     walk_heads.data(), counters.data(), stream.get());
  unsigned int* selected = &counters.data()->walks;
  std::size_t bytes = 0;
  check_cuda(cub::DeviceSelect::If(nullptr, bytes, walk_heads.data(), walks.data(), selected, count,
                                   IsWalk{}, stream.get()));
  check_cuda(cub::DeviceSelect::If(scratch(bytes), bytes, walk_heads.data(), walks.data(), selected,
                                   count, IsWalk{}, stream.get()));
}

template <class T>
void GpuTreeEvaluator<T>::State::enqueue_upward_pass(double softening_squared) {
  enqueue_moments<T>(cells.data(), cell_capacity, sorted_bodies.data(), keys.data(), cube.data(),
                     softening_squared, counters.data(), parents.data(), arrivals.data(),
                     moments.data(), criterion.data(), multipoles.data(), moments_launch,
                     stream.get());
}

template <class T>
void GpuTreeEvaluator<T>::State::enqueue_walks(double theta_squared, T softening_squared) {
  const TraversalArgs<T> args{.cells = cells.data(),
                              .criterion = criterion.data(),
                              .moments = moments.data(),
                              .multipoles = multipoles.data(),
                              .sorted = sorted_bodies.data(),
                              .input_index = input_index.data(),
                              .walks = walks.data(),
                              .stacks = stacks.data(),
                              .theta_squared = theta_squared,
                              .softening_squared = softening_squared,
                              .accelerations = accelerations.data(),
                              .counters = counters.data(),
                              .cell_capacity = cell_capacity};
  enqueue_traversal<T>(args, walk_launch, stream.get());
}

template <class T>
GpuTreeEvaluator<T>::GpuTreeEvaluator(std::size_t n, const GpuTreeSettings& settings) {
  if (settings.leaf_capacity == 0 || settings.group_capacity == 0) {
    throw std::invalid_argument("GpuTreeEvaluator: the leaf and group capacities must be >= 1");
  }
  if (const int w = settings.warps_per_walk;
      w != 0 && w != 1 && w != 2 && w != 4 && w != 8 && w != 16) {
    throw std::invalid_argument("GpuTreeEvaluator: warps_per_walk must be 0, 1, 2, 4, 8 or 16");
  }
  if (const int l = settings.moments_lanes; l != 0 && l != 1 && l != 4 && l != 8) {
    throw std::invalid_argument("GpuTreeEvaluator: moments_lanes must be 0, 1, 4 or 8");
  }
  const auto is_run_length = [](int t) { return t == 8 || t == 16 || t == 32 || t == 64; };
  if (settings.targets_per_walk != 0 && !is_run_length(settings.targets_per_walk)) {
    throw std::invalid_argument("GpuTreeEvaluator: targets_per_walk must be 0, 8, 16, 32 or 64");
  }
  if (!is_run_length(settings.shallow_group_targets)) {
    throw std::invalid_argument("GpuTreeEvaluator: shallow_group_targets must be 8, 16, 32 or 64");
  }
  if (settings.shallow_group_levels < -1 || settings.shallow_group_levels > kDeepestLevel + 1) {
    throw std::invalid_argument("GpuTreeEvaluator: shallow_group_levels must be in [-1, " +
                                std::to_string(kDeepestLevel + 1) + "]");
  }
  if (settings.key_sort == GpuKeySort::rank && n > kRankSortCapacity) {
    throw std::invalid_argument("GpuTreeEvaluator: the rank sort takes at most " +
                                std::to_string(kRankSortCapacity) + " bodies");
  }
  if (n >= std::numeric_limits<std::uint32_t>::max()) {
    throw std::invalid_argument("GpuTreeEvaluator: at most 2^32 - 2 bodies");
  }
  check_cuda(cudaSetDevice(settings.gpu_device));
  state_ = std::make_unique<State>(n, settings);
  // Persistent walks: as many teams as the device holds at once, fewer for few bodies.
  TraversalLaunch& launch = state_->walk_launch;
  launch = traversal_launch<T>(settings.gpu_device, walk_shape<T>(n, settings).warps);
  const std::size_t teams_per_block =
      static_cast<std::size_t>(launch.warps_per_block / launch.members);
  const std::size_t most_useful = (n + teams_per_block - 1) / teams_per_block;
  launch.blocks =
      static_cast<int>(std::min<std::size_t>(launch.blocks, std::max<std::size_t>(1, most_useful)));
  state_->stacks = DeviceBuffer<std::uint32_t>(std::size_t{kTraversalStackCapacity} *
                                               launch.warps_per_block * launch.blocks);
  state_->reserve_cells(static_cast<std::uint32_t>(n / 2 + 64));
  state_->moments_launch = moments_launch<T>(n, settings);
}

template <class T>
GpuTreeEvaluator<T>::~GpuTreeEvaluator() = default;
template <class T>
GpuTreeEvaluator<T>::GpuTreeEvaluator(GpuTreeEvaluator&&) noexcept = default;
template <class T>
GpuTreeEvaluator<T>& GpuTreeEvaluator<T>::operator=(GpuTreeEvaluator&&) noexcept = default;

template <class T>
std::size_t GpuTreeEvaluator<T>::size() const {
  return state_->n;
}

template <class T>
void GpuTreeEvaluator<T>::set_bodies(std::span<const Body<double>> bodies) {
  if (bodies.size() != state_->n) {
    throw std::invalid_argument("GpuTreeEvaluator::set_bodies: " + std::to_string(bodies.size()) +
                                " bodies for an evaluator of " + std::to_string(state_->n));
  }
  check_cuda(cudaSetDevice(state_->settings.gpu_device));
  const std::vector<Body<T>> rounded = convert_precision<T, double>(bodies);
  check_cuda(cudaMemcpyAsync(state_->input_bodies.data(), rounded.data(),
                             state_->input_bodies.bytes(), cudaMemcpyHostToDevice,
                             state_->stream.get()));
  state_->stream.synchronize();
}

template <class T>
GpuTreeResult GpuTreeEvaluator<T>::evaluate(double theta, double softening) {
  if (!(theta >= 0 && theta <= 1)) {
    throw std::invalid_argument("GpuTreeEvaluator::evaluate: theta must be in [0, 1]");
  }
  if (!(softening >= kSmallestSoftening) || !std::isfinite(softening)) {
    throw std::invalid_argument(
        "GpuTreeEvaluator::evaluate: the softening must be finite and at "
        "least kSmallestSoftening");
  }
  GpuTreeResult result;
  State& s = *state_;
  if (s.n == 0) return result;
  check_cuda(cudaSetDevice(s.settings.gpu_device));
  const double softening_squared = softening * softening;
  const TreeCounters* counted = &s.evaluate_once(theta, softening_squared);
  if (counted->long_key_runs != 0) {
    s.whole_keys = true;
    s.forget_graphs();
    counted = &s.evaluate_once(theta, softening_squared);
  }
  if (counted->cells > s.cell_capacity) {
    s.reserve_cells(counted->cells + counted->cells / 4);
    counted = &s.evaluate_once(theta, softening_squared);
  }
  if (counted->stack_overflow != 0) {
    throw std::runtime_error("GpuTreeEvaluator::evaluate: a walk's stack overflowed");
  }
  result.seconds = {.keys = s.events[kKeys].seconds_since(s.events[kStart]),
                    .sort = s.events[kSort].seconds_since(s.events[kKeys]),
                    .build = s.events[kBuild].seconds_since(s.events[kSort]),
                    .moments = s.events[kMoments].seconds_since(s.events[kBuild]),
                    .traversal = s.events[kTraversal].seconds_since(s.events[kMoments])};
  result.interactions = {.body_body = counted->body_body, .body_cell = counted->body_cell};
  result.shape = {.cells = counted->cells,
                  .leaves = counted->leaves,
                  .groups = counted->groups,
                  .depth = static_cast<int>(counted->depth)};
  return result;
}

template <class T>
void GpuTreeEvaluator<T>::State::enqueue_phase(int phase, double theta, double softening_squared) {
  switch (phase) {
    case kKeys:
      return enqueue_keys();
    case kSort:
      return enqueue_sort();
    case kBuild:
      return enqueue_cells_and_groups();
    case kMoments:
      return enqueue_upward_pass(softening_squared);
    default:
      enqueue_walks(theta * theta, static_cast<T>(softening_squared));
      check_cuda(cudaMemcpyAsync(host_counters.data(), counters.data(), sizeof(TreeCounters),
                                 cudaMemcpyDeviceToHost, stream.get()));
  }
}

// Every phase enqueued (the first time one by one, which sizes CUB's scratch; then each as its
// graph), then the counters read back: the one wait of an evaluation.
template <class T>
const TreeCounters& GpuTreeEvaluator<T>::State::evaluate_once(double theta,
                                                              double softening_squared) {
  const std::pair<double, double> parameters{theta, softening_squared};
  const bool replay = warmed_up;
  if (replay && (phase_graphs[0].empty() || captured_for != parameters)) {
    for (int phase = kKeys; phase < kPhaseEvents; ++phase) {
      phase_graphs[phase - 1] =
          GraphExec::capture(stream, [&] { enqueue_phase(phase, theta, softening_squared); });
    }
    captured_for = parameters;
  }
  events[kStart].record(stream);
  for (int phase = kKeys; phase < kPhaseEvents; ++phase) {
    if (replay) {
      phase_graphs[phase - 1].launch(stream);
    } else {
      enqueue_phase(phase, theta, softening_squared);
    }
    events[phase].record(stream);
  }
  warmed_up = true;
  stream.synchronize();
  return host_counters[0];
}

template <class T>
std::vector<Vec3<double>> GpuTreeEvaluator<T>::accelerations() const {
  const State& s = *state_;
  std::vector<Vec3<T>> device_order(s.n);
  if (s.n > 0) {
    check_cuda(cudaSetDevice(s.settings.gpu_device));
    check_cuda(cudaMemcpyAsync(device_order.data(), s.accelerations.data(), s.accelerations.bytes(),
                               cudaMemcpyDeviceToHost, s.stream.get()));
    s.stream.synchronize();
  }
  std::vector<Vec3<double>> promoted(s.n);
  for (std::size_t i = 0; i < s.n; ++i) {
    promoted[i] = {device_order[i].x, device_order[i].y, device_order[i].z};
  }
  return promoted;
}

template class GpuTreeEvaluator<float>;
template class GpuTreeEvaluator<double>;

}  // namespace nbody::gpu::tree
