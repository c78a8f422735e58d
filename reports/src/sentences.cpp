#include "sentences.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "nbody/energy_meter.hpp"
#include "nbody/sizes.hpp"

#include "html_algorithms.hpp"
#include "nbody/reports/ceilings_table.hpp"

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
  // Without a plan's estimate (a report combined from two runs) there is no plan to speak of.
  if (s.budget_s <= 0 || !s.has_plan) return {};
  std::string text;
  if (s.planned_ran_s) {
    text = fmt::format(
        "Planned within a budget of {:.0f} s, the ceilings ({:.0f} s) and the probes ({:.0f} s) "
        "included: the measurements that ran were estimated at {:.0f} s and took {:.0f} s",
        s.budget_s, s.ceilings_s, s.planning_s, *s.planned_ran_s, s.measured_s);
    if (s.timed_again > 0) {
      text += fmt::format(" ({} timing{} disturbed and taken again)", s.timed_again,
                          s.timed_again == 1 ? "" : "s");
    }
  } else {
    text = fmt::format("Planned within a budget of {:.0f} s: estimated {:.0f} s, took {:.0f} s",
                       s.budget_s, s.planned_s, s.measured_s);
  }
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
         "the bound includes the opening angle's truncation. Each part against its own bound "
         "(100% is at the bound): the walk (the time less the build) against its counted "
         "interactions at what its formulation's compiled terms cost, over the measured rate of "
         "that arithmetic; the build against the bytes it must move, over the measured memory "
         "bandwidth.";
}

std::string tree_bounds_note(const AlgorithmComparison& algorithms) {
  // Each reason once, with how many fractions it leaves out.
  std::vector<std::pair<std::string, std::size_t>> reasons;
  bool above_one = false;
  for (const TreeRow& t : algorithms.trees) {
    for (const std::string* why : {&t.walk_bound_missing, &t.build_bound_missing}) {
      if (why->empty()) continue;
      auto it = std::find_if(reasons.begin(), reasons.end(),
                             [why](const auto& r) { return r.first == *why; });
      if (it == reasons.end()) {
        reasons.emplace_back(*why, 1);
      } else {
        ++it->second;
      }
    }
    above_one = above_one || t.walk_fraction_of_bound.value_or(0) > 1 ||
                t.build_fraction_of_bound.value_or(0) > 1;
  }
  std::vector<std::string> parts;
  for (const auto& [why, count] : reasons) {
    parts.push_back(
        fmt::format("{} fraction{} of bound missing: {}", count, count == 1 ? "" : "s", why));
  }
  if (above_one) {
    parts.push_back(
        "a fraction above 100% is no result: its ceiling read low, or the build moved less than "
        "its model counts");
  }
  if (parts.empty()) return {};
  return fmt::format("{}.", fmt::join(parts, "; "));
}

std::string theta_text(const std::optional<double>& theta) {
  return theta ? fmt::format("{}", *theta) : std::string("—");
}

std::string time_figure_label(const TimeFigure& f) {
  return fmt::format("{} ({}, {})", f.implementation,
                     f.algorithm == Algorithm::barnes_hut ? "tree" : "all-pairs",
                     to_string(f.precision));
}

