// Runs and simulations decomposed over MPI ranks (distributed/include/nbody/distributed/
// decomposed.hpp), run under mpirun on 2 or 3 ranks (tests/mpirun.sh): their results are the
// one-process results bit for bit; a failure on one rank becomes the same error on every rank, in
// a run, a simulation and the whole suite; availability and size limits are agreed; an interrupt
// on one rank stops every rank at the same point. Every rank runs every test; rank 0 prints, the
// others their failures alone.
// DISABLED_ tests end the job on purpose and are run on their own (tests/CMakeLists.txt).
#include <atomic>
#include <chrono>
#include <cstring>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "mpi_test_support.hpp"
#include "nbody/accuracy.hpp"
#include "nbody/app/gpu_exchange.hpp"
#include "nbody/app/rank_energy.hpp"
#include "nbody/app/runner.hpp"
#include "nbody/app/simulate.hpp"
#include "nbody/app/wiring.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/distributed/decomposed.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/reference.hpp"
#include "stand_in_suite.hpp"
#include "stepped_meter.hpp"

namespace nbody::distributed {
namespace {

constexpr double kSoftening = 0.01;
constexpr std::size_t kAwkwardSizes[] = {1, 2, 7, 31, 1000, 4097};

// The session's decomposition and the flags it sets, for the tests' lifetime (set by main).
struct Ranks {
  static Decomposition* decomposition;
  static std::atomic<bool>* signal_received;
  static std::atomic<bool>* interrupt_requested;
};
Decomposition* Ranks::decomposition = nullptr;
std::atomic<bool>* Ranks::signal_received = nullptr;
std::atomic<bool>* Ranks::interrupt_requested = nullptr;

Decomposition& ranks() {
  return *Ranks::decomposition;
}
bool last_rank() {
  return ranks().rank() == ranks().ranks() - 1;
}

void expect_bitwise_equal(std::span<const Vec3<double>> got, std::span<const Vec3<double>> want,
                          const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(Vec3<double>)), 0)
        << what << ": body " << i << " (" << got[i].x << ", " << got[i].y << ", " << got[i].z
        << ") against (" << want[i].x << ", " << want[i].y << ", " << want[i].z << ")";
  }
}

std::vector<const Implementation*> shipped_all_pairs_cpu(const Registry& registry) {
  return registry.where([](const ImplementationInfo& i) {
    return i.device == DeviceKind::cpu && i.pairs == PairScheme::all_pairs &&
           i.algorithm == Algorithm::all_pairs && i.role != Role::tuning_variant;
  });
}

// A run that throws in its evaluation number `failing_evaluation` (from 1) on the last rank.
class FailingRun final : public PreparedRun {
 public:
  FailingRun(std::size_t count, int failing_evaluation)
      : count_(count), failing_evaluation_(failing_evaluation) {}
  Seconds evaluate(Scope) override {
    if (++evaluations_ == failing_evaluation_ && last_rank()) {
      throw std::runtime_error("evaluation " + std::to_string(evaluations_) + " failed here");
    }
    return Seconds::kernel_only(1e-4);
  }
  std::vector<Vec3<double>> accelerations() override {
    return std::vector<Vec3<double>>(count_, Vec3<double>{0, 0, 0});
  }

 private:
  std::size_t count_;
  int failing_evaluation_;
  int evaluations_ = 0;
};

Implementation failing_implementation(std::string name, int failing_evaluation) {
  return stand_in_implementation(
      {.name = std::move(name), .description = "fails on the last rank"},
      [failing_evaluation](std::span<const Body<double>> bodies, double) {
        return std::make_unique<FailingRun>(ranks().slice(bodies.size()).size(),
                                            failing_evaluation);
      });
}

