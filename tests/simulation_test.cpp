// Time integration with the registered formulations as force engines: closed-form
// orbits, conservation, the float64 trajectory, and `nbody-fair simulate`'s bad input.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numbers>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "awkward_sizes.hpp"
#include "nbody/app/runner.hpp"
#include "nbody/app/simulate.hpp"
#include "nbody/app/wiring.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/leapfrog_updates.hpp"
#include "nbody/simulation.hpp"
#include "stand_in_suite.hpp"

#if defined(NBODY_HAVE_CUDA)
#include <cuda_runtime_api.h>

#include "nbody/gpu/multi_gpu.hpp"
#endif

namespace nbody {
namespace {

using nbody::testing::kAwkwardSizes;

const Registry& registry() {
  static const Registry r = make_default_registry();
  return r;
}

// Full-accuracy formulations that can run here, CPU and GPU.
std::vector<const Implementation*> runnable() {
  std::vector<const Implementation*> out;
  for (const Implementation* impl : registry().select(".")) {
    if (impl->info.accuracy_class == AccuracyClass::full && !impl->unavailable_reason()) {
      out.push_back(impl);
    }
  }
  return out;
}

double unit_roundoff(const Implementation& impl) {
  return impl.info.precision == Precision::f64 ? 0x1.0p-53 : 0x1.0p-24;
}

PhaseSpaceState plummer(std::size_t n, std::uint64_t seed) {
  Snapshot s = make_plummer(n, seed);
  return {std::move(s.bodies), std::move(s.velocities)};
}

std::unique_ptr<Simulation> start(const Implementation& impl, const PhaseSpaceState& state,
                                  double softening) {
  return make_simulation(impl, {.bodies = state.bodies,
                                .velocities = state.velocities,
                                .softening = softening,
                                .execution = {}});
}

void print_gpu_skip_reason_once() {
  static bool printed = false;
  if (printed) return;
  printed = true;
  for (const Implementation* impl : registry().select(".")) {
    if (impl->info.device == DeviceKind::gpu) {
      if (const auto reason = impl->unavailable_reason()) {
        std::printf("GPU formulations skipped here: %s\n", reason->c_str());
      }
      return;
    }
  }
}

// Two equal masses on a circular orbit (G = 1, separation 1, total mass 1): after one period
// every formulation brings them back, with the energy of the closed form.
TEST(Simulation, CircularBinaryReturnsAfterOnePeriodWithEveryFormulation) {
  print_gpu_skip_reason_once();
  const double m = 0.5, separation = 1.0, softening = 1e-4;
  // Softened circular speed: v^2 / r = m r_sep / (r_sep^2 + eps^2)^(3/2), r = r_sep / 2.
  const double force_per_mass =
      m * separation / std::pow(separation * separation + softening * softening, 1.5);
  const double v = std::sqrt(force_per_mass * separation / 2);
  const double period = 2 * std::numbers::pi * (separation / 2) / v;
  const PhaseSpaceState binary{{{-0.5, 0, 0, m}, {0.5, 0, 0, m}}, {{0, -v, 0}, {0, v, 0}}};
  const int steps = 2000;
  for (const Implementation* impl : runnable()) {
    SCOPED_TRACE(impl->info.name);
    auto sim = start(*impl, binary, softening);
    sim->advance(steps / 2, period / steps, false);
    sim->advance(steps / 2, period / steps, true);
    const PhaseSpaceState end = sim->state();
    // Leapfrog's phase error over one period at 2000 steps is ~1e-5; float32 rounding ~1e-5.
    EXPECT_NEAR(end.bodies[0].x, -0.5, 1e-3);
    EXPECT_NEAR(end.bodies[0].y, 0.0, 1e-3);
    EXPECT_NEAR(end.bodies[1].x, 0.5, 1e-3);
    const ConservedQuantities q0 =
        conserved_quantities(binary.bodies, binary.velocities, softening);
    const ConservedQuantities q = conserved_quantities(end.bodies, end.velocities, softening);
    EXPECT_LT(relative_energy_error(q, q0), 1e-4);
  }
}

// Linear momentum: exact to rounding for every all-pairs kernel (symmetric ones apply equal and
// opposite forces; the others compute each side separately, so rounding differs by a few units).
// A tree's cells act on bodies that do not act back on them alone: its drift is bounded with its
// truncation (reports' conservation check), not here.
TEST(Simulation, MomentumIsConservedToRounding) {
  print_gpu_skip_reason_once();
  const PhaseSpaceState initial = plummer(1000, 7);
  for (const Implementation* impl : runnable()) {
    if (impl->info.algorithm != Algorithm::all_pairs) continue;
    SCOPED_TRACE(impl->info.name);
    auto sim = start(*impl, initial, 0.01);
    sim->advance(32, 1.0 / 256, false);
    const PhaseSpaceState end = sim->state();
    const ConservedQuantities q = conserved_quantities(end.bodies, end.velocities, 0.01);
    double scale = 0;  // sum of m |v|
    for (std::size_t i = 0; i < end.bodies.size(); ++i) {
      const Vec3<double>& v = end.velocities[i];
      scale += end.bodies[i].m * std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
    }
    const double p = std::sqrt(q.momentum.x * q.momentum.x + q.momentum.y * q.momentum.y +
                               q.momentum.z * q.momentum.z);
    // The initial momentum is zero to float64 rounding (centre-of-mass frame).
    EXPECT_LT(p / scale, 1000 * unit_roundoff(*impl)) << "|P| " << p << ", sum m|v| " << scale;
  }
}

// A Plummer sphere's energy error through a quarter of a time unit, for every formulation: within
// the surveyed bound around the float64 leapfrog's own (docs/tolerances.md, "Time integration").
TEST(Simulation, PlummerEnergyErrorIsWithinItsBoundForEveryFormulation) {
  print_gpu_skip_reason_once();
  const std::size_t n = 1024;
  const double dt = 1.0 / 256, softening = 0.01;
  const int steps = 64;
  const PhaseSpaceState initial = plummer(n, 11);
  const ConservedQuantities q0 =
      conserved_quantities(initial.bodies, initial.velocities, softening);
  PhaseSpaceState reference = initial;
  std::vector<Vec3<double>> accelerations;
  leapfrog(reference, dt, steps, reference_field(softening), accelerations);
  const double reference_error = relative_energy_error(
      conserved_quantities(reference.bodies, reference.velocities, softening), q0);
  std::printf("float64 leapfrog: |dE/E| = %.3e after %d steps\n", reference_error, steps);
  for (const Implementation* impl : runnable()) {
    SCOPED_TRACE(impl->info.name);
    auto sim = start(*impl, initial, softening);
    const PhaseSpaceState start_state = sim->state();
    const ConservedQuantities s0 =
        conserved_quantities(start_state.bodies, start_state.velocities, softening);
    sim->advance(steps, dt, false);
    const PhaseSpaceState end = sim->state();
    const double error =
        relative_energy_error(conserved_quantities(end.bodies, end.velocities, softening), s0);
    std::printf("%-20s |dE/E| = %.3e\n", impl->info.name.c_str(), error);
    // A tree adds its truncation's drift (zero for all-pairs formulations).
    const double drift =
        truncation_drift(impl->info.tolerance.relative_l2_truncation, steps * dt).energy;
    EXPECT_LE(error, energy_error_bound(reference_error, unit_roundoff(*impl)) + drift);
  }
}

// Timing by phase leaves the trajectory as whole steps make it (to the bit, but for symmetric
// kernels' summation order), and its parts add up.
TEST(Simulation, PhaseTimingDoesNotChangeTheTrajectory) {
  const PhaseSpaceState initial = plummer(257, 3);
  for (const Implementation* impl : runnable()) {
    SCOPED_TRACE(impl->info.name);
    auto whole = start(*impl, initial, 0.01);
    auto phased = start(*impl, initial, 0.01);
    whole->advance(8, 1.0 / 128, false);
    const StepSeconds seconds = phased->advance(8, 1.0 / 128, true);
    EXPECT_TRUE(seconds.phases);
    EXPECT_GT(seconds.force, 0);
    EXPECT_NEAR(seconds.force + seconds.integration, seconds.total, 1e-9);
    const PhaseSpaceState a = whole->state(), b = phased->state();
    // Symmetric kernels add each pair's force from several threads (atomics on the GPU, per-thread
    // accumulators on the CPU), so their sums may round differently from run to run.
    const double tolerance =
        impl->info.pairs == PairScheme::symmetric ? 1e3 * unit_roundoff(*impl) : 0.0;
    for (std::size_t i = 0; i < a.bodies.size(); ++i) {
      ASSERT_NEAR(a.bodies[i].x, b.bodies[i].x, tolerance) << "body " << i;
      ASSERT_NEAR(a.velocities[i].z, b.velocities[i].z, tolerance) << "body " << i;
    }
  }
}

// The leapfrog driven by hand in the formulation's precision T: a fresh prepared run per force
// evaluation, kicks and drifts on the host. What every simulation must reproduce, whether it
// integrates on the host, in device kernels, or fused into a force kernel's store.
template <class T>
PhaseSpaceState leapfrog_by_hand(const Implementation& impl, const PhaseSpaceState& initial,
                                 double softening, double dt, int steps) {
  const auto rounded = [](const auto& v) { return static_cast<double>(static_cast<T>(v)); };
  std::vector<Body<double>> bodies;  // float64 holding values of T
  std::vector<Vec3<T>> velocities;
  for (std::size_t i = 0; i < initial.bodies.size(); ++i) {
    const Body<double>& b = initial.bodies[i];
    bodies.push_back({rounded(b.x), rounded(b.y), rounded(b.z), rounded(b.m)});
    const Vec3<double>& v = initial.velocities[i];
    velocities.push_back({static_cast<T>(v.x), static_cast<T>(v.y), static_cast<T>(v.z)});
  }
  const auto forces = [&] {
    auto run = impl.prepare(bodies, softening, {});
    run->evaluate(PreparedRun::Scope::kernel);
    std::vector<Vec3<T>> a;
    for (const Vec3<double>& ai : run->accelerations()) {
      a.push_back({static_cast<T>(ai.x), static_cast<T>(ai.y), static_cast<T>(ai.z)});
    }
    return a;
  };
  const T half = static_cast<T>(0.5 * dt), full = static_cast<T>(dt);
  std::vector<Vec3<T>> a = forces();
  for (int step = 0; step < steps; ++step) {
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      velocities[i] = kicked(velocities[i], a[i], half);
      const Body<double>& b = bodies[i];
      const Body<T> moved = drifted(Body<T>{static_cast<T>(b.x), static_cast<T>(b.y),
                                            static_cast<T>(b.z), static_cast<T>(b.m)},
                                    velocities[i], full);
      bodies[i] = {moved.x, moved.y, moved.z, moved.m};
    }
    a = forces();
    for (std::size_t i = 0; i < bodies.size(); ++i)
      velocities[i] = kicked(velocities[i], a[i], half);
  }
  PhaseSpaceState end{bodies, {}};
  for (const Vec3<T>& v : velocities) end.velocities.push_back({v.x, v.y, v.z});
  return end;
}

// Every formulation's simulation, advanced in chunks (each chunk's first and last steps are where
// a fused GPU step differs from a middle one), follows the leapfrog driven by hand with its own
// forces, at awkward sizes. Kicks may round differently (FMA contraction differs between host and
// device), so to a few units of roundoff, far below a missing or doubled kick (dt a / 2 ~ 1e-3).
TEST(Simulation, StepsFollowTheLeapfrogOfTheFormulationsOwnForces) {
  print_gpu_skip_reason_once();
  const double dt = 1.0 / 128, softening = 0.05;
  for (const std::size_t n : kAwkwardSizes) {
    const PhaseSpaceState initial = plummer(n, 100 + n);
    for (const Implementation* impl : runnable()) {
      SCOPED_TRACE(impl->info.name + " N=" + std::to_string(n));
      auto sim = start(*impl, initial, softening);
      sim->advance(1, dt, false);
      sim->advance(3, dt, true);
      sim->advance(2, dt, false);
      const PhaseSpaceState got = sim->state();
      const bool f64 = impl->info.precision == Precision::f64;
      const PhaseSpaceState want = f64 ? leapfrog_by_hand<double>(*impl, initial, softening, dt, 6)
                                       : leapfrog_by_hand<float>(*impl, initial, softening, dt, 6);
      const double tolerance = 64 * unit_roundoff(*impl);
      for (std::size_t i = 0; i < n; ++i) {
        const auto close = [&](double a, double b) {
          return std::abs(a - b) <= tolerance * (1 + std::abs(b));
        };
        ASSERT_TRUE(close(got.bodies[i].x, want.bodies[i].x) &&
                    close(got.bodies[i].z, want.bodies[i].z))
            << "body " << i << " x " << got.bodies[i].x << " want " << want.bodies[i].x;
        ASSERT_TRUE(close(got.velocities[i].y, want.velocities[i].y))
            << "body " << i << " vy " << got.velocities[i].y << " want " << want.velocities[i].y;
      }
    }
  }
}

// Where a simulation sums the potential beside its state (the GPU), it is the host's float64 sum
// of the same rows, to the last few bits (FMA contraction may differ between host and device).
TEST(Simulation, PotentialSummedBesideTheStateIsTheHostSum) {
  print_gpu_skip_reason_once();
  for (const std::size_t n : kAwkwardSizes) {
    const PhaseSpaceState initial = plummer(n, 200 + n);
    for (const Implementation* impl : runnable()) {
      SCOPED_TRACE(impl->info.name + " N=" + std::to_string(n));
      auto sim = start(*impl, initial, 0.01);
      sim->advance(2, 1.0 / 256, false);
      const std::optional<double> potential = sim->potential_energy();
      if (!potential) continue;  // the caller sums it on the host
      const PhaseSpaceState state = sim->state();
      const double host =
          conserved_quantities(state.bodies, state.velocities, 0.01).potential_energy;
      EXPECT_NEAR(*potential, host, 1e-13 * std::abs(host)) << "device " << *potential;
    }
  }
}

// The device cuts j into 32 chunks (a multiple of 128 long); the sizes above give short ones, this
// one chunks of 2304 with the 31st short, as a default run's large N do. One GPU formulation covers
// it: the sum is the simulation's, not the force kernel's.
TEST(Simulation, PotentialOfManyBodiesInLongerChunksIsTheHostSum) {
  print_gpu_skip_reason_once();
  const Implementation* gpu = registry().find("gpu.tuned");
  if (gpu == nullptr || gpu->unavailable_reason()) GTEST_SKIP() << "no runnable gpu.tuned";
  const std::size_t n = 70001;
  const PhaseSpaceState initial = plummer(n, 200);
  auto sim = start(*gpu, initial, 0.01);
  const std::optional<double> potential = sim->potential_energy();
  ASSERT_TRUE(potential.has_value());
  const PhaseSpaceState state = sim->state();
  const double host = conserved_quantities(state.bodies, state.velocities, 0.01).potential_energy;
  EXPECT_NEAR(*potential, host, 1e-13 * std::abs(host)) << "device " << *potential;
}

// Several GPUs of one process: each integrates its slice and the positions are
// all-gathered after every step; the trajectory is the one-GPU trajectory to rounding (gpu.tuned
// plans its split of j by its count of targets, so not bit for bit), and the potential and the
// step split are there. Two GPUs where the machine has them, else the one (NCCL's path alone).
#if defined(NBODY_HAVE_CUDA)
TEST(Simulation, OnSeveralGpusFollowsTheOneGpuTrajectory) {
  print_gpu_skip_reason_once();
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  ExecutionOptions listed;
  listed.gpu_devices = count >= 2 ? std::vector<int>{0, 1} : std::vector<int>{0};
  if (const auto reason = gpu::multi_gpu_unavailable_reason(listed.gpu_devices)) {
    GTEST_SKIP() << *reason;
  }
  for (const Implementation* impl : runnable()) {
    if (impl->info.device != DeviceKind::gpu || impl->info.pairs != PairScheme::all_pairs ||
        impl->info.algorithm != Algorithm::all_pairs) {
      continue;  // symmetric pairs and trees refuse several GPUs
    }
    for (const std::size_t n : kAwkwardSizes) {
      SCOPED_TRACE(impl->info.name + " N=" + std::to_string(n));
      const PhaseSpaceState initial = plummer(n, 300 + n);
      SimulationSetup setup{.bodies = initial.bodies,
                            .velocities = initial.velocities,
                            .softening = 0.01,
                            .execution = {}};
      auto one = make_simulation(*impl, setup);
      setup.execution = listed;
      auto several = make_simulation(*impl, setup);
      EXPECT_EQ(several->details().at("gpu_count"), std::to_string(listed.gpu_devices.size()));
      for (const int steps : {3, 5}) {
        one->advance(steps, 1.0 / 256, false);
        const StepSeconds seconds = several->advance(steps, 1.0 / 256, true);
        EXPECT_TRUE(seconds.phases);
        EXPECT_GE(seconds.communication, 0.0);
        EXPECT_NEAR(seconds.force + seconds.integration + seconds.communication, seconds.total,
                    1e-12);
      }
      const PhaseSpaceState want = one->state(), got = several->state();
      ASSERT_EQ(got.bodies.size(), n);
      const double u = unit_roundoff(*impl);
      double difference = 0, scale = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double dx = got.bodies[i].x - want.bodies[i].x,
                     dy = got.bodies[i].y - want.bodies[i].y,
                     dz = got.bodies[i].z - want.bodies[i].z;
        difference += dx * dx + dy * dy + dz * dz;
        scale += want.bodies[i].x * want.bodies[i].x + want.bodies[i].y * want.bodies[i].y +
                 want.bodies[i].z * want.bodies[i].z;
        ASSERT_EQ(got.bodies[i].m, want.bodies[i].m) << i;
      }
      EXPECT_LE(std::sqrt(difference), 64 * u * std::sqrt(scale));
      const std::optional<double> a = one->potential_energy(), b = several->potential_energy();
      ASSERT_TRUE(a && b);
      EXPECT_NEAR(*b, *a, 64 * u * std::abs(*a));
    }
  }
}
#endif

