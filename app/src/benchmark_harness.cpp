#include "nbody/app/benchmark_harness.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "nbody/accuracy.hpp"
#include "nbody/machine_info.hpp"
#include "nbody/steady_clock.hpp"

namespace nbody {
namespace {

// Statistics handed to Google Benchmark (it runs the loop and the aggregation).
double sample_min(const std::vector<double>& v) {
  return *std::min_element(v.begin(), v.end());
}
double sample_max(const std::vector<double>& v) {
  return *std::max_element(v.begin(), v.end());
}

// Distribution-free confidence interval of the median: the order statistics x_(k) and
// x_(K+1-k) with the largest k for which P(Binomial(K, 1/2) < k) <= 2.5%. With fewer than six
// samples no such k exists and the interval is [min, max], whose coverage is 1 - 2^(1-K).
std::size_t median_ci_rank(std::size_t count) {
  double cumulative = 0, term = std::pow(0.5, static_cast<double>(count));  // P(X = 0)
  std::size_t k = 0;
  for (std::size_t i = 0; i < count; ++i) {
    cumulative += term;  // P(X <= i)
    if (cumulative > 0.025) break;
    k = i + 1;
    term = term * static_cast<double>(count - i) / static_cast<double>(i + 1);
  }
  return std::max<std::size_t>(k, 1);
}

double median_ci_coverage(std::size_t count) {
  const std::size_t k = median_ci_rank(count);
  double tail = 0, term = std::pow(0.5, static_cast<double>(count));
  for (std::size_t i = 0; i < k; ++i) {
    tail += term;
    term = term * static_cast<double>(count - i) / static_cast<double>(i + 1);
  }
  return 1.0 - 2.0 * tail;
}

double median_ci_low(const std::vector<double>& v) {
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  return sorted[median_ci_rank(sorted.size()) - 1];
}

double median_ci_high(const std::vector<double>& v) {
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  return sorted[sorted.size() - median_ci_rank(sorted.size())];
}

// Keeps every run Google Benchmark reports, instead of printing it.
class CaptureReporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    captured.insert(captured.end(), runs.begin(), runs.end());
  }
  std::vector<Run> captured;
};

// The counter through which an end-to-end timing carries the kernel's own seconds per evaluation;
// Google Benchmark aggregates counters with every statistic it computes for the time.
constexpr const char* kKernelSecondsCounter = "kernel_s";
// And the seconds of the all-gather per evaluation of a run decomposed over ranks, which carries
// the kernel's seconds the same way (its total holds both).
constexpr const char* kCommunicationSecondsCounter = "communication_s";
// And a tree formulation's build of its tree per evaluation, within the kernel's seconds.
constexpr const char* kTreeBuildSecondsCounter = "tree_build_s";

// The statistics of one figure of every captured run: `value` reads it from an iteration or an
// aggregate run, `cv` from the coefficient-of-variation aggregate (a ratio, not a time).
template <class Value, class Cv>
TimingStatistics statistics_of(const std::vector<benchmark::BenchmarkReporter::Run>& captured,
                               Value value, Cv cv, const RepetitionSettings& options) {
  TimingStatistics stats;
  for (const benchmark::BenchmarkReporter::Run& r : captured) {
    if (r.run_type == benchmark::BenchmarkReporter::Run::RT_Iteration) {
      stats.samples_s.push_back(value(r));
      stats.iterations_per_repetition = r.iterations;
      continue;
    }
    const std::string& name = r.aggregate_name;
    if (name == "cv") {
      stats.cv = cv(r);
      continue;
    }
    const double seconds = value(r);
    if (name == "median") stats.median_s = seconds;
    if (name == "mean") stats.mean_s = seconds;
    if (name == "stddev") stats.stddev_s = seconds;
    if (name == "min") stats.min_s = seconds;
    if (name == "max") stats.max_s = seconds;
    if (name == "ci_low") stats.ci_low_s = seconds;
    if (name == "ci_high") stats.ci_high_s = seconds;
  }
  stats.repetitions = static_cast<int>(stats.samples_s.size());
  if (stats.repetitions == 0) throw std::runtime_error("timing produced no repetitions");
  if (stats.repetitions == 1) {  // Google Benchmark computes no aggregates for one repetition
    stats.median_s = stats.mean_s = stats.min_s = stats.max_s = stats.ci_low_s = stats.ci_high_s =
        stats.samples_s.front();
  }
  stats.ci_confidence = stats.repetitions > 1 ? median_ci_coverage(stats.samples_s.size()) : 0;
  stats.noisy = stats.cv > options.noise_threshold_cv;
  return stats;
}

