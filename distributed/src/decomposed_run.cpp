// The decomposed run: a formulation's run on this rank's slice, all-gathered after each evaluation.
#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "nbody/distributed/decomposed.hpp"
#include "nbody/steady_clock.hpp"

namespace nbody::distributed {
namespace {

using Clock = SteadyClock;

// T: the formulation's precision, in which the accelerations travel (exactly: they are T values).
template <class T>
class DecomposedRun final : public PreparedRun {
 public:
  DecomposedRun(const Implementation& implementation, std::span<const Body<double>> bodies,
                double softening, const ExecutionOptions& options, Decomposition& decomposition,
                const std::string& why_not_nccl)
      : decomposition_(decomposition),
        exchange_(host_exchange(why_not_nccl)),
        slices_(decomposition.slices(bodies.size())),
        slice_(slices_[static_cast<std::size_t>(decomposition.rank())]),
        gathered_(bodies.size(), Vec3<T>{0, 0, 0}),
        vectors_(value_type<T>(), 3, sizeof(Vec3<T>)) {
    std::exception_ptr failure;
    try {
      if (options.targets) {
        throw std::invalid_argument("a decomposed run chooses each rank's targets itself");
      }
      ExecutionOptions slice_options = options;
      slice_options.targets = slice_;
      slice_options.gpu_group.reset();  // its slice travels through host memory
      run_ = implementation.prepare(bodies, softening, slice_options);
    } catch (...) {
      failure = std::current_exception();
    }
    decomposition_.agree(AgreementPoint::prepare, failure);
  }

  Seconds evaluate(Scope scope) override {
    std::exception_ptr failure;
    Seconds computed;
    Clock::time_point communication_start = Clock::now();
    try {
      computed = run_->evaluate(scope);
      communication_start = Clock::now();
      const std::vector<Vec3<double>> mine = run_->accelerations();
      if (mine.size() != slice_.size()) {
        throw std::logic_error(fmt::format("the slice's run returned {} accelerations, not {}",
                                           mine.size(), slice_.size()));
      }
      for (std::size_t k = 0; k < mine.size(); ++k) {
        gathered_[slice_.begin + k] = {static_cast<T>(mine[k].x), static_cast<T>(mine[k].y),
                                       static_cast<T>(mine[k].z)};
      }
    } catch (...) {
      failure = std::current_exception();
    }
    decomposition_.agree(AgreementPoint::evaluate, failure);
    decomposition_.communicator().all_gather_slices(gathered_.data(), vectors_, slices_);
    const double communication = seconds_since(communication_start);
    // Agreed over the ranks, so that every rank's timing loop takes the same decisions.
    std::vector<double> slowest = {computed.total + communication, computed.total, computed.kernel};
    decomposition_.communicator().max_in_place(slowest);
    return {.total = slowest[0], .kernel = slowest[2], .communication = slowest[0] - slowest[1]};
  }

  std::vector<Vec3<double>> accelerations() override {
    return promote(std::span<const Vec3<T>>(gathered_));
  }

  void set_bodies(std::span<const Body<double>> bodies) override { run_->set_bodies(bodies); }

  std::map<std::string, std::string> details() const override {
    std::map<std::string, std::string> details = run_->details();
    std::size_t fewest = slices_.front().size(), most = fewest;
    for (const TargetRange& slice : slices_) {
      fewest = std::min(fewest, slice.size());
      most = std::max(most, slice.size());
    }
    details["ranks"] = std::to_string(slices_.size());
    details["decomposition"] = "target range, accelerations all-gathered after each evaluation";
    details["exchange"] = exchange_;
    details["bodies_per_rank"] =
        fewest == most ? std::to_string(most) : fmt::format("{} to {}", fewest, most);
    details["gathered_bytes_per_evaluation"] = std::to_string(gathered_.size() * vectors_.bytes());
    return details;
  }

 private:
  Decomposition& decomposition_;
  std::string exchange_;
  std::vector<TargetRange> slices_;
  TargetRange slice_;
  std::unique_ptr<PreparedRun> run_;
  std::vector<Vec3<T>> gathered_;  // every rank's slice, this rank's written before the gather
  Datatype vectors_;
};

}  // namespace

std::string host_exchange(const std::string& why_not_nccl) {
  std::string exchange = "MPI_Allgatherv through host memory";
  if (!why_not_nccl.empty()) {
    exchange += " (NCCL not used: ";
    exchange += why_not_nccl;
    exchange += ")";
  }
  return exchange;
}

std::unique_ptr<PreparedRun> prepare_decomposed(const Implementation& implementation,
                                                std::span<const Body<double>> bodies,
                                                double softening, const ExecutionOptions& options,
                                                Decomposition& decomposition,
                                                const std::string& why_not_nccl) {
  if (implementation.info.precision == Precision::f64) {
    return std::make_unique<DecomposedRun<double>>(implementation, bodies, softening, options,
                                                   decomposition, why_not_nccl);
  }
  return std::make_unique<DecomposedRun<float>>(implementation, bodies, softening, options,
                                                decomposition, why_not_nccl);
}

}  // namespace nbody::distributed
