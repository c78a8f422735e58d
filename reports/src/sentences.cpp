#include "sentences.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace nbody::reports {
namespace {

// How GPU formulations' slices travel between the ranks (settings.gpu_exchange, version 7).
std::string exchange_sentence(const std::string& exchange) {
  if (exchange == "nccl") {
    return " GPU formulations run one GPU per rank, and their slices travel between the GPUs by "
           "NCCL (ncclAllGather on device buffers); CPU formulations' through host memory (MPI).";
  }
  if (exchange == "mpi") {
    return " Every formulation's slices travel through host memory (MPI_Allgatherv), GPU "
           "formulations' too.";
  }
  return {};
}

}  // namespace

std::string budget_sentence(const RunSummary& s) {
  if (s.budget_s <= 0) return {};
  std::string text =
      fmt::format("Planned within a budget of {:.0f} s: estimated {:.0f} s, took {:.0f} s",
                  s.budget_s, s.planned_s, s.measured_s);
  if (s.left_out_by_plan > 0) {
    text += fmt::format(
        "; {} measurement{} left out by the plan (under Skipped, with why; --budget "
        "sets it, 0 for none)",
        s.left_out_by_plan, s.left_out_by_plan == 1 ? "" : "s");
  }
  return text + ".";
}

std::string conservation_sentence(const std::vector<IntegrationRow>& rows) {
  std::vector<std::string> outside;
  for (const IntegrationRow& r : rows) {
    if (!r.conservation || r.conservation->within()) continue;
    const ConservationCheck& c = *r.conservation;
    std::string figures =
        fmt::format("|ΔE/E| {:.1e}, bound {:.0e}", c.energy_error, c.energy_bound);
    if (c.end_energy_error && *c.end_energy_error > c.end_energy_bound) {
      figures += fmt::format("; {:.1e} at the float64 leapfrog's last step, bound {:.1e}",
                             *c.end_energy_error, c.end_energy_bound);
    }
    if (!c.momentum_within()) {
      figures +=
          fmt::format("; momentum drift {:.1e}, bound {:.1e}", *c.momentum_drift, c.momentum_bound);
    }
    outside.push_back(fmt::format("{} at N = {} ({}): likely {}", r.implementation, r.n, figures,
                                  c.likely_cause));
  }
  if (outside.empty()) return {};
  return fmt::format(
      "{} kept energy or momentum outside {} bounds and {} not to be trusted: {}.",
      outside.size() == 1 ? "1 simulation" : fmt::format("{} simulations", outside.size()),
      outside.size() == 1 ? "its" : "their", outside.size() == 1 ? "is" : "are",
      fmt::join(outside, "; "));
}

std::string sides_sentence(const MeasuredSides& sides) {
  if (sides.compares()) return {};
  const char* measured = sides.cpu   ? "It measured the CPU side only"
                         : sides.gpu ? "It measured the GPU side only"
                                     : "It measured neither side";
  return "No GPU/CPU ratio from this run: " + sides.missing + ". " + measured +
         "; for the ratio, " + sides.remedy + ".";
}

std::string decomposition_sentence(const RunSettings& settings) {
  if (settings.ranks <= 1) return {};
  std::vector<std::string> hosts = settings.rank_hosts;
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  return fmt::format(
      "Decomposed over {} MPI ranks{} by target range: each rank computes a slice of the bodies "
      "from all N, and the slices are all-gathered after every {}.{}",
      settings.ranks,
      hosts.empty() ? ""
                    : fmt::format(" on {} host{} ({})", hosts.size(), hosts.size() == 1 ? "" : "s",
                                  fmt::join(hosts, ", ")),
      kind_of(settings) == DocumentKind::simulate
          ? "drift (the positions); a step's other time is the all-gathers, waits for the "
            "slowest rank included"
          : "evaluation (the accelerations); a kernel time is the slowest rank's computation, an "
            "end-to-end time adds the all-gather",
      exchange_sentence(settings.gpu_exchange));
}

}  // namespace nbody::reports
