// GPU formulations over a group of ranks, one GPU each (ExecutionOptions::gpu_group): the
// formulation's own run and simulation, which all-gather through NCCL on device buffers
// (gpu/multi_gpu/), with every rank's failures and figures agreed here, as the decomposed run
// and simulation agree theirs.
#include <algorithm>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "nbody/distributed/decomposed.hpp"

namespace nbody::distributed {
namespace {

void check_group(const ExecutionOptions& options) {
  if (!options.gpu_group) {
    throw std::invalid_argument("a run over a GPU group needs the group (ExecutionOptions)");
  }
  if (options.targets) {
    throw std::invalid_argument("a run over a GPU group chooses each rank's targets itself");
  }
}

class GpuGroupRun final : public PreparedRun {
 public:
  GpuGroupRun(const Implementation& implementation, std::span<const Body<double>> bodies,
              double softening, const ExecutionOptions& options, Decomposition& decomposition)
      : decomposition_(decomposition) {
    std::exception_ptr failure;
    try {
      check_group(options);
      run_ = implementation.prepare(bodies, softening, options);
    } catch (...) {
      failure = std::current_exception();
    }
    // Before any collective: a rank that could not prepare leaves no other waiting in NCCL.
    decomposition_.agree(AgreementPoint::prepare, failure);
  }

  Seconds evaluate(Scope scope) override {
    std::exception_ptr failure;
    Seconds own;
    try {
      own = run_->evaluate(scope);
    } catch (...) {
      failure = std::current_exception();
    }
    // Each rank's kernel and whole evaluation, the largest over the ranks; and the time from its
    // kernel's end until it had every slice, the smallest (negated, since the ranks agree on
    // largest figures): the all-gather after the last kernel, as one process measures it. The
    // other ranks' wait for that one is imbalance, and stays in the total.
    const Decomposition::Figures agreed = decomposition_.agree(
        AgreementPoint::evaluate, failure, {own.kernel, -own.communication, own.total});
    return {.total = agreed[2], .kernel = agreed[0], .communication = std::max(0.0, -agreed[1])};
  }

  std::vector<Vec3<double>> accelerations() override { return run_->accelerations(); }

  void set_bodies(std::span<const Body<double>> bodies) override { run_->set_bodies(bodies); }

  std::map<std::string, std::string> details() const override {
    std::map<std::string, std::string> details = run_->details();
    details["ranks"] = std::to_string(decomposition_.ranks());
    return details;
  }

 private:
  Decomposition& decomposition_;
  std::unique_ptr<PreparedRun> run_;
};

class GpuGroupSimulation final : public Simulation {
 public:
  GpuGroupSimulation(const Implementation& implementation, const SimulationSetup& setup,
                     Decomposition& decomposition)
      : decomposition_(decomposition) {
    std::exception_ptr failure;
    try {
      check_group(setup.execution);
      simulation_ = make_simulation(implementation, setup);
    } catch (...) {
      failure = std::current_exception();
    }
    decomposition_.agree(AgreementPoint::prepare, failure);
  }

  // Every rank's figures are those of the rank whose steps took longest: its all-gathers waited
  // for no other rank's force kernel, so its split is compute and exchange (a faster rank's
  // all-gathers hold its wait for the slower one). Where two ranks took exactly as long, each
  // part is the larger of theirs.
  StepSeconds advance(int steps, double dt, bool time_phases) override {
    std::exception_ptr failure;
    StepSeconds own;
    try {
      own = simulation_->advance(steps, dt, time_phases);
    } catch (...) {
      failure = std::current_exception();
    }
    const double slowest = decomposition_.agree(AgreementPoint::step, failure, {own.total})[0];
    const bool mine = own.total == slowest;
    const Decomposition::Figures split = decomposition_.agree(
        AgreementPoint::decision, nullptr,
        {mine ? own.force : 0.0, mine ? own.integration : 0.0, mine ? own.communication : 0.0});
    return {.total = slowest,
            .force = split[0],
            .integration = split[1],
            .communication = split[2],
            .phases = own.phases};
  }

  PhaseSpaceState state() override {
    std::exception_ptr failure;
    PhaseSpaceState state;
    try {
      state = simulation_->state();
    } catch (...) {
      failure = std::current_exception();
    }
    decomposition_.agree(AgreementPoint::state, failure);
    return state;
  }

  // Every rank sums it on its GPU from the same positions.
  std::optional<double> potential_energy() override {
    std::exception_ptr failure;
    std::optional<double> potential;
    try {
      potential = simulation_->potential_energy();
    } catch (...) {
      failure = std::current_exception();
    }
    decomposition_.agree(AgreementPoint::state, failure);
    return potential;
  }

  std::map<std::string, std::string> details() const override {
    std::map<std::string, std::string> details = simulation_->details();
    details["ranks"] = std::to_string(decomposition_.ranks());
    return details;
  }

 private:
  Decomposition& decomposition_;
  std::unique_ptr<Simulation> simulation_;
};

}  // namespace

std::unique_ptr<PreparedRun> prepare_on_gpu_group(const Implementation& implementation,
                                                  std::span<const Body<double>> bodies,
                                                  double softening, const ExecutionOptions& options,
                                                  Decomposition& decomposition) {
  return std::make_unique<GpuGroupRun>(implementation, bodies, softening, options, decomposition);
}

std::unique_ptr<Simulation> make_gpu_group_simulation(const Implementation& implementation,
                                                      const SimulationSetup& setup,
                                                      Decomposition& decomposition) {
  return std::make_unique<GpuGroupSimulation>(implementation, setup, decomposition);
}

}  // namespace nbody::distributed