Timings time_once(PreparedRun& run, PreparedRun::Scope scope, std::size_t n,
                  const RepetitionSettings& options, std::int64_t* evaluations_run) {
  benchmark::ClearRegisteredBenchmarks();
  register_evaluation({.name = "evaluation",
                       .run = [&run]() -> PreparedRun& { return run; },
                       .scope = scope,
                       .n = n,
                       .annotate = {},
                       .evaluations_run = evaluations_run})
      ->Repetitions(options.repetitions)
      ->MinTime(options.min_time_s)
      ->MinWarmUpTime(options.warmup_s)
      ->ComputeStatistics("min", sample_min)
      ->ComputeStatistics("max", sample_max)
      ->ComputeStatistics("ci_low", median_ci_low)
      ->ComputeStatistics("ci_high", median_ci_high);
  CaptureReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();

  using Run = benchmark::BenchmarkReporter::Run;
  for (const Run& r : reporter.captured) {
    if (r.error_occurred) throw std::runtime_error("timing stopped: " + r.error_message);
  }
  Timings timings;
  timings.total = statistics_of(
      reporter.captured, [](const Run& r) { return r.GetAdjustedRealTime(); },
      [](const Run& r) { return r.real_accumulated_time; }, options);
  const bool decomposed = !reporter.captured.empty() &&
                          reporter.captured.front().counters.contains(kCommunicationSecondsCounter);
  if (scope == PreparedRun::Scope::kernel && !decomposed) {
    timings.kernel = timings.total;
  } else {
    const auto kernel_seconds = [](const Run& r) {
      return static_cast<double>(r.counters.at(kKernelSecondsCounter));
    };
    timings.kernel = statistics_of(reporter.captured, kernel_seconds, kernel_seconds, options);
  }
  if (decomposed) {
    const auto communication_seconds = [](const Run& r) {
      return static_cast<double>(r.counters.at(kCommunicationSecondsCounter));
    };
    timings.communication =
        statistics_of(reporter.captured, communication_seconds, communication_seconds, options);
  }
  if (!reporter.captured.empty() &&
      reporter.captured.front().counters.contains(kTreeBuildSecondsCounter)) {
    const auto build_seconds = [](const Run& r) {
      return static_cast<double>(r.counters.at(kTreeBuildSecondsCounter));
    };
    timings.tree_build = statistics_of(reporter.captured, build_seconds, build_seconds, options);
  }
  return timings;
}

// How disturbed a timing was, to keep the least disturbed attempt: any GPU clock limit outweighs
// CPU contention, which only touches a GPU timing through its launches.
// Below this share of its maximum, the SM clock after a timing says the GPU was held down.
constexpr double kMinSmClockShare = 0.9;

bool clock_below_share(const GpuSample& gpu) {
  return gpu.max_sm_clock_mhz > 0 && gpu.sm_clock_mhz < kMinSmClockShare * gpu.max_sm_clock_mhz;
}

// NVML's reasons that come from outside the measured kernel (heat, the board's slowdown signals)
// hold the clocks down however briefly. sw_power_cap is the kernel's own draw meeting the board's
// power limit: a heavy float64 kernel on an H100 keeps it set at 1950-1980 of 1980 MHz, a steady
// state re-measuring cannot change, so it is a disturbance only with the clock under
// kMinSmClockShare.
bool held_down(const GpuSample& gpu) {
  const bool only_power_cap = std::all_of(gpu.clock_limits.begin(), gpu.clock_limits.end(),
                                          [](const std::string& r) { return r == "sw_power_cap"; });
  return gpu.clock_limits.empty() || only_power_cap ? clock_below_share(gpu) : true;
}

double disturbance(const MeasurementConditions& c) {
  const bool gpu_limited = c.gpu_after && held_down(*c.gpu_after);
  return (gpu_limited ? 1.0 : 0.0) + c.other_processes_cpu_share + c.steal_cpu_share;
}

}  // namespace

std::vector<std::string> disturbances(const MeasurementConditions& c) {
  std::vector<std::string> found;
  const double share = c.other_processes_cpu_share + c.steal_cpu_share;
  if (share > kMaxOtherCpuShare) {
    found.push_back(fmt::format(
        "other processes{} took {:.0f}% of the {} CPUs' time meanwhile (more than {:.0f}%)",
        c.steal_cpu_share > 0.01
            ? fmt::format(" and the hypervisor ({:.0f}% steal)", 100 * c.steal_cpu_share)
            : "",
        100 * share, c.online_cpus, 100 * kMaxOtherCpuShare));
  }
  if (c.gpu_after) {
    const GpuSample& gpu = *c.gpu_after;
    if (held_down(gpu) && !gpu.clock_limits.empty()) {
      found.push_back(
          fmt::format("the GPU's clocks were held down ({}; {:.0f} of {:.0f} MHz; {:.0f} °C)",
                      fmt::join(gpu.clock_limits, ", "), gpu.sm_clock_mhz, gpu.max_sm_clock_mhz,
                      gpu.temperature_c));
    } else if (held_down(gpu)) {
      found.push_back(
          fmt::format("the GPU's SM clock was {:.0f} of its {:.0f} MHz after the timing",
                      gpu.sm_clock_mhz, gpu.max_sm_clock_mhz));
    }
  }
  return found;
}

