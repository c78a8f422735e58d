#include "nbody/profiler/gpu_counter_figures.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <string>

namespace nbody::profiler {
namespace {

// FP32 on sm_70 and later issues one warp instruction per SMSP per cycle, four SMSPs per SM: the
// FFMA rate is the issue rate, so the measured FMA ceiling doubles as the measured issue rate.
constexpr double kSubPartitionsPerSm = 4;
constexpr double kWarpSize = 32;

double instruction_count(const std::map<std::string, double>& metrics, const char* name) {
  return find_metric(metrics, name).value_or(0.0);
}

// The kernel's time, the work it is credited with and did, and its floating-point instructions:
// what every figure below is made of.
struct KernelWork {
  KernelWork(const std::map<std::string, double>& metrics, double kernel_seconds,
             double interactions, double evaluated_pairs)
      : seconds(kernel_seconds),
        credited(interactions),
        pairs(evaluated_pairs),
        ffma(instruction_count(metrics, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum")),
        fadd(instruction_count(metrics, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum")),
        fmul(instruction_count(metrics, "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum")),
        dfma(instruction_count(metrics, "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum")),
        dadd(instruction_count(metrics, "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum")),
        dmul(instruction_count(metrics, "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum")) {}

  double flops_fp32() const { return fadd + fmul + 2 * ffma; }
  double flops_fp64() const { return dadd + dmul + 2 * dfma; }
  double counted_flops() const { return flops_fp32() + flops_fp64(); }
  double fp32_instructions() const { return ffma + fadd + fmul; }
  double fp64_instructions() const { return dfma + dadd + dmul; }

  double seconds;
  double credited;                            // N^2 interactions
  double pairs;                               // the pairs the kernel evaluated
  double ffma, fadd, fmul, dfma, dadd, dmul;  // thread instructions, predicated on
};

// A measured ceiling, where there is one above zero.
std::optional<double> positive_ceiling(const Ceilings& ceilings, const char* name) {
  const std::optional<double> value = ceilings.value(name);
  if (value && *value > 0) return value;
  return std::nullopt;
}

// Counted flops, their rates, and the rate against the interaction's mix and the peaks.
void add_flop_figures(DerivedFigures& d, const KernelWork& w, const ImplementationInfo& info,
                      const Ceilings& ceilings) {
  const double counted = w.counted_flops();
  const double flop_rate = counted / w.seconds;
  d.counted_flops = counted;
  d.counted_flops_fp32 = w.flops_fp32();
  d.counted_flops_fp64 = w.flops_fp64();
  d.counted_flops_per_interaction = counted / w.credited;
  d.counted_flops_per_pair = counted / w.pairs;
  d.interactions_per_second = w.credited / w.seconds;
  d.gflops_counted = flop_rate * 1e-9;
  d.gflops_at_20 = 20 * w.credited / w.seconds * 1e-9;
  // Against the interaction's instruction mix alone: what is left once every instruction the
  // interaction needs has its issue slot (float32 only; the mix is the float32 one).
  if (info.precision == Precision::f32) {
    if (const auto mix = positive_ceiling(ceilings, kGpuInteractionMixCeiling)) {
      d.fraction_of_interaction_mix_ceiling = w.credited / w.seconds / *mix;
    }
  }
  const char* peak_name =
      info.precision == Precision::f64 ? kGpuFp64FlopsCeiling : kGpuFp32FlopsCeiling;
  if (const auto peak = positive_ceiling(ceilings, peak_name)) {
    d.fraction_of_measured_peak = flop_rate / *peak;
  }
  if (const auto peak = ceilings.datasheet_value(peak_name); peak && *peak > 0) {
    d.fraction_of_datasheet_peak = flop_rate / *peak;
  }
}

// Pipes: FP32 thread instructions against the measured FFMA rate, XU (MUFU) against rsqrt.
void add_pipe_figures(DerivedFigures& d, const KernelWork& w,
                      const std::map<std::string, double>& metrics, const Ceilings& ceilings) {
  d.fp32_instructions_per_pair = w.fp32_instructions() / w.pairs;
  if (const auto fp32_peak = positive_ceiling(ceilings, kGpuFp32FlopsCeiling)) {
    d.fp32_pipe_fraction_of_measured = w.fp32_instructions() / w.seconds / (*fp32_peak / 2);
  }
  // FP64 runs on its own, narrower pipe (half the FP32 rate on GH100): a bound of its own.
  if (w.fp64_instructions() > 0) {
    d.fp64_instructions_per_pair = w.fp64_instructions() / w.pairs;
    if (const auto fp64_peak = positive_ceiling(ceilings, kGpuFp64FlopsCeiling)) {
      d.fp64_pipe_fraction_of_measured = w.fp64_instructions() / w.seconds / (*fp64_peak / 2);
    }
  }
  if (const auto fma_pipe = find_metric(metrics, "smsp__inst_executed_pipe_fma.sum")) {
    d.fma_pipe_instructions_per_pair = *fma_pipe * kWarpSize / w.pairs;
  }
  if (const auto xu = find_metric(metrics, "smsp__inst_executed_pipe_xu.sum")) {
    const double xu_threads = *xu * kWarpSize;
    d.xu_instructions_per_pair = xu_threads / w.pairs;
    if (const auto rsqrt_peak = positive_ceiling(ceilings, kGpuRsqrtCeiling)) {
      d.xu_pipe_fraction_of_measured_mufu = xu_threads / w.seconds / *rsqrt_peak;
    }
  }
}

// Memory: DRAM and L2 throughput, arithmetic intensity for a roofline; and occupancy.
void add_memory_figures(DerivedFigures& d, const KernelWork& w,
                        const std::map<std::string, double>& metrics, const Ceilings& ceilings) {
  const auto read = find_metric(metrics, "dram__bytes_read.sum");
  const auto written = find_metric(metrics, "dram__bytes_write.sum");
  if (read || written) {
    const double bytes = read.value_or(0) + written.value_or(0);
    d.dram_bytes = bytes;
    d.dram_bytes_per_second = bytes / w.seconds;
    if (const auto bw = positive_ceiling(ceilings, kGpuMemoryBandwidthCeiling)) {
      d.dram_fraction_of_measured_bandwidth = bytes / w.seconds / *bw;
    }
    if (const auto bw = ceilings.datasheet_value(kGpuMemoryBandwidthCeiling); bw && *bw > 0) {
      d.dram_fraction_of_datasheet_bandwidth = bytes / w.seconds / *bw;
    }
    if (bytes > 0) d.arithmetic_intensity_flops_per_dram_byte = w.counted_flops() / bytes;
  }
  if (const auto l2 = find_metric(metrics, "lts__t_bytes.sum")) {
    d.l2_bytes_per_second = *l2 / w.seconds;
  }
  if (const auto occupancy =
          find_metric(metrics, "sm__warps_active.avg.pct_of_peak_sustained_active")) {
    d.achieved_occupancy = *occupancy / 100;
  }
}

// The interactions per second each pipe allows at the kernel's instructions per interaction (the
// issue slots at the measured FFMA rate and at the kernel's clock, the FP64 pipe, MUFU) and the
// tightest of them, the kernel's instruction bound; nothing without an instruction count.
void add_instruction_bounds(DerivedFigures& d, const KernelWork& w,
                            const std::map<std::string, double>& metrics,
                            const Ceilings& ceilings) {
  const auto warp_instructions = find_metric(metrics, "sm__inst_executed.sum");
  if (!warp_instructions) return;
  const double thread_instructions = *warp_instructions * kWarpSize;
  const double per_interaction = thread_instructions / w.credited;
  d.instructions_per_pair = thread_instructions / w.pairs;
  d.instructions_per_interaction = per_interaction;
  double bound = std::numeric_limits<double>::infinity();
  const auto fp32_peak = positive_ceiling(ceilings, kGpuFp32FlopsCeiling);
  if (fp32_peak && per_interaction > 0) {
    const double issue_bound = *fp32_peak / 2 / per_interaction;
    d.issue_bound_interactions_per_second = issue_bound;
    bound = std::min(bound, issue_bound);
  }
  const auto clock = find_metric(metrics, "smsp__cycles_elapsed.avg.per_second");
  const auto sm_count = find_metric(metrics, "sm_count");
  if (clock && sm_count && per_interaction > 0) {
    d.issue_bound_at_kernel_clock_interactions_per_second =
        *sm_count * kSubPartitionsPerSm * kWarpSize * *clock / per_interaction;
  }
  const auto fp64_peak = positive_ceiling(ceilings, kGpuFp64FlopsCeiling);
  if (w.fp64_instructions() > 0 && fp64_peak) {
    const double fp64_bound = *fp64_peak / 2 / (w.fp64_instructions() / w.credited);
    d.fp64_pipe_bound_interactions_per_second = fp64_bound;
    bound = std::min(bound, fp64_bound);
  }
  const auto xu = find_metric(metrics, "smsp__inst_executed_pipe_xu.sum");
  const auto rsqrt_peak = positive_ceiling(ceilings, kGpuRsqrtCeiling);
  if (xu && rsqrt_peak) {
    const double xu_per_interaction = *xu * kWarpSize / w.credited;
    if (xu_per_interaction > 0) {
      const double mufu_bound = *rsqrt_peak / xu_per_interaction;
      d.mufu_bound_interactions_per_second = mufu_bound;
      bound = std::min(bound, mufu_bound);
    }
  }
  if (bound < std::numeric_limits<double>::infinity()) {
    d.instruction_bound_interactions_per_second = bound;
    d.fraction_of_instruction_bound = w.credited / w.seconds / bound;
  }
}

}  // namespace

DerivedFigures derive_gpu_figures(const std::map<std::string, double>& metrics,
                                  const ImplementationInfo& info, std::size_t n,
                                  const Ceilings& ceilings) {
  DerivedFigures d;
  const double credited = static_cast<double>(n) * static_cast<double>(n);
  const double pairs = static_cast<double>(pairs_evaluated(info.pairs, n));
  d.interactions_credited = credited;
  d.pairs_evaluated = pairs;
  const std::optional<double> time_ns = find_metric(metrics, "gpu__time_duration.sum");
  if (!time_ns || *time_ns <= 0 || pairs <= 0) return d;
  const KernelWork work(metrics, *time_ns * 1e-9, credited, pairs);
  d.kernel_seconds = work.seconds;
  add_flop_figures(d, work, info, ceilings);
  add_pipe_figures(d, work, metrics, ceilings);
  add_memory_figures(d, work, metrics, ceilings);
  add_instruction_bounds(d, work, metrics, ceilings);
  return d;
}

}  // namespace nbody::profiler