// A force engine that goes bad: finite accelerations for its first evaluations, then NaN for one
// body, as a kernel bug or an overflow would.
class GoingBadRun final : public PreparedRun {
 public:
  explicit GoingBadRun(std::size_t n) : n_(n) {}
  Seconds evaluate(Scope) override {
    ++evaluations_;
    return Seconds::kernel_only(1e-6);
  }
  std::vector<Vec3<double>> accelerations() override {
    std::vector<Vec3<double>> a(n_, Vec3<double>{0, 0, 0});
    if (evaluations_ > 4) a[5] = {std::nan(""), 0, 0};
    return a;
  }
  void set_bodies(std::span<const Body<double>>) override {}

 private:
  std::size_t n_;
  int evaluations_ = 0;
};

// A run whose preparation, or whose every evaluation, takes `prepare_s` or `evaluate_s` of wall
// time, with zero accelerations.
class SlowRun final : public PreparedRun {
 public:
  SlowRun(std::size_t n, double prepare_s, double evaluate_s) : n_(n), evaluate_s_(evaluate_s) {
    std::this_thread::sleep_for(std::chrono::duration<double>(prepare_s));
  }
  Seconds evaluate(Scope) override {
    std::this_thread::sleep_for(std::chrono::duration<double>(evaluate_s_));
    return Seconds::kernel_only(evaluate_s_);
  }
  std::vector<Vec3<double>> accelerations() override {
    return std::vector<Vec3<double>>(n_, Vec3<double>{0, 0, 0});
  }
  void set_bodies(std::span<const Body<double>>) override {}

