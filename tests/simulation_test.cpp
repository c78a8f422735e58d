// Time integration with the registered formulations as force engines (issue 14): closed-form
// orbits, conservation, the float64 trajectory, and `nbody-fair simulate`'s bad input.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nbody/app/runner.hpp"
#include "nbody/app/simulate.hpp"
#include "nbody/app/wiring.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/simulation.hpp"
#include "stand_in_suite.hpp"

namespace nbody {
namespace {

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

// Linear momentum: exact to rounding for every kernel (symmetric ones apply equal and opposite
// forces; the others compute each side separately, so rounding differs by a few units).
TEST(Simulation, MomentumIsConservedToRounding) {
  print_gpu_skip_reason_once();
  const PhaseSpaceState initial = plummer(1000, 7);
  for (const Implementation* impl : runnable()) {
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
    EXPECT_LE(error, energy_error_bound(reference_error, unit_roundoff(*impl)));
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
