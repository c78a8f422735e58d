#pragma once
// One process's part in a suite decomposed over MPI ranks by target range: its rank,
// its slice of N bodies, and the agreements that keep the ranks in step.
//
// Every exchange between the ranks begins with an agreement: one reduction of the same shape
// wherever it happens, carrying where the rank is, whether it failed, whether a signal reached it,
// and the figures the ranks must decide alike on (times, as their largest). So
//   - a failure on any rank becomes the same exception on every rank (the lowest failing rank's
//     message), which the suite records like any failure, and no rank waits for a failed one;
//   - ranks that went different ways meet in the reduction, see it, and end the job (they cannot
//     be brought back in step) instead of hanging in mismatched collectives;
//   - an interrupt stops every rank at the same agreement: the signal handler only sets
//     signal_received, and the suite's interrupt_requested is set here, on all ranks at once.
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nbody/distributed/mpi.hpp"
#include "nbody/errors.hpp"
#include "nbody/target_range.hpp"

namespace nbody::distributed {

// Where a rank is when it agrees: ranks agreeing at different points went different ways.
enum class AgreementPoint { start = 1, registry, prepare, evaluate, step, state, decision };

// The error every rank raises together after an agreement found a failure.
class AgreedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The same for bad input (the failing rank's UsageError): every rank exits 2.
class AgreedUsageError : public UsageError {
 public:
  using UsageError::UsageError;
};

class Decomposition {
 public:
  // Figures agreed on as their largest over the ranks.
  static constexpr std::size_t kFigures = 4;
  using Figures = std::array<double, kFigures>;

  // `signal_received`: what this process's signal handler sets; `interrupt_requested`: what the
  // suite stops on. Both must outlive this object, as must `communicator`. A collective.
  Decomposition(Communicator& communicator, std::atomic<bool>& signal_received,
                std::atomic<bool>& interrupt_requested);

  int rank() const { return communicator_.rank(); }
  int ranks() const { return communicator_.size(); }
  // This rank's place among the ranks on its host (0 for the first): which GPU it drives.
  int rank_on_host() const { return host_->rank(); }
  // How many ranks share this rank's host.
  int ranks_on_host() const { return host_->size(); }
  Communicator& communicator() { return communicator_; }

  // This rank's balanced slice of n bodies, and every rank's (slices(n)[rank()] is this one's).
  TargetRange slice(std::size_t n) const;
  std::vector<TargetRange> slices(std::size_t n) const;

  // The agreement at `point`, every rank passing its own failure (null: none) and figures.
  // Throws AgreedUsageError or AgreedError on every rank when any failed; ends the job (after rank
  // 0 says why) when the ranks are at different points; sets interrupt_requested on every rank
  // when any received a signal. Returns the largest of each figure over the ranks.
  Figures agree(AgreementPoint point, const std::exception_ptr& failure = nullptr,
                const Figures& figures = {});
  // agree (every rank calling this one, not agree), after a step each rank takes alone inside a
  // library that itself waits for every rank (NCCL's communicator set-up): a rank that failed
  // there, and still finds another missing `patience_s` later, says why (its message, "rank R:
  // error: ...") and ends the job, since the missing ones may be waiting inside that library for
  // it, where no agreement reaches them.
  void agree_or_end_job(AgreementPoint point, const std::exception_ptr& failure, double patience_s);
  // Each rank's local answer to a question (empty: none), agreed: the lowest rank with an answer
  // gives it to all, prefixed "rank R: " where R is not 0. A collective.
  std::optional<std::string> agree_on_reason(const std::optional<std::string>& local);

  // The first agreement, where each rank brings what checking its command line gave: a failure,
  // or the hash of the arguments, which must be the same on every rank (an AgreedUsageError
  // otherwise: mpirun's MPMD form can start ranks with different ones).
  void agree_on_start(const std::exception_ptr& failure, std::uint64_t arguments_hash);
  // Whether agree_on_start has passed: before it, a rank's failure goes to agree_on_start; after
  // it, a failure outside an agreement can only end the job (Communicator::abort).
  bool started() const { return started_; }

  // agree with nothing to agree on but the point, each rank asleep while it waits for the others
  // (MPI's own waiting keeps a core busy): for ranks waiting while others measure idle power.
  void agree_asleep(AgreementPoint point);
  // Every rank's `text`, in rank order, after an agreement (every rank calls it at the same point).
  std::vector<std::string> gather_strings(const std::string& text);

  // The largest of `value` over the ranks (an agreement: every rank calls it at the same point).
  double max_over_ranks(double value);
  // The sum of `value` over the ranks on this rank's host (after an agreement: every rank calls
  // it at the same point): what the job's processes there did together, e.g. their CPU time.
  double sum_on_host(double value);

 private:
  Communicator& communicator_;
  std::atomic<bool>& signal_received_;
  std::atomic<bool>& interrupt_requested_;
  Figures agree(AgreementPoint point, const std::exception_ptr& failure, const Figures& figures,
                const std::optional<double>& patience_s);

  bool started_ = false;
  std::unique_ptr<Communicator> host_;  // the ranks sharing this rank's host
};

// FNV-1a of the arguments after the program's name, for agree_on_start.
std::uint64_t arguments_hash(int argc, char** argv);

}  // namespace nbody::distributed
