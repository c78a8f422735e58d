// GPU formulations over the ranks of mpirun with NCCL between their GPUs, one GPU each
// (ExecutionOptions::gpu_group, --gpu-exchange nccl), run under mpirun -np 2 (tests/mpirun.sh) on a
// machine with two GPUs or more: each rank's runs and simulations against the one-GPU run and
// simulation on its own GPU and the float64 reference, within tolerance, at awkward sizes (1, 2,
// 7, 31, 1000, 4097: N not divisible by the ranks among them); the timings agreed over the ranks;
// the suite's record of the exchange. Every test skips, saying why, where a host has fewer GPUs
// than ranks (NCCL takes one GPU per rank) or the build has no NCCL. Every rank runs every test;
// rank 0 prints, the others their failures alone.
#include <atomic>
#include <cmath>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "mpi_test_support.hpp"
#include "nbody/accuracy.hpp"
#include "nbody/app/gpu_exchange.hpp"
#include "nbody/app/runner.hpp"
#include "nbody/app/simulate.hpp"
#include "nbody/app/wiring.hpp"
#include "nbody/distributed/decomposed.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/reference.hpp"
#include "stand_in_suite.hpp"

namespace nbody::distributed {
namespace {

constexpr double kSoftening = 0.01;
constexpr std::size_t kAwkwardSizes[] = {1, 2, 7, 31, 1000, 4097};

// Set by main for the tests' lifetime.
struct Group {
  static Decomposition* decomposition;
  static const RankGpuExchange* exchange;  // the ranks' NCCL communicator
  static const std::string* skip_reason;   // not empty: every test skips, saying this
  static int device;                       // this rank's GPU
};
Decomposition* Group::decomposition = nullptr;
const RankGpuExchange* Group::exchange = nullptr;
const std::string* Group::skip_reason = nullptr;
int Group::device = 0;

#define SKIP_WITHOUT_A_GPU_PER_RANK() \
  if (!Group::skip_reason->empty()) GTEST_SKIP() << *Group::skip_reason

Decomposition& ranks() {
  return *Group::decomposition;
}

// This rank's GPU alone, and in the ranks' group.
ExecutionOptions one_gpu() {
  ExecutionOptions options;
  options.gpu_device = Group::device;
  return options;
}
ExecutionOptions grouped() {
  ExecutionOptions options = one_gpu();
  options.gpu_group = Group::exchange->group;
  return options;
}

// The all-pairs GPU formulations of `pairs` (a tree refuses ranks: it would need each rank's
// locally essential tree).
std::vector<const Implementation*> gpu_formulations(const Registry& registry,
                                                    PairScheme pairs = PairScheme::all_pairs) {
  return registry.where([pairs](const ImplementationInfo& i) {
    return i.device == DeviceKind::gpu && i.pairs == pairs && i.algorithm == Algorithm::all_pairs &&
           i.role != Role::tuning_variant;
  });
}

// sqrt(sum |a - b|^2), sqrt(sum |b|^2).
std::pair<double, double> difference_and_scale(std::span<const Vec3<double>> a,
                                               std::span<const Vec3<double>> b) {
  double difference = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double dx = a[i].x - b[i].x, dy = a[i].y - b[i].y, dz = a[i].z - b[i].z;
    difference += dx * dx + dy * dy + dz * dz;
    scale += b[i].x * b[i].x + b[i].y * b[i].y + b[i].z * b[i].z;
  }
  return {std::sqrt(difference), std::sqrt(scale)};
}

TEST(NcclRanks, RunsMatchTheOneGpuRunsAndTheReference) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  const Registry local = make_default_registry();
  const Registry decomposed = decomposed_registry(local, ranks());
  for (const Implementation* impl : gpu_formulations(local)) {
    const Implementation& over_ranks = *decomposed.find(impl->info.name);
    for (const std::size_t n : kAwkwardSizes) {
      const std::string what = impl->info.name + " N=" + std::to_string(n);
      SCOPED_TRACE(what);
      ASSERT_FALSE(over_ranks.size_limit_reason(n, grouped()).has_value());
      const Snapshot snapshot = make_initial_condition(InitialCondition::plummer, n, 17 + n);
      std::vector<Body<double>> seen = snapshot.bodies;
      if (impl->info.precision == Precision::f32) {
        seen = convert_precision<double, float>(convert_precision<float, double>(snapshot.bodies));
      }
      auto one = impl->prepare(seen, kSoftening, one_gpu());
      one->evaluate(PreparedRun::Scope::end_to_end);
      const std::vector<Vec3<double>> alone = one->accelerations();

      auto two = over_ranks.prepare(seen, kSoftening, grouped());
      const PreparedRun::Seconds seconds = two->evaluate(PreparedRun::Scope::end_to_end);
      EXPECT_GT(seconds.kernel, 0);
      EXPECT_GE(seconds.communication, 0);
      EXPECT_GE(seconds.total, seconds.kernel + seconds.communication);
      EXPECT_EQ(ranks().max_over_ranks(seconds.total), seconds.total);  // agreed
      const std::vector<Vec3<double>> together = two->accelerations();
      ASSERT_EQ(together.size(), n);
      two->evaluate(PreparedRun::Scope::kernel);
      const std::vector<Vec3<double>> kernel_scope = two->accelerations();
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(std::memcmp(&together[i], &kernel_scope[i], sizeof(Vec3<double>)), 0) << i;
      }

      const std::vector<std::uint32_t> targets = validation_targets(n, 1u << 30);
      const AccuracyMetrics metrics = compare_with_reference(
          together, reference_accelerations(seen, kSoftening, targets), targets, seen);
      EXPECT_TRUE(impl->info.tolerance.accepts(metrics, n)) << "rel_l2 " << metrics.relative_l2;
      // The one-GPU run to rounding (gpu.tuned plans its split of j by its count of targets, so
      // not bit for bit): within twice the L2 tolerance, which each meets against the reference.
      const auto [difference, scale] = difference_and_scale(together, alone);
      const double bound = 2 * impl->info.tolerance.relative_l2_bound(n) * std::max(scale, 1e-300);
      EXPECT_LE(difference, scale > 0 ? bound : 0.0) << "against one GPU: " << difference;

      const auto details = two->details();
      EXPECT_EQ(details.at("gpu_count"), std::to_string(ranks().ranks()));
      EXPECT_EQ(details.at("ranks"), std::to_string(ranks().ranks()));
      EXPECT_NE(details.at("exchange").find("between the ranks' GPUs"), std::string::npos)
          << details.at("exchange");
    }
  }
}

