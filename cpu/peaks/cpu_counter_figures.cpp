#include "nbody/cpu_peaks/cpu_counter_figures.hpp"

#include <algorithm>
#include <optional>
#include <span>
#include <string>

#include "nbody/isas.hpp"

namespace nbody::peaks {

DerivedFigures derive_cpu_figures(const std::map<std::string, double>& metrics,
                                  const ImplementationInfo& info, std::size_t n,
                                  const Ceilings& ceilings) {
  DerivedFigures d;
  const double credited = static_cast<double>(n) * static_cast<double>(n);
  const double pairs = static_cast<double>(pairs_evaluated(info.pairs, n));
  d.interactions_credited = credited;
  d.pairs_evaluated = pairs;
  const double per_iteration = find_metric(metrics, "loop.interactions").value_or(0.0);
  if (per_iteration <= 0 || pairs <= 0) return d;
  const double pairs_per_interaction = pairs / credited;
  const auto per_pair = [&](const char* name) {
    return find_metric(metrics, name).value_or(0.0) / per_iteration;
  };
  const double flops_per_pair = per_pair("loop.flops");
  const double fp_instructions_per_pair = per_pair("loop.fp_instructions");
  d.instructions_per_pair = per_pair("loop.instructions");
  d.instructions_per_interaction = per_pair("loop.instructions") * pairs_per_interaction;
  d.fp_instructions_per_pair = fp_instructions_per_pair;
  d.counted_flops_per_pair = flops_per_pair;
  d.counted_flops_per_interaction = flops_per_pair * pairs_per_interaction;
  d.rsqrt_per_pair = per_pair("loop.rsqrt");
  d.sqrt_per_pair = per_pair("loop.sqrt");
  d.div_per_pair = per_pair("loop.div");

  // The ceiling of the loop's own vector width and the kernel's precision (float64 FMA for a
  // float64 kernel), scaled to the threads the kernel used: the narrowest ISA of this build's list
  // that holds the loop's vectors (a scalar loop's is the first).
  const double bits = find_metric(metrics, "loop.vector_bits").value_or(0.0);
  const std::span<const IsaInfo> isas = compiled_isas();
  const auto holding = std::find_if(isas.begin(), isas.end(),
                                    [bits](const IsaInfo& i) { return i.vector_bits >= bits; });
  const std::string isa(holding != isas.end() ? holding->name : isas.back().name);
  const double threads = std::max(1.0, find_metric(metrics, "threads").value_or(0.0));
  const auto scaled_peak = [&](const std::string& which, auto field) -> std::optional<double> {
    const CeilingEntry* entry =
        ceilings.find(cpu_flops_ceiling(info.precision, which, threads > 1));
    if (entry == nullptr) return std::nullopt;
    const std::optional<double> value = field(*entry);
    if (!value) return std::nullopt;
    double scale = 1;
    if (threads > 1 && entry->threads && *entry->threads > 0) {
      scale = std::min(1.0, threads / static_cast<double>(*entry->threads));
    }
    return *value * scale;
  };
  const auto flops = [](const CeilingEntry& e) -> std::optional<double> { return e.value; };
  const auto issue_rate = [](const CeilingEntry& e) { return e.fp_instructions_per_second; };
  const auto seconds = find_metric(metrics, "kernel_seconds");
  const bool timed = seconds && *seconds > 0;
  if (timed) {
    const double flop_rate = flops_per_pair * pairs / *seconds;
    d.kernel_seconds = *seconds;
    d.interactions_per_second = credited / *seconds;
    d.gflops_counted = flop_rate * 1e-9;
    d.gflops_at_20 = 20 * credited / *seconds * 1e-9;
    if (const auto peak = scaled_peak(isa, flops); peak && *peak > 0) {
      d.fraction_of_measured_peak = flop_rate / *peak;
    }
    // Against the widest ISA this machine has (the last of the list it measured a ceiling of):
    // what the loop leaves unused.
    for (auto widest = isas.rbegin(); widest != isas.rend(); ++widest) {
      if (const auto peak = scaled_peak(std::string(widest->name), flops); peak && *peak > 0) {
        d.fraction_of_machine_peak = flop_rate / *peak;
        break;
      }
    }
  }
  // Instruction bound: every arithmetic instruction takes one slot of the FMA pipes, whose
  // measured rate (vector instructions per second) is the ceiling's.
  if (const auto rate = scaled_peak(isa, issue_rate);
      rate && *rate > 0 && fp_instructions_per_pair > 0) {
    const double bound = *rate / fp_instructions_per_pair / pairs_per_interaction;
    d.instruction_bound_interactions_per_second = bound;
    if (timed) d.fraction_of_instruction_bound = credited / *seconds / bound;
  }
  return d;
}

}  // namespace nbody::peaks
