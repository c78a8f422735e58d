// The GPU formulations against the float64 reference at awkward sizes, both generators, and the
// GpuRun plumbing (scopes, details, memory refusal). Every test that needs a device skips with the
// formulation's own reason where there is none.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "nbody/errors.hpp"
#include "nbody/gpu/cuda_check.hpp"
#include "nbody/gpu/gpu_monitor.hpp"
#include "nbody/gpu/multi_gpu.hpp"
#include "nbody/simulation.hpp"
#include "nbody/target_range.hpp"
#include "test_support.hpp"

namespace nbody {
namespace {

// Formulations that refuse a slice of the targets: symmetric pairs add reactions to every body,
// and a tree would need each slice's locally essential tree.
bool refuses_target_ranges(const ImplementationInfo& info) {
  return info.pairs == PairScheme::symmetric || info.algorithm == Algorithm::barnes_hut;
}

// Every registered GPU formulation but the tuning variants (tested below on fewer sizes).
std::vector<std::string> gpu_formulations() {
  std::vector<std::string> names;
  // The registry outlives the loop: a temporary in the range would be gone before its body.
  const Registry registry = make_default_registry();
  for (const Implementation* impl : registry.where([](const ImplementationInfo& i) {
         return i.device == DeviceKind::gpu && i.role != Role::tuning_variant;
       })) {
    names.push_back(impl->info.name);
  }
  return names;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); },
      '_');
  return name;
}

// Validates `impl` on both generators at `sizes`, printing the measured error coefficients
// (error / (u sqrt N)) that docs/tolerances.md derives the tolerances from.
void expect_matches_reference(const Implementation& impl, std::span<const std::size_t> sizes) {
  const std::uint64_t seed = testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (set NBODY_TEST_SEED to repeat)");
  for (const InitialCondition ic : {InitialCondition::uniform_ball, InitialCondition::plummer}) {
    for (const std::size_t n : sizes) {
      const testing::ValidationOutcome outcome =
          testing::validate_implementation(impl, ic, n, seed);
      EXPECT_TRUE(outcome.accepted) << outcome.summary;
      const double scale = impl.info.tolerance.unit_roundoff *
                           std::sqrt(static_cast<double>(std::max<std::size_t>(n, 1)));
      std::cout << "[ measured ] " << impl.info.name << " " << to_string(ic) << " N=" << n
                << " l2_coefficient=" << outcome.metrics.relative_l2 / scale
                << " max_coefficient=" << outcome.metrics.max_relative / scale
                << " net_force_residual=" << outcome.metrics.net_force_residual << "\n";
    }
  }
}

class GpuFormulation : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    impl_ = registry_.find(GetParam());
    ASSERT_NE(impl_, nullptr) << GetParam() << " is not registered";
  }
  Registry registry_ = make_default_registry();
  const Implementation* impl_ = nullptr;
};

TEST_P(GpuFormulation, IsDescribedAsAGpuFormulation) {
  EXPECT_EQ(impl_->info.device, DeviceKind::gpu);
  EXPECT_FALSE(impl_->info.optimizations.empty());
  EXPECT_GT(impl_->info.tolerance.relative_l2_coefficient, 0);
}

TEST_P(GpuFormulation, MatchesReferenceWithinTolerance) {
  if (const auto reason = impl_->unavailable_reason()) GTEST_SKIP() << *reason;
#ifdef NBODY_SANITIZED_BUILD
  // The sanitizers watch the host side, which 4097 bodies exercise as 65536 do.
  const std::size_t sizes[] = {1, 2, 7, 31, 1000, 4096, 4097};
#else
  const std::size_t sizes[] = {1, 2, 7, 31, 1000, 4096, 4097, 65536};
#endif
  expect_matches_reference(*impl_, sizes);
}

