// nbody-fair on every rank of mpirun: the suite decomposed over the ranks (nbody/distributed),
// rank 0 printing and writing, every failure agreed so that every rank exits alike.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "command_line/exit_codes.hpp"
#include "command_line/options.hpp"
#include "command_line/program.hpp"
#include "nbody/app/rank_energy.hpp"
#include "nbody/app/wiring.hpp"
#include "nbody/cpu_peaks/rapl_energy.hpp"
#include "nbody/distributed/decomposed.hpp"
#include "nbody/errors.hpp"

namespace nbody::commands {
namespace {

namespace distributed = nbody::distributed;

// A rank stops only with the others: its handler sets this, and the ranks' next agreement sets
// the suite's interrupt_requested() on all of them at once.
std::atomic<bool>& signal_received() {
  static std::atomic<bool> received{false};
  return received;
}

void on_interrupt_in_rank(int) {
  on_signal(signal_received());
}

class RankProcesses final : public Processes {
 public:
  RankProcesses(distributed::Communicator& world, distributed::Decomposition& decomposition,
                std::uint64_t arguments)
      : world_(world), decomposition_(decomposition), arguments_(arguments) {}

  bool decomposed() const override { return true; }
  bool writes() const override { return world_.rank() == 0; }

  void prepare_output(const std::filesystem::path& folder, bool replace) override {
    std::exception_ptr failure;
    if (world_.rank() == 0) {
      try {
        prepare_output_directory(folder, replace);
      } catch (...) {
        failure = std::current_exception();
      }
    }
    decomposition_.agree(distributed::AgreementPoint::decision, failure);
  }

  SuiteShare share(const Registry& registry, GpuExchangeRequest request,
                   SuiteOptions& suite) override;

  SuiteCeilings ceilings(const ExecutionOptions&, bool) override { return {}; }

  std::vector<std::unique_ptr<CounterSource>> counter_sources() override { return {}; }

  EnergyMeters energy_meters(const ExecutionOptions& execution, bool with_gpu) override;

  void handle_interrupts() override { stop_on_signals(on_interrupt_in_rank); }

 private:
  // The ranks' first agreement, once each has checked its command line: every rank the same
  // arguments; then each rank's host, in rank order.
  std::vector<std::string> start() {
    decomposition_.agree_on_start(nullptr, arguments_);
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    return world_.all_strings(host);
  }

