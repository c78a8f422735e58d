#include "nbody/simulation.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "nbody/leapfrog_updates.hpp"
#include "nbody/registry.hpp"
#include "nbody/steady_clock.hpp"

namespace nbody {

void PreparedRun::set_bodies(std::span<const Body<double>>) {
  throw std::logic_error("this formulation's run cannot take new bodies");
}

namespace {

// The host leapfrog around a prepared run: positions, velocities and accelerations in the run's
// precision T, kicks and drifts spread over the run's own threads; the run rounds the staged
// float64 copy (exact: every value is a T) into its own layout before each force evaluation.
template <class T>
class HostSimulation final : public Simulation {
 public:
  HostSimulation(std::unique_ptr<PreparedRun> run, const SimulationSetup& setup, int threads)
      : run_(std::move(run)),
        arena_(threads),
        bodies_(convert_precision<T, double>(setup.bodies)),
        velocities_(setup.velocities.size()),
        accelerations_(setup.bodies.size()),
        staged_(setup.bodies.size()) {
    for (std::size_t i = 0; i < velocities_.size(); ++i) {
      velocities_[i] = {static_cast<T>(setup.velocities[i].x),
                        static_cast<T>(setup.velocities[i].y),
                        static_cast<T>(setup.velocities[i].z)};
    }
    run_->evaluate(PreparedRun::Scope::kernel);
    fetch_accelerations();
  }

  StepSeconds advance(int steps, double dt, bool) override {
    const T half = static_cast<T>(0.5 * dt);
    const T full = static_cast<T>(dt);
    StepSeconds seconds;
    const auto start = SteadyClock::now();
    for (int step = 0; step < steps; ++step) {
      for_each_body([&](std::size_t i) {
        velocities_[i] = kicked(velocities_[i], accelerations_[i], half);
        bodies_[i] = drifted(bodies_[i], velocities_[i], full);
        const Body<T>& b = bodies_[i];
        staged_[i] = {b.x, b.y, b.z, b.m};
      });
      run_->set_bodies(staged_);
      const PreparedRun::Seconds evaluation = run_->evaluate(PreparedRun::Scope::kernel);
      seconds.force += evaluation.kernel;
      seconds.tree_build += evaluation.tree_build;
      fetch_accelerations();
      for_each_body(
          [&](std::size_t i) { velocities_[i] = kicked(velocities_[i], accelerations_[i], half); });
    }
    seconds.total = seconds_since(start);
    // Everything but the kernel: kicks, drifts and the layout copies in and out of the run.
    seconds.integration = seconds.total - seconds.force;
    seconds.phases = true;
    return seconds;
  }

  PhaseSpaceState state() override { return promoted_state<T>(bodies_, velocities_); }

  std::map<std::string, std::string> details() const override {
    std::map<std::string, std::string> details = run_->details();
    details["integration"] = "host leapfrog in the formulation's precision, its threads";
    details["integration_threads"] = std::to_string(arena_.max_concurrency());
    return details;
  }

 private:
  template <class F>
  void for_each_body(const F& f) {
    arena_.execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, bodies_.size(), 4096),
                        [&](const tbb::blocked_range<std::size_t>& range) {
                          for (std::size_t i = range.begin(); i != range.end(); ++i) f(i);
                        });
    });
  }

  void fetch_accelerations() {
    const std::vector<Vec3<double>> promoted = run_->accelerations();
    for (std::size_t i = 0; i < promoted.size(); ++i) {
      accelerations_[i] = {static_cast<T>(promoted[i].x), static_cast<T>(promoted[i].y),
                           static_cast<T>(promoted[i].z)};
    }
  }

  std::unique_ptr<PreparedRun> run_;
  tbb::task_arena arena_;
  std::vector<Body<T>> bodies_;
  std::vector<Vec3<T>> velocities_;
  std::vector<Vec3<T>> accelerations_;
  std::vector<Body<double>> staged_;
};

}  // namespace

std::unique_ptr<Simulation> make_simulation(const Implementation& implementation,
                                            const SimulationSetup& setup) {
  if (setup.velocities.size() != setup.bodies.size()) {
    throw std::invalid_argument("simulation: one velocity per body");
  }
  if (is_partial(setup.execution.targets, setup.bodies.size()) && !implementation.simulate) {
    throw std::invalid_argument("the host leapfrog integrates every body, not a slice of targets");
  }
  if (implementation.simulate) return implementation.simulate(setup);
  std::unique_ptr<PreparedRun> run =
      implementation.prepare(setup.bodies, setup.softening, setup.execution);
  const int threads = std::max(1, implementation.threads_used(setup.execution));
  if (implementation.info.precision == Precision::f64) {
    return std::make_unique<HostSimulation<double>>(std::move(run), setup, threads);
  }
  return std::make_unique<HostSimulation<float>>(std::move(run), setup, threads);
}

}  // namespace nbody
