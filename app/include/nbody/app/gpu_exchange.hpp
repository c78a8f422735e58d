#pragma once
// Under mpirun, how GPU formulations' slices travel between the ranks (--gpu-exchange):
// by NCCL between the ranks' GPUs, one GPU each, all-gathering on device buffers (the ranks set up
// one communicator together: rank 0 makes NCCL's unique id, MPI broadcasts its bytes, every rank
// joins with ncclCommInitRank), or through host memory with MPI_Allgatherv, as CPU formulations'
// always do.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "nbody/app/wiring.hpp"
#include "nbody/execution_options.hpp"
#if NBODY_HAVE_MPI
#include "nbody/distributed/decomposition.hpp"
#endif

namespace nbody {

// What --gpu-exchange asks for. automatic (the option not given): NCCL where every rank can have
// it, host memory otherwise, with the reason.
enum class GpuExchangeRequest { automatic, nccl, mpi };

// "nccl" or "mpi"; throws UsageError (naming the option) for anything else.
GpuExchangeRequest parse_gpu_exchange(std::string_view text);

// Why NCCL cannot join these GPUs, given each rank's ("host/PCI bus id", in rank order; empty for a
// rank without one): two ranks on one GPU, which NCCL refuses. Empty where every GPU is one rank's.
std::optional<std::string> shared_gpu_reason(std::span<const std::string> rank_gpus);

// What the ranks settled on.
struct RankGpuExchange {
  // NCCL: this rank's place in the ranks' communicator, joined (ExecutionOptions::gpu_group,
  // which borrows the communicator from `membership`). Empty: through host memory (MPI).
  std::optional<GpuGroup> group;
  // The communicator's one owner: this rank leaves the group when the exchange goes, which must
  // be after every run that carries the group and before MPI ends.
  GpuGroupMembership membership;
  // Through host memory although GPU formulations run: why not NCCL.
  std::string why_not_nccl;

  // As settings.gpu_exchange records it.
  const char* name() const { return group ? "nccl" : "mpi"; }
};

#if NBODY_HAVE_MPI
// Every rank together (a collective), each driving `gpu_device`; `gpu_formulations`: whether the
// formulations selected include GPU ones (the same on every rank: without them nothing is set
// up). Where a rank cannot have NCCL (a build without it, no GPU, two ranks on one GPU), every
// rank falls back to host memory with that rank's reason, or, where --gpu-exchange nccl asked for
// it, throws AgreedUsageError with it. A rank that fails to ready its GPU, or rank 0 to make the
// id, is every rank's AgreedError before any rank waits in NCCL; one that fails to join is every
// rank's AgreedError after, or, where the others are still waiting inside NCCL for it, ends the
// job with its message (Decomposition::agree_or_end_job).
RankGpuExchange settle_gpu_exchange(distributed::Decomposition& decomposition,
                                    GpuExchangeRequest request, int gpu_device,
                                    bool gpu_formulations);
#endif

}  // namespace nbody
