#include "nbody/profiler/gpu_counter_figures.hpp"

#include <algorithm>
#include <limits>
#include <optional>

namespace nbody::profiler {
namespace {

// FP32 on sm_70 and later issues one warp instruction per SMSP per cycle, four SMSPs per SM: the
// FFMA rate is the issue rate, so the measured FMA ceiling doubles as the measured issue rate.
constexpr double kSubPartitionsPerSm = 4;
constexpr double kWarpSize = 32;

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
  const double seconds = *time_ns * 1e-9;
  d.kernel_seconds = seconds;

  const double ffma =
      find_metric(metrics, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum").value_or(0.0);
  const double fadd =
      find_metric(metrics, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum").value_or(0.0);
  const double fmul =
      find_metric(metrics, "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum").value_or(0.0);
  const double dfma =
      find_metric(metrics, "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum").value_or(0.0);
  const double dadd =
      find_metric(metrics, "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum").value_or(0.0);
  const double dmul =
      find_metric(metrics, "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum").value_or(0.0);
  const double flops_fp32 = fadd + fmul + 2 * ffma;
  const double flops_fp64 = dadd + dmul + 2 * dfma;
  const double counted = flops_fp32 + flops_fp64;
  const double flop_rate = counted / seconds;
  d.counted_flops = counted;
  d.counted_flops_fp32 = flops_fp32;
  d.counted_flops_fp64 = flops_fp64;
  d.counted_flops_per_interaction = counted / credited;
  d.counted_flops_per_pair = counted / pairs;
  d.interactions_per_second = credited / seconds;
  d.gflops_counted = flop_rate * 1e-9;
  d.gflops_at_20 = 20 * credited / seconds * 1e-9;
  // Against the interaction's instruction mix alone: what is left once every instruction the
  // interaction needs has its issue slot (float32 only; the mix is the float32 one).
  if (info.precision == Precision::f32) {
    if (const auto mix = ceilings.value(kGpuInteractionMixCeiling); mix && *mix > 0) {
      d.fraction_of_interaction_mix_ceiling = credited / seconds / *mix;
    }
  }

  const char* peak_name =
      info.precision == Precision::f64 ? kGpuFp64FlopsCeiling : kGpuFp32FlopsCeiling;
  if (const auto peak = ceilings.value(peak_name); peak && *peak > 0) {
    d.fraction_of_measured_peak = flop_rate / *peak;
  }
  if (const auto peak = ceilings.datasheet_value(peak_name); peak && *peak > 0) {
    d.fraction_of_datasheet_peak = flop_rate / *peak;
  }

  // Pipes: FP32 thread instructions against the measured FFMA rate, XU (MUFU) against rsqrt.
  const double fp32_instructions = ffma + fadd + fmul;
  d.fp32_instructions_per_pair = fp32_instructions / pairs;
  const std::optional<double> fp32_peak = ceilings.value(kGpuFp32FlopsCeiling);
  if (fp32_peak && *fp32_peak > 0) {
    d.fp32_pipe_fraction_of_measured = fp32_instructions / seconds / (*fp32_peak / 2);
  }
  // FP64 runs on its own, narrower pipe (half the FP32 rate on GH100): a bound of its own.
  const double fp64_instructions = dfma + dadd + dmul;
  const std::optional<double> fp64_peak = ceilings.value(kGpuFp64FlopsCeiling);
  if (fp64_instructions > 0) {
    d.fp64_instructions_per_pair = fp64_instructions / pairs;
    if (fp64_peak && *fp64_peak > 0) {
      d.fp64_pipe_fraction_of_measured = fp64_instructions / seconds / (*fp64_peak / 2);
    }
  }
  if (const auto fma_pipe = find_metric(metrics, "smsp__inst_executed_pipe_fma.sum")) {
    d.fma_pipe_instructions_per_pair = *fma_pipe * kWarpSize / pairs;
  }
  const std::optional<double> rsqrt_peak = ceilings.value(kGpuRsqrtCeiling);
  std::optional<double> xu_per_interaction;
  if (const auto xu = find_metric(metrics, "smsp__inst_executed_pipe_xu.sum")) {
    const double xu_threads = *xu * kWarpSize;
    d.xu_instructions_per_pair = xu_threads / pairs;
    xu_per_interaction = xu_threads / credited;
    if (rsqrt_peak && *rsqrt_peak > 0) {
      d.xu_pipe_fraction_of_measured_mufu = xu_threads / seconds / *rsqrt_peak;
    }
  }

  // Memory: DRAM and L2 throughput, arithmetic intensity for a roofline.
  const auto read = find_metric(metrics, "dram__bytes_read.sum");
  const auto written = find_metric(metrics, "dram__bytes_write.sum");
  if (read || written) {
    const double bytes = read.value_or(0) + written.value_or(0);
    d.dram_bytes = bytes;
    d.dram_bytes_per_second = bytes / seconds;
    if (const auto bw = ceilings.value(kGpuMemoryBandwidthCeiling); bw && *bw > 0) {
      d.dram_fraction_of_measured_bandwidth = bytes / seconds / *bw;
    }
    if (const auto bw = ceilings.datasheet_value(kGpuMemoryBandwidthCeiling); bw && *bw > 0) {
      d.dram_fraction_of_datasheet_bandwidth = bytes / seconds / *bw;
    }
    if (bytes > 0) d.arithmetic_intensity_flops_per_dram_byte = counted / bytes;
  }
  if (const auto l2 = find_metric(metrics, "lts__t_bytes.sum")) {
    d.l2_bytes_per_second = *l2 / seconds;
  }
  if (const auto occupancy =
          find_metric(metrics, "sm__warps_active.avg.pct_of_peak_sustained_active")) {
    d.achieved_occupancy = *occupancy / 100;
  }

  // Instructions per interaction and the kernel's own instruction-bound limit.
  if (const auto warp_instructions = find_metric(metrics, "sm__inst_executed.sum")) {
    const double thread_instructions = *warp_instructions * kWarpSize;
    const double per_interaction = thread_instructions / credited;
    d.instructions_per_pair = thread_instructions / pairs;
    d.instructions_per_interaction = per_interaction;
    double bound = std::numeric_limits<double>::infinity();
    if (fp32_peak && *fp32_peak > 0 && per_interaction > 0) {
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
    if (fp64_instructions > 0 && fp64_peak && *fp64_peak > 0) {
      const double fp64_bound = *fp64_peak / 2 / (fp64_instructions / credited);
      d.fp64_pipe_bound_interactions_per_second = fp64_bound;
      bound = std::min(bound, fp64_bound);
    }
    if (xu_per_interaction && *xu_per_interaction > 0 && rsqrt_peak && *rsqrt_peak > 0) {
      const double mufu_bound = *rsqrt_peak / *xu_per_interaction;
      d.mufu_bound_interactions_per_second = mufu_bound;
      bound = std::min(bound, mufu_bound);
    }
    if (bound < std::numeric_limits<double>::infinity()) {
      d.instruction_bound_interactions_per_second = bound;
      d.fraction_of_instruction_bound = credited / seconds / bound;
    }
  }
  return d;
}

}  // namespace nbody::profiler