TEST(DecomposedRun, AccelerationsEqualTheOneProcessRunBitForBit) {
  const Registry registry = make_default_registry();
  for (const Implementation* impl : shipped_all_pairs_cpu(registry)) {
    if (impl->unavailable_reason()) continue;
    for (const std::size_t n : kAwkwardSizes) {
      const Snapshot snapshot = make_initial_condition(InitialCondition::plummer, n, 11);
      ExecutionOptions options;
      options.threads = 1;
      auto whole = impl->prepare(snapshot.bodies, kSoftening, options);
      whole->evaluate(PreparedRun::Scope::kernel);
      auto decomposed = prepare_decomposed(*impl, snapshot.bodies, kSoftening, options, ranks());
      for (int evaluation = 0; evaluation < 2; ++evaluation) {
        const PreparedRun::Seconds seconds = decomposed->evaluate(PreparedRun::Scope::kernel);
        EXPECT_GE(seconds.communication, 0.0);
        EXPECT_GE(seconds.total, seconds.kernel);
        // Agreed: the largest of the seconds is every rank's.
        EXPECT_EQ(ranks().max_over_ranks(seconds.total), seconds.total);
        expect_bitwise_equal(decomposed->accelerations(), whole->accelerations(),
                             impl->info.name + " N=" + std::to_string(n));
      }
      const auto details = decomposed->details();
      EXPECT_EQ(details.at("ranks"), std::to_string(ranks().ranks()));
    }
  }
}

// GPU formulations (where this machine has a GPU: the ranks share it or take one each): the slices'
// accelerations, gathered, within the formulation's tolerance of the float64 reference. Not bit
// for bit the one-process run: gpu.tuned plans its split of j by its count of targets.
TEST(DecomposedRun, GpuSlicesTogetherMatchTheReference) {
  const Registry registry = make_default_registry();
  const auto gpu = registry.where([](const ImplementationInfo& i) {
    return i.device == DeviceKind::gpu && i.pairs == PairScheme::all_pairs &&
           i.algorithm == Algorithm::all_pairs && i.role != Role::tuning_variant;
  });
  if (gpu.empty() || gpu.front()->unavailable_reason()) {
    GTEST_SKIP() << "no GPU here: "
                 << (gpu.empty() ? "no GPU formulations built"
                                 : *gpu.front()->unavailable_reason());
  }
  for (const Implementation* impl : gpu) {
    for (const std::size_t n : kAwkwardSizes) {
      const Snapshot snapshot = make_initial_condition(InitialCondition::plummer, n, 13);
      std::vector<Body<double>> seen = snapshot.bodies;
      if (impl->info.precision == Precision::f32) {
        seen = convert_precision<double, float>(convert_precision<float, double>(snapshot.bodies));
      }
      auto decomposed = prepare_decomposed(*impl, seen, kSoftening, {}, ranks());
      decomposed->evaluate(PreparedRun::Scope::end_to_end);
      const std::vector<std::uint32_t> targets = validation_targets(n, 1u << 30);
      const AccuracyMetrics metrics =
          compare_with_reference(decomposed->accelerations(),
                                 reference_accelerations(seen, kSoftening, targets), targets, seen);
      EXPECT_TRUE(impl->info.tolerance.accepts(metrics, n))
          << impl->info.name << " N=" << n << ": rel_l2 " << metrics.relative_l2;
    }
  }
}

TEST(DecomposedRun, AFailureOnOneRankIsEveryRanksError) {
  const Implementation impl = failing_implementation("stand-in.fails", 2);
  const Snapshot snapshot = make_initial_condition(InitialCondition::uniform_ball, 5, 1);
  auto run = prepare_decomposed(impl, snapshot.bodies, kSoftening, {}, ranks());
  EXPECT_NO_THROW(run->evaluate(PreparedRun::Scope::kernel));
  try {
    run->evaluate(PreparedRun::Scope::kernel);
    ADD_FAILURE() << "no error on rank " << ranks().rank();
  } catch (const AgreedError& e) {
    EXPECT_EQ(std::string(e.what()),
              "rank " + std::to_string(ranks().ranks() - 1) + ": evaluation 2 failed here");
  }
}

TEST(DecomposedRun, APrepareFailingOnOneRankIsEveryRanksError) {
  const Implementation impl = stand_in_implementation(
      {.name = "stand-in.cannot-prepare"},
      [](std::span<const Body<double>>, double) -> std::unique_ptr<PreparedRun> {
        if (last_rank()) throw UsageError("no such thing here");
        return std::make_unique<FailingRun>(0, 0);  // never evaluated
      });
  const Snapshot snapshot = make_initial_condition(InitialCondition::uniform_ball, 5, 1);
  try {
    prepare_decomposed(impl, snapshot.bodies, kSoftening, {}, ranks());
    ADD_FAILURE() << "no error on rank " << ranks().rank();
  } catch (const AgreedUsageError& e) {  // bad input stays bad input
    EXPECT_EQ(std::string(e.what()),
              "rank " + std::to_string(ranks().ranks() - 1) + ": no such thing here");
  }
}