TEST_P(GpuFormulation, EndToEndScopeGivesTheKernelScopeResult) {
  if (const auto reason = impl_->unavailable_reason()) GTEST_SKIP() << *reason;
  const Snapshot snapshot = make_initial_condition(InitialCondition::plummer, 1000, 7);
  auto run = impl_->prepare(snapshot.bodies, testing::kTestSoftening, {});
  const PreparedRun::Seconds kernel_seconds = run->evaluate(PreparedRun::Scope::kernel);
  EXPECT_GT(kernel_seconds.kernel, 0);
  EXPECT_EQ(kernel_seconds.total, kernel_seconds.kernel);
  const std::vector<Vec3<double>> kernel_scope = run->accelerations();
  // End to end: the copies are inside the total, the kernel's own events inside the copies.
  const PreparedRun::Seconds end_to_end_seconds = run->evaluate(PreparedRun::Scope::end_to_end);
  EXPECT_GT(end_to_end_seconds.kernel, 0);
  EXPECT_GT(end_to_end_seconds.total, end_to_end_seconds.kernel);
  const std::vector<Vec3<double>> end_to_end = run->accelerations();
  ASSERT_EQ(kernel_scope.size(), end_to_end.size());
  double difference_squared = 0, magnitude_squared = 0;
  for (std::size_t i = 0; i < end_to_end.size(); ++i) {
    const double dx = kernel_scope[i].x - end_to_end[i].x, dy = kernel_scope[i].y - end_to_end[i].y,
                 dz = kernel_scope[i].z - end_to_end[i].z;
    difference_squared += dx * dx + dy * dy + dz * dz;
    magnitude_squared += kernel_scope[i].x * kernel_scope[i].x +
                         kernel_scope[i].y * kernel_scope[i].y +
                         kernel_scope[i].z * kernel_scope[i].z;
  }
  // Atomics add in a different order each time; every other kernel is deterministic.
  const double tolerance = impl_->info.pairs == PairScheme::symmetric ? 1e-5 : 0.0;
  EXPECT_LE(std::sqrt(difference_squared), tolerance * std::sqrt(magnitude_squared));
}

TEST_P(GpuFormulation, DetailsNameTheLaunchAndTheDevice) {
  if (const auto reason = impl_->unavailable_reason()) GTEST_SKIP() << *reason;
  const Snapshot snapshot = make_initial_condition(InitialCondition::uniform_ball, 4097, 3);
  const auto run = impl_->prepare(snapshot.bodies, testing::kTestSoftening, {});
  run->evaluate(PreparedRun::Scope::kernel);
  const auto details = run->details();
  if (impl_->info.algorithm == Algorithm::barnes_hut) {
    for (const char* key : {"gpu", "theta", "cells", "groups", "validation_ms_traversal"}) {
      EXPECT_TRUE(details.contains(key)) << key;
    }
    return;
  }
  for (const char* key : {"device", "sm_count", "grid", "block", "bodies_per_thread",
                          "threads_per_body", "shared_memory_bytes"}) {
    EXPECT_TRUE(details.contains(key)) << key;
  }
  if (impl_->info.pairs == PairScheme::symmetric) {
    EXPECT_TRUE(details.contains("pairs_evaluated"));
  }
}

TEST_P(GpuFormulation, RefusesMoreBodiesThanTheDeviceCanHold) {
  ASSERT_TRUE(impl_->size_limit_reason);
  const auto reason = impl_->size_limit_reason(std::size_t{1} << 40, {});
  ASSERT_TRUE(reason.has_value());
  EXPECT_FALSE(reason->empty());
}

