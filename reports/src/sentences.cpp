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

namespace nbody::reports {

std::string trees_elsewhere_sentence(const AlgorithmComparison& algorithms) {
  if (!algorithms.any_tree()) return {};
  return "Tree formulations (Barnes–Hut) are credited no interactions and are not in this part: "
         "they are compared by time at equal measured accuracy under “Across algorithms at equal "
         "accuracy” and tabulated under “Tree codes”.";
}

std::string across_algorithms_intro() {
  return "FAIRNESS rule 9: all-pairs and tree formulations compared at equal measured accuracy "
         "against the float64 reference on the same input, never at equal θ and never by "
         "interactions. At each accuracy bar and N: the fastest formulation of each device "
         "(kernel median time per force evaluation) among every result measured ok whose "
         "measured errors meet the bar, whatever its algorithm, precision or accuracy class; and "
         "GPU speed over CPU speed (CPU time ÷ GPU time), with its interval from the two medians' "
         "confidence intervals. The float32 all-pairs class bar asks for the accuracy the "
         "float32 all-pairs kernels reach at that N: a relative L2 and a max error no larger than "
         "the least accurate full-accuracy float32 all-pairs result measured there (either "
         "device), both; where none was measured, nothing meets it.";
}

std::string tree_codes_intro() {
  return "Each tree measurement: its primary figure is its time per force evaluation (kernel "
         "median, with the confidence interval of the median) and bodies per second (N over that "
         "time); the tree's build, timed within each evaluation, is shown apart with its share; "
         "the "
         "interactions it really evaluated per body (body-body and body-cell) are secondary. "
         "Errors against the float64 reference on the same input as the all-pairs formulations; "
         "the bound includes the opening angle's truncation.";
}

std::string theta_text(const std::optional<double>& theta) {
  return theta ? fmt::format("{}", *theta) : std::string("—");
}

std::string time_figure_label(const TimeFigure& f) {
  return fmt::format("{} ({}, {})", f.implementation,
                     f.algorithm == Algorithm::barnes_hut ? "tree" : "all-pairs",
                     to_string(f.precision));
}

std::string no_figure_text(DeviceKind device, bool measured) {
  const char* name = device == DeviceKind::gpu ? "GPU" : "CPU";
  return measured ? fmt::format("nothing of the {} meets it", name)
                  : fmt::format("{} not measured", name);
}

std::string crossover_sentence(const AlgorithmComparison& algorithms, const Crossover& c) {
  const std::string head = fmt::format("{}, {}", c.device == DeviceKind::gpu ? "GPU" : "CPU",
                                       algorithms.bars.at(c.bar).label);
  if (c.compared_sizes.empty()) {
    return head + ": no size where both a tree and an all-pairs formulation were measured";
  }
  const std::string compared = fmt::format("compared at N = {}", fmt::join(c.compared_sizes, ", "));
  if (c.tree_from) {
    return fmt::format("{}: a tree overtakes all-pairs at N = {} ({})", head, *c.tree_from,
                       compared);
  }
  return fmt::format("{}: no crossover within the measured sizes (up to N = {}; {})", head,
                     c.compared_sizes.back(), compared);
}

}  // namespace nbody::reports