TEST(DecomposedSimulation, TrajectoryIsTheOneProcessTrajectoryBitForBit) {
  const Registry registry = make_default_registry();
  for (const Implementation* impl : shipped_all_pairs_cpu(registry)) {
    if (impl->unavailable_reason()) continue;
    for (const std::size_t n : {std::size_t{2}, std::size_t{7}, std::size_t{300}}) {
      const Snapshot snapshot = make_initial_condition(InitialCondition::plummer, n, 5);
      SimulationSetup setup{.bodies = snapshot.bodies,
                            .velocities = snapshot.velocities,
                            .softening = kSoftening,
                            .execution = {}};
      setup.execution.threads = 1;
      auto one = make_simulation(*impl, setup);
      auto decomposed = make_decomposed_simulation(*impl, setup, ranks());
      for (const int steps : {3, 5}) {
        one->advance(steps, 1.0 / 128, true);
        const StepSeconds seconds = decomposed->advance(steps, 1.0 / 128, true);
        EXPECT_GT(seconds.communication, 0.0);
        EXPECT_TRUE(seconds.phases);
        const PhaseSpaceState want = one->state(), got = decomposed->state();
        const std::string what = impl->info.name + " N=" + std::to_string(n);
        ASSERT_EQ(got.bodies.size(), n);
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_EQ(std::memcmp(&got.bodies[i], &want.bodies[i], sizeof(Body<double>)), 0)
              << what << ": body " << i;
        }
        expect_bitwise_equal(got.velocities, want.velocities, what + " velocities");
        // The potential, its rows shared out over the ranks: the host's sum, bit for bit.
        const std::optional<double> potential = decomposed->potential_energy();
        ASSERT_TRUE(potential.has_value());
        EXPECT_EQ(*potential,
                  conserved_quantities(want.bodies, want.velocities, kSoftening).potential_energy)
            << what;
      }
    }
  }
}

TEST(DecomposedRegistry, AgreesOnAvailabilityAndSizeLimits) {
  Registry local;
  Implementation here_only = failing_implementation("stand-in.here-only", 0);
  here_only.unavailable_reason = [] {
    return last_rank() ? std::optional<std::string>("missing on this host") : std::nullopt;
  };
  local.add(std::move(here_only));
  local.add(*make_default_registry().find("cpu.tbb.symmetric"));
  const Registry decomposed = decomposed_registry(local, ranks());
  const std::optional<std::string> unavailable =
      decomposed.find("stand-in.here-only")->unavailable_reason();
  ASSERT_TRUE(unavailable.has_value());
  EXPECT_EQ(*unavailable, "rank " + std::to_string(ranks().ranks() - 1) + ": missing on this host");
  // Symmetric pairs take no slice: skipped at every N, whichever rank holds the whole (N = 1).
  for (const std::size_t n : {std::size_t{1}, std::size_t{1000}}) {
    const auto reason = decomposed.find("cpu.tbb.symmetric")->size_limit_reason(n, {});
    ASSERT_TRUE(reason.has_value()) << "N = " << n;
    EXPECT_NE(reason->find("target range"), std::string::npos) << *reason;
  }
}

// A suite of brief timings on one thread, no counters, decided alike on every rank.
SuiteOptions brief_decomposed_suite(std::vector<std::size_t> sizes) {
  SuiteOptions options;
  options.sizes = std::move(sizes);
  options.counters = false;
  options.reference_cache = false;
  options.execution.threads = 1;
  options.timing.repetitions = 2;
  options.timing.min_time_s = 0.002;
  options.timing.warmup_s = 0;
  options.timing.max_over_processes = [](double v) { return ranks().max_over_ranks(v); };
  return options;
}

