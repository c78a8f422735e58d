// The GPU tree's walk kernel (gpu/tree/traversal_kernels.cu) on a tree made by hand: it walks
// nothing where the build's counters say the tree is thrown away (keys left out of order by the
// sort by halves, or more cells than the buffers hold), since such a tree's links may lead a walk
// round in circles; and it walks a sound one. Skips, saying why, where no GPU is present.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "nbody/gpu/cuda_check.hpp"
#include "nbody/gpu/cuda_resources.hpp"
#include "nbody/gpu/tree/gpu_tree.hpp"
#include "tree_kernels.cuh"

namespace nbody::gpu::tree::detail {
namespace {

template <class E>
DeviceBuffer<E> upload(const std::vector<E>& host) {
  DeviceBuffer<E> device(host.size());
  check_cuda(cudaMemcpy(device.data(), host.data(), device.bytes(), cudaMemcpyHostToDevice));
  return device;
}

// One walk of a tree of one leaf holding two bodies (buffers of one cell), its criterion never
// accepting it, so that a walk that runs lists both bodies for both targets: four body-body terms.
TreeCounters walk_one_leaf(const TreeCounters& before) {
  const auto cells = upload(std::vector<GpuCell>{{.begin = 0, .end = 2}});
  const auto criterion = upload(std::vector<CellCriterion>{{0.5, 0.5, 0.5, 1e30}});
  CellMoments leaf;
  leaf.box = {{0, 0, 0}, {1, 1, 1}};
  const auto moments = upload(std::vector<CellMoments>{leaf});
  const auto multipoles = upload(std::vector<CellMultipole<float>>(1));
  const auto bodies = upload(std::vector<Body<float>>{{0, 0, 0, 0.5f}, {1, 1, 1, 0.5f}});
  const auto input_index = upload(std::vector<std::uint32_t>{0, 1});
  const auto walks = upload(std::vector<WalkItem>{
      {.first_target = 0, .end_target = 2, .first_cell = 0, .cell_count = 1}});
  const auto counters = upload(std::vector<TreeCounters>{before});
  const TraversalLaunch launch = traversal_launch<float>(0, 1);
  DeviceBuffer<std::uint32_t> stacks(std::size_t(launch.blocks) * launch.warps_per_block *
                                     kTraversalStackCapacity);
  DeviceBuffer<Vec3<float>> accelerations(2);
  const TraversalArgs<float> args{.cells = cells.data(),
                                  .criterion = criterion.data(),
                                  .moments = moments.data(),
                                  .multipoles = multipoles.data(),
                                  .sorted = bodies.data(),
                                  .input_index = input_index.data(),
                                  .walks = walks.data(),
                                  .stacks = stacks.data(),
                                  .theta_squared = 0.25,
                                  .softening_squared = 0.01f,
                                  .accelerations = accelerations.data(),
                                  .counters = counters.data(),
                                  .cell_capacity = 1};
  enqueue_traversal<float>(args, launch, nullptr);
  check_cuda(cudaDeviceSynchronize());
  TreeCounters after;
  check_cuda(cudaMemcpy(&after, counters.data(), sizeof after, cudaMemcpyDeviceToHost));
  return after;
}

TreeCounters counters_of_built_tree() {
  TreeCounters counters;
  counters.cells = 1;
  counters.leaves = 1;
  counters.groups = 1;
  counters.walks = 1;
  return counters;
}

class GpuTreeWalkGuard : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const auto reason = gpu_tree_unavailable_reason(0); reason) {
      GTEST_SKIP() << "no CUDA device: " << *reason;
    }
  }
};

// The walk kernel returns before taking a walk.
void expect_not_walked(const TreeCounters& before) {
  const TreeCounters after = walk_one_leaf(before);
  EXPECT_EQ(after.next_walk, 0u) << "a walk was taken";
  EXPECT_EQ(after.body_body, 0u);
}

TEST_F(GpuTreeWalkGuard, WalksASoundTree) {
  const TreeCounters after = walk_one_leaf(counters_of_built_tree());
  EXPECT_EQ(after.body_body, 4u);
  EXPECT_GE(after.next_walk, 1u);
  EXPECT_EQ(after.stack_overflow, 0u);
}

TEST_F(GpuTreeWalkGuard, SkipsATreeFromKeysLeftOutOfOrder) {
  TreeCounters before = counters_of_built_tree();
  before.long_key_runs = 1;
  expect_not_walked(before);
}

TEST_F(GpuTreeWalkGuard, SkipsATreeCutOffAtTheCellsCapacity) {
  TreeCounters before = counters_of_built_tree();
  before.cells = 2;  // more than the buffers' one
  expect_not_walked(before);
}

}  // namespace
}  // namespace nbody::gpu::tree::detail