// Decomposition by target range: the slices of 2 and 3 parts, each run on its own,
// together give every body's acceleration within the formulation's tolerance of the float64
// reference, at awkward sizes (a slice may be empty: fewer bodies than parts). Symmetric
// formulations refuse a slice.
TEST_P(GpuFormulation, SlicesOfTargetsTogetherMatchTheReference) {
  if (const auto reason = impl_->unavailable_reason()) GTEST_SKIP() << *reason;
  const std::uint64_t seed = testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (set NBODY_TEST_SEED to repeat)");
  for (const std::size_t n : {1, 2, 7, 31, 1000, 4097, 8193}) {
    const Snapshot snapshot = make_initial_condition(InitialCondition::plummer, n, seed);
    std::vector<Body<double>> seen = snapshot.bodies;
    if (impl_->info.precision == Precision::f32) {
      seen = convert_precision<double, float>(convert_precision<float, double>(snapshot.bodies));
    }
    for (const int parts : {2, 3}) {
      SCOPED_TRACE("N=" + std::to_string(n) + ", " + std::to_string(parts) + " parts");
      ExecutionOptions options;
      options.targets = balanced_slice(n, 0, parts);
      if (refuses_target_ranges(impl_->info)) {
        if (n < 2) continue;  // one part holds every body: not a slice
        ASSERT_TRUE(impl_->size_limit_reason(n, options).has_value());
        EXPECT_THROW(impl_->prepare(seen, testing::kTestSoftening, options), std::invalid_argument);
        continue;
      }
      std::vector<Vec3<double>> joined;
      for (int part = 0; part < parts; ++part) {
        options.targets = balanced_slice(n, part, parts);
        EXPECT_FALSE(impl_->size_limit_reason(n, options).has_value());
        auto run = impl_->prepare(seen, testing::kTestSoftening, options);
        run->evaluate(part % 2 == 0 ? PreparedRun::Scope::kernel : PreparedRun::Scope::end_to_end);
        const std::vector<Vec3<double>> mine = run->accelerations();
        ASSERT_EQ(mine.size(), options.targets->size());
        joined.insert(joined.end(), mine.begin(), mine.end());
      }
      const std::vector<std::uint32_t> targets = validation_targets(n, 1u << 30);
      const std::vector<Vec3<double>> reference =
          reference_accelerations(seen, testing::kTestSoftening, targets);
      const AccuracyMetrics metrics = compare_with_reference(joined, reference, targets, seen);
      EXPECT_TRUE(impl_->info.tolerance.accepts(metrics, n))
          << "rel_l2 " << metrics.relative_l2 << ", max " << metrics.max_relative;
    }
  }
}

// The GPUs a multi-GPU test drives: two where this machine has them, else the one (NCCL's path
// with one device: the slices, the all-gather and the timing, not the exchange between devices).
std::vector<int> listed_test_gpus() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  return count >= 2 ? std::vector<int>{0, 1} : std::vector<int>{0};
}

// Several GPUs of one process: at awkward sizes (N not divisible by the GPU count),
// every body's acceleration within the formulation's tolerance of the float64 reference, in both
// scopes; symmetric formulations refuse.
TEST_P(GpuFormulation, SeveralGpusTogetherMatchTheReference) {
  if (const auto reason = impl_->unavailable_reason()) GTEST_SKIP() << *reason;
  ExecutionOptions options;
  options.gpu_devices = listed_test_gpus();
  if (const auto reason = gpu::multi_gpu_unavailable_reason(options.gpu_devices)) {
    GTEST_SKIP() << *reason;
  }
  std::cout << "[ gpus     ] " << options.gpu_devices.size() << " GPU(s)\n";
  const std::uint64_t seed = testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (set NBODY_TEST_SEED to repeat)");
  for (const std::size_t n : {1, 2, 7, 31, 1000, 4097, 8193}) {
    SCOPED_TRACE("N=" + std::to_string(n));
    if (refuses_target_ranges(impl_->info)) {
      ASSERT_TRUE(impl_->size_limit_reason(n, options).has_value());
      continue;
    }
    EXPECT_FALSE(impl_->size_limit_reason(n, options).has_value());
    for (const InitialCondition ic : {InitialCondition::uniform_ball, InitialCondition::plummer}) {
      const testing::ValidationOutcome outcome =
          testing::validate_implementation(*impl_, ic, n, seed, options);
      EXPECT_TRUE(outcome.accepted) << outcome.summary;
    }
    const Snapshot snapshot = make_initial_condition(InitialCondition::plummer, n, seed);
    auto run = impl_->prepare(snapshot.bodies, testing::kTestSoftening, options);
    const PreparedRun::Seconds seconds = run->evaluate(PreparedRun::Scope::end_to_end);
    EXPECT_GT(seconds.kernel, 0);
    EXPECT_GE(seconds.communication, 0);
    EXPECT_GE(seconds.total, seconds.kernel + seconds.communication);
    const std::vector<Vec3<double>> end_to_end = run->accelerations();
    run->evaluate(PreparedRun::Scope::kernel);
    const std::vector<Vec3<double>> kernel_scope = run->accelerations();
    ASSERT_EQ(end_to_end.size(), n);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(end_to_end[i].x, kernel_scope[i].x) << i;
    const auto details = run->details();
    EXPECT_EQ(details.at("gpu_count"), std::to_string(options.gpu_devices.size()));
  }
}

