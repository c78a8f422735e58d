// GpuTreeEvaluator: the device buffers of one body count and the phases of an evaluation, enqueued
// on one stream and timed by events between them. The build reads one count back per level (the
// cells of the next level), as a level-by-level build must; everything else stays on the device.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include "nbody/gpu/cuda_check.hpp"
#include "nbody/gpu/cuda_resources.hpp"
#include "nbody/gpu/tree/gpu_tree.hpp"
#include "nbody/physics.hpp"
#include "tree_kernels.cuh"

namespace nbody::gpu::tree {

using namespace detail;

namespace {

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

// Phases, in order: the events between them time each.
enum Phase { kStart, kKeys, kSort, kBuild, kMoments, kTraversal, kPhaseEvents };

}  // namespace

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
  // The cells, and the scratch of one level's split; grown as a tree needs.
  DeviceBuffer<GpuCell> cells{n / 4 + 64};
  DeviceBuffer<std::uint32_t> octant_bounds, child_counts, child_offsets;
  DeviceBuffer<CellMoments> moments;
  DeviceBuffer<CellCriterion> criterion;
  DeviceBuffer<CellMultipole<T>> multipoles;
  DeviceBuffer<WalkItem> walk_heads{n}, walks{n};
  DeviceBuffer<TreeCounters> counters{1};
  DeviceBuffer<std::uint32_t> stacks;
  DeviceBuffer<Vec3<T>> accelerations{n};
  PinnedBuffer<std::uint32_t> level_total{1};
  PinnedBuffer<TreeCounters> host_counters{1};
  std::vector<std::uint32_t> level_begin;
  int walk_blocks = 0;

  // CUB's temporary storage, grown to `bytes`.
  void* scratch(std::size_t bytes) {
    grow(cub_scratch, bytes, 0, stream);
    return cub_scratch.data();
  }

  void enqueue_keys_and_sort();
  std::uint32_t build_cells();
  void enqueue_groups(std::uint32_t cell_count);
  void enqueue_moments(std::uint32_t cell_count, double softening_squared);
  void enqueue_walks(double theta_squared, T softening_squared);
};

template <class T>
void GpuTreeEvaluator<T>::State::enqueue_keys_and_sort() {
  const auto count = static_cast<std::uint32_t>(n);
  enqueue_bounding_cube<T>(input_bodies.data(), count, bounds_partials.data(), cube.data(),
                           stream.get());
  enqueue_morton_keys<T>(input_bodies.data(), count, cube.data(), unsorted_keys.data(),
                         unsorted_indices.data(), stream.get());
  events[kKeys].record(stream);
  // Stable, so that coincident bodies (equal keys) keep their input order, as the CPU's sort by
  // (key, index) orders them. 63 bits: three of 21 per axis.
  constexpr int kKeyBits = 3 * kMortonBitsPerAxis;
  std::size_t bytes = 0;
  check_cuda(cub::DeviceRadixSort::SortPairs(nullptr, bytes, unsorted_keys.data(), keys.data(),
                                             unsorted_indices.data(), input_index.data(), count, 0,
                                             kKeyBits, stream.get()));
  check_cuda(cub::DeviceRadixSort::SortPairs(scratch(bytes), bytes, unsorted_keys.data(),
                                             keys.data(), unsorted_indices.data(),
                                             input_index.data(), count, 0, kKeyBits, stream.get()));
  enqueue_gather<T>(input_bodies.data(), input_index.data(), count, sorted_bodies.data(),
                    stream.get());
  events[kSort].record(stream);
}

// The cells level by level, as the CPU's build_cells; returns their count. Each level waits for
// its count of children, read back once the scan of the level is done.
template <class T>
std::uint32_t GpuTreeEvaluator<T>::State::build_cells() {
  const GpuCell root{0, static_cast<std::uint32_t>(n), 0, 0, 0};
  check_cuda(
      cudaMemcpyAsync(cells.data(), &root, sizeof root, cudaMemcpyHostToDevice, stream.get()));
  level_begin.assign(1, 0);
  std::uint32_t first = 0, last = 1;
  while (first < last) {
    level_begin.push_back(last);
    const std::uint32_t count = last - first;
    grow(octant_bounds, 9 * std::size_t{count}, 0, stream);
    grow(child_counts, count, 0, stream);
    grow(child_offsets, count, 0, stream);
    enqueue_split_count(cells.data(), first, count, keys.data(),
                        static_cast<std::uint32_t>(settings.leaf_capacity), octant_bounds.data(),
                        child_counts.data(), counters.data(), stream.get());
    std::size_t bytes = 0;
    check_cuda(cub::DeviceScan::InclusiveSum(nullptr, bytes, child_counts.data(),
                                             child_offsets.data(), count, stream.get()));
    check_cuda(cub::DeviceScan::InclusiveSum(scratch(bytes), bytes, child_counts.data(),
                                             child_offsets.data(), count, stream.get()));
    check_cuda(cudaMemcpyAsync(level_total.data(), child_offsets.data() + count - 1,
                               sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream.get()));
    stream.synchronize();
    const std::uint32_t children = level_total[0];
    if (children > 0) {
      grow(cells, std::size_t{last} + children, last, stream);
      enqueue_split_write(cells.data(), first, count, octant_bounds.data(), child_counts.data(),
                          child_offsets.data(), last, stream.get());
    }
    first = last;
    last += children;
  }
  return last;
}

