// The decomposed simulation: the host leapfrog over this rank's slice, positions all-gathered after
// each drift. Its arithmetic is HostSimulation's (common/src/simulation.cpp) body for body.
#include <algorithm>
#include <chrono>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "nbody/diagnostics.hpp"
#include "nbody/distributed/decomposed.hpp"
#include "nbody/leapfrog_updates.hpp"
#include "nbody/steady_clock.hpp"

namespace nbody::distributed {
namespace {

using Clock = SteadyClock;

// Positions, velocities and accelerations in the run's precision T, as in HostSimulation. Every
// rank keeps every body's position (the all-gathers keep them current) and velocity (current for
// its own slice; state() gathers the rest), and its slice's accelerations.
template <class T>
class DecomposedSimulation final : public Simulation {
 public:
  DecomposedSimulation(const Implementation& implementation, const SimulationSetup& setup,
                       Decomposition& decomposition, const std::string& why_not_nccl)
      : decomposition_(decomposition),
        exchange_(host_exchange(why_not_nccl)),
        slices_(decomposition.slices(setup.bodies.size())),
        slice_(slices_[static_cast<std::size_t>(decomposition.rank())]),
        positions_(value_type<T>(), 3, sizeof(Body<T>)),
        vectors_(value_type<T>(), 3, sizeof(Vec3<T>)),
        doubles_(value_type<double>(), 1, sizeof(double)),
        softening_(setup.softening),
        rows_(setup.bodies.size()) {
    std::exception_ptr failure;
    try {
      if (setup.velocities.size() != setup.bodies.size()) {
        throw std::invalid_argument("simulation: one velocity per body");
      }
      if (setup.execution.targets) {
        throw std::invalid_argument("a decomposed simulation chooses each rank's targets itself");
      }
      ExecutionOptions slice_options = setup.execution;
      slice_options.targets = slice_;
      slice_options.gpu_group.reset();  // its slice travels through host memory
      run_ = implementation.prepare(setup.bodies, setup.softening, slice_options);
      arena_ = std::make_unique<tbb::task_arena>(
          std::max(1, implementation.threads_used(setup.execution)));
      bodies_ = convert_precision<T, double>(setup.bodies);
      velocities_.resize(setup.velocities.size());
      for (std::size_t i = 0; i < velocities_.size(); ++i) {
        velocities_[i] = {static_cast<T>(setup.velocities[i].x),
                          static_cast<T>(setup.velocities[i].y),
                          static_cast<T>(setup.velocities[i].z)};
      }
      accelerations_.resize(slice_.size());
      staged_.resize(setup.bodies.size());
      run_->evaluate(PreparedRun::Scope::kernel);
      fetch_accelerations();
    } catch (...) {
      failure = std::current_exception();
    }
    decomposition_.agree(AgreementPoint::prepare, failure);
  }

  StepSeconds advance(int steps, double dt, bool) override {
    const T half = static_cast<T>(0.5 * dt);
    const T full = static_cast<T>(dt);
    StepSeconds seconds;
    const auto start = Clock::now();
    // A failure is carried to the next agreement: the one opening the next step, or the closing
    // one after the last.
    std::exception_ptr failure;
    for (int step = 0; step < steps; ++step) {
      try {
        for_each_target([&](std::size_t i) {
          Vec3<T>& v = velocities_[i];
          v = kicked(v, accelerations_[i - slice_.begin], half);
          bodies_[i] = drifted(bodies_[i], v, full);
        });
      } catch (...) {
        failure = std::current_exception();
      }
      const auto communication_start = Clock::now();
      decomposition_.agree(AgreementPoint::step, failure);
      decomposition_.communicator().all_gather_slices(bodies_.data(), positions_, slices_);
      seconds.communication += seconds_since(communication_start);
      try {
        for (std::size_t i = 0; i < bodies_.size(); ++i) {
          const Body<T>& b = bodies_[i];
          staged_[i] = {b.x, b.y, b.z, b.m};
        }
        run_->set_bodies(staged_);
        seconds.force += run_->evaluate(PreparedRun::Scope::kernel).kernel;
        fetch_accelerations();
        for_each_target([&](std::size_t i) {
          velocities_[i] = kicked(velocities_[i], accelerations_[i - slice_.begin], half);
        });
      } catch (...) {
        failure = std::current_exception();
      }
    }
    const auto communication_start = Clock::now();
    decomposition_.agree(AgreementPoint::step, failure);
    seconds.communication += seconds_since(communication_start);
    seconds.total = seconds_since(start);
    // Everything but the kernel and the exchanges: kicks, drifts and the layout copies.
    seconds.integration = seconds.total - seconds.force - seconds.communication;
    seconds.phases = true;
    return seconds;
  }