// Symmetric pairs put reactions on every body: refused over ranks as on several GPUs.
TEST(NcclRanks, SymmetricFormulationsRefuse) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  const Registry local = make_default_registry();
  const Registry decomposed = decomposed_registry(local, ranks());
  for (const Implementation* impl : gpu_formulations(local, PairScheme::symmetric)) {
    const auto reason = decomposed.find(impl->info.name)->size_limit_reason(1000, grouped());
    ASSERT_TRUE(reason.has_value()) << impl->info.name;
    EXPECT_NE(reason->find("symmetric"), std::string::npos) << *reason;
  }
}

// Each rank integrates its slice on its GPU and the positions travel by NCCL after every step:
// the trajectory is the one-GPU trajectory to rounding, the potential the one-GPU potential, and
// the step split is there and agreed.
TEST(NcclRanks, SimulationsFollowTheOneGpuTrajectories) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  const Registry local = make_default_registry();
  const Registry decomposed = decomposed_registry(local, ranks());
  for (const Implementation* impl : gpu_formulations(local)) {
    const double u = impl->info.tolerance.unit_roundoff;
    for (const std::size_t n : kAwkwardSizes) {
      SCOPED_TRACE(impl->info.name + " N=" + std::to_string(n));
      const Snapshot initial = make_initial_condition(InitialCondition::plummer, n, 300 + n);
      SimulationSetup setup{.bodies = initial.bodies,
                            .velocities = initial.velocities,
                            .softening = kSoftening,
                            .execution = one_gpu()};
      auto one = make_simulation(*impl, setup);
      setup.execution = grouped();
      auto two = decomposed.find(impl->info.name)->simulate(setup);
      EXPECT_EQ(two->details().at("gpu_count"), std::to_string(ranks().ranks()));
      EXPECT_EQ(two->details().at("ranks"), std::to_string(ranks().ranks()));
      for (const int steps : {3, 5}) {
        one->advance(steps, 1.0 / 256, false);
        const StepSeconds seconds = two->advance(steps, 1.0 / 256, true);
        EXPECT_TRUE(seconds.phases);
        EXPECT_GE(seconds.communication, 0.0);
        EXPECT_NEAR(seconds.force + seconds.integration + seconds.communication, seconds.total,
                    1e-9);
        EXPECT_EQ(ranks().max_over_ranks(seconds.total), seconds.total);  // agreed
      }
      const PhaseSpaceState want = one->state(), got = two->state();
      ASSERT_EQ(got.bodies.size(), n);
      ASSERT_EQ(got.velocities.size(), n);
      double difference = 0, scale = 0, velocity_difference = 0, velocity_scale = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double dx = got.bodies[i].x - want.bodies[i].x,
                     dy = got.bodies[i].y - want.bodies[i].y,
                     dz = got.bodies[i].z - want.bodies[i].z;
        difference += dx * dx + dy * dy + dz * dz;
        scale += want.bodies[i].x * want.bodies[i].x + want.bodies[i].y * want.bodies[i].y +
                 want.bodies[i].z * want.bodies[i].z;
        const Vec3<double>&a = got.velocities[i], &b = want.velocities[i];
        velocity_difference +=
            (a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y) + (a.z - b.z) * (a.z - b.z);
        velocity_scale += b.x * b.x + b.y * b.y + b.z * b.z;
        ASSERT_EQ(got.bodies[i].m, want.bodies[i].m) << i;
      }
      EXPECT_LE(std::sqrt(difference), 64 * u * std::sqrt(scale));
      EXPECT_LE(std::sqrt(velocity_difference), 64 * u * std::sqrt(velocity_scale));
      const std::optional<double> a = one->potential_energy(), b = two->potential_energy();
      ASSERT_TRUE(a && b);
      EXPECT_NEAR(*b, *a, 64 * u * std::abs(*a));
    }
  }
}