// A run's bodies replaced (the decomposed simulation's step): its next evaluation is a fresh
// run's on the new bodies, bit for bit.
TEST_P(GpuFormulation, NewBodiesGiveAFreshRunsAccelerations) {
  if (const auto reason = impl_->unavailable_reason()) GTEST_SKIP() << *reason;
  if (impl_->info.pairs == PairScheme::symmetric) GTEST_SKIP() << "atomics add in any order";
  const Snapshot before = make_initial_condition(InitialCondition::plummer, 1000, 11);
  const Snapshot after = make_initial_condition(InitialCondition::uniform_ball, 1000, 12);
  ExecutionOptions options;
  // A tree computes every body (refuses_target_ranges); the others a slice.
  if (!refuses_target_ranges(impl_->info)) options.targets = balanced_slice(1000, 1, 2);
  auto moved = impl_->prepare(before.bodies, testing::kTestSoftening, options);
  moved->evaluate(PreparedRun::Scope::kernel);
  moved->set_bodies(after.bodies);
  moved->evaluate(PreparedRun::Scope::kernel);
  auto fresh = impl_->prepare(after.bodies, testing::kTestSoftening, options);
  fresh->evaluate(PreparedRun::Scope::kernel);
  const std::vector<Vec3<double>> a = moved->accelerations(), b = fresh->accelerations();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].x, b[i].x) << i;
    ASSERT_EQ(a[i].y, b[i].y) << i;
    ASSERT_EQ(a[i].z, b[i].z) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuFormulation, ::testing::ValuesIn(gpu_formulations()), test_name);

// A CUDA error names the error and where in the repository it was met, never the folder of the
// machine that built it (users read these in stderr and in reports). No GPU needed.
TEST(CudaErrors, NameTheErrorAndAPlaceInTheRepositoryNotTheBuildFolder) {
  try {
    gpu::check_cuda(cudaErrorInvalidValue);
    FAIL() << "check_cuda did not throw";
  } catch (const gpu::CudaError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("CUDA error cudaErrorInvalidValue: ", 0), 0u) << message;
    EXPECT_NE(message.find("(at tests/gpu_formulations_test.cpp:"), std::string::npos) << message;
    EXPECT_EQ(message.find(NBODY_SOURCE_DIR), std::string::npos) << message;
  }
}

// A group of ranks' communicator has one owner: runs and simulations borrow it one after another,
// each right, and the membership leaves the group once, after them (NCCL says "corrupted comm
// object" of one destroyed early, and crashes destroying one twice). A group of one rank needs
// one GPU, so this runs wherever NCCL does; twice, so that the group is left and joined again.
TEST(GpuGroup, RunsAndSimulationsBorrowTheCommunicatorItsOneOwnerLeaves) {
  if (const auto reason = gpu::gpu_group_unavailable_reason(0)) GTEST_SKIP() << *reason;
  const Registry registry = make_default_registry();
  const Implementation& impl = *registry.find("gpu.tuned");
  const std::size_t n = 4097;
  const Snapshot snapshot = make_initial_condition(InitialCondition::plummer, n, 5);
  const std::vector<std::uint32_t> targets = validation_targets(n, 1u << 30);
  const std::vector<Vec3<double>> reference =
      reference_accelerations(snapshot.bodies, testing::kTestSoftening, targets);
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    GpuGroup group{.id = gpu::make_gpu_group_id(), .rank = 0, .size = 1};
    GpuGroupMembership membership = gpu::join_gpu_group(group, 0);
    group.communicator = membership.get();
    ExecutionOptions options;
    options.gpu_group = group;
    for (const PreparedRun::Scope scope :
         {PreparedRun::Scope::kernel, PreparedRun::Scope::end_to_end}) {
      auto run = impl.prepare(snapshot.bodies, testing::kTestSoftening, options);
      run->evaluate(scope);
      const AccuracyMetrics metrics =
          compare_with_reference(run->accelerations(), reference, targets, snapshot.bodies);
      EXPECT_TRUE(impl.info.tolerance.accepts(metrics, n)) << "rel_l2 " << metrics.relative_l2;
      EXPECT_NE(run->details().at("exchange").find("between the ranks' GPUs"), std::string::npos);
    }
    SimulationSetup setup{.bodies = snapshot.bodies,
                          .velocities = snapshot.velocities,
                          .softening = testing::kTestSoftening,
                          .execution = options};
    auto simulation = make_simulation(impl, setup);
    simulation->advance(4, 1.0 / 256, true);
    EXPECT_EQ(simulation->state().bodies.size(), n);
    simulation.reset();
    membership.reset();  // the group left here, once, with every borrower gone
  }
}

