// gpu.tuned's split-j plan (nbody/gpu/split_j_plan.hpp), host arithmetic tested without a GPU or
// CUDA: the grid for the body counts the suite runs, on devices of 1 to 144 SMs and occupancies
// the shipped shapes get, with what the tile kernel takes for granted (every target in a block,
// every source tile in exactly one split, no split empty, grid.y within CUDA's limit, the partial
// sums within the scratch the formulation reserves), and the model's choices where they are known.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nbody/gpu/split_j_plan.hpp"

namespace nbody::gpu {
namespace {

constexpr int kMaxGridY = 65535;         // CUDA's limit on gridDim.y
constexpr int kMaxBodies = 1 << 30;      // what the GPU formulations take (gpu_run.hpp)
constexpr std::size_t kFloatVec3 = 12;   // sizeof(Vec3<float>)
constexpr std::size_t kDoubleVec3 = 24;  // sizeof(Vec3<double>)

// The shipped shapes of tuned.cu (bodies per thread, block size, exact waves) on an H100's 132
// SMs, with occupancies of the order the device reports for them.
TileShapeOnDevice float_shape(int sm_count = 132, int blocks_per_sm = 4) {
  return {.bodies_per_thread = 8,
          .block_size = 128,
          .exact_waves = true,
          .sm_count = sm_count,
          .blocks_per_sm = blocks_per_sm,
          .partial_sum_bytes = kFloatVec3};
}
TileShapeOnDevice small_float_shape(int sm_count = 132, int blocks_per_sm = 16) {
  return {.bodies_per_thread = 2,
          .block_size = 64,
          .exact_waves = true,
          .sm_count = sm_count,
          .blocks_per_sm = blocks_per_sm,
          .partial_sum_bytes = kFloatVec3};
}
TileShapeOnDevice double_shape(int sm_count = 132, int blocks_per_sm = 2) {
  return {.bodies_per_thread = 4,
          .block_size = 128,
          .exact_waves = true,
          .sm_count = sm_count,
          .blocks_per_sm = blocks_per_sm,
          .partial_sum_bytes = kDoubleVec3};
}
// A tuning variant without exact waves (3% tolerance) and one body per thread.
TileShapeOnDevice variant_shape(int sm_count = 132, int blocks_per_sm = 8) {
  return {.bodies_per_thread = 1,
          .block_size = 256,
          .exact_waves = false,
          .sm_count = sm_count,
          .blocks_per_sm = blocks_per_sm,
          .partial_sum_bytes = kDoubleVec3};
}

std::string describe(const TileShapeOnDevice& shape, int count, int target_count) {
  return std::to_string(shape.bodies_per_thread) + "x" + std::to_string(shape.block_size) +
         (shape.exact_waves ? "w" : "") + " on " + std::to_string(shape.sm_count) + " SMs, " +
         std::to_string(shape.blocks_per_sm) + " blocks/SM, " + std::to_string(target_count) +
         " targets of " + std::to_string(count);
}

// What tuned_forces and TunedKernel rely on, for one plan.
void expect_kernel_invariants(const TileShapeOnDevice& shape, int count, int target_count) {
  SCOPED_TRACE(describe(shape, count, target_count));
  const TileGrid grid = plan_tile_grid(shape, count, target_count);
  const long long bodies_per_block =
      static_cast<long long>(shape.block_size) * shape.bodies_per_thread;
  // Every target in a block, no block without one.
  EXPECT_GE(grid.i_blocks, 1);
  EXPECT_GE(grid.i_blocks * bodies_per_block, target_count);
  EXPECT_LT((grid.i_blocks - 1) * bodies_per_block, target_count);
  // The tiles cover the sources, padded to whole blocks (the padding's mass is zero).
  EXPECT_EQ(static_cast<long long>(grid.tiles) * shape.block_size,
            (count + bodies_per_block - 1) / bodies_per_block * bodies_per_block);
  // Every tile in exactly one split, and no split without a tile: the first splits take
  // tiles_per_split each, the last what is left (1 to tiles_per_split).
  const SplitPlan& split = grid.split;
  EXPECT_GE(split.splits, 1);
  EXPECT_GE(split.tiles_per_split, 1);
  EXPECT_LE(split.splits, grid.tiles);
  EXPECT_LT(static_cast<long long>(split.splits - 1) * split.tiles_per_split, grid.tiles);
  EXPECT_GE(static_cast<long long>(split.splits) * split.tiles_per_split, grid.tiles);
  if (split.splits == 1) {
    EXPECT_EQ(split.tiles_per_split, grid.tiles);
  }
  // blockIdx.y * tiles_per_split is an int in the kernel; grid.y has CUDA's limit.
  EXPECT_LE(static_cast<long long>(split.splits) * split.tiles_per_split, INT_MAX);
  EXPECT_LE(split.splits, kMaxGridY);
  // One row of partial sums per split fits the scratch the formulation reserves (ScratchBytes).
  if (split.splits > 1) {
    const std::size_t partial_bytes = static_cast<std::size_t>(split.splits) *
                                      static_cast<std::size_t>(grid.i_blocks * bodies_per_block) *
                                      shape.partial_sum_bytes;
    EXPECT_LE(partial_bytes, kMaxPartialBytes);
  }
  // The same inputs, the same plan: every rank and every run launch alike.
  const TileGrid again = plan_tile_grid(shape, count, target_count);
  EXPECT_EQ(again.split.splits, split.splits);
  EXPECT_EQ(again.split.tiles_per_split, split.tiles_per_split);
}

// The body counts the suite's tests and runs use, the edges around the shapes' blocks, and the
// largest count the GPU formulations take.
const std::vector<int> kSuiteCounts = {1,     2,     7,      31,      127,     128,       129,
                                       1000,  1024,  1025,   4096,    4097,    8192,      16384,
                                       65536, 65537, 262144, 1048576, 1 << 24, kMaxBodies};

TEST(SplitJPlan, KernelInvariantsHoldForTheSuiteSizesOnEveryShapeAndDevice) {
  for (const int sm_count : {1, 2, 108, 132, 144}) {
    for (const int blocks_per_sm : {0, 1, 4, 32}) {
      for (const TileShapeOnDevice& shape :
           {float_shape(sm_count, blocks_per_sm), small_float_shape(sm_count, blocks_per_sm),
            double_shape(sm_count, blocks_per_sm), variant_shape(sm_count, blocks_per_sm)}) {
        for (const int count : kSuiteCounts) {
          if (count > (1 << 24) && sm_count != 132) continue;  // the largest once is enough
          expect_kernel_invariants(shape, count, count);
        }
      }
    }
  }
}

// Slices of the targets (several GPUs, several ranks): halves, thirds, one body, the last
// slice's remainder.
TEST(SplitJPlan, KernelInvariantsHoldForSlicesOfTheTargets) {
  for (const TileShapeOnDevice& shape :
       {float_shape(), small_float_shape(), double_shape(), variant_shape()}) {
    for (const int count : kSuiteCounts) {
      for (const int target_count :
           {1, (count + 1) / 2, (count + 2) / 3, count - 2 * ((count + 2) / 3), count}) {
        if (target_count < 1) continue;
        expect_kernel_invariants(shape, count, target_count);
      }
    }
  }
}

TEST(SplitJPlan, OneBodyIsOneBlockAndItsPaddedTiles) {
  const TileGrid grid = plan_tile_grid(float_shape(), 1, 1);
  EXPECT_EQ(grid.i_blocks, 1);
  EXPECT_EQ(grid.tiles, 8);  // 1024 bodies, padding included, in tiles of 128
  // One block cannot fill 132 SMs: the model splits j as far as the tiles allow.
  EXPECT_EQ(grid.split.splits, 8);
  EXPECT_EQ(grid.split.tiles_per_split, 1);
}

TEST(SplitJPlan, AGpuAlreadyFullOfEqualWavesIsNotSplit) {
  // 64 blocks on one SM holding 4 at a time: 16 full waves, every split only adds blocks.
  EXPECT_EQ(plan_splits(64, 512, 1, 4, 4, 1000, 0.005).splits, 1);
  // 528 blocks on 132 SMs of 4: one full wave.
  EXPECT_EQ(plan_splits(528, 512, 132, 4, 4, 1000, 0.005).splits, 1);
}

TEST(SplitJPlan, FewBlocksAreSplitToFillTheSms) {
  // N = 65536 in float32 (64 blocks of 1024 targets, 512 tiles) on 132 SMs: filling the last wave
  // too takes 57 splits, against 8 within 3% (the measured +3.3% of exact_waves, TunedShape).
  const TileGrid exact = plan_tile_grid(float_shape(132, 4), 65536, 65536);
  EXPECT_EQ(exact.i_blocks, 64);
  EXPECT_EQ(exact.tiles, 512);
  EXPECT_EQ(exact.split.splits, 57);
  TileShapeOnDevice within_3_percent = float_shape(132, 4);
  within_3_percent.exact_waves = false;
  EXPECT_EQ(plan_tile_grid(within_3_percent, 65536, 65536).split.splits, 8);
}

TEST(SplitJPlan, NoMoreSplitsThanTilesOrScratch) {
  // 3 tiles: at most 3 splits however empty the GPU.
  EXPECT_LE(plan_splits(1, 3, 132, 4, 4, 1000, 0.005).splits, 3);
  // The scratch allows 5: at most 5.
  const SplitPlan capped = plan_splits(1, 1000, 132, 4, 4, 5, 0.005);
  EXPECT_LE(capped.splits, 5);
  EXPECT_GE(capped.splits * capped.tiles_per_split, 1000);
  // At the largest count one row of partial sums already exceeds the scratch: no split.
  EXPECT_EQ(plan_tile_grid(double_shape(), kMaxBodies, kMaxBodies).split.splits, 1);
}

TEST(SplitJPlan, SplitsThatCoverTheSameTilesAreNotCandidates) {
  // 10 tiles: 6 to 9 splits would each take 2 tiles, which is 5 splits, the last one or more of
  // them empty; a plan's splits are exactly ceil(tiles / tiles_per_split), whatever the cap.
  for (int max_splits = 1; max_splits <= 10; ++max_splits) {
    const SplitPlan plan = plan_splits(1, 10, 132, 4, 4, max_splits, 0.005);
    EXPECT_EQ((10 + plan.tiles_per_split - 1) / plan.tiles_per_split, plan.splits);
  }
}

TEST(SplitJPlan, TheLastBlockAddsAFewPartialSumsAndASecondKernelMany) {
  // The measured cases: 16 splits x 2 bodies per thread fused (N = 1024), 32 x 8 not (N = 4096).
  EXPECT_TRUE(last_block_adds({.splits = 16, .tiles_per_split = 1}, 2));
  EXPECT_FALSE(last_block_adds({.splits = 32, .tiles_per_split = 1}, 8));
  EXPECT_TRUE(last_block_adds({.splits = 1, .tiles_per_split = 8}, 8));
  EXPECT_TRUE(last_block_adds({.splits = 4, .tiles_per_split = 1}, 8));
  EXPECT_FALSE(last_block_adds({.splits = 5, .tiles_per_split = 1}, 8));
}

}  // namespace
}  // namespace nbody::gpu
