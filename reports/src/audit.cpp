#include "audit.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "algorithms.hpp"
#include "analysis_parts.hpp"
#include "conservation_check.hpp"
#include "nbody/isas.hpp"
#include "nbody/reports/combined_sides.hpp"
#include "nbody/reports/scale.hpp"
#include "tree_effort.hpp"

namespace nbody::reports {
namespace {

// A rule's head (number and title) with what the run's data showed of it.
AuditRule with_verdict(AuditRule rule, RuleVerdict verdict, std::string evidence) {
  rule.verdict = verdict;
  rule.evidence = std::move(evidence);
  return rule;
}

std::string names(const std::vector<std::string>& items, std::size_t at_most = 4) {
  if (items.size() <= at_most) return fmt::format("{}", fmt::join(items, ", "));
  return fmt::format("{} and {} more",
                     fmt::join(items.begin(), items.begin() + static_cast<long>(at_most), ", "),
                     items.size() - at_most);
}

AuditRule same_problem(const ResultsDocument& doc) {
  AuditRule rule{.number = 1, .title = "Same problem"};
  if (doc.inputs.empty()) {
    return with_verdict(rule, RuleVerdict::cannot_tell, "the results record no inputs");
  }
  std::vector<std::string> mismatched;
  std::set<std::string> conditions;
  for (const InputRecord& in : doc.inputs) conditions.insert(in.initial_condition);
  for (const ResultRecord& r : doc.results) {
    if (r.status == Status::skipped) continue;
    const ImplementationRecord* impl = find_implementation(doc, r.implementation);
    const auto input = std::find_if(doc.inputs.begin(), doc.inputs.end(), [&r](const auto& in) {
      return in.n == r.n && in.initial_condition == r.initial_condition;
    });
    if (!impl || input == doc.inputs.end()) {
      mismatched.push_back(fmt::format("{} at N = {} (no input recorded)", r.implementation, r.n));
      continue;
    }
    const std::string& expected =
        impl->precision == Precision::f32 ? input->hash_f32 : input->hash_f64;
    if (r.input_hash != expected) {
      mismatched.push_back(fmt::format("{} at N = {}", r.implementation, r.n));
    }
  }
  if (!mismatched.empty()) {
    return with_verdict(
        rule, RuleVerdict::not_kept,
        fmt::format("input hash differs from the run's input for {}", names(mismatched)));
  }
  return with_verdict(
      rule, RuleVerdict::kept,
      fmt::format(
          "one generated input per N ({}, seed {}, softening {}) at {} sizes; every measurement's "
          "input hash is its precision's hash of that input{}",
          fmt::join(conditions, ", "), doc.settings.seed, doc.settings.softening, doc.inputs.size(),
          doc.sides_from.empty() ? std::string() : "; " + sides_from_sentence(doc.sides_from)));
}

// Rule 2 of a simulation: every simulation kept energy and momentum within its bounds.
AuditRule simulations_within_bounds(const std::vector<IntegrationRow>& rows) {
  AuditRule rule{.number = 2, .title = "Same precision, same accuracy bar"};
  std::size_t checked = 0;
  std::vector<std::string> outside;
  for (const IntegrationRow& r : rows) {
    if (!r.conservation) continue;
    ++checked;
    if (!r.conservation->within()) {
      outside.push_back(fmt::format("{} at N = {}", r.implementation, r.n));
    }
  }
  if (checked == 0) {
    return with_verdict(rule, RuleVerdict::cannot_tell,
                        "no simulation kept two conservation samples");
  }
  if (!outside.empty()) {
    return with_verdict(
        rule, RuleVerdict::not_kept,
        fmt::format(
            "{} of {} simulations kept energy or momentum outside their bounds, not to be trusted: "
            "{} (figures and likely causes under Conservation)",
            outside.size(), checked, names(outside)));
  }
  return with_verdict(
      rule, RuleVerdict::kept,
      fmt::format("all {} simulations kept energy within their bounds (|ΔE/E| at most {:.0e}, and "
                  "within 2 × "
                  "the float64 leapfrog's + 4u where it was followed) and momentum within u √steps "
                  "(each plus a tree's surveyed truncation drift)",
                  checked, kTrustedEnergyError));
}

AuditRule same_precision_and_accuracy(const ResultsDocument& doc, const Headline& headline,
                                      const MeasuredSides& sides) {
  AuditRule rule{.number = 2, .title = "Same precision, same accuracy bar"};
  std::size_t validated = 0, passed = 0;
  std::vector<std::string> failed, approximate;
  for (const ResultRecord& r : doc.results) {
    if (!r.accuracy) continue;
    ++validated;
    if (r.accuracy->passed) {
      ++passed;
    } else {
      failed.push_back(fmt::format("{} at N = {}", r.implementation, r.n));
    }
  }
  for (const ImplementationRecord& i : doc.implementations) {
    if (i.accuracy_class == AccuracyClass::approximate) approximate.push_back(i.name);
  }
  // Ranked figures: those the headline uses. Each must be full accuracy, passed, and compared
  // with a figure of its own precision (the rows are per precision by construction).
  std::vector<std::string> wrongly_ranked;
  for (const HeadlineRow& row : headline.rows) {
    for (const auto* f : {&row.best_cpu, &row.best_gpu, &row.naive_cpu, &row.naive_gpu}) {
      if (!*f) continue;
      const ImplementationRecord* impl = find_implementation(doc, (*f)->implementation);
      if (!impl || impl->accuracy_class != AccuracyClass::full ||
          impl->precision != row.precision) {
        wrongly_ranked.push_back((*f)->implementation);
      }
    }
  }
  if (validated == 0) {
    return with_verdict(rule, RuleVerdict::cannot_tell,
                        "no result was validated against the float64 reference");
  }
  if (!wrongly_ranked.empty()) {
    return with_verdict(rule, RuleVerdict::not_kept,
                        fmt::format("ranked although approximate or of another precision: {}",
                                    names(wrongly_ranked)));
  }
  return with_verdict(
      rule, RuleVerdict::kept,
      fmt::format(
          "{} of {} results within their tolerance of the float64 reference{}; {}{}", passed,
          validated,
          failed.empty()
              ? std::string()
              : fmt::format(" ({} failed and not ranked: {})", failed.size(), names(failed)),
          sides.compares() ? "ratios pair float32 with float32 and float64 with float64"
                           : fmt::format("no ratio was formed ({})", sides.missing_side),
          approximate.empty() ? std::string()
                              : fmt::format("; approximate class ({}) shown apart, never ranked",
                                            names(approximate))));
}

// The widest SIMD ISA among the machine's features that the suite has kernels for, whichever
// processor wrote the file (on a tie of widths, the later line of its list).
std::optional<KnownIsa> widest_isa(const MachineRecord& m) {
  std::optional<KnownIsa> widest;
  for (const KnownIsa& isa : isas_of_every_processor()) {
    const bool has =
        std::find(m.isa_features.begin(), m.isa_features.end(), isa.name) != m.isa_features.end();
    if (has && (!widest || isa.vector_bits >= widest->vector_bits)) widest = isa;
  }
  return widest;
}

// The machine's SVE vector length where its record gives one ("sve256"; SVE lengths are
// multiples of 128 bits, which also tells it from "sve2"), whether or not the suite has SVE
// kernels.
std::optional<int> sve_vector_bits(const MachineRecord& m) {
  for (const std::string& feature : m.isa_features) {
    if (!feature.starts_with("sve")) continue;
    int bits = 0;
    const char* end = feature.data() + feature.size();
    const auto [stop, error] = std::from_chars(feature.data() + 3, end, bits);
    if (error == std::errc() && stop == end && bits >= 128 && bits % 128 == 0) return bits;
  }
  return std::nullopt;
}

// What rule 3 says of SVE on an Arm host: at 128 bits (Grace, Graviton 4) it is no wider than
// NEON, so NEON is the widest; wider (A64FX's 512), the suite's kernels are short of the machine.
struct SveVerdict {
  std::string note;              // appended where the CPU side kept the rule
  std::string short_of_machine;  // non-empty: the CPU side did not
};
SveVerdict sve_verdict(const MachineRecord& m, const std::optional<KnownIsa>& widest) {
  const std::optional<int> bits = sve_vector_bits(m);
  if (!bits || !widest || widest->name.starts_with("sve")) return {};
  if (*bits <= widest->vector_bits) {
    return {.note = fmt::format("; the machine's SVE, at {} bits, is no wider than {}", *bits,
                                widest->name)};
  }
  return {.short_of_machine = fmt::format(
              "the machine's SVE is {} bits wide and this suite has no SVE kernels (docs/arm.md)",
              *bits)};
}

// Rule 3 of the all-pairs formulations: the best CPU figure on every logical CPU at the widest
// ISA, best against best and naive against naive.
AuditRule all_pairs_effort(const ResultsDocument& doc, const Headline& headline,
                           const MeasuredSides& sides) {
  AuditRule rule{.number = 3, .title = "Same effort"};
  const std::optional<KnownIsa> widest_known = widest_isa(doc.machine);
  const std::string widest = widest_known ? std::string(widest_known->name) : std::string();
  const SveVerdict sve = sve_verdict(doc.machine, widest_known);
  std::vector<std::string> short_of_machine, used;
  bool any_best_cpu = false;
  for (const HeadlineRow& row : headline.rows) {
    if (!row.best_cpu) continue;
    any_best_cpu = true;
    const auto r = std::find_if(doc.results.begin(), doc.results.end(), [&row](const auto& x) {
      return x.implementation == row.best_cpu->implementation && x.n == row.n;
    });
    if (r == doc.results.end()) continue;
    const auto isa = r->details.find("isa");
    const std::string isa_used = isa == r->details.end() ? std::string("scalar") : isa->second;
    const std::string description =
        fmt::format("{} at N = {} ({} threads, {})", r->implementation, r->n, r->threads, isa_used);
    if (r->threads < doc.machine.logical_cpus || (!widest.empty() && isa_used != widest)) {
      short_of_machine.push_back(description);
    } else if (used.empty()) {
      used.push_back(description);
    }
  }
  const bool naive_both = std::any_of(headline.rows.begin(), headline.rows.end(),
                                      [](const HeadlineRow& r) { return r.naive_ratio; });
  if (!any_best_cpu) {
    return with_verdict(rule, RuleVerdict::cannot_tell,
                        sides.cpu ? "no all-pairs CPU result to check" : sides.missing);
  }
  if (!short_of_machine.empty()) {
    return with_verdict(
        rule, RuleVerdict::not_kept,
        fmt::format(
            "the best CPU figure did not use all {} logical CPUs and the widest ISA ({}): {}",
            doc.machine.logical_cpus, widest.empty() ? "unknown" : widest,
            names(short_of_machine, 2)));
  }
  if (!sve.short_of_machine.empty()) {
    return with_verdict(
        rule, RuleVerdict::not_kept,
        fmt::format("the best CPU figure used {}, but {}", widest, sve.short_of_machine));
  }
  const std::string cpu_side = fmt::format(
      "the best CPU used every one of the {} logical CPUs and the widest ISA the machine has "
      "(e.g. {}){}",
      doc.machine.logical_cpus, used.empty() ? widest : used.front(), sve.note);
  if (!sides.compares()) {
    // Effort is the same only beside another side's best: one side alone cannot show it.
    return with_verdict(
        rule, RuleVerdict::cannot_tell,
        fmt::format("{}, so no best stands against the CPU's; {}", sides.missing, cpu_side));
  }
  return with_verdict(
      rule, RuleVerdict::kept,
      fmt::format("{}; headline ratios are best/best and naive/naive{}; each implementation's "
                  "optimizations "
                  "are listed",
                  cpu_side, naive_both ? "" : " (no size has both naive baselines)"));
}

// Rule 3: the all-pairs sides' effort and, where trees ran, each side's tree against its own
// bounds (tree_effort.hpp), which moves no verdict: it says where the ratio at equal accuracy may
// lean, and where it cannot tell for trees.
AuditRule same_effort(const ResultsDocument& doc, const Headline& headline,
                      const MeasuredSides& sides, const AlgorithmComparison& algorithms) {
  AuditRule rule = all_pairs_effort(doc, headline, sides);
  if (const std::string trees = tree_effort(algorithms); !trees.empty()) {
    rule.evidence += "; " + trees;
  }
  return rule;
}

AuditRule same_accounting(const ResultsDocument& doc, const MeasuredSides& sides) {
  AuditRule rule{.number = 4, .title = "Same accounting"};
  std::vector<std::string> wrong, symmetric, missing_end_to_end;
  bool trees = false;
  for (const ResultRecord& r : doc.results) {
    const ImplementationRecord* impl = find_implementation(doc, r.implementation);
    if (!impl) continue;
    // A tree is credited no interactions: rule 9 checks its accounting.
    if (is_tree(*impl)) {
      trees = true;
      continue;
    }
    const double n = static_cast<double>(r.n);
    if (r.interactions_credited != n * n) wrong.push_back(r.implementation);
    if (impl->pairs == PairScheme::symmetric &&
        std::find(symmetric.begin(), symmetric.end(), impl->name) == symmetric.end()) {
      symmetric.push_back(impl->name);
    }
    if (impl->device == DeviceKind::gpu && timed_ok(r) && !r.end_to_end) {
      missing_end_to_end.push_back(fmt::format("{} at N = {}", r.implementation, r.n));
    }
  }
  if (!wrong.empty() || !missing_end_to_end.empty()) {
    return with_verdict(
        rule, RuleVerdict::not_kept,
        !wrong.empty()
            ? fmt::format("credited other than N² interactions: {}", names(wrong))
            : fmt::format("GPU figures without an end-to-end time: {}", names(missing_end_to_end)));
  }
  return with_verdict(
      rule, RuleVerdict::kept,
      fmt::format(
          "N² interactions credited to every {}measurement{}; FLOP/s at 20 per interaction and as "
          "counted, labelled{}{}",
          trees ? "all-pairs " : "",
          symmetric.empty()
              ? std::string()
              : fmt::format(" (symmetric kernels {} evaluate N(N−1)/2 pairs and say so)",
                            names(symmetric)),
          sides.gpu ? "; GPU time kernel-only and end-to-end" : "",
          trees ? "; tree formulations credited none (rule 9: time at equal accuracy)" : ""));
}

AuditRule same_statistics(const ResultsDocument& doc, const MeasuredSides& sides,
                          std::vector<RateFigure>& disturbed) {
  AuditRule rule{.number = 5, .title = "Same statistics"};
  std::size_t timed = 0, noisy = 0, without_conditions = 0;
  int fewest_repetitions = 0;
  for (const ResultRecord& r : doc.results) {
    // Trees are timed by the same runner, by time alone (they have no rate).
    const bool tree = is_tree_result(doc, r);
    if (tree ? !(r.status == Status::ok && r.kernel) : !timed_ok(r)) continue;
    ++timed;
    if (r.kernel->noisy) ++noisy;
    if (!r.kernel->conditions) ++without_conditions;
    if (fewest_repetitions == 0 || r.kernel->repetitions < fewest_repetitions) {
      fewest_repetitions = r.kernel->repetitions;
    }
    const RateFigure figure = tree ? RateFigure{.implementation = r.implementation,
                                                .n = r.n,
                                                .disturbance = describe_disturbance(r)}
                                   : rate_figure(doc, r);
    if (figure.disturbed()) disturbed.push_back(figure);
  }
  if (timed == 0) {
    return with_verdict(rule, RuleVerdict::not_applicable, "nothing was timed");
  }
  const char* clocks = sides.compares() ? "device events on the GPU, a steady clock on the CPU"
                       : sides.gpu      ? "device events on the GPU"
                                        : "a steady clock on the CPU";
  const std::string statistics = fmt::format(
      "{} timings by one runner ({}), warm-up discarded, at least {} repetitions each, medians "
      "with confidence intervals; {} flagged noisy (cv above 5%)",
      timed, clocks, fewest_repetitions, noisy);
  if (without_conditions > 0) {
    return with_verdict(rule, RuleVerdict::cannot_tell,
                        fmt::format("{}; {} timings record no conditions (a file older than schema "
                                    "3), so contention cannot "
                                    "be ruled out",
                                    statistics, without_conditions));
  }
  if (disturbed.empty()) {
    return with_verdict(rule, RuleVerdict::kept,
                        statistics + "; no timing was disturbed by other processes or GPU clocks");
  }
  std::vector<std::string> named;
  for (const RateFigure& f : disturbed) {
    named.push_back(fmt::format("{} at N = {}", f.implementation, f.n));
  }
  return with_verdict(
      rule, RuleVerdict::kept,
      fmt::format("{}; {} timings were disturbed (CPU contended or GPU clocks held down), "
                  "re-measured and still flagged: {}",
                  statistics, disturbed.size(), names(named)));
}

// Warnings of the form "what: why", said once per distinct why: "a; b: why".
std::string summarize(const std::vector<std::string>& warnings) {
  std::vector<std::pair<std::vector<std::string>, std::string>> by_reason;
  for (const std::string& w : warnings) {
    const auto colon = w.find(": ");
    const std::string what = colon == std::string::npos ? w : w.substr(0, colon);
    const std::string why = colon == std::string::npos ? std::string() : w.substr(colon + 2);
    auto it = std::find_if(by_reason.begin(), by_reason.end(),
                           [&why](const auto& group) { return group.second == why; });
    if (it == by_reason.end()) {
      by_reason.push_back({{}, why});
      it = std::prev(by_reason.end());
    }
    it->first.push_back(what);
  }
  std::vector<std::string> parts;
  for (const auto& [whats, why] : by_reason) {
    parts.push_back(fmt::format("{}{}", fmt::join(whats, "; "), why.empty() ? "" : ": " + why));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

AuditRule same_ceilings(const ResultsDocument& doc) {
  AuditRule rule{.number = 6, .title = "Same ceilings"};
  const bool kernels_ceilings =
      doc.ceilings &&
      std::any_of(doc.ceilings->entries.begin(), doc.ceilings->entries.end(),
                  [](const CeilingEntry& e) { return !is_all_gather_ceiling(e.name); });
  if (!kernels_ceilings) {
    // Several GPUs without counters still measure the link between them (the scaling model's).
    return with_verdict(
        rule, RuleVerdict::cannot_tell,
        std::string("no ceilings were measured (--no-counters): no fraction of peak is given") +
            (doc.ceilings ? "; only the all-gather between the GPUs was" : ""));
  }
  const Ceilings& c = *doc.ceilings;
  // Two runs' sides: each side's ceilings were checked against its own run when combined.
  if (doc.sides_from.empty() && (c.machine.hostname != doc.machine.hostname ||
                                 c.machine.cpu_model != doc.machine.cpu_model)) {
    return with_verdict(rule, RuleVerdict::not_kept,
                        fmt::format("the ceilings were measured on {} ({}), not on this machine",
                                    c.machine.hostname, c.machine.cpu_model));
  }
  return with_verdict(
      rule, RuleVerdict::kept,
      fmt::format(
          "{} ceilings measured on {}; each kernel also divided by its own instruction bound{}",
          c.entries.size(),
          doc.sides_from.empty()
              ? fmt::format("this machine ({}{})", c.from_cache ? "cached " : "", c.measured_at)
              : std::string("each side's own machine, by its own run"),
          c.warnings.empty()
              ? std::string()
              : fmt::format("; flagged as possibly low: {}", summarize(c.warnings))));
}

AuditRule full_disclosure(const ResultsDocument& doc) {
  AuditRule rule{.number = 7, .title = "Full disclosure"};
  std::vector<std::string> missing;
  if (doc.machine.cpu_model.empty()) missing.push_back("CPU model");
  if (doc.build.cxx_compiler.empty()) missing.push_back("compiler");
  if (doc.command_line.empty()) missing.push_back("command line");
  const bool gpu_results =
      std::any_of(doc.results.begin(), doc.results.end(), [&doc](const ResultRecord& r) {
        const ImplementationRecord* impl = find_implementation(doc, r.implementation);
        return impl && impl->device == DeviceKind::gpu && r.status == Status::ok;
      });
  if (gpu_results && doc.machine.gpus.empty()) missing.push_back("GPU description");
  std::size_t unexplained = 0, skipped = 0;
  for (const ResultRecord& r : doc.results) {
    if (r.status == Status::skipped) ++skipped;
    if (r.status != Status::ok && r.reason.empty()) ++unexplained;
  }
  if (unexplained > 0) missing.push_back(fmt::format("reasons of {} measurements", unexplained));
  if (!missing.empty()) {
    return with_verdict(rule, RuleVerdict::not_kept,
                        fmt::format("missing: {}", fmt::join(missing, ", ")));
  }
  return with_verdict(
      rule, RuleVerdict::kept,
      fmt::format(
          "machine ({}{}), build ({}) and command (`{}`) recorded; {} skipped measurements listed "
          "with their reasons",
          doc.machine.cpu_model,
          doc.machine.gpus.empty() ? std::string() : ", " + doc.machine.gpus.front().name,
          doc.build.cxx_compiler, fmt::join(doc.command_line, " "), skipped));
}

// The most ranks any one host ran: a host's share of the run.
int ranks_per_host(const RunSettings& settings) {
  if (settings.rank_hosts.empty()) return std::max(1, settings.ranks);
  std::map<std::string, int> ranks;
  int most = 0;
  for (const std::string& host : settings.rank_hosts) most = std::max(most, ++ranks[host]);
  return most;
}

// Rule 8 in one document: applicable where the run spanned several devices (ranks, or GPUs driven
// by one rank). Every implementation ran on the same ranks and hosts, so K hosts meet K hosts;
// what remains is each side's share of a host: all its cores against all its GPUs.
AuditRule same_scale(const ResultsDocument& doc, const Headline& headline,
                     const MeasuredSides& sides) {
  AuditRule rule{.number = 8, .title = "Same scale"};
  if (!spans_several_devices(doc.settings)) {
    return with_verdict(
        rule, RuleVerdict::not_applicable,
        sides.compares() ? "one CPU host against one GPU: no multi-device comparison in this run"
                         : fmt::format("one device, one side ({}): no multi-device comparison in "
                                       "this run",
                                       sides.missing_side));
  }
  const int host_ranks = ranks_per_host(doc.settings);
  const int host_cpus = doc.machine.logical_cpus;
  const int host_gpus = static_cast<int>(doc.machine.gpus.size());
  std::vector<std::string> unlabelled, unlike, paired;
  const auto whole_host = [&](const RateFigure& f) {
    const RunScale& s = *f.scale;
    if (s.device == DeviceKind::cpu) return host_ranks * s.threads_per_rank >= host_cpus;
    return host_gpus == 0 || host_ranks * (s.gpus / s.ranks) >= host_gpus;
  };
  const auto share = [&](const RateFigure& f) {
    const RunScale& s = *f.scale;
    return s.device == DeviceKind::cpu
               ? fmt::format("{} on {} of the host's {} cores", f.implementation,
                             host_ranks * s.threads_per_rank, host_cpus)
               : fmt::format("{} on {} of the host's {} GPUs", f.implementation,
                             host_ranks * (s.gpus / s.ranks), host_gpus);
  };
  for (const HeadlineRow& row : headline.rows) {
    for (const auto* f : {&row.best_cpu, &row.best_gpu, &row.naive_cpu, &row.naive_gpu}) {
      if (*f && (!(*f)->scale || (*f)->scale_label.empty())) {
        unlabelled.push_back(fmt::format("{} at N = {}", (*f)->implementation, row.n));
      }
    }
    const auto pair = [&](const std::optional<RateFigure>& cpu,
                          const std::optional<RateFigure>& gpu) {
      if (!cpu || !gpu || !cpu->scale || !gpu->scale) return;
      const std::string what = fmt::format("{} N = {}: {} against {}", to_string(row.precision),
                                           row.n, share(*gpu), share(*cpu));
      (whole_host(*cpu) && whole_host(*gpu) ? paired : unlike).push_back(what);
    };
    // Best against best only: the naive versions are one thread per rank by definition (rule 3),
    // and their ratio pairs them on the same ranks and GPUs.
    pair(row.best_cpu, row.best_gpu);
  }
  if (!unlabelled.empty()) {
    return with_verdict(
        rule, RuleVerdict::not_kept,
        fmt::format("headline figures that do not name their scale: {}", names(unlabelled)));
  }
  if (!unlike.empty()) {
    return with_verdict(
        rule, RuleVerdict::not_kept,
        fmt::format(
            "a best-against-best ratio sets part of a host against the whole of one (all GPUs of a "
            "host pair with all its cores): {}",
            names(unlike, 2)));
  }
  const RunScale run = scale_of(doc.settings, DeviceKind::cpu, 1);
  return with_verdict(
      rule, RuleVerdict::kept,
      paired.empty()
          ? fmt::format(
                "decomposed over {} ranks on {} host{}, {} on the busiest; the headline sets no "
                "CPU against a GPU, and every figure names its GPUs, ranks, cores and hosts",
                run.ranks, run.hosts, run.hosts == 1 ? "" : "s", host_ranks)
          : fmt::format(
                "every formulation ran on the same ranks and hosts; each best-against-best ratio "
                "sets all GPUs of a host against all its cores (e.g. {}), and every figure names "
                "its GPUs, ranks, cores and hosts",
                paired.front()));
}

// The input hash a tree's measurement must share: that of the all-pairs measurements of its
// precision at its N, else (none ran there) the run's input of its precision.
std::string expected_input_hash(const ResultsDocument& doc, const ResultRecord& tree,
                                Precision precision) {
  for (const ResultRecord& r : doc.results) {
    const ImplementationRecord* impl = find_implementation(doc, r.implementation);
    if (impl && !is_tree(*impl) && impl->precision == precision && r.n == tree.n &&
        r.initial_condition == tree.initial_condition && r.status != Status::skipped &&
        !r.input_hash.empty()) {
      return r.input_hash;
    }
  }
  const auto input = std::find_if(doc.inputs.begin(), doc.inputs.end(), [&tree](const auto& in) {
    return in.n == tree.n && in.initial_condition == tree.initial_condition;
  });
  if (input == doc.inputs.end()) return {};
  return precision == Precision::f32 ? input->hash_f32 : input->hash_f64;
}

// What breaks rule 9 in one tree measurement: credited interactions or a rate (ranked by
// interactions), or no measured accuracy against the reference on the all-pairs' input.
std::string tree_fault(const ResultsDocument& doc, const ResultRecord& r,
                       const ImplementationRecord& impl) {
  if (r.interactions_credited != 0 || r.kernel_rate || r.end_to_end_rate) {
    return "credited interactions or given a rate";
  }
  if (r.status != Status::ok) return {};  // failed: shown failed, compared with nothing
  if (!r.accuracy) return "no accuracy measured against the float64 reference";
  if (r.input_hash != expected_input_hash(doc, r, impl.precision)) {
    return "measured on another input than the all-pairs formulations";
  }
  return {};
}

// Rule 9: algorithms meet at equal measured accuracy. Applicable where a tree ran; kept where every
// tree is credited no interactions and was measured against the reference on the all-pairs' input,
// and the report compares the algorithms per accuracy bar.
AuditRule same_accuracy_across_algorithms(const ResultsDocument& doc,
                                          const AlgorithmComparison& algorithms) {
  AuditRule rule{.number = 9, .title = "Same accuracy across algorithms"};
  if (!algorithms.any_tree()) {
    return with_verdict(rule, RuleVerdict::not_applicable,
                        doc.implementations.empty()
                            ? "no formulation recorded"
                            : "one algorithm: every formulation measured computes all N² pairs "
                              "(all-pairs or symmetric), so no two algorithms are compared");
  }
  std::vector<std::string> faults;
  std::set<double> thetas;
  for (const ResultRecord& r : doc.results) {
    const ImplementationRecord* impl = find_implementation(doc, r.implementation);
    if (!impl || !is_tree(*impl) || r.status == Status::skipped) continue;
    if (impl->theta) thetas.insert(*impl->theta);
    if (const std::string fault = tree_fault(doc, r, *impl); !fault.empty()) {
      faults.push_back(fmt::format("{} at N = {}: {}", r.implementation, r.n, fault));
    }
  }
  if (!faults.empty()) {
    return with_verdict(rule, RuleVerdict::not_kept, names(faults, 2));
  }
  std::set<std::size_t> sizes;
  for (const BarHeadlineRow& row : algorithms.rows) sizes.insert(row.n);
  const auto found = std::count_if(algorithms.crossovers.begin(), algorithms.crossovers.end(),
                                   [](const Crossover& c) { return c.tree_from.has_value(); });
  return with_verdict(
      rule, RuleVerdict::kept,
      fmt::format(
          "{} tree measurement{} (θ = {}) credited no interactions and measured against the "
          "float64 reference on the all-pairs' input; compared by time at {} accuracy "
          "bars × {} sizes, never at equal θ; {} of {} crossovers found",
          algorithms.trees.size(), algorithms.trees.size() == 1 ? "" : "s", fmt::join(thetas, ", "),
          algorithms.bars.size(), sizes.size(), found, algorithms.crossovers.size()));
}

AuditRule for_runs_only(int number, const char* title) {
  return {.number = number,
          .title = title,
          .verdict = RuleVerdict::not_applicable,
          .evidence =
              "a simulation's figures are whole steps, not force evaluations: this rule "
              "is audited in the reports of `nbody-fair run`"};
}

// Rule 9 of a simulation: trees simulated beside all-pairs are compared by step, not at equal
// accuracy of one force evaluation, which a run measures.
AuditRule simulation_algorithms(const ResultsDocument& doc) {
  const bool trees = std::any_of(
      doc.simulations.begin(), doc.simulations.end(), [&doc](const SimulationRecord& r) {
        const ImplementationRecord* impl = find_implementation(doc, r.implementation);
        return impl && is_tree(*impl);
      });
  if (trees) return for_runs_only(9, "Same accuracy across algorithms");
  return {.number = 9,
          .title = "Same accuracy across algorithms",
          .verdict = RuleVerdict::not_applicable,
          .evidence = "one algorithm: every formulation simulated computes all N² pairs"};
}

std::string describe_meter(const EnergyDevice& d) {
  const std::string what = d.device == DeviceKind::gpu
                               ? "the GPU board"
                               : fmt::format("the CPU ({})", fmt::join(d.domains, ", "));
  return fmt::format("{} through {}, idle {:.0f} W", what, d.source, d.idle_watts);
}

// Rule 10: energy read alike on both sides (whole GPU board; CPU packages and DRAM), idle power
// alike, compared within one run only and only between resolved figures.
AuditRule same_energy_accounting(const EnergyAnalysis& energy, const Headline& headline) {
  AuditRule rule{.number = 10, .title = "Same energy accounting"};
  if (energy.devices.empty()) {
    rule.verdict = RuleVerdict::not_applicable;
    rule.evidence = energy.no_ratio_reason;
    return rule;
  }
  std::vector<std::string> read, not_read;
  bool cpu_without_dram = false;
  for (const EnergyDevice& d : energy.devices) {
    if (!d.measured) {
      not_read.push_back(fmt::format("{} energy is not read ({})",
                                     d.device == DeviceKind::gpu ? "the GPU's" : "the CPU's",
                                     d.unavailable_reason));
      continue;
    }
    read.push_back(describe_meter(d));
    cpu_without_dram |=
        d.device == DeviceKind::cpu &&
        std::none_of(d.domains.begin(), d.domains.end(),
                     [](const std::string& name) { return name.ends_with("dram"); });
  }
  std::size_t ratios = 0, unresolved = 0;
  for (const HeadlineRow& row : headline.rows) {
    ratios += (row.best_energy_ratio ? 1 : 0) + (row.naive_energy_ratio ? 1 : 0);
  }
  for (const EnergyPoint& p : energy.points) unresolved += p.energy.resolved ? 0 : 1;
  std::vector<std::string> parts;
  if (!read.empty()) {
    parts.push_back(fmt::format("read: {}; idle power {} on every side", fmt::join(read, "; "),
                                energy.idle_accounting));
  }
  for (const std::string& line : not_read) parts.push_back(line);
  if (unresolved > 0) {
    parts.push_back(
        fmt::format("{} figure{} spanned too few counter updates and {} shown as "
                    "unresolved, in no ratio",
                    unresolved, unresolved == 1 ? "" : "s", unresolved == 1 ? "is" : "are"));
  }
  parts.push_back(energy.compares()
                      ? fmt::format("{} GPU/CPU energy ratio{} formed, within this run", ratios,
                                    ratios == 1 ? "" : "s")
                      : fmt::format("no energy ratio is formed: {}", energy.no_ratio_reason));
  rule.evidence = fmt::format("{}", fmt::join(parts, "; "));
  rule.verdict =
      cpu_without_dram && energy.compares() ? RuleVerdict::cannot_tell : RuleVerdict::kept;
  if (rule.verdict == RuleVerdict::cannot_tell) {
    rule.evidence += "; the CPU's DRAM is not exposed, so its side counts the packages alone";
  }
  return rule;
}

// One line: how many applicable rules were kept, which were not or cannot tell, and what a
// missing side or disturbed measurements take from the ratios.
std::string verdict_line(const FairnessAudit& audit, const Headline& headline,
                         const MeasuredSides& sides) {
  std::string verdict;
  std::vector<std::string> not_kept, cannot_tell;
  std::size_t applicable = 0;
  for (const AuditRule& rule : audit.rules) {
    if (rule.verdict != RuleVerdict::not_applicable) ++applicable;
    const std::string label = fmt::format("{} ({})", rule.number, rule.title);
    if (rule.verdict == RuleVerdict::not_kept) not_kept.push_back(label);
    if (rule.verdict == RuleVerdict::cannot_tell) cannot_tell.push_back(label);
  }
  if (not_kept.empty() && cannot_tell.empty()) {
    verdict = fmt::format("all {} applicable rules kept", applicable);
  } else {
    std::vector<std::string> parts;
    if (!not_kept.empty()) {
      parts.push_back(fmt::format("not kept: rule{} {}", not_kept.size() == 1 ? "" : "s",
                                  fmt::join(not_kept, ", ")));
    }
    if (!cannot_tell.empty()) {
      parts.push_back(fmt::format("cannot tell: rule{} {}", cannot_tell.size() == 1 ? "" : "s",
                                  fmt::join(cannot_tell, ", ")));
    }
    verdict = fmt::format("{} of {} applicable rules kept; {}",
                          applicable - not_kept.size() - cannot_tell.size(), applicable,
                          fmt::join(parts, "; "));
  }
  // A run that cannot compare says so before any rule: its rules say only what one side kept.
  if (!sides.compares()) verdict = sides.missing_side + ", no ratio: " + verdict;
  if (!audit.disturbed_measurements.empty()) {
    verdict += fmt::format("; {} measurements taken on a disturbed machine are flagged",
                           audit.disturbed_measurements.size());
    if (!headline.disturbed_figures.empty()) {
      verdict += fmt::format(", {} of them in the headline, whose ratios may be off",
                             headline.disturbed_figures.size());
    }
  }
  return verdict;
}

}  // namespace

FairnessAudit make_audit(const ResultsDocument& doc, const Headline& headline,
                         const MeasuredSides& sides, const AlgorithmComparison& algorithms,
                         const std::vector<IntegrationRow>& simulations,
                         const EnergyAnalysis& energy) {
  FairnessAudit audit;
  if (kind_of(doc.settings) == DocumentKind::simulate) {
    audit.rules = {same_problem(doc),
                   simulations_within_bounds(simulations),
                   for_runs_only(3, "Same effort"),
                   for_runs_only(4, "Same accounting"),
                   for_runs_only(5, "Same statistics"),
                   for_runs_only(6, "Same ceilings"),
                   full_disclosure(doc),
                   for_runs_only(8, "Same scale"),
                   simulation_algorithms(doc),
                   same_energy_accounting(energy, headline)};
  } else {
    audit.rules = {same_problem(doc),
                   same_precision_and_accuracy(doc, headline, sides),
                   same_effort(doc, headline, sides, algorithms),
                   same_accounting(doc, sides),
                   same_statistics(doc, sides, audit.disturbed_measurements),
                   same_ceilings(doc),
                   full_disclosure(doc),
                   same_scale(doc, headline, sides),
                   same_accuracy_across_algorithms(doc, algorithms),
                   same_energy_accounting(energy, headline)};
  }
  audit.verdict = verdict_line(audit, headline, sides);
  return audit;
}

std::string_view to_string(RuleVerdict verdict) {
  switch (verdict) {
    case RuleVerdict::kept:
      return "kept";
    case RuleVerdict::not_kept:
      return "not kept";
    case RuleVerdict::cannot_tell:
      return "cannot tell";
    case RuleVerdict::not_applicable:
      return "not applicable";
  }
  return "cannot tell";
}

}  // namespace nbody::reports
