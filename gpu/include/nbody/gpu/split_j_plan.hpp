#pragma once
// Split-j's plan for gpu.tuned's tile kernel (formulations/tuned.cu): how many ways the j range
// (the sources) is split across blockIdx.y, where there are too few blocks of i bodies (the
// targets) to fill every SM or the last wave of blocks would leave SMs idle. Host arithmetic on
// the SM count and the occupancy the device reports; no CUDA here, so the CPU tests reach it.
#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace nbody::gpu {

// Warps per SM at which the FP32 pipes are taken to be saturated, for the split-j model. With 4+
// independent interactions in flight per thread, 4 warps per scheduler are plenty.
inline constexpr int kSaturatingWarpsPerSm = 16;
// Upper bound on the partial-sum scratch (bytes); large N never needs many splits.
inline constexpr std::size_t kMaxPartialBytes = std::size_t{256} << 20;
// Partial sums a thread of the last block may add (splits x bodies per thread) before a second
// kernel, whose threads take one body each, is faster: on the H100 the fused sum cost 11.5 us in
// all at N = 1024 (16 x 2), but 7 us more than sum_partials at N = 4096 (32 x 8).
inline constexpr int kMaxPartialSumsPerThreadInLastBlock = 32;

// The j range in `splits` parts of `tiles_per_split` tiles, the last part taking what is left.
struct SplitPlan {
  int splits = 1;
  int tiles_per_split = 1;
};

// Chooses how many ways to split the j range. Model: blocks go to SMs in waves of blocks_per_sm;
// an SM holding k blocks runs at min(1, k warps / kSaturatingWarpsPerSm) of its rate, so a last
// wave of few blocks is slow. The estimated time is the busiest SM's; the fewest splits within
// `tolerance` (a fraction) of the best estimate win (less scratch, a smaller reduction).
inline SplitPlan plan_splits(int i_blocks, int tiles, int sm_count, int blocks_per_sm,
                             int warps_per_block, int max_splits, double tolerance) {
  const auto saturation = [&](long long resident_blocks) {
    return std::min(1.0,
                    static_cast<double>(resident_blocks * warps_per_block) / kSaturatingWarpsPerSm);
  };
  std::vector<std::pair<SplitPlan, double>> candidates;
  for (int splits = 1; splits <= std::min(tiles, max_splits); ++splits) {
    const int tiles_per_split = (tiles + splits - 1) / splits;
    if ((tiles + tiles_per_split - 1) / tiles_per_split != splits) continue;  // same as fewer
    const long long blocks = static_cast<long long>(i_blocks) * splits;
    const long long busiest = (blocks + sm_count - 1) / sm_count;
    const long long waves = (busiest + blocks_per_sm - 1) / blocks_per_sm;
    const long long last_wave = busiest - (waves - 1) * blocks_per_sm;
    const double time = static_cast<double>((waves - 1) * blocks_per_sm * tiles_per_split) /
                            saturation(blocks_per_sm) +
                        static_cast<double>(last_wave * tiles_per_split) / saturation(last_wave);
    candidates.push_back({{splits, tiles_per_split}, time});
  }
  double best_time = candidates.front().second;
  for (const auto& candidate : candidates) best_time = std::min(best_time, candidate.second);
  for (const auto& [plan, time] : candidates) {
    if (time <= (1 + tolerance) * best_time) return plan;
  }
  return candidates.front().first;
}

// What a tile kernel's shape and the device bring to its plan.
struct TileShapeOnDevice {
  int bodies_per_thread = 1;
  int block_size = 1;        // threads per block = bodies per shared-memory tile
  bool exact_waves = false;  // split j also to fill the last wave: within 0.5% of the model's best
  int sm_count = 1;
  int blocks_per_sm = 0;               // the occupancy the device reports (0 taken as 1)
  std::size_t partial_sum_bytes = 12;  // one partial acceleration: sizeof(Vec3<T>)
};

// The tile kernel's grid for `target_count` of `count` bodies: blocks of targets in x, the split of
// the sources in y.
struct TileGrid {
  int i_blocks = 1;  // grid.x: blocks of block_size x bodies_per_thread targets
  int tiles = 1;     // of block_size sources, over the count rounded up to whole blocks
  SplitPlan split;   // grid.y = split.splits
};

inline TileGrid plan_tile_grid(const TileShapeOnDevice& shape, int count, int target_count) {
  const int bodies_per_block = shape.block_size * shape.bodies_per_thread;
  TileGrid grid;
  grid.i_blocks = (target_count + bodies_per_block - 1) / bodies_per_block;
  grid.tiles = (count + bodies_per_block - 1) / bodies_per_block * shape.bodies_per_thread;
  const std::size_t split_bytes = static_cast<std::size_t>(grid.i_blocks) *
                                  static_cast<std::size_t>(bodies_per_block) *
                                  shape.partial_sum_bytes;
  const int max_splits = static_cast<int>(std::max<std::size_t>(1, kMaxPartialBytes / split_bytes));
  grid.split =
      plan_splits(grid.i_blocks, grid.tiles, shape.sm_count, std::max(1, shape.blocks_per_sm),
                  shape.block_size / 32, max_splits, shape.exact_waves ? 0.005 : 0.03);
  return grid;
}

// Whether the last block of each i range to finish adds the partial sums (no second kernel).
inline bool last_block_adds(const SplitPlan& split, int bodies_per_thread) {
  return split.splits * bodies_per_thread <= kMaxPartialSumsPerThreadInLastBlock;
}

}  // namespace nbody::gpu
