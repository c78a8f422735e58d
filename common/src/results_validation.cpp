#include "nbody/results_validation.hpp"

#include <cmath>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "nbody/errors.hpp"

namespace nbody {
namespace {

// One object of the document, known by its field path ("results[3].kernel_rate"), and the checks
// of its values; a refusal names the value's whole path.
class Fields {
 public:
  explicit Fields(std::string path = {}) : path_(std::move(path)) {}

  Fields member(std::string_view name) const { return Fields(path_of(name)); }
  Fields element(std::string_view name, std::size_t index) const {
    return Fields(fmt::format("{}[{}]", path_of(name), index));
  }

  template <class Number>
  void positive(std::string_view name, Number value) const {
    finite(name, value);
    if (!(value > 0)) refuse(name, value, "it must be positive");
  }
  template <class Number>
  void non_negative(std::string_view name, Number value) const {
    finite(name, value);
    if (value < 0) refuse(name, value, "it must not be negative");
  }
  // Accuracy errors: NaN where a failed kernel produced no number, never negative.
  void non_negative_or_nan(std::string_view name, double value) const {
    if (value < 0 || std::isinf(value)) refuse(name, value, "it must not be negative");
  }
  void fraction(std::string_view name, double value) const {
    finite(name, value);
    if (value < 0 || value > 1) refuse(name, value, "it must be between 0 and 1");
  }
  void one_of(std::string_view name, const std::string& value,
              std::initializer_list<std::string_view> spellings) const {
    for (const std::string_view spelling : spellings) {
      if (value == spelling) return;
    }
    refuse(name, fmt::format("'{}'", value),
           fmt::format("it must be one of {}", fmt::join(spellings, ", ")));
  }
  [[noreturn]] void refuse_value(std::string_view value, std::string_view rule) const {
    refuse("", value, rule);
  }
  // `low` above `high`, which it must not exceed.
  [[noreturn]] void refuse_order(std::string_view low, double low_value, std::string_view high,
                                 double high_value) const {
    refuse(low, low_value, fmt::format("it must not exceed {} ({})", path_of(high), high_value));
  }
  void count(std::string_view name, std::size_t count, std::size_t expected,
             std::string_view of) const {
    if (count != expected) {
      refuse(name, fmt::format("{} long", count), fmt::format("it must have one per {}", of));
    }
  }

 private:
  std::string path_of(std::string_view name) const {
    if (name.empty()) return path_;  // an array element's own value
    return path_.empty() ? std::string(name) : fmt::format("{}.{}", path_, name);
  }
  template <class Number>
  void finite(std::string_view name, Number value) const {
    if constexpr (std::is_floating_point_v<Number>) {
      if (!std::isfinite(value)) refuse(name, value, "it must be finite");
    }
  }
  template <class Number>
  [[noreturn]] void refuse(std::string_view name, Number value, std::string_view rule) const {
    throw UsageError(fmt::format("{} is {}; {}", path_of(name), value, rule));
  }

