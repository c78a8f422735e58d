#include <string>

#include <fmt/core.h>

#include "nbody/profiler/cupti.hpp"
#include "nbody/profiler/gpu_counter_figures.hpp"

namespace nbody::profiler {

std::vector<std::string> kernel_metrics() {
  return {
      "gpu__time_duration.sum",
      "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
      "smsp__inst_executed_pipe_xu.sum",
      "smsp__inst_executed_pipe_fma.sum",
      "dram__bytes_read.sum",
      "dram__bytes_write.sum",
      "lts__t_bytes.sum",
      "sm__throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__warps_active.avg.pct_of_peak_sustained_active",
      "smsp__cycles_elapsed.avg.per_second",
      "sm__inst_executed.sum",
      "smsp__issue_active.avg.pct_of_peak_sustained_active",
  };
}

std::map<std::string, double> combine_ranges(const std::vector<RangeValues>& ranges) {
  constexpr const char* kTime = "gpu__time_duration.sum";
  std::map<std::string, double> sums, weighted;
  double total_time = 0;
  for (const RangeValues& range : ranges) {
    const auto time = range.values.find(kTime);
    const double weight = time != range.values.end() ? time->second : 1.0;
    total_time += weight;
    for (const auto& [name, value] : range.values) {
      if (name.ends_with(".sum")) {
        sums[name] += value;
      } else {
        weighted[name] += value * weight;
      }
    }
  }
  for (auto& [name, value] : weighted) sums[name] = total_time > 0 ? value / total_time : 0.0;
  return sums;
}

namespace {

class CuptiCounterSource final : public CounterSource {
 public:
  bool applies_to(const ImplementationInfo& info) const override {
    return info.device == DeviceKind::gpu;
  }

  CounterReadout read(PreparedRun& run, const ImplementationInfo& info, std::size_t n,
                      const Ceilings& ceilings) override {
    CounterReadout readout;
    readout.source = "cupti-range-profiler";
    try {
      const std::map<std::string, std::string> details = run.details();
      // Kernel replay runs each kernel of the profiled GPU again, NCCL's all-gather among them,
      // whose other GPUs' halves ran once: the replay would wait for them for ever.
      if (const auto it = details.find("gpu_count"); it != details.end() && it->second != "1") {
        readout.unavailable_reason =
            "not read on several GPUs: kernel replay would run NCCL's all-gather again on one GPU "
            "alone, waiting for the others (read them with the formulation on one GPU)";
        return readout;
      }
      int ordinal = 0;
      double sm_count = 0;
      if (const auto it = details.find("device_ordinal"); it != details.end()) {
        ordinal = std::stoi(it->second);
      }
      if (const auto it = details.find("sm_count"); it != details.end()) {
        sm_count = std::stod(it->second);
      }
      const KernelProfile profile = profile_kernels(
          ordinal, [&] { run.evaluate(PreparedRun::Scope::kernel); }, kernel_metrics());
      if (!profile.unavailable_reason.empty()) {
        readout.unavailable_reason = profile.unavailable_reason;
        return readout;
      }
      readout.source = fmt::format(
          "cupti-range-profiler ({}, kernel replay, {} passes, {} kernel launch{})", profile.chip,
          profile.passes, profile.ranges.size(), profile.ranges.size() == 1 ? "" : "es");
      readout.metrics = combine_ranges(profile.ranges);
      readout.metrics["kernel_launches"] = static_cast<double>(profile.ranges.size());
      if (sm_count > 0) readout.metrics["sm_count"] = sm_count;
      readout.derived = derive_gpu_figures(readout.metrics, info, n, ceilings);
    } catch (const std::exception& error) {
      readout.unavailable_reason = std::string("CUPTI counters failed: ") + error.what();
    }
    return readout;
  }
};

}  // namespace

std::unique_ptr<CounterSource> make_cupti_counter_source() {
  return std::make_unique<CuptiCounterSource>();
}

}  // namespace nbody::profiler
