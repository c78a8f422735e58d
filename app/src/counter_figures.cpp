// Figures derived from raw counters and the measured ceilings (nbody/counter_figures.hpp).
#include <algorithm>
#include <limits>
#include <optional>

#include "nbody/app/counter_figures.hpp"
#include "nbody/ceilings.hpp"

namespace nbody {
namespace {

std::optional<double> metric(const std::map<std::string, double>& metrics, const char* name) {
  const auto it = metrics.find(name);
  if (it == metrics.end()) return std::nullopt;
  return it->second;
}

double metric_or_zero(const std::map<std::string, double>& metrics, const char* name) {
  return metric(metrics, name).value_or(0.0);
}

// FP32 on sm_70 and later issues one warp instruction per SMSP per cycle, four SMSPs per SM: the
// FFMA rate is the issue rate, so the measured FMA ceiling doubles as the measured issue rate.
constexpr double kSubPartitionsPerSm = 4;
constexpr double kWarpSize = 32;

}  // namespace

double pairs_evaluated(const ImplementationInfo& info, std::size_t n) {
  return static_cast<double>(pairs_evaluated(info.pairs, n));
}

std::map<std::string, double> derive_gpu_figures(const std::map<std::string, double>& metrics,
                                                 const ImplementationInfo& info, std::size_t n,
                                                 const nlohmann::json& ceilings) {
  std::map<std::string, double> d;
  const double credited = static_cast<double>(n) * static_cast<double>(n);
  const double pairs = pairs_evaluated(info, n);
  d["interactions_credited"] = credited;
  d["pairs_evaluated"] = pairs;
  const std::optional<double> time_ns = metric(metrics, "gpu__time_duration.sum");
  if (!time_ns || *time_ns <= 0 || pairs <= 0) return d;
  const double seconds = *time_ns * 1e-9;
  d["kernel_seconds"] = seconds;

  const double ffma =
      metric_or_zero(metrics, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum");
  const double fadd =
      metric_or_zero(metrics, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum");
  const double fmul =
      metric_or_zero(metrics, "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum");
  const double dfma =
      metric_or_zero(metrics, "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum");
  const double dadd =
      metric_or_zero(metrics, "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum");
  const double dmul =
      metric_or_zero(metrics, "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum");
  const double flops_fp32 = fadd + fmul + 2 * ffma;
  const double flops_fp64 = dadd + dmul + 2 * dfma;
  const double counted = flops_fp32 + flops_fp64;
  const double flop_rate = counted / seconds;
  d["counted_flops"] = counted;
  d["counted_flops_fp32"] = flops_fp32;
  d["counted_flops_fp64"] = flops_fp64;
  d["counted_flops_per_interaction"] = counted / credited;
  d["counted_flops_per_pair"] = counted / pairs;
  d["interactions_per_second"] = credited / seconds;
  d["gflops_counted"] = flop_rate * 1e-9;
  d["gflops_at_20"] = 20 * credited / seconds * 1e-9;
  // Against the interaction's instruction mix alone: what is left once every instruction the
  // interaction needs has its issue slot (float32 only; the mix is the float32 one).
  if (info.precision == Precision::f32) {
    if (const auto mix = ceiling_value(ceilings, kGpuInteractionMixCeiling); mix && *mix > 0) {
      d["fraction_of_interaction_mix_ceiling"] = credited / seconds / *mix;
    }
  }

  const char* peak_name =
      info.precision == Precision::f64 ? kGpuFp64FlopsCeiling : kGpuFp32FlopsCeiling;
  if (const auto peak = ceiling_value(ceilings, peak_name); peak && *peak > 0) {
    d["fraction_of_measured_peak"] = flop_rate / *peak;
  }
  if (const auto peak = ceiling_datasheet_value(ceilings, peak_name); peak && *peak > 0) {
    d["fraction_of_datasheet_peak"] = flop_rate / *peak;
  }

  // Pipes: FP32 thread instructions against the measured FFMA rate, XU (MUFU) against rsqrt.
  const double fp32_instructions = ffma + fadd + fmul;
  d["fp32_instructions_per_pair"] = fp32_instructions / pairs;
  const std::optional<double> fp32_peak = ceiling_value(ceilings, kGpuFp32FlopsCeiling);
  if (fp32_peak && *fp32_peak > 0) {
    d["fp32_pipe_fraction_of_measured"] = fp32_instructions / seconds / (*fp32_peak / 2);
  }
  // FP64 runs on its own, narrower pipe (half the FP32 rate on GH100): a bound of its own.
  const double fp64_instructions = dfma + dadd + dmul;
  const std::optional<double> fp64_peak = ceiling_value(ceilings, kGpuFp64FlopsCeiling);
  if (fp64_instructions > 0) {
    d["fp64_instructions_per_pair"] = fp64_instructions / pairs;
    if (fp64_peak && *fp64_peak > 0) {
      d["fp64_pipe_fraction_of_measured"] = fp64_instructions / seconds / (*fp64_peak / 2);
    }
  }
  if (const auto fma_pipe = metric(metrics, "smsp__inst_executed_pipe_fma.sum")) {
    d["fma_pipe_instructions_per_pair"] = *fma_pipe * kWarpSize / pairs;
  }
  const std::optional<double> rsqrt_peak = ceiling_value(ceilings, kGpuRsqrtCeiling);
  std::optional<double> xu_per_interaction;
  if (const auto xu = metric(metrics, "smsp__inst_executed_pipe_xu.sum")) {
    const double xu_threads = *xu * kWarpSize;
    d["xu_instructions_per_pair"] = xu_threads / pairs;
    xu_per_interaction = xu_threads / credited;
    if (rsqrt_peak && *rsqrt_peak > 0) {
      d["xu_pipe_fraction_of_measured_mufu"] = xu_threads / seconds / *rsqrt_peak;
    }
  }

  // Memory: DRAM and L2 throughput, arithmetic intensity for a roofline.
  const auto read = metric(metrics, "dram__bytes_read.sum");
  const auto written = metric(metrics, "dram__bytes_write.sum");
  if (read || written) {
    const double bytes = read.value_or(0) + written.value_or(0);
    d["dram_bytes"] = bytes;
    d["dram_bytes_per_second"] = bytes / seconds;
    if (const auto bw = ceiling_value(ceilings, kGpuMemoryBandwidthCeiling); bw && *bw > 0) {
      d["dram_fraction_of_measured_bandwidth"] = bytes / seconds / *bw;
    }
    if (const auto bw = ceiling_datasheet_value(ceilings, kGpuMemoryBandwidthCeiling);
        bw && *bw > 0) {
      d["dram_fraction_of_datasheet_bandwidth"] = bytes / seconds / *bw;
    }
    if (bytes > 0) d["arithmetic_intensity_flops_per_dram_byte"] = counted / bytes;
  }
  if (const auto l2 = metric(metrics, "lts__t_bytes.sum")) {
    d["l2_bytes_per_second"] = *l2 / seconds;
  }
  if (const auto occupancy = metric(metrics, "sm__warps_active.avg.pct_of_peak_sustained_active")) {
    d["achieved_occupancy"] = *occupancy / 100;
  }

  // Instructions per interaction and the kernel's own instruction-bound limit.
  if (const auto warp_instructions = metric(metrics, "sm__inst_executed.sum")) {
    const double thread_instructions = *warp_instructions * kWarpSize;
    const double per_interaction = thread_instructions / credited;
    d["instructions_per_pair"] = thread_instructions / pairs;
    d["instructions_per_interaction"] = per_interaction;
    double bound = std::numeric_limits<double>::infinity();
    if (fp32_peak && *fp32_peak > 0 && per_interaction > 0) {
      const double issue_bound = *fp32_peak / 2 / per_interaction;
      d["issue_bound_interactions_per_second"] = issue_bound;
      bound = std::min(bound, issue_bound);
    }
    const auto clock = metric(metrics, "smsp__cycles_elapsed.avg.per_second");
    const auto sm_count = metric(metrics, "sm_count");
    if (clock && sm_count && per_interaction > 0) {
      d["issue_bound_at_kernel_clock_interactions_per_second"] =
          *sm_count * kSubPartitionsPerSm * kWarpSize * *clock / per_interaction;
    }
    if (fp64_instructions > 0 && fp64_peak && *fp64_peak > 0) {
      const double fp64_bound = *fp64_peak / 2 / (fp64_instructions / credited);
      d["fp64_pipe_bound_interactions_per_second"] = fp64_bound;
      bound = std::min(bound, fp64_bound);
    }
    if (xu_per_interaction && *xu_per_interaction > 0 && rsqrt_peak && *rsqrt_peak > 0) {
      const double mufu_bound = *rsqrt_peak / *xu_per_interaction;
      d["mufu_bound_interactions_per_second"] = mufu_bound;
      bound = std::min(bound, mufu_bound);
    }
    if (bound < std::numeric_limits<double>::infinity()) {
      d["instruction_bound_interactions_per_second"] = bound;
      d["fraction_of_instruction_bound"] = credited / seconds / bound;
    }
  }
  return d;
}

std::map<std::string, double> derive_cpu_figures(const std::map<std::string, double>& metrics,
                                                 const ImplementationInfo& info, std::size_t n,
                                                 const nlohmann::json& ceilings) {
  std::map<std::string, double> d;
  const double credited = static_cast<double>(n) * static_cast<double>(n);
  const double pairs = pairs_evaluated(info, n);
  d["interactions_credited"] = credited;
  d["pairs_evaluated"] = pairs;
  const double per_iteration = metric_or_zero(metrics, "loop.interactions");
  if (per_iteration <= 0 || pairs <= 0) return d;
  const double pairs_per_interaction = pairs / credited;
  const auto per_pair = [&](const char* name) {
    return metric_or_zero(metrics, name) / per_iteration;
  };
  const double flops_per_pair = per_pair("loop.flops");
  const double fp_instructions_per_pair = per_pair("loop.fp_instructions");
  d["instructions_per_pair"] = per_pair("loop.instructions");
  d["instructions_per_interaction"] = per_pair("loop.instructions") * pairs_per_interaction;
  d["fp_instructions_per_pair"] = fp_instructions_per_pair;
  d["counted_flops_per_pair"] = flops_per_pair;
  d["counted_flops_per_interaction"] = flops_per_pair * pairs_per_interaction;
  d["rsqrt_per_pair"] = per_pair("loop.rsqrt");
  d["sqrt_per_pair"] = per_pair("loop.sqrt");
  d["div_per_pair"] = per_pair("loop.div");

  // The ceiling of the loop's own vector width, scaled to the threads the kernel used.
  const double bits = metric_or_zero(metrics, "loop.vector_bits");
  const std::string isa = bits >= 512 ? "avx512f" : bits >= 256 ? "avx2" : "sse4.2";
  const double threads = std::max(1.0, metric_or_zero(metrics, "threads"));
  const auto scaled_peak = [&](const std::string& which,
                               const char* field) -> std::optional<double> {
    const nlohmann::json* entry =
        find_ceiling(ceilings, cpu_fp32_flops_ceiling(which, threads > 1));
    if (entry == nullptr || !entry->contains(field) || !(*entry)[field].is_number()) {
      return std::nullopt;
    }
    double scale = 1;
    if (threads > 1 && entry->contains("threads") && (*entry)["threads"].is_number()) {
      scale = std::min(1.0, threads / (*entry)["threads"].get<double>());
    }
    return (*entry)[field].get<double>() * scale;
  };
  const auto seconds = metric(metrics, "kernel_seconds");
  const bool timed = seconds && *seconds > 0;
  if (timed) {
    const double flop_rate = flops_per_pair * pairs / *seconds;
    d["kernel_seconds"] = *seconds;
    d["interactions_per_second"] = credited / *seconds;
    d["gflops_counted"] = flop_rate * 1e-9;
    d["gflops_at_20"] = 20 * credited / *seconds * 1e-9;
    if (const auto peak = scaled_peak(isa, "value"); peak && *peak > 0) {
      d["fraction_of_measured_peak"] = flop_rate / *peak;
    }
    // Against the widest ISA this machine has: what the loop leaves unused.
    for (const char* widest : {"avx512f", "avx2", "sse4.2"}) {
      if (const auto peak = scaled_peak(widest, "value"); peak && *peak > 0) {
        d["fraction_of_machine_peak"] = flop_rate / *peak;
        break;
      }
    }
  }
  // Instruction bound: every arithmetic instruction takes one slot of the FMA pipes, whose
  // measured rate (vector instructions per second) is the ceiling's.
  if (const auto rate = scaled_peak(isa, "fp_instructions_per_second");
      rate && *rate > 0 && fp_instructions_per_pair > 0) {
    const double bound = *rate / fp_instructions_per_pair / pairs_per_interaction;
    d["instruction_bound_interactions_per_second"] = bound;
    if (timed) d["fraction_of_instruction_bound"] = credited / *seconds / bound;
  }
  return d;
}

}  // namespace nbody