EnergyReading::EnergyReading(const EnergyObservation* energy) {
  if (energy == nullptr || energy->record == nullptr) return;
  energy_ = energy;
  if (energy->meter != nullptr) {
    try {
      window_.emplace(*energy->meter, *energy->record);
    } catch (const EnergyReadError&) {
      failed_ = true;
    }
  }
  if (energy->all_opened) energy->all_opened();
  if (window_) window_->work_starts();
}

double EnergyReading::seconds_short() const {
  return window_ ? window_->seconds_short() : 0;
}

double EnergyReading::seconds_working() const {
  return window_ ? window_->seconds_working() : 0;
}

std::optional<EnergyStatistics> EnergyReading::close(std::int64_t evaluations) {
  if (energy_ == nullptr) return std::nullopt;
  std::optional<EnergyStatistics> figure;
  if (window_ && evaluations > 0) {
    try {
      figure = window_->close(evaluations);
    } catch (const EnergyReadError&) {
      figure.reset();
    }
  } else if (!failed_ && energy_->meter == nullptr) {
    figure = EnergyStatistics{.evaluations = evaluations};  // another process meters the device
  }
  if (energy_->sum_over_processes) return energy_->sum_over_processes(figure);
  return figure;
}

namespace {

// Later repetitions repeat the first one's iteration count (Google Benchmark), so together they
// may fall short of the span the energy counter needs to resolve them: evaluations go on, untimed
// but metered, until the window spans it on every process (as many on each), or until an
// interrupt. The first round's count comes from the window's mean time an evaluation, which holds
// the timing's own overhead (ranks' agreements, a loaded host) and so may be many times too long;
// each later round's from the round before, which holds nothing but evaluations.
void fill_energy_window(PreparedRun& run, PreparedRun::Scope scope, const EnergyReading& reading,
                        const RepetitionSettings& options, std::int64_t& evaluations_run) {
  const auto agreed = [&options](double value) {
    return options.max_over_processes ? options.max_over_processes(value) : value;
  };
  // What a process that was interrupted brings to the agreement: more than any shortfall.
  constexpr double kInterrupted = std::numeric_limits<double>::max();
  if (evaluations_run <= 0) return;
  double per_evaluation_s = reading.seconds_working() / static_cast<double>(evaluations_run);
  for (;;) {
    const double short_s = agreed(interrupt_requested() ? kInterrupted : reading.seconds_short());
    if (short_s <= 0 || short_s == kInterrupted) return;
    const double wanted = per_evaluation_s > 0 ? std::ceil(1.1 * short_s / per_evaluation_s) : 1;
    const auto evaluations = static_cast<std::int64_t>(std::max(1.0, agreed(wanted)));
    const SteadyClock::time_point round_start = SteadyClock::now();
    for (std::int64_t e = 0; e < evaluations; ++e) run.evaluate(scope);
    per_evaluation_s = seconds_since(round_start) / static_cast<double>(evaluations);
    evaluations_run += evaluations;
  }
}

}  // namespace