// The whole suite over decomposed formulations: a formulation failing on one rank fails on every
// rank with that rank's message, the next one is validated and timed (Google Benchmark's loop on
// every rank, agreed through the run's seconds), and every rank ends with the same document.
TEST(DecomposedSuite, RunsInStepAndRecordsOneRanksFailureEverywhere) {
  Registry local;
  local.add(failing_implementation("stand-in.fails-validating", 1));
  local.add(*make_default_registry().find("cpu.soa"));
  const Registry decomposed = decomposed_registry(local, ranks());
  const auto progress = make_silent_progress();
  SuiteContext context = quiet_context(decomposed, *progress);
  context.decomposition =
      ProcessDecomposition{.ranks = ranks().ranks(), .scheme = "target_range", .hosts = {}};
  SuiteOptions options = brief_decomposed_suite({7, 200});
  options.timing.job_cpu_seconds_on_host = [](double v) { return ranks().sum_on_host(v); };
  const ResultsDocument doc = run_suite(context, options, SuiteMode::run);
  ASSERT_EQ(doc.results.size(), 4u);
  EXPECT_EQ(doc.settings.ranks, ranks().ranks());
  EXPECT_EQ(doc.settings.decomposition, "target_range");
  for (const ResultRecord& r : doc.results) {
    if (r.implementation == "stand-in.fails-validating") {
      EXPECT_EQ(r.status, Status::failed);
      EXPECT_EQ(r.reason,
                "rank " + std::to_string(ranks().ranks() - 1) + ": evaluation 1 failed here");
      continue;
    }
    EXPECT_EQ(r.status, Status::ok) << r.reason;
    ASSERT_TRUE(r.kernel && r.end_to_end && r.communication && r.end_to_end_rate);
    EXPECT_GE(r.end_to_end->median_s, r.kernel->median_s);
    EXPECT_EQ(r.details.at("ranks"), std::to_string(ranks().ranks()));
    // Every rank took as many iterations: their loops agreed.
    EXPECT_EQ(ranks().max_over_ranks(static_cast<double>(r.kernel->iterations_per_repetition)),
              static_cast<double>(r.kernel->iterations_per_repetition));
  }
}

TEST(DecomposedSuite, SimulatesInStep) {
  const Registry decomposed = decomposed_registry(make_default_registry(), ranks());
  const auto progress = make_silent_progress();
  const SuiteContext context = quiet_context(decomposed, *progress);
  SimulateOptions options;
  options.suite.sizes = {31};
  options.suite.implementation_pattern = "^cpu\\.(soa|tbb\\.symmetric)$";
  options.suite.execution.threads = 1;
  options.suite.timing.max_over_processes = [](double v) { return ranks().max_over_ranks(v); };
  options.steps = 12;
  options.diag_every = 4;
  options.phase_steps = 12;
  const ResultsDocument doc = run_simulations(context, options);
  ASSERT_EQ(doc.simulations.size(), 2u);
  const SimulationRecord& soa = doc.simulations[0];
  EXPECT_EQ(soa.status, Status::ok) << soa.reason;
  EXPECT_EQ(soa.steps, 12);
  EXPECT_EQ(soa.conservation.size(), 4u);
  EXPECT_GT(soa.per_step.communication_s, 0.0);
  EXPECT_EQ(doc.simulations[1].status, Status::skipped);  // symmetric pairs take no slice
}