 private:
  std::size_t n_;
  double evaluate_s_;
};

SimulationRecord simulate_slow_run(double prepare_s, double evaluate_s, double max_seconds) {
  Registry registry;
  registry.add(stand_in_implementation(
      {.name = "cpu.slow", .description = "sleeps in prepare or in every evaluation"},
      [=](std::span<const Body<double>> bodies, double) -> std::unique_ptr<PreparedRun> {
        return std::make_unique<SlowRun>(bodies.size(), prepare_s, evaluate_s);
      }));
  const std::unique_ptr<ProgressSink> progress = make_silent_progress();
  const SuiteContext context = quiet_context(registry, *progress);
  SimulateOptions options;
  options.suite.sizes = {16};
  options.steps = 40;
  options.divergence_up_to = 0;
  options.max_seconds = max_seconds;
  const ResultsDocument doc = run_simulations(context, options);
  return doc.simulations.at(0);
}

// The time budget: where the first evaluation with its setup predicts too long a run, one step
// measured alone decides. Slow setup alone does not skip a run that fits; slow steps do, saying
// what one step took, with nothing of the run kept.
TEST(Simulation, TimeBudgetIsDecidedByOneStepWhereSetupMakesTheFirstEvaluationSlow) {
  const SimulationRecord fits = simulate_slow_run(0.2, 0, 1.0);  // 40 x 0.2 s = 8 s with setup
  EXPECT_EQ(fits.status, Status::ok) << fits.reason;
  EXPECT_EQ(fits.steps, 40);
  EXPECT_EQ(fits.conservation.size(), 2u);  // steps 0 and 40

  const SimulationRecord over = simulate_slow_run(0, 0.05, 1.0);  // 40 x 0.05 s = 2 s
  EXPECT_EQ(over.status, Status::skipped);
  EXPECT_EQ(over.reason.rfind("40 steps predicted to take ", 0), 0u) << over.reason;
  EXPECT_NE(over.reason.find("(one step 0.0"), std::string::npos) << over.reason;
  EXPECT_TRUE(over.conservation.empty());
}