  distributed::Communicator& world_;
  distributed::Decomposition& decomposition_;
  std::uint64_t arguments_;
  std::vector<std::string> hosts_;  // each rank's, once share() has started the ranks
};

// Each rank meters the packages it runs on that no lower rank of its host does, and its GPU where
// it is the first rank of its host on it (ranks beyond the host's GPUs share one: share()).
EnergyMeters RankProcesses::energy_meters(const ExecutionOptions& execution, bool with_gpu) {
  with_gpu = decomposition_.max_over_ranks(with_gpu ? 1 : 0) > 0;
  const std::set<int> packages =
      packages_this_rank_meters(decomposition_, hosts_, peaks::packages_of_this_process());
  EnergyMeters own;
  own.cpu =
      packages.empty() ? metered_by_another_process(DeviceKind::cpu) : make_cpu_energy(packages);
  if (with_gpu) {
    const std::size_t gpus = describe_gpus().size();
    const bool first_on_its_gpu =
        gpus == 0 || static_cast<std::size_t>(decomposition_.rank_on_host()) < gpus;
    own.gpu = first_on_its_gpu ? make_gpu_energy({execution.gpu_device})
                               : metered_by_another_process(DeviceKind::gpu);
  }
  return join_rank_energy(decomposition_, std::move(own));
}

// What a decomposed suite's ranks share beyond the registry: silence but on rank 0, no counters
// (each rank's would be of its own slice), the agreement the timings decide through, how GPU
// formulations' slices travel between the ranks (the exchange holds NCCL's communicator, where
// they travel by NCCL, and must outlive the suite), the record.
SuiteShare RankProcesses::share(const Registry& registry, GpuExchangeRequest request,
                                SuiteOptions& suite) {
  if (suite.execution.gpu_devices.size() > 1) {
    throw UsageError(
        "--gpus: under mpirun each rank drives one GPU (its host's next: --gpu sets "
        "the first); several GPUs in one process are for a run without mpirun");
  }
  suite.counters = false;
  // One GPU per rank: the ranks of a host take consecutive devices from --gpu, wrapping round the
  // host's devices (ranks beyond them share one).
  if (decomposition_.rank_on_host() > 0) {
    if (const auto gpus = describe_gpus(); !gpus.empty()) {
      suite.execution.gpu_device = (suite.execution.gpu_device + decomposition_.rank_on_host()) %
                                   static_cast<int>(gpus.size());
    }
  }
  suite.timing.max_over_processes = [this](double value) {
    return decomposition_.max_over_ranks(value);
  };
  suite.timing.job_cpu_seconds_on_host = [this](double value) {
    return decomposition_.sum_on_host(value);
  };
  hosts_ = start();
  const auto selected = registry.select(suite.implementation_pattern);
  const bool gpu_formulations =
      std::any_of(selected.begin(), selected.end(),
                  [](const Implementation* impl) { return impl->info.device == DeviceKind::gpu; });
  SuiteShare share;
  share.exchange =
      settle_gpu_exchange(decomposition_, request, suite.execution.gpu_device, gpu_formulations);
  suite.execution.gpu_group = share.exchange.group;
  // Falling back where a GPU could have run (not where there is none): said once, and recorded
  // in each GPU formulation's details.
  if (writes() && request == GpuExchangeRequest::automatic &&
      !share.exchange.why_not_nccl.empty() && !describe_gpus().empty()) {
    fmt::print(stderr,
               "nbody-fair: GPU formulations' slices travel through host memory (MPI): {}\n",
               share.exchange.why_not_nccl);
  }
  share.decomposition = ProcessDecomposition{.ranks = world_.size(),
                                             .scheme = "target_range",
                                             .hosts = hosts_,
                                             .gpu_exchange = share.exchange.name()};
  share.decomposed =
      distributed::decomposed_registry(registry, decomposition_, share.exchange.why_not_nccl);
  return share;
}

// An error every rank raised together: rank 0 says it, in one line; every rank exits alike.
int agreed_exit(const std::exception& e, int rank) {
  const bool usage = dynamic_cast<const UsageError*>(&e) != nullptr;
  if (rank == 0) fmt::print(stderr, "nbody-fair: {}{}\n", usage ? "" : "error: ", e.what());
  return usage ? kExitUsage : kExitFailed;
}

}  // namespace

// A failure before the ranks' first agreement (bad input on any rank, even on one alone) is
// brought to that agreement, so that every rank exits 2 (or 1) with its message printed once. A
// failure after it that no agreement caught (one rank's alone) ends the job, since the other
// ranks cannot be met again: the rank says why and aborts.
int run_under_mpirun(int argc, char** argv, const LauncherWorld&, Program program) {
  std::optional<distributed::MpiSession> session;
  try {
    session.emplace(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "nbody-fair: error: {}\n", e.what());
    return kExitFailed;
  }
  distributed::Communicator& world = session->world();
  if (world.size() == 1) return run_in_one_process(argc, argv, program);
  distributed::Decomposition decomposition(world, signal_received(), interrupt_requested());
  const std::uint64_t arguments = distributed::arguments_hash(argc, argv);
  RankProcesses processes(world, decomposition, arguments);
  try {
    const int code = program(argc, argv, processes);
    // A rank that finished without meeting the others (--help) meets them now.
    if (!decomposition.started()) decomposition.agree_on_start(nullptr, arguments);
    return code;
  } catch (const distributed::AgreedUsageError& e) {
    return agreed_exit(e, world.rank());
  } catch (const distributed::AgreedError& e) {
    return agreed_exit(e, world.rank());
  } catch (const std::exception& e) {
    if (!decomposition.started()) {
      try {
        decomposition.agree_on_start(std::current_exception(), arguments);
      } catch (const distributed::AgreedUsageError& agreed) {
        return agreed_exit(agreed, world.rank());
      } catch (const distributed::AgreedError& agreed) {
        return agreed_exit(agreed, world.rank());
      }
    }
    const bool usage = dynamic_cast<const UsageError*>(&e) != nullptr;
    fmt::print(stderr, "nbody-fair: rank {}: {}{}\n", world.rank(),
               usage ? "" : "error: ", e.what());
    std::fflush(stderr);
    world.abort(usage ? kExitUsage : kExitFailed);
  }
}

}  // namespace nbody::commands
