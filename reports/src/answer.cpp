// The answer paragraph's figures: GPU/CPU ranges best against best and naive against naive, the
// ratio at equal accuracy at N = 1M, what a run of one side has instead, and the energy ratios
// the paragraph closes with, each part where missing with why in a few words.
#include "answer.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "nbody/sizes.hpp"

#include "algorithms.hpp"

namespace nbody::reports {

namespace {

const char* side_name(DeviceKind device) {
  return device == DeviceKind::gpu ? "GPU" : "CPU";
}

const char* precision_name(Precision precision) {
  return precision == Precision::f64 ? "float64" : "float32";
}

// A skip or failure reason cut to its first clause: "left out by the plan: about 3 s where …"
// reads "left out by the plan".
std::string short_reason(const std::string& reason) {
  const std::size_t cut = std::min(reason.find(": "), reason.find(" ("));
  return reason.substr(0, cut);
}

// A formulation the headline could rank: all-pairs, full accuracy, no tuning variant; with
// `naive`, the naive baseline only.
bool ranked(const ImplementationRecord& impl, DeviceKind device, Precision precision, bool naive) {
  return impl.device == device && impl.precision == precision && !is_tree(impl) &&
         impl.accuracy_class == AccuracyClass::full &&
         (naive ? impl.role == Role::naive_baseline : impl.role != Role::tuning_variant);
}

// Why `device` has no figure of `precision` in the headline (its naive baseline's where `naive`).
std::string why_no_figure(const ResultsDocument& doc, DeviceKind device, Precision precision,
                          bool naive) {
  const auto impl = std::find_if(
      doc.implementations.begin(), doc.implementations.end(),
      [&](const ImplementationRecord& i) { return ranked(i, device, precision, naive); });
  if (impl == doc.implementations.end()) {
    return fmt::format("the {} has no {} {}", side_name(device), precision_name(precision),
                       naive ? "naive baseline" : "formulation");
  }
  std::string name = impl->name, why = "not run";
  for (const ResultRecord& r : doc.results) {
    const ImplementationRecord* of = find_implementation(doc, r.implementation);
    if (of && ranked(*of, device, precision, naive) && !r.reason.empty()) {
      name = r.implementation;
      why = short_reason(r.reason);
      break;
    }
  }
  return naive ? fmt::format("the {}'s naive baseline {} was not measured: {}", side_name(device),
                             name, why)
               : fmt::format("the {} measured no {} formulation; {}: {}", side_name(device),
                             precision_name(precision), name, why);
}

RatioRange ratio_range(const ResultsDocument& doc, const Headline& headline, Precision precision,
                       bool naive) {
  RatioRange range{.precision = precision};
  bool cpu = false, gpu = false;
  for (const HeadlineRow& row : headline.rows) {
    if (row.precision != precision) continue;
    cpu = cpu || (naive ? row.naive_cpu : row.best_cpu).has_value();
    gpu = gpu || (naive ? row.naive_gpu : row.best_gpu).has_value();
    const std::optional<RateRatio>& ratio = naive ? row.naive_ratio : row.best_ratio;
    if (!ratio) continue;
    if (!range.lowest || ratio->value < range.lowest->ratio.value) {
      range.lowest = RatioAt{row.n, *ratio};
    }
    if (!range.highest || ratio->value > range.highest->ratio.value) {
      range.highest = RatioAt{row.n, *ratio};
    }
  }
  if (range.lowest) return range;
  if (cpu && gpu) {
    range.missing = naive ? "no N where both naive baselines were measured"
                          : "no N where both sides measured it";
  } else if (!cpu && !gpu) {
    const bool any = std::any_of(doc.implementations.begin(), doc.implementations.end(),
                                 [&](const ImplementationRecord& i) {
                                   return ranked(i, DeviceKind::cpu, precision, naive) ||
                                          ranked(i, DeviceKind::gpu, precision, naive);
                                 });
    range.missing = any ? "neither side measured it" : "no naive baseline in this run";
  } else {
    range.missing = why_no_figure(doc, cpu ? DeviceKind::gpu : DeviceKind::cpu, precision, naive);
  }
  return range;
}

// The precisions the headline could rank a formulation of, float32 first.
std::vector<Precision> ranked_precisions(const ResultsDocument& doc) {
  std::vector<Precision> found;
  for (const Precision p : {Precision::f32, Precision::f64}) {
    for (const ImplementationRecord& i : doc.implementations) {
      if (ranked(i, i.device, p, false)) {
        found.push_back(p);
        break;
      }
    }
  }
  return found;
}

// The index of the fixed bar at relative L2 <= 1e-3, or none where no tree ran.
std::optional<std::size_t> wanted_bar(const AlgorithmComparison& a) {
  for (std::size_t i = 0; i < a.bars.size(); ++i) {
    if (!a.bars[i].float32_all_pairs && a.bars[i].relative_l2 == EqualAccuracyAnswer::kRelativeL2) {
      return i;
    }
  }
  return std::nullopt;
}

// Why `device` has no figure meeting the bar at `row.n`.
std::string why_not_met(const AlgorithmComparison& a, const BarHeadlineRow& row,
                        DeviceKind device) {
  const std::string n = format_size(row.n);
  const bool measured = device == DeviceKind::gpu ? row.gpu_measured : row.cpu_measured;
  if (!measured) return fmt::format("nothing measured at {} on the {}", n, side_name(device));
  const bool tree = std::any_of(a.trees.begin(), a.trees.end(), [&](const TreeRow& t) {
    return t.device == device && t.n == row.n && t.status == Status::ok;
  });
  return tree ? fmt::format("nothing of the {} at {} meets it", side_name(device), n)
              : fmt::format("no tree measured at {} on the {}, and nothing else there meets it", n,
                            side_name(device));
}

// Why the bar has no pair at 1M.
std::string why_not_at_wanted(const AlgorithmComparison& a, std::size_t bar) {
  const auto at = std::find_if(a.rows.begin(), a.rows.end(), [&](const BarHeadlineRow& r) {
    return r.bar == bar && r.n == EqualAccuracyAnswer::kWantedN;
  });
  if (at == a.rows.end()) {
    return fmt::format("N = {} was not measured", format_size(EqualAccuracyAnswer::kWantedN));
  }
  std::vector<std::string> why;
  if (!at->cpu) why.push_back(why_not_met(a, *at, DeviceKind::cpu));
  if (!at->gpu) why.push_back(why_not_met(a, *at, DeviceKind::gpu));
  return fmt::format("{}", fmt::join(why, "; "));
}

EqualAccuracyAnswer equal_accuracy(const AlgorithmComparison& a) {
  EqualAccuracyAnswer answer;
  const std::optional<std::size_t> bar = wanted_bar(a);
  if (!bar) {
    answer.not_at_wanted = "no tree formulation ran";
    return answer;
  }
  answer.bar_label = a.bars[*bar].label;
  // The rows are by bar, then N ascending: the last with a ratio is the largest N that has one.
  for (const BarHeadlineRow& row : a.rows) {
    if (row.bar == *bar && row.gpu_over_cpu) answer.row = row;
  }
  if (answer.row && answer.row->n == EqualAccuracyAnswer::kWantedN) return answer;
  answer.not_at_wanted = why_not_at_wanted(a, *bar);
  if (!answer.row)
    answer.not_at_wanted += "; at no N do both devices have a formulation meeting it";
  return answer;
}

OneSideAnswer one_side(const Analysis& a) {
  OneSideAnswer answer{.device = a.sides.gpu ? DeviceKind::gpu : DeviceKind::cpu};
  for (const Precision p : {Precision::f32, Precision::f64}) {
    std::optional<RateFigure> fastest;
    for (const HeadlineRow& row : a.headline.rows) {
      const std::optional<RateFigure>& best =
          answer.device == DeviceKind::gpu ? row.best_gpu : row.best_cpu;
      if (row.precision != p || !best) continue;
      if (!fastest || best->interactions_per_second > fastest->interactions_per_second) {
        fastest = best;
      }
    }
    if (fastest) answer.best.push_back({.precision = p, .figure = *fastest});
  }
  if (const std::optional<std::size_t> bar = wanted_bar(a.algorithms)) {
    answer.crossover_bar_label = a.algorithms.bars[*bar].label;
    for (const Crossover& c : a.algorithms.crossovers) {
      if (c.device == answer.device && c.bar == *bar) answer.crossover = c;
    }
  }
  return answer;
}

// Per precision, the best-against-best energy ratio at the largest N that has one: one figure per
// precision keeps the answer to a line, the table under the headline has the rest.
EnergyAnswer energy_answer(const Analysis& a) {
  EnergyAnswer answer{.idle_accounting = a.energy.idle_accounting};
  if (!a.energy.compares()) {
    answer.missing = a.energy.no_ratio_reason;
    return answer;
  }
  // The rows are by precision, then N ascending: the last of a precision with a ratio wins.
  for (const HeadlineRow& row : a.headline.rows) {
    if (!row.best_energy_ratio) continue;
    const EnergyAnswer::Quoted quoted{
        .precision = row.precision, .n = row.n, .ratio = *row.best_energy_ratio};
    if (!answer.best.empty() && answer.best.back().precision == row.precision) {
      answer.best.back() = quoted;
    } else {
      answer.best.push_back(quoted);
    }
  }
  if (answer.best.empty()) {
    answer.missing = "no N where both sides' best figures have a resolved energy reading";
  }
  return answer;
}

// The answer's ratios and, of a run of one side, what it has instead; the energy line apart.
void add_figures(Answer& answer, const ResultsDocument& doc, const Analysis& a) {
  if (!a.sides.compares()) {
    if (a.sides.cpu || a.sides.gpu) answer.one_side = one_side(a);
    return;
  }
  for (const Precision p : ranked_precisions(doc)) {
    answer.best.push_back(ratio_range(doc, a.headline, p, false));
    answer.naive.push_back(ratio_range(doc, a.headline, p, true));
  }
  answer.equal_accuracy = equal_accuracy(a.algorithms);
}

}  // namespace

Answer make_answer(const ResultsDocument& doc, const Analysis& a) {
  Answer answer{.two_machines = !doc.sides_from.empty()};
  if (kind_of(doc.settings) != DocumentKind::run) return answer;  // a simulation has its speedups
  add_figures(answer, doc, a);
  // Energy closes a paragraph that has figures; a paragraph without any is not printed at all.
  if (answer.one_side || !answer.best.empty() || !answer.naive.empty()) {
    answer.energy = energy_answer(a);
  }
  return answer;
}

}  // namespace nbody::reports