// The suite over ranks with NCCL between their GPUs: validated, timed with the exchange beside
// the kernel, recorded as such (settings.gpu_exchange, each result's details), and simulated.
TEST(NcclRanks, TheSuiteRecordsTheExchange) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  const Registry decomposed = decomposed_registry(make_default_registry(), ranks());
  const auto progress = make_silent_progress();
  SuiteContext context = quiet_context(decomposed, *progress);
  context.decomposition = ProcessDecomposition{
      .ranks = ranks().ranks(), .scheme = "target_range", .hosts = {}, .gpu_exchange = "nccl"};
  SuiteOptions options;
  options.implementation_pattern = "^gpu\\.tuned$";
  options.sizes = {31, 4097};
  options.counters = false;
  options.reference_cache = false;
  options.execution = grouped();
  options.timing.repetitions = 2;
  options.timing.min_time_s = 0.002;
  options.timing.max_over_processes = [](double v) { return ranks().max_over_ranks(v); };
  options.timing.job_cpu_seconds_on_host = [](double v) { return ranks().sum_on_host(v); };
  const ResultsDocument doc = run_suite(context, options, SuiteMode::run);
  EXPECT_EQ(doc.settings.gpu_exchange, "nccl");
  ASSERT_EQ(doc.results.size(), 2u);
  for (const ResultRecord& r : doc.results) {
    EXPECT_EQ(r.status, Status::ok) << r.n << ": " << r.reason;
    ASSERT_TRUE(r.kernel && r.end_to_end && r.communication) << r.n;
    EXPECT_GE(r.end_to_end->median_s, r.kernel->median_s);
    EXPECT_NE(r.details.at("exchange").find("between the ranks' GPUs"), std::string::npos);
  }

  SimulateOptions simulate;
  simulate.suite = options;
  simulate.suite.sizes = {4097};
  simulate.steps = 16;
  simulate.diag_every = 8;
  simulate.phase_steps = 8;
  const ResultsDocument simulated = run_simulations(context, simulate);
  EXPECT_EQ(simulated.settings.gpu_exchange, "nccl");
  ASSERT_EQ(simulated.simulations.size(), 1u);
  const SimulationRecord& s = simulated.simulations.front();
  EXPECT_EQ(s.status, Status::ok) << s.reason;
  EXPECT_EQ(s.steps, 16);
  EXPECT_GT(s.per_step.communication_s, 0.0);
  EXPECT_LT(s.max_relative_energy_error, 1e-3);
}

}  // namespace
}  // namespace nbody::distributed

int main(int argc, char** argv) {
  using namespace nbody;
  distributed::MpiSession session(argc, argv);
  std::atomic<bool> signal_received{false}, interrupt_requested{false};
  distributed::Decomposition decomposition(session.world(), signal_received, interrupt_requested);
  ::testing::InitGoogleTest(&argc, argv);
  nbody::testing::print_failures_of_every_rank(session.world().rank());

  // One GPU per rank, or every test skips; agreed, so that every rank skips or none does.
  const int gpus = static_cast<int>(describe_gpus().size());
  const bool short_of_gpus =
      decomposition.max_over_ranks(gpus < decomposition.ranks_on_host() ? 1.0 : 0.0) > 0;
  std::string skip_reason;
  std::optional<RankGpuExchange> exchange;
  const int device = gpus > 0 ? decomposition.rank_on_host() % gpus : 0;
  if (decomposition.ranks() < 2) {
    skip_reason = "one rank: run these tests under mpirun -np 2 (tests/mpirun.sh)";
  } else if (short_of_gpus) {
    skip_reason = "fewer GPUs than ranks on a host (" + std::to_string(gpus) + " here for " +
                  std::to_string(decomposition.ranks_on_host()) +
                  " ranks): NCCL takes one GPU per rank; these tests need 2 GPUs";
  } else {
    try {
      exchange = settle_gpu_exchange(decomposition, GpuExchangeRequest::nccl, device, true);
    } catch (const distributed::AgreedUsageError& e) {  // e.g. a build without NCCL
      skip_reason = e.what();
    }
  }
  distributed::Group::decomposition = &decomposition;
  distributed::Group::exchange = exchange ? &*exchange : nullptr;
  distributed::Group::skip_reason = &skip_reason;
  distributed::Group::device = device;
  const int code = RUN_ALL_TESTS();
  exchange.reset();  // NCCL's communicator goes before MPI
  return code;
}
