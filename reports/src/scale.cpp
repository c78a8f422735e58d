#include "nbody/reports/scale.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace nbody::reports {
namespace {

std::string counted(int count, const char* one, const char* many) {
  return fmt::format("{} {}", count, count == 1 ? one : many);
}

}  // namespace

RunScale scale_of(const RunSettings& settings, DeviceKind device, int threads) {
  const std::set<std::string> hosts(settings.rank_hosts.begin(), settings.rank_hosts.end());
  const int ranks = std::max(1, settings.ranks);
  const int gpus_per_rank = std::max(1, static_cast<int>(settings.gpu_devices.size()));
  return {.device = device,
          .ranks = ranks,
          .hosts = std::max(1, static_cast<int>(hosts.size())),
          .gpus = device == DeviceKind::gpu ? ranks * gpus_per_rank : 0,
          .threads_per_rank = std::max(1, threads),
          .gpu_exchange = device == DeviceKind::gpu && ranks > 1 ? settings.gpu_exchange : ""};
}

bool spans_several_devices(const RunSettings& settings) {
  return settings.ranks > 1 || settings.gpu_devices.size() > 1;
}

std::string describe(const RunScale& s) {
  const std::string hosts = counted(s.hosts, "host", "hosts");
  const std::string cores = counted(s.cores(), "core", "cores");
  if (s.device == DeviceKind::gpu) {
    std::string label = fmt::format("{}: {} × {}, {}, {}", counted(s.gpus, "GPU", "GPUs"),
                                    counted(s.ranks, "rank", "ranks"),
                                    counted(s.gpus / s.ranks, "GPU", "GPUs"), cores, hosts);
    if (s.gpu_exchange == "nccl") label += ", NCCL between the ranks";
    if (s.gpu_exchange == "mpi") label += ", through host memory (MPI)";
    return label;
  }
  return fmt::format("{} × {}: {}, 0 GPUs, {}", counted(s.ranks, "rank", "ranks"),
                     counted(s.threads_per_rank, "thread", "threads"), cores, hosts);
}

std::string describe_joining(const RunScale& s) {
  if (s.devices() <= 1) return "";
  if (s.device == DeviceKind::cpu) return "ranks";
  if (s.ranks == 1) return "the GPUs of one process";
  if (s.gpu_exchange == "nccl") return "ranks, NCCL between them";
  if (s.gpu_exchange == "mpi") return "ranks, through host memory";
  return "ranks";
}

}  // namespace nbody::reports