  PhaseSpaceState state() override {
    decomposition_.agree(AgreementPoint::state);
    decomposition_.communicator().all_gather_slices(velocities_.data(), vectors_, slices_);
    return promoted_state<T>(bodies_, velocities_);
  }

  // Each rank sums the potential's rows of its slice, and the rows are all-gathered and added in
  // order: the one-process host sum, bit for bit, at 1/K of its cost per rank (every rank summed
  // all N^2/2 pairs before).
  std::optional<double> potential_energy() override {
    std::exception_ptr failure;
    try {
      const PhaseSpaceState positions = promoted_state<T>(bodies_, {});
      potential_rows(positions.bodies, softening_, slice_,
                     std::span<double>(rows_).subspan(slice_.begin, slice_.size()));
    } catch (...) {
      failure = std::current_exception();
    }
    decomposition_.agree(AgreementPoint::state, failure);
    decomposition_.communicator().all_gather_slices(rows_.data(), doubles_, slices_);
    return potential_from_rows(rows_);
  }

  std::map<std::string, std::string> details() const override {
    std::map<std::string, std::string> details = run_->details();
    details["integration"] =
        "host leapfrog of each rank's slice in the formulation's precision, its threads";
    details["integration_threads"] = std::to_string(arena_->max_concurrency());
    details["ranks"] = std::to_string(slices_.size());
    details["decomposition"] = "target range, positions all-gathered after each drift";
    details["exchange"] = exchange_;
    details["gathered_bytes_per_step"] = std::to_string(bodies_.size() * positions_.bytes());
    return details;
  }

 private:
  template <class F>
  void for_each_target(const F& f) {
    arena_->execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(slice_.begin, slice_.end, 4096),
                        [&](const tbb::blocked_range<std::size_t>& range) {
                          for (std::size_t i = range.begin(); i != range.end(); ++i) f(i);
                        });
    });
  }

  void fetch_accelerations() {
    const std::vector<Vec3<double>> promoted = run_->accelerations();
    if (promoted.size() != accelerations_.size()) {
      throw std::logic_error(fmt::format("the slice's run returned {} accelerations, not {}",
                                         promoted.size(), accelerations_.size()));
    }
    for (std::size_t k = 0; k < promoted.size(); ++k) {
      accelerations_[k] = {static_cast<T>(promoted[k].x), static_cast<T>(promoted[k].y),
                           static_cast<T>(promoted[k].z)};
    }
  }

  Decomposition& decomposition_;
  std::string exchange_;
  std::vector<TargetRange> slices_;
  TargetRange slice_;
  Datatype positions_;  // x, y, z of a Body<T>: the mass stays
  Datatype vectors_;
  Datatype doubles_;  // the potential's rows
  double softening_;
  std::vector<double> rows_;  // the potential's, every body's; this rank's slice summed here
  std::unique_ptr<PreparedRun> run_;
  std::unique_ptr<tbb::task_arena> arena_;
  std::vector<Body<T>> bodies_;         // every body
  std::vector<Vec3<T>> velocities_;     // every body; this rank's slice current
  std::vector<Vec3<T>> accelerations_;  // this rank's slice
  std::vector<Body<double>> staged_;
};

}  // namespace

std::unique_ptr<Simulation> make_decomposed_simulation(const Implementation& implementation,
                                                       const SimulationSetup& setup,
                                                       Decomposition& decomposition,
                                                       const std::string& why_not_nccl) {
  if (implementation.info.precision == Precision::f64) {
    return std::make_unique<DecomposedSimulation<double>>(implementation, setup, decomposition,
                                                          why_not_nccl);
  }
  return std::make_unique<DecomposedSimulation<float>>(implementation, setup, decomposition,
                                                       why_not_nccl);
}

}  // namespace nbody::distributed