// Energy read on every rank, each package once: every rank but the last meters a package of its
// own (10 W on rank 0, 20 W on rank 1, ...), the last shares the first's. The run records every
// metered domain by rank, and each timing's and simulation's power is the sum.
TEST(DecomposedSuite, ReadsEveryRanksEnergyOncePerDevice) {
  const bool metering = !last_rank();
  SteppedMeter* meter = nullptr;
  EnergyMeters own;
  if (metering) {
    auto stepped = std::make_unique<SteppedMeter>(10.0 * (ranks().rank() + 1), 0.002);
    meter = stepped.get();
    own.cpu.record = describe_energy_meter(meter, DeviceKind::cpu, "", 0.05);
    own.cpu.meter = std::move(stepped);
  } else {
    own.cpu = metered_by_another_process(DeviceKind::cpu);
  }
  const EnergyMeters energy = join_rank_energy(ranks(), std::move(own));
  const EnergyMeterRecord& record = energy.run_record(DeviceKind::cpu);
  ASSERT_TRUE(record.available) << record.unavailable_reason;
  std::vector<std::string> domains;
  double watts = 0;
  for (int r = 0; r + 1 < ranks().ranks(); ++r) {
    domains.push_back("rank " + std::to_string(r) + ": package-0");
    watts += 10.0 * (r + 1);
  }
  EXPECT_EQ(record.domains, domains);

  const Registry decomposed = decomposed_registry(make_default_registry(), ranks());
  const auto progress = make_silent_progress();
  SuiteContext context = quiet_context(decomposed, *progress);
  context.energy = &energy;
  SuiteOptions options = brief_decomposed_suite({200});
  options.implementation_pattern = "^cpu\\.soa$";
  options.energy_span_s[DeviceKind::cpu] = energy_span_s(energy, DeviceKind::cpu);
  const ResultsDocument doc = run_suite(context, options, SuiteMode::run);
  ASSERT_EQ(doc.results.size(), 1u);
  ASSERT_EQ(doc.energy.size(), 1u);
  EXPECT_EQ(doc.energy[0].domains, domains);
  ASSERT_TRUE(doc.results[0].kernel && doc.results[0].kernel->energy);
  const EnergyStatistics& e = *doc.results[0].kernel->energy;
  EXPECT_TRUE(e.resolved);
  EXPECT_EQ(e.domain_joules.size(), domains.size());
  EXPECT_NEAR(e.mean_watts, watts, watts * 0.25);

  SimulateOptions simulate;
  simulate.suite = options;
  simulate.suite.sizes = {31};
  simulate.steps = 40;
  simulate.diag_every = 40;
  simulate.phase_steps = 40;
  const ResultsDocument simulated = run_simulations(context, simulate);
  ASSERT_EQ(simulated.simulations.size(), 1u);
  ASSERT_TRUE(simulated.simulations[0].energy.has_value());
  EXPECT_EQ(simulated.simulations[0].energy->domain_joules.size(), domains.size());
}

// A signal on one rank stops every rank at the same agreement.
TEST(Decomposition, AnInterruptOnOneRankStopsEveryRankAtTheNextAgreement) {
  ASSERT_FALSE(Ranks::interrupt_requested->load());
  if (last_rank()) *Ranks::signal_received = true;
  ranks().agree(AgreementPoint::decision);
  EXPECT_TRUE(Ranks::interrupt_requested->load()) << "rank " << ranks().rank();
  *Ranks::signal_received = false;
  ranks().agree(AgreementPoint::decision);  // no rank reads the flag while it is reset
  *Ranks::interrupt_requested = false;
}

// The agreement after a step inside a library that waits for every rank (NCCL's set-up): where
// every rank meets it, a failure on one is every rank's error, as at any agreement.
TEST(Decomposition, AFailureAgreedWithPatienceIsEveryRanksErrorWhereEveryRankMeets) {
  EXPECT_NO_THROW(ranks().agree_or_end_job(AgreementPoint::decision, nullptr, 60));
  std::exception_ptr failure;
  if (last_rank()) failure = std::make_exception_ptr(std::runtime_error("joining failed here"));
  try {
    ranks().agree_or_end_job(AgreementPoint::decision, failure, 60);
    ADD_FAILURE() << "no error on rank " << ranks().rank();
  } catch (const AgreedError& e) {
    EXPECT_EQ(std::string(e.what()),
              "rank " + std::to_string(ranks().ranks() - 1) + ": joining failed here");
  }
}

// Run on its own (tests/CMakeLists.txt): a rank that failed there, and finds the others still
// missing (here: rank 0 busy for 60 s, as if waiting inside NCCL for it), ends the job with its
// message after its patience, instead of waiting with them.
TEST(Decomposition, DISABLED_ARankFailingAloneEndsTheJobAfterItsPatience) {
  if (last_rank()) {
    ranks().agree_or_end_job(AgreementPoint::decision,
                             std::make_exception_ptr(std::runtime_error("joining failed here")), 1);
  } else {
    std::this_thread::sleep_for(std::chrono::seconds(60));
  }
  ADD_FAILURE() << "the job went on";
}

