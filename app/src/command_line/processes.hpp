#pragma once
// Where a suite's processes differ: nbody-fair in one process, or on every rank of mpirun with
// the suite decomposed over them. Commands ask this interface, never which of the two they run in.
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nbody/app/gpu_exchange.hpp"
#include "nbody/app/runner.hpp"
#include "nbody/counters.hpp"
#include "nbody/registry.hpp"

namespace nbody::commands {

// How a suite's processes share it. Held for the suite's whole length: `exchange` owns NCCL's
// communicator, where GPU formulations' slices travel by NCCL.
struct SuiteShare {
  std::optional<Registry> decomposed;  // the registry whose runs are decomposed over the ranks
  std::optional<ProcessDecomposition> decomposition;
  RankGpuExchange exchange;

  const Registry& registry_or(const Registry& local) const {
    return decomposed ? *decomposed : local;
  }
};

// Ceilings for a suite's report, and what measuring (or reading) them took.
struct SuiteCeilings {
  std::optional<Ceilings> ceilings;
  double seconds = 0;
};

class Processes {
 public:
  virtual ~Processes() = default;

  // Several processes (ranks) run each command together.
  virtual bool decomposed() const = 0;
  // This process prints progress and results and writes files (rank 0, or the one process).
  virtual bool writes() const = 0;

  // Makes `folder` ready for output where it is written; decomposed, the ranks then agree, so
  // that its failure (an unwritable --out) is every rank's. Call it once every rank's input is
  // known to be good (after share()). `replace`: --replace (prepare_output_directory).
  virtual void prepare_output(const std::filesystem::path& folder, bool replace) = 0;

  // Settles how the processes share the suite (and adjusts it: decomposed, no counters, since a
  // rank's would be of its own slice, and each rank its host's next GPU). `request`: how GPU
  // formulations' slices are asked to travel between the ranks.
  virtual SuiteShare share(const Registry& registry, GpuExchangeRequest request,
                           SuiteOptions& suite) = 0;

  // The ceilings measured (or read from the cache) where one process has the machine: all of
  // them with `counters`, else the all-gather between its GPUs alone. None on ranks.
  virtual SuiteCeilings ceilings(const ExecutionOptions& execution, bool counters) = 0;

  // Hardware counter sources; none on ranks.
  virtual std::vector<std::unique_ptr<CounterSource>> counter_sources() = 0;

  // The run's energy meters (make_energy_meters; decomposed, each rank metering its share of the
  // job's CPU packages and GPUs, join_rank_energy). Call after share().
  virtual EnergyMeters energy_meters(const ExecutionOptions& execution, bool with_gpu) = 0;

  // SIGINT and SIGTERM stop the suite after the current measurement (decomposed: on every rank
  // at the ranks' next agreement).
  virtual void handle_interrupts() = 0;

  std::unique_ptr<ProgressSink> progress() const {
    return writes() ? make_stderr_progress() : make_silent_progress();
  }
  // Says a line to the user, where this process writes.
  std::function<void(const std::string&)> announcer() const;
};

// nbody-fair in one process.
std::unique_ptr<Processes> make_one_process();

// Where this process's signal handler reaches: `flag` is set by the first SIGINT or SIGTERM;
// one a second or more later ends the program at once.
void stop_on_signals(void (*handler)(int));
void on_signal(std::atomic<bool>& flag);

}  // namespace nbody::commands