// A simulation skipped on its one measured step still estimates the larger N from that step, and
// the larger N is never prepared: a machine slow enough to skip N = 1K (a sanitized build) once
// prepared N = 1M for hours instead.
TEST(Simulation, TheStepOfASkippedSmallerNEstimatesTheLargerOne) {
  auto prepared = std::make_shared<std::vector<std::size_t>>();
  Registry registry;
  registry.add(stand_in_implementation(
      {.name = "cpu.slow", .description = "sleeps in every evaluation"},
      [prepared](std::span<const Body<double>> bodies, double) -> std::unique_ptr<PreparedRun> {
        prepared->push_back(bodies.size());
        return std::make_unique<SlowRun>(bodies.size(), 0, 0.05);
      }));
  const std::unique_ptr<ProgressSink> progress = make_silent_progress();
  const SuiteContext context = quiet_context(registry, *progress);
  SimulateOptions options;
  options.suite.sizes = {1024, 65536};
  options.steps = 40;  // 40 x 0.05 s = 2 s at 1K, over the 1 s below
  options.divergence_up_to = 0;
  options.max_seconds = 1.0;
  const ResultsDocument doc = run_simulations(context, options);
  ASSERT_EQ(doc.simulations.size(), 2u);
  EXPECT_EQ(doc.simulations[0].status, Status::skipped);
  EXPECT_EQ(doc.simulations[0].reason.rfind("40 steps predicted to take ", 0), 0u)
      << doc.simulations[0].reason;
  EXPECT_EQ(doc.simulations[1].status, Status::skipped);
  EXPECT_NE(doc.simulations[1].reason.find("a step at N = 1K"), std::string::npos)
      << doc.simulations[1].reason;
  EXPECT_EQ(*prepared, std::vector<std::size_t>{1024});
}