  std::string path_;
};

void check_timing(const Fields& fields, const TimingStatistics& t) {
  fields.non_negative("repetitions", t.repetitions);
  fields.non_negative("iterations_per_repetition", t.iterations_per_repetition);
  // Every repetition's sample, from which the median and its interval were taken.
  fields.count("samples_s", t.samples_s.size(), static_cast<std::size_t>(t.repetitions),
               "repetition");
  for (std::size_t i = 0; i < t.samples_s.size(); ++i) {
    fields.element("samples_s", i).positive("", t.samples_s[i]);
  }
  fields.positive("median_s", t.median_s);
  // The extremes hold the median between them (a file without them has 0).
  if (t.min_s > t.median_s) fields.refuse_order("min_s", t.min_s, "median_s", t.median_s);
  if (t.max_s > 0 && t.max_s < t.median_s) {
    fields.refuse_order("median_s", t.median_s, "max_s", t.max_s);
  }
  fields.non_negative("mean_s", t.mean_s);
  fields.non_negative("min_s", t.min_s);
  fields.non_negative("max_s", t.max_s);
  fields.non_negative("stddev_s", t.stddev_s);
  fields.non_negative("ci_low_s", t.ci_low_s);
  fields.non_negative("ci_high_s", t.ci_high_s);
  fields.fraction("ci_confidence", t.ci_confidence);
  fields.non_negative("cv", t.cv);
  if (t.conditions) {
    const Fields conditions = fields.member("conditions");
    conditions.non_negative("wall_seconds", t.conditions->wall_seconds);
    conditions.non_negative("online_cpus", t.conditions->online_cpus);
    conditions.fraction("other_processes_cpu_share", t.conditions->other_processes_cpu_share);
    conditions.fraction("steal_cpu_share", t.conditions->steal_cpu_share);
    conditions.positive("attempts", t.conditions->attempts);
  }
}

void check_phases(const Fields& fields, const std::map<std::string, double>& phases) {
  const Fields phase_seconds = fields.member("phase_seconds");
  for (const auto& [phase, seconds] : phases) phase_seconds.non_negative(phase, seconds);
}

void check_rates(const Fields& fields, const RateFigures& r) {
  fields.positive("interactions_per_second", r.interactions_per_second);
  fields.non_negative("interactions_per_second_min", r.interactions_per_second_min);
  fields.non_negative("interactions_per_second_max", r.interactions_per_second_max);
  fields.non_negative("gflops_at_20", r.gflops_at_20);
}

void check_accuracy(const Fields& fields, const AccuracyRecord& a) {
  const Fields metrics = fields.member("metrics");
  metrics.non_negative_or_nan("relative_l2", a.metrics.relative_l2);
  metrics.non_negative_or_nan("max_relative", a.metrics.max_relative);
  metrics.non_negative_or_nan("p99_relative", a.metrics.p99_relative);
  metrics.non_negative_or_nan("median_relative", a.metrics.median_relative);
  metrics.non_negative_or_nan("net_force_residual", a.metrics.net_force_residual);
  fields.non_negative("relative_l2_bound", a.relative_l2_bound);
  fields.non_negative("max_relative_bound", a.max_relative_bound);
}

void check_result(const Fields& fields, const ResultRecord& r) {
  fields.positive("n", r.n);
  fields.non_negative("interactions_credited", r.interactions_credited);
  fields.non_negative("threads", r.threads);
  if (r.accuracy) check_accuracy(fields.member("accuracy"), *r.accuracy);
  if (r.kernel) check_timing(fields.member("kernel"), *r.kernel);
  if (r.end_to_end) check_timing(fields.member("end_to_end"), *r.end_to_end);
  if (r.communication) check_timing(fields.member("communication"), *r.communication);
  if (r.kernel_rate) check_rates(fields.member("kernel_rate"), *r.kernel_rate);
  if (r.end_to_end_rate) check_rates(fields.member("end_to_end_rate"), *r.end_to_end_rate);
  check_phases(fields, r.phase_seconds);
  if (r.counters) {
    const Fields derived = fields.member("counters").member("derived");
#define NBODY_CHECK_FIGURE(name) \
  if (r.counters->derived.name) derived.non_negative(#name, *r.counters->derived.name);
    NBODY_DERIVED_FIGURES(NBODY_CHECK_FIGURE)
#undef NBODY_CHECK_FIGURE
  }
}

// A simulation's figures: integration and other may be slightly negative (timing noise around
// zero, docs/results-schema.md); everything else that is a time, a rate or a count is not.
void check_simulation(const Fields& fields, const SimulationRecord& r) {
  fields.positive("n", r.n);
  fields.non_negative("threads", r.threads);
  fields.non_negative("steps", r.steps);
  fields.non_negative("dt", r.dt);
  fields.non_negative("wall_seconds", r.wall_seconds);
  fields.non_negative("steps_per_second", r.steps_per_second);
  fields.non_negative_or_nan("max_relative_energy_error", r.max_relative_energy_error);
  const Fields split = fields.member("per_step");
  split.non_negative("step_s", r.per_step.step_s);
  split.non_negative("force_s", r.per_step.force_s);
  split.non_negative("communication_s", r.per_step.communication_s);
  split.non_negative("diagnostics_s", r.per_step.diagnostics_s);
  split.non_negative("snapshots_s", r.per_step.snapshots_s);
  for (std::size_t i = 0; i < r.conservation.size(); ++i) {
    const Fields sample = fields.element("conservation", i);
    sample.non_negative("step", r.conservation[i].step);
    sample.non_negative_or_nan("relative_energy_error", r.conservation[i].relative_energy_error);
  }
  if (r.divergence) {
    const Fields d = fields.member("divergence");
    d.non_negative_or_nan("position", r.divergence->position);
    d.non_negative_or_nan("velocity", r.divergence->velocity);
    d.non_negative_or_nan("reference_energy_error", r.divergence->reference_energy_error);
  }
}

void check_ceilings(const Fields& fields, const Ceilings& c) {
  for (std::size_t i = 0; i < c.entries.size(); ++i) {
    const Fields entry = fields.element("entries", i);
    const CeilingEntry& e = c.entries[i];
    entry.positive("value", e.value);
    entry.non_negative("lanes", e.lanes);
    if (e.threads) entry.positive("threads", *e.threads);
    if (e.fp_instructions_per_second) {
      entry.positive("fp_instructions_per_second", *e.fp_instructions_per_second);
    }
    if (e.datasheet) entry.member("datasheet").non_negative("value", e.datasheet->value);
    if (e.theoretical) entry.member("theoretical").non_negative("value", e.theoretical->value);
  }
}

void check_settings(const Fields& fields, const RunSettings& s) {
  fields.non_negative("softening", s.softening);
  for (std::size_t i = 0; i < s.sizes.size(); ++i)
    fields.element("sizes", i).positive("", s.sizes[i]);
  fields.non_negative("repetitions", s.repetitions);
  fields.non_negative("min_time_s", s.min_time_s);
  fields.non_negative("warmup_s", s.warmup_s);
  fields.non_negative("separate_kernel_timing_below_s", s.separate_kernel_timing_below_s);
  fields.non_negative("max_eval_seconds", s.max_eval_seconds);
  fields.non_negative("threads", s.threads);
  fields.non_negative("gpu_device", s.gpu_device);
  fields.non_negative("dt", s.dt);
  fields.non_negative("steps", s.steps);
  fields.non_negative("diag_every", s.diag_every);
  fields.non_negative("snapshot_every", s.snapshot_every);
  fields.non_negative("phase_steps", s.phase_steps);
  fields.positive("ranks", s.ranks);
  fields.non_negative("budget_s", s.budget_s);
  if (!s.decomposition.empty()) {  // older files have none
    fields.one_of("decomposition", s.decomposition, {"none", "target_range"});
  }
  if (!s.rank_hosts.empty()) {
    fields.count("rank_hosts", s.rank_hosts.size(), static_cast<std::size_t>(s.ranks), "rank");
  }
  for (std::size_t i = 0; i < s.gpu_devices.size(); ++i) {
    fields.element("gpu_devices", i).non_negative("", s.gpu_devices[i]);
    // A GPU named twice would be counted twice in a scaling study's GPUs.
    for (std::size_t j = 0; j < i; ++j) {
      if (s.gpu_devices[j] == s.gpu_devices[i]) {
        fields.element("gpu_devices", i)
            .refuse_value(fmt::format("{} again", s.gpu_devices[i]), "each GPU is named once");
      }
    }
  }
  if (!s.gpu_exchange.empty()) {  // one process, and older files, have none
    fields.one_of("gpu_exchange", s.gpu_exchange, {"nccl", "mpi"});
    if (s.ranks < 2) {
      fields.member("gpu_exchange")
          .refuse_value(fmt::format("'{}' with {} rank", s.gpu_exchange, s.ranks),
                        "only runs decomposed over ranks exchange between them");
    }
  }
}

void check_machine(const Fields& fields, const MachineRecord& m) {
  fields.non_negative("logical_cpus", m.logical_cpus);
  fields.non_negative("physical_cores", m.physical_cores);
  for (std::size_t i = 0; i < m.gpus.size(); ++i) {
    const Fields gpu = fields.element("gpus", i);
    gpu.non_negative("ordinal", m.gpus[i].ordinal);
    gpu.non_negative("sm_count", m.gpus[i].sm_count);
    gpu.non_negative("sm_clock_khz", m.gpus[i].sm_clock_khz);
    gpu.non_negative("memory_clock_khz", m.gpus[i].memory_clock_khz);
    gpu.non_negative("memory_bus_width_bits", m.gpus[i].memory_bus_width_bits);
  }
}

// One record per (implementation, initial condition, N): reports, compare and scaling find a
// measurement by these, and a second one would be shown twice or hide the first.
template <class Record>
void check_one_per_measurement(const Fields& root, std::string_view name,
                               const std::vector<Record>& records) {
  std::map<std::tuple<std::string, std::string, std::size_t>, std::size_t> first;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    const auto [it, fresh] = first.try_emplace({r.implementation, r.initial_condition, r.n}, i);
    if (!fresh) {
      const std::string condition =
          r.initial_condition.empty() ? "" : fmt::format(" ({})", r.initial_condition);
      root.element(name, i).refuse_value(
          fmt::format("{} at N = {}{}, as {}[{}] is", r.implementation, r.n, condition, name,
                      it->second),
          "there is one per implementation, initial condition and N");
    }
  }
}

void check_implementations(const Fields& root, const std::vector<ImplementationRecord>& records) {
  std::map<std::string, std::size_t> first;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Fields impl = root.element("implementations", i);
    const ImplementationRecord& record = records[i];
    impl.non_negative("unit_roundoff", record.tolerance.unit_roundoff);
    impl.non_negative("relative_l2_coefficient", record.tolerance.relative_l2_coefficient);
    impl.non_negative("max_relative_coefficient", record.tolerance.max_relative_coefficient);
    impl.non_negative("threads", record.threads);
    // Records are looked up by name: a second one would never be read.
    if (!first.try_emplace(record.name, i).second) {
      impl.member("name").refuse_value(fmt::format("'{}' again", record.name),
                                       "each implementation is listed once");
    }
  }
}

// A run times every measurement it validates: an ok result without its kernel timing would be
// reported as measured with no figure. (validate's ok results are untimed.)
void check_timed(const Fields& root, const ResultsDocument& document) {
  if (kind_of(document.settings) != DocumentKind::run) return;
  for (std::size_t i = 0; i < document.results.size(); ++i) {
    const ResultRecord& r = document.results[i];
    if (r.status == Status::ok && !r.kernel) {
      root.element("results", i)
          .refuse_value("ok without its kernel timing", "a run times every result it validates");
    }
  }
}

}  // namespace

void check_results_values(const ResultsDocument& document) {
  const Fields root;
  check_machine(root.member("machine"), document.machine);
  check_settings(root.member("settings"), document.settings);
  if (document.ceilings) check_ceilings(root.member("ceilings"), *document.ceilings);
  check_implementations(root, document.implementations);
  for (std::size_t i = 0; i < document.inputs.size(); ++i) {
    root.element("inputs", i).positive("n", document.inputs[i].n);
  }
  for (std::size_t i = 0; i < document.results.size(); ++i) {
    check_result(root.element("results", i), document.results[i]);
  }
  for (std::size_t i = 0; i < document.simulations.size(); ++i) {
    check_simulation(root.element("simulations", i), document.simulations[i]);
  }
  check_phases(root, document.phase_seconds);
  check_one_per_measurement(root, "results", document.results);
  check_one_per_measurement(root, "simulations", document.simulations);
  check_timed(root, document);
}

}  // namespace nbody