Timings time_repetitions(PreparedRun& run, PreparedRun::Scope scope, std::size_t n,
                         const RepetitionSettings& options, const GpuObservation* gpu,
                         const EnergyObservation* energy) {
  std::optional<Timings> kept;
  double kept_disturbance = 0;
  for (int attempt = 1; attempt <= std::max(1, options.max_attempts); ++attempt) {
    const bool sample_gpu = gpu != nullptr && gpu->sample_gpu;
    const std::optional<GpuSample> gpu_before =
        sample_gpu ? gpu->sample_gpu() : std::optional<GpuSample>{};
    EnergyReading reading(energy);
    const std::optional<CpuActivity> before = sample_cpu_activity();
    std::int64_t evaluations_run = 0;
    Timings timings = time_once(run, scope, n, options, &evaluations_run);
    fill_energy_window(run, scope, reading, options, evaluations_run);
    std::optional<CpuActivity> after = sample_cpu_activity();
    timings.total.energy = timings.kernel.energy = reading.close(evaluations_run);
    if (options.job_cpu_seconds_on_host) {  // every process calls it, sampled or not
      const double own = before && after ? after->own_seconds - before->own_seconds : 0;
      const double job = options.job_cpu_seconds_on_host(own);
      if (before && after) after->own_seconds = before->own_seconds + job;
    }
    std::optional<MeasurementConditions> conditions;
    if (before && after) {
      conditions = conditions_between(*before, *after);
      if (gpu != nullptr) {
        conditions->gpu_before = gpu_before;
        if (sample_gpu) conditions->gpu_after = gpu->sample_gpu();
        if (!sample_gpu) conditions->gpu_unavailable_reason = gpu->unavailable_reason;
      }
      conditions->disturbances = disturbances(*conditions);
    }
    timings.total.conditions = timings.kernel.conditions = conditions;
    if (timings.communication) timings.communication->conditions = conditions;
    if (timings.tree_build) timings.tree_build->conditions = conditions;
    // The least disturbed attempt is kept (one whose conditions could not be read counts as the
    // most disturbed); decomposed, by its most disturbed process, so that all keep the same one.
    double attempt_disturbance =
        conditions ? disturbance(*conditions) : std::numeric_limits<double>::infinity();
    if (options.max_over_processes) {
      attempt_disturbance = options.max_over_processes(attempt_disturbance);
    }
    if (!kept || std::isinf(kept_disturbance) || attempt_disturbance < kept_disturbance) {
      kept = std::move(timings);
      kept_disturbance = attempt_disturbance;
    }
    for (TimingStatistics* stats : {&kept->total, &kept->kernel}) {
      if (stats->conditions) stats->conditions->attempts = attempt;
    }
    for (std::optional<TimingStatistics>* part : {&kept->communication, &kept->tree_build}) {
      if (*part && (*part)->conditions) (*part)->conditions->attempts = attempt;
    }
    bool again = kept->total.conditions && !kept->total.conditions->disturbances.empty() &&
                 !interrupt_requested();
    // Decomposed, every process times again when any was disturbed: they evaluate together.
    if (options.max_over_processes) again = options.max_over_processes(again ? 1 : 0) > 0;
    if (!again) break;
  }
  return *kept;
}

std::atomic<bool>& interrupt_requested() {
  static std::atomic<bool> requested{false};
  return requested;
}

benchmark::internal::Benchmark* register_evaluation(EvaluationBenchmark evaluation) {
  const std::string name = evaluation.name;  // `evaluation` moves into the benchmark below
  return benchmark::RegisterBenchmark(
             name.c_str(),
             [evaluation = std::move(evaluation)](benchmark::State& state) {
               PreparedRun* run = nullptr;
               try {
                 run = &evaluation.run();
               } catch (const std::exception& e) {
                 state.SkipWithError(e.what());
                 return;
               }
               double kernel_seconds = 0, communication_seconds = 0, build_seconds = 0;
               for (auto _ : state) {
                 if (interrupt_requested()) {
                   state.SkipWithError("interrupted");
                   break;
                 }
                 const PreparedRun::Seconds seconds = run->evaluate(evaluation.scope);
                 if (evaluation.evaluations_run != nullptr) ++*evaluation.evaluations_run;
                 state.SetIterationTime(seconds.total);
                 kernel_seconds += seconds.kernel;
                 communication_seconds += seconds.communication;
                 build_seconds += seconds.tree_build;
               }
               if (evaluation.scope == PreparedRun::Scope::end_to_end ||
                   communication_seconds > 0) {
                 state.counters[kKernelSecondsCounter] =
                     benchmark::Counter(kernel_seconds, benchmark::Counter::kAvgIterations);
               }
               if (communication_seconds > 0) {
                 state.counters[kCommunicationSecondsCounter] =
                     benchmark::Counter(communication_seconds, benchmark::Counter::kAvgIterations);
               }
               if (build_seconds > 0) {
                 state.counters[kTreeBuildSecondsCounter] =
                     benchmark::Counter(build_seconds, benchmark::Counter::kAvgIterations);
               }
               const double n = static_cast<double>(evaluation.n);
               const auto iterations = static_cast<double>(state.iterations());
               if (evaluation.algorithm == Algorithm::all_pairs) {
                 state.SetItemsProcessed(static_cast<std::int64_t>(n * n * iterations));
                 // A rate counter: Google Benchmark adds the SI prefix and "/s" ("88.1G/s").
                 state.counters["flops_at_20"] =
                     benchmark::Counter(kConventionalFlopsPerInteraction * n * n * iterations,
                                        benchmark::Counter::kIsRate);
               } else {
                 state.SetItemsProcessed(static_cast<std::int64_t>(n * iterations));
               }
               if (evaluation.annotate) evaluation.annotate(state, *run);
             })
      ->UseManualTime()
      ->Unit(benchmark::kSecond);
}

}  // namespace nbody
