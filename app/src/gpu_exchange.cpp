#include "nbody/app/gpu_exchange.hpp"

#include <unistd.h>

#include <exception>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "nbody/errors.hpp"

namespace nbody {
namespace {

// How long a rank whose ncclCommInitRank failed waits for the others to meet it (they may be
// waiting inside NCCL for it) before it ends the job.
constexpr double kJoinPatienceSeconds = 60;

#if NBODY_HAVE_MPI
std::string host_name() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) return "?";
  return host;
}
#endif

}  // namespace

GpuExchangeRequest parse_gpu_exchange(std::string_view text) {
  if (text == "nccl") return GpuExchangeRequest::nccl;
  if (text == "mpi") return GpuExchangeRequest::mpi;
  throw UsageError(fmt::format(
      "--gpu-exchange: '{}' is neither nccl (between the ranks' GPUs) nor mpi (through host "
      "memory)",
      text));
}

std::optional<std::string> shared_gpu_reason(std::span<const std::string> rank_gpus) {
  std::map<std::string, std::size_t> first_rank;
  for (std::size_t rank = 0; rank < rank_gpus.size(); ++rank) {
    const std::string& gpu = rank_gpus[rank];
    if (gpu.empty()) continue;
    const auto [seen, added] = first_rank.emplace(gpu, rank);
    if (!added) {
      return fmt::format(
          "ranks {} and {} would share one GPU ({}): NCCL takes one GPU per rank (start at most as "
          "many ranks on a host as it has GPUs)",
          seen->second, rank, gpu);
    }
  }
  return std::nullopt;
}

#if NBODY_HAVE_MPI

RankGpuExchange settle_gpu_exchange(distributed::Decomposition& decomposition,
                                    GpuExchangeRequest request, int gpu_device,
                                    bool gpu_formulations) {
  using distributed::AgreementPoint;
  RankGpuExchange exchange;
  // Agreed first, so that every rank takes the same way below (ranks of different builds could
  // select differently).
  if (decomposition.max_over_ranks(gpu_formulations ? 1.0 : 0.0) == 0) {
    return exchange;  // nothing for NCCL to carry
  }
  if (request == GpuExchangeRequest::mpi) {
    exchange.why_not_nccl = "--gpu-exchange mpi";
    return exchange;
  }
  // Each rank's reason (none: its GPU readied), agreed with any failure before any rank waits in
  // NCCL; then which physical GPU each rank drives, since NCCL refuses two ranks on one.
  std::optional<std::string> reason;
  std::string gpu;
  std::exception_ptr failure;
  try {
    reason = gpu_group_unavailable_reason(gpu_device);
    if (!reason) gpu = host_name() + "/" + ready_gpu(gpu_device);
  } catch (...) {
    failure = std::current_exception();
  }
  decomposition.agree(AgreementPoint::decision, failure);
  const std::vector<std::string> gpus = decomposition.communicator().all_strings(gpu);
  std::optional<std::string> agreed = decomposition.agree_on_reason(reason);
  if (!agreed) agreed = shared_gpu_reason(gpus);
  if (agreed) {
    if (request == GpuExchangeRequest::nccl) {
      throw distributed::AgreedUsageError("--gpu-exchange nccl: " + *agreed);
    }
    exchange.why_not_nccl = std::move(*agreed);
    return exchange;
  }

  GpuGroup group{.id = {}, .rank = decomposition.rank(), .size = decomposition.ranks()};
  if (decomposition.rank() == 0) {
    try {
      group.id = make_gpu_group_id();
    } catch (...) {
      failure = std::current_exception();
    }
  }
  decomposition.agree(AgreementPoint::decision, failure);
  decomposition.communicator().broadcast(group.id, 0);
  try {
    exchange.membership = join_gpu_group(group, gpu_device);
    group.communicator = exchange.membership.get();
  } catch (...) {
    failure = std::current_exception();
  }
  decomposition.agree_or_end_job(AgreementPoint::decision, failure, kJoinPatienceSeconds);
  exchange.group = std::move(group);
  return exchange;
}

#endif

}  // namespace nbody