// A NaN appearing mid-run stops that simulation at the next check, naming the step and the body;
// what it measured until then is kept.
TEST(Simulation, NonFiniteStateStopsTheRunNamingStepAndBody) {
  Registry registry;
  registry.add(stand_in_implementation(
      {.name = "cpu.goes-bad", .description = "NaN after four evaluations"},
      [](std::span<const Body<double>> bodies, double) -> std::unique_ptr<PreparedRun> {
        return std::make_unique<GoingBadRun>(bodies.size());
      }));
  const std::unique_ptr<ProgressSink> progress = make_silent_progress();
  const SuiteContext context = quiet_context(registry, *progress);
  SimulateOptions options;
  options.suite.sizes = {16};
  options.steps = 20;
  options.diag_every = 2;
  options.divergence_up_to = 0;
  const ResultsDocument doc = run_simulations(context, options);
  ASSERT_EQ(doc.simulations.size(), 1u);
  const SimulationRecord& r = doc.simulations[0];
  EXPECT_EQ(r.status, Status::failed);
  // Evaluation 5 is the fourth step's; the check after it, at step 4, finds body 5's velocity.
  EXPECT_EQ(r.reason, "step 4: body 5 has a non-finite velocity");
  EXPECT_EQ(r.steps, 4);
  EXPECT_EQ(r.conservation.size(), 2u);  // steps 0 and 2
}

}  // namespace
}  // namespace nbody