std::string no_figure_text(bool measured) {
  // The device is named by the column or label it stands under: naming it again would read
  // "GPU GPU not measured" where a phone stacks the cells under their labels.
  return measured ? "nothing meets it" : "not measured at this N";
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

namespace nbody::reports {
namespace {

const char* precision_name(Precision precision) {
  return precision == Precision::f64 ? "float64" : "float32";
}

std::string ratio_text(const RateRatio& r) {
  return fmt::format("{:.3g}× ({:.3g}–{:.3g})", r.value, r.low, r.high);
}

// "25.7× (23.9–31.7) at N = 256K to 32.1× (31.2–33.1) at 64K", or one N's figure.
std::string range_text(const RatioRange& r) {
  if (r.lowest->n == r.highest->n) {
    return fmt::format("{} at N = {}", ratio_text(r.lowest->ratio), format_size(r.lowest->n));
  }
  return fmt::format("{} at N = {} to {} at {}", ratio_text(r.lowest->ratio),
                     format_size(r.lowest->n), ratio_text(r.highest->ratio),
                     format_size(r.highest->n));
}

// One pairing's ranges, one per precision: "the GPU is faster by [range] (float32), [range]
// (float64)", a
// precision without a ratio saying why; where no precision has one, one reason for all.
void add_ranges(std::vector<AnswerSpan>& out, const std::string& pairing,
                const std::vector<RatioRange>& ranges, bool opens_paragraph) {
  const bool none = std::none_of(ranges.begin(), ranges.end(),
                                 [](const RatioRange& r) { return r.lowest.has_value(); });
  const bool one_reason =
      none && std::all_of(ranges.begin(), ranges.end(),
                          [&](const RatioRange& r) { return r.missing == ranges.front().missing; });
  if (ranges.empty() || one_reason) {
    out.push_back({fmt::format("{}: no ratio ({})", pairing,
                               ranges.empty() ? "nothing measured" : ranges.front().missing)});
    return;
  }
  // The paragraph's first figure says what it is of ("the GPU is faster by …"); later ones are read
  // alike.
  bool first_figure = opens_paragraph;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const RatioRange& r = ranges[i];
    const std::string lead = i == 0 ? pairing + " " : (r.lowest ? ", " : "; ");
    if (!r.lowest) {
      out.push_back({fmt::format("{}{}: no ratio ({})", i == 0 ? pairing + ", " : lead,
                                 precision_name(r.precision), r.missing)});
      continue;
    }
    const bool faster = r.lowest->ratio.value >= 1;
    out.push_back(
        {lead + (first_figure ? (faster ? "the GPU is faster by " : "the GPU runs at ") : "")});
    out.push_back({range_text(r), AnswerLink::headline});
    out.push_back({fmt::format(" {}({})", first_figure && !faster ? "the CPU's speed " : "",
                               precision_name(r.precision))});
    first_figure = false;
  }
}

// "gpu.tree[theta=0.5] (tree, f32) against cpu.tree[theta=0.5] (tree, f32)"
std::string pair_text(const BarHeadlineRow& row) {
  return fmt::format("{} against {}", time_figure_label(*row.gpu), time_figure_label(*row.cpu));
}

void add_equal_accuracy(std::vector<AnswerSpan>& out, const EqualAccuracyAnswer& e) {
  if (!e.row) {
    out.push_back(
        {fmt::format("; across algorithms at equal accuracy: no ratio ({}).", e.not_at_wanted)});
    return;
  }
  if (e.not_at_wanted.empty()) {
    out.push_back(
        {fmt::format("; and with the fastest formulation of each side at {} at N = {}, the GPU is ",
                     e.bar_label, format_size(e.row->n))});
  } else {
    out.push_back({fmt::format(
        "; with the fastest formulation of each side at {}, not at N = {} ({}) but at N = {}, "
        "the GPU is ",
        e.bar_label, format_size(EqualAccuracyAnswer::kWantedN), e.not_at_wanted,
        format_size(e.row->n))});
  }
  out.push_back({ratio_text(*e.row->gpu_over_cpu), AnswerLink::algorithms});
  out.push_back({fmt::format(" ({}).", pair_text(*e.row))});
}

std::vector<AnswerSpan> one_side_paragraph(const OneSideAnswer& a) {
  const char* side = a.device == DeviceKind::gpu ? "GPU" : "CPU";
  std::vector<AnswerSpan> out;
  out.push_back({fmt::format("What this run has: the {}'s best rates, ", side)});
  for (std::size_t i = 0; i < a.best.size(); ++i) {
    const RateFigure& f = a.best[i].figure;
    if (i > 0) out.push_back({" and "});
    out.push_back({fmt::format("{} in {}", format_si(f.interactions_per_second, "int/s"),
                               precision_name(a.best[i].precision)),
                   AnswerLink::headline});
    out.push_back({fmt::format(" ({} at N = {})", f.implementation, format_size(f.n))});
  }
  if (a.best.empty()) out.push_back({"none at full accuracy"});
  if (a.crossover && !a.crossover->compared_sizes.empty()) {
    out.push_back({"; "});
    out.push_back({a.crossover->tree_from
                       ? fmt::format("the {}'s tree overtakes all-pairs at {} from N = {}", side,
                                     a.crossover_bar_label, format_size(*a.crossover->tree_from))
                       : fmt::format("no tree of the {} overtakes all-pairs at {} within the "
                                     "measured sizes (up to N = {})",
                                     side, a.crossover_bar_label,
                                     format_size(a.crossover->compared_sizes.back())),
                   AnswerLink::algorithms});
  }
  out.push_back({"."});
  return out;
}

}  // namespace

std::vector<AnswerSpan> answer_paragraph(const Answer& answer) {
  if (answer.one_side) return one_side_paragraph(*answer.one_side);
  if (answer.best.empty() && answer.naive.empty()) return {};
  std::vector<AnswerSpan> out{
      {answer.two_machines ? "With each side measured on its own machine, " : "On this machine, "}};
  add_ranges(out, "best against best", answer.best, true);
  out.push_back({"; "});
  add_ranges(out, "naive against naive", answer.naive, false);
  add_equal_accuracy(out, answer.equal_accuracy);
  return out;
}

std::vector<AnswerSpan> equal_accuracy_line(const Analysis& analysis) {
  const Answer& answer = analysis.answer;
  if (!analysis.sides.compares()) return {};
  const EqualAccuracyAnswer& e = answer.equal_accuracy;
  const std::string n = format_size(EqualAccuracyAnswer::kWantedN);
  if (!e.row) {
    return {{fmt::format("At equal accuracy at N = {}: no ratio ({}); see ", n, e.not_at_wanted)},
            {"Across algorithms at equal accuracy", AnswerLink::algorithms},
            {"."}};
  }
  const BarHeadlineRow& row = *e.row;
  std::vector<AnswerSpan> out;
  out.push_back({e.not_at_wanted.empty()
                     ? fmt::format("At equal accuracy at N = {} ({}, the fastest formulation of "
                                   "each side whatever its algorithm): ",
                                   n, e.bar_label)
                     : fmt::format("At equal accuracy ({}, the fastest formulation of each side "
                                   "whatever its algorithm), not at N = {} ({}) but at N = {}: ",
                                   e.bar_label, n, e.not_at_wanted, format_size(row.n))});
  out.push_back({fmt::format("CPU {}, {} per evaluation; GPU {}, {} per evaluation; GPU/CPU ",
                             time_figure_label(*row.cpu), format_seconds(row.cpu->seconds),
                             time_figure_label(*row.gpu), format_seconds(row.gpu->seconds))});
  out.push_back({ratio_text(*row.gpu_over_cpu), AnswerLink::algorithms});
  out.push_back({"; every bar and N under "});
  out.push_back({"Across algorithms at equal accuracy", AnswerLink::algorithms});
  out.push_back({"."});
  return out;
}

namespace {

// "12.1× (11.1–13.4) less", or where the GPU uses more, the inverse: "2× (1.5–2.5) more".
std::string energy_ratio_text(const RateRatio& r) {
  if (r.value >= 1 || !(r.value > 0)) return ratio_text(r) + " less";
  const auto inverse = [](double x) { return x > 0 ? 1 / x : 0; };
  return ratio_text({.value = 1 / r.value, .low = inverse(r.high), .high = inverse(r.low)}) +
         " more";
}

// Without its full stop, so that it ends a sentence of its own.
std::string clause(std::string text) {
  while (!text.empty() && (text.back() == '.' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

std::vector<AnswerSpan> energy_answer_line(const Answer& answer) {
  if (!answer.energy) return {};
  const EnergyAnswer& energy = *answer.energy;
  if (energy.best.empty()) {
    return {{fmt::format("Energy: no GPU/CPU ratio — {}.", clause(energy.missing))}};
  }
  std::vector<AnswerSpan> out{{"By energy, the best GPU used "}};
  for (std::size_t i = 0; i < energy.best.size(); ++i) {
    const EnergyAnswer::Quoted& quoted = energy.best[i];
    if (i > 0) out.push_back({i + 1 == energy.best.size() ? " and " : ", "});
    out.push_back({energy_ratio_text(quoted.ratio), AnswerLink::headline});
    out.push_back(
        {fmt::format("{} at N = {} ({})", i == 0 ? " per evaluation than the best CPU" : "",
                     format_size(quoted.n), precision_name(quoted.precision))});
  }
  out.push_back({fmt::format(", idle power {} on both sides.", energy.idle_accounting)});
  return out;
}

std::vector<AnswerSpan> energy_ratio_intro(const EnergyAnalysis& energy, IntervalPlacement where) {
  if (energy.devices.empty()) return {};
  if (!energy.compares()) {
    return {{"CPU J / GPU J: no energy ratio — " + energy.no_ratio_reason + " (see "},
            {"Energy", AnswerLink::energy},
            {")."}};
  }
  return {{fmt::format("CPU J / GPU J: the CPU's joules per evaluation over the GPU's (how many "
                       "times less energy the GPU uses), idle power {} on both sides; {} its "
                       "interval from the two figures' (each a counter update period's energy "
                       "either way; see ",
                       energy.idle_accounting,
                       where == IntervalPlacement::in_brackets ? "in brackets" : "below it")},
          {"Energy", AnswerLink::energy},
          {fmt::format("); only where both figures spanned at least {:g} counter updates.",
                       kMinEnergyPeriods)}};
}

std::string plain_text(const std::vector<AnswerSpan>& spans) {
  std::string out;
  for (const AnswerSpan& s : spans) out += s.text;
  return out;
}

}  // namespace nbody::reports