// The groups, and their walks in the sorted order of their targets (neighbouring walks, which
// visit mostly the same cells, start together).
template <class T>
void GpuTreeEvaluator<T>::State::enqueue_groups(std::uint32_t cell_count) {
  check_cuda(cudaMemsetAsync(walk_heads.data(), 0xff, walk_heads.bytes(), stream.get()));
  enqueue_walk_heads(cells.data(), cell_count, static_cast<std::uint32_t>(settings.group_capacity),
                     walk_heads.data(), counters.data(), stream.get());
  unsigned int* selected = &counters.data()->walks;
  const auto count = static_cast<std::uint32_t>(n);
  std::size_t bytes = 0;
  check_cuda(cub::DeviceSelect::If(nullptr, bytes, walk_heads.data(), walks.data(), selected, count,
                                   IsWalk{}, stream.get()));
  check_cuda(cub::DeviceSelect::If(scratch(bytes), bytes, walk_heads.data(), walks.data(), selected,
                                   count, IsWalk{}, stream.get()));
}

template <class T>
void GpuTreeEvaluator<T>::State::enqueue_moments(std::uint32_t cell_count,
                                                 double softening_squared) {
  grow(moments, cell_count, 0, stream);
  grow(criterion, cell_count, 0, stream);
  grow(multipoles, cell_count, 0, stream);
  // level_begin ends with the cell count: levels [level_begin[L], level_begin[L + 1]).
  for (std::size_t level = level_begin.size() - 1; level-- > 0;) {
    const std::uint32_t first = level_begin[level];
    enqueue_level_moments<T>(cells.data(), first, level_begin[level + 1] - first,
                             sorted_bodies.data(), keys.data(), cube.data(), softening_squared,
                             moments.data(), criterion.data(), multipoles.data(), stream.get());
  }
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
                              .counters = counters.data()};
  enqueue_traversal<T>(args, walk_blocks, stream.get());
}

template <class T>
GpuTreeEvaluator<T>::GpuTreeEvaluator(std::size_t n, const GpuTreeSettings& settings) {
  if (settings.leaf_capacity == 0 || settings.group_capacity == 0) {
    throw std::invalid_argument("GpuTreeEvaluator: the leaf and group capacities must be >= 1");
  }
  if (n >= std::numeric_limits<std::uint32_t>::max()) {
    throw std::invalid_argument("GpuTreeEvaluator: at most 2^32 - 2 bodies");
  }
  check_cuda(cudaSetDevice(settings.gpu_device));
  state_ = std::make_unique<State>(n, settings);
  // Persistent walks: as many warps as the device holds at once, fewer for few bodies.
  const std::size_t most_useful = (n + kTraversalWarpsPerBlock - 1) / kTraversalWarpsPerBlock;
  state_->walk_blocks = static_cast<int>(std::min<std::size_t>(
      traversal_blocks<T>(settings.gpu_device), std::max<std::size_t>(1, most_useful)));
  state_->stacks = DeviceBuffer<std::uint32_t>(std::size_t{kTraversalStackCapacity} *
                                               kTraversalWarpsPerBlock * state_->walk_blocks);
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
  check_cuda(cudaMemsetAsync(s.counters.data(), 0, sizeof(TreeCounters), s.stream.get()));
  s.events[kStart].record(s.stream);
  s.enqueue_keys_and_sort();
  const std::uint32_t cell_count = s.build_cells();
  s.enqueue_groups(cell_count);
  s.events[kBuild].record(s.stream);
  s.enqueue_moments(cell_count, softening_squared);
  s.events[kMoments].record(s.stream);
  s.enqueue_walks(theta * theta, static_cast<T>(softening_squared));
  s.events[kTraversal].record(s.stream);
  check_cuda(cudaMemcpyAsync(s.host_counters.data(), s.counters.data(), sizeof(TreeCounters),
                             cudaMemcpyDeviceToHost, s.stream.get()));
  s.stream.synchronize();
  const TreeCounters& counted = s.host_counters[0];
  if (counted.stack_overflow != 0) {
    throw std::runtime_error("GpuTreeEvaluator::evaluate: a walk's stack overflowed");
  }
  result.seconds = {.keys = s.events[kKeys].seconds_since(s.events[kStart]),
                    .sort = s.events[kSort].seconds_since(s.events[kKeys]),
                    .build = s.events[kBuild].seconds_since(s.events[kSort]),
                    .moments = s.events[kMoments].seconds_since(s.events[kBuild]),
                    .traversal = s.events[kTraversal].seconds_since(s.events[kMoments])};
  result.interactions = {.body_body = counted.body_body, .body_cell = counted.body_cell};
  result.shape = {.cells = cell_count,
                  .leaves = counted.leaves,
                  .groups = counted.groups,
                  .depth = static_cast<int>(s.level_begin.size()) - 2};
  return result;
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