// The all-gather's sweep (the scaling model's alpha and beta): every size timed, in order; on one
// GPU NCCL's copy alone and no bus bandwidth, and no ceiling entries but their reason; on two, the
// two entries, the latency the 8-byte time.
TEST(SeveralGpus, AllGatherSweepTimesEverySizeAndGivesTheModelsCeilings) {
  const std::vector<int> devices = listed_test_gpus();
  if (const auto reason = gpu::multi_gpu_unavailable_reason(devices)) GTEST_SKIP() << *reason;
  std::cout << "[ gpus     ] " << devices.size() << " GPU(s)\n";
  const gpu::AllGatherSweep sweep = gpu::time_all_gather(devices);
  EXPECT_FALSE(sweep.nccl_version.empty());
  ASSERT_EQ(sweep.points.size(), 9u);  // 8 B, 64 B, ..., 16 MiB, 64 MiB
  EXPECT_EQ(sweep.points.front().bytes_per_gpu, 8u);
  EXPECT_EQ(sweep.points.back().bytes_per_gpu, std::size_t{64} << 20);
  for (std::size_t i = 0; i < sweep.points.size(); ++i) {
    const gpu::AllGatherPoint& p = sweep.points[i];
    EXPECT_GT(p.seconds, 0) << p.bytes_per_gpu;
    EXPECT_LT(p.seconds, 1) << p.bytes_per_gpu;
    if (i > 0) {
      EXPECT_GT(p.bytes_per_gpu, sweep.points[i - 1].bytes_per_gpu);
    }
    if (devices.size() == 1) {
      EXPECT_EQ(p.bus_bandwidth, 0) << p.bytes_per_gpu;
    }
    // After a kernel: the GPU that waited for no other can never wait longer than the one that
    // waited longest.
    EXPECT_GT(p.after_kernel.alone_seconds, 0) << p.bytes_per_gpu;
    EXPECT_LT(p.after_kernel.alone_seconds, 1) << p.bytes_per_gpu;
    EXPECT_LE(p.after_kernel.alone_seconds, p.after_kernel.waited_seconds) << p.bytes_per_gpu;
    std::cout << "[ measured ] all-gather " << p.bytes_per_gpu << " B a GPU: " << p.seconds * 1e6
              << " us, bus " << p.bus_bandwidth * 1e-9 << " GB/s; after a kernel "
              << p.after_kernel.alone_seconds * 1e6 << " us alone, "
              << p.after_kernel.waited_seconds * 1e6 << " us waited\n";
  }
  const CeilingMeasurement measured = gpu::measure_all_gather_ceilings(devices);
  if (devices.size() == 1) {
    EXPECT_TRUE(measured.entries.empty());
    ASSERT_EQ(measured.unavailable.size(), 3u);
    EXPECT_NE(measured.unavailable[0].reason.find("two"), std::string::npos);
    return;
  }
  ASSERT_EQ(measured.entries.size(), 3u) << measured.unavailable.front().reason;
  EXPECT_EQ(measured.entries[0].name, kGpuAllGatherLatencyCeiling);
  EXPECT_EQ(measured.entries[0].unit, "s");
  EXPECT_GT(measured.entries[0].value, 0);
  EXPECT_EQ(measured.entries[1].name, kGpuAllGatherBandwidthCeiling);
  EXPECT_GT(measured.entries[1].value, 1e9);  // any link between two GPUs does 1 GB/s
  EXPECT_NE(measured.entries[1].method.find("Sweep"), std::string::npos);
  EXPECT_EQ(measured.entries[2].name, kGpuAllGatherLatencyAfterKernelCeiling);
  EXPECT_GT(measured.entries[2].value, 0);
  EXPECT_NE(measured.entries[2].method.find("waited"), std::string::npos);
}