// How GPU formulations' slices travel between the ranks (nbody/app/gpu_exchange.hpp), settled by
// every rank together: nothing to settle without GPU formulations; host memory where asked; NCCL
// where every rank has a GPU of its own, and otherwise host memory with the reason (and, asked
// for NCCL, bad input on every rank). On a machine without a GPU (CI): the fallback and the
// refusal; with one GPU per rank: the communicator, the id the same on every rank.
TEST(GpuExchange, SettlesOnNcclWhereEveryRankHasAGpuOfItsOwnElseSaysWhy) {
  const int gpus = static_cast<int>(describe_gpus().size());
  const int device = gpus > 0 ? ranks().rank_on_host() % gpus : 0;
  // Whether some host has more ranks than GPUs (or none): agreed, as settle's answer is.
  const bool short_of_gpus = ranks().max_over_ranks(gpus < ranks().ranks_on_host() ? 1.0 : 0.0) > 0;

  RankGpuExchange none = settle_gpu_exchange(ranks(), GpuExchangeRequest::automatic, device, false);
  EXPECT_FALSE(none.group.has_value());
  EXPECT_EQ(none.why_not_nccl, "");
  EXPECT_STREQ(none.name(), "mpi");
  const RankGpuExchange asked_mpi =
      settle_gpu_exchange(ranks(), GpuExchangeRequest::mpi, device, true);
  EXPECT_FALSE(asked_mpi.group.has_value());
  EXPECT_EQ(asked_mpi.why_not_nccl, "--gpu-exchange mpi");

  RankGpuExchange settled =
      settle_gpu_exchange(ranks(), GpuExchangeRequest::automatic, device, true);
  if (!short_of_gpus) {
    if (ranks().rank() == 0) {
      std::cout << "[ gpus     ] " << gpus << " GPU(s): NCCL between " << ranks().ranks()
                << " ranks\n";
    }
    ASSERT_TRUE(settled.group.has_value()) << settled.why_not_nccl;
    EXPECT_STREQ(settled.name(), "nccl");
    EXPECT_EQ(settled.group->rank, ranks().rank());
    EXPECT_EQ(settled.group->size, ranks().ranks());
    EXPECT_EQ(settled.group->id.size(), 128u);  // NCCL_UNIQUE_ID_BYTES
    std::vector<std::byte> rank_zeros = settled.group->id;
    ranks().communicator().broadcast(rank_zeros, 0);
    EXPECT_EQ(settled.group->id, rank_zeros);
    EXPECT_NE(settled.group->communicator, nullptr);
    return;
  }
  if (ranks().rank() == 0) {
    std::cout << "[ gpus     ] " << gpus << " GPU(s) for " << ranks().ranks_on_host()
              << " ranks on this host: " << settled.why_not_nccl << "\n";
  }
  EXPECT_FALSE(settled.group.has_value());
  EXPECT_STREQ(settled.name(), "mpi");
  EXPECT_FALSE(settled.why_not_nccl.empty());
  try {
    settle_gpu_exchange(ranks(), GpuExchangeRequest::nccl, device, true);
    ADD_FAILURE() << "no error on rank " << ranks().rank();
  } catch (const AgreedUsageError& e) {  // bad input: every rank exits 2
    EXPECT_EQ(std::string(e.what()), "--gpu-exchange nccl: " + settled.why_not_nccl);
  }
}

// Run on its own (tests/CMakeLists.txt): ranks at different agreement points end the job, with
// one line from rank 0, instead of hanging in mismatched collectives.
TEST(Decomposition, DISABLED_RanksThatWentDifferentWaysEndTheJob) {
  ranks().agree(ranks().rank() == 0 ? AgreementPoint::evaluate : AgreementPoint::prepare);
  ADD_FAILURE() << "the job went on";
}

}  // namespace
}  // namespace nbody::distributed

int main(int argc, char** argv) {
  nbody::distributed::MpiSession session(argc, argv);
  std::atomic<bool> signal_received{false}, interrupt_requested{false};
  nbody::distributed::Decomposition decomposition(session.world(), signal_received,
                                                  interrupt_requested);
  nbody::distributed::Ranks::decomposition = &decomposition;
  nbody::distributed::Ranks::signal_received = &signal_received;
  nbody::distributed::Ranks::interrupt_requested = &interrupt_requested;
  ::testing::InitGoogleTest(&argc, argv);
  nbody::testing::print_failures_of_every_rank(session.world().rank());
  return RUN_ALL_TESTS();
}