// Every shape the tuning tool times must compute the same function.
TEST(GpuTunedVariants, MatchReferenceWithinTolerance) {
  const Registry registry = make_default_registry();
  const std::vector<const Implementation*> variants =
      registry.where([](const ImplementationInfo& i) {
        return i.device == DeviceKind::gpu && i.role == Role::tuning_variant;
      });
  ASSERT_FALSE(variants.empty());
  if (const auto reason = variants.front()->unavailable_reason()) GTEST_SKIP() << *reason;
  const std::size_t sizes[] = {1, 31, 4097};
  for (const Implementation* variant : variants) expect_matches_reference(*variant, sizes);
}

// --gpu beyond the machine's devices is refused before anything runs (one UsageError), not by each
// GPU formulation failing in turn.
TEST(GpuOptions, RefusesAnOrdinalTheMachineLacks) {
  const Registry registry = make_default_registry();
  const auto gpu =
      registry.where([](const ImplementationInfo& i) { return i.device == DeviceKind::gpu; });
  ASSERT_FALSE(gpu.empty());
  if (const auto reason = gpu.front()->unavailable_reason()) GTEST_SKIP() << *reason;
  EXPECT_NO_THROW(registry.check_options({.gpu_device = 0}));
  try {
    registry.check_options({.gpu_device = 999});
    ADD_FAILURE() << "--gpu 999 was accepted";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("--gpu 999"), std::string::npos) << error.what();
  }
}

// With no NVIDIA GPU or driver, every GPU formulation's reason (what `nbody-fair list` prints) says
// so plainly, not the runtime's "CUDA driver version is insufficient for CUDA runtime version".
TEST(GpuDevice, MissingGpuOrDriverIsSaidPlainly) {
  int count = 0, driver_version = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  cudaGetLastError();
  cudaDriverGetVersion(&driver_version);
  if (status == cudaSuccess && count > 0) GTEST_SKIP() << "this machine has a CUDA device";
  if (status == cudaErrorInsufficientDriver && driver_version != 0) {
    GTEST_SKIP() << "this machine's NVIDIA driver is older than the CUDA runtime";
  }
  const Registry registry = make_default_registry();
  const auto gpu =
      registry.where([](const ImplementationInfo& i) { return i.device == DeviceKind::gpu; });
  ASSERT_FALSE(gpu.empty());
  for (const Implementation* impl : gpu) {
    const auto reason = impl->unavailable_reason();
    ASSERT_TRUE(reason.has_value()) << impl->info.name;
    EXPECT_TRUE(reason->starts_with("no NVIDIA GPU or driver found")) << *reason;
    // Never the runtime's "driver version is insufficient" where no driver is there at all.
    if (driver_version == 0) {
      EXPECT_EQ(reason->find("insufficient"), std::string::npos) << *reason;
    }
  }
}

// NVML reads the GPU's state for every GPU timing's conditions.
TEST(GpuMonitor, SamplesTheClockAndTemperature) {
  const Registry registry = make_default_registry();
  const auto gpu =
      registry.where([](const ImplementationInfo& i) { return i.device == DeviceKind::gpu; });
  ASSERT_FALSE(gpu.empty());
  if (const auto reason = gpu.front()->unavailable_reason()) GTEST_SKIP() << *reason;
  std::string why_not;
  const gpu::GpuSampler sampler = gpu::make_gpu_sampler(0, why_not);
  if (!sampler && why_not.find("no NVML") != std::string::npos) GTEST_SKIP() << why_not;
  ASSERT_TRUE(sampler) << why_not;
  const std::optional<GpuSample> sample = sampler();
  ASSERT_TRUE(sample.has_value());
  std::cout << "[ measured ] SM clock " << sample->sm_clock_mhz << " of "
            << sample->max_sm_clock_mhz << " MHz, " << sample->temperature_c << " C, "
            << sample->clock_limits.size() << " clock limits\n";
  EXPECT_GT(sample->sm_clock_mhz, 0);
  EXPECT_GE(sample->max_sm_clock_mhz, sample->sm_clock_mhz);
  EXPECT_GT(sample->temperature_c, 0);
}

}  // namespace
}  // namespace nbody
