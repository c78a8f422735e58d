#pragma once
// Hardware counters and the figures derived from them (FAIRNESS.md rules 4 and 6). The runner
// reads counters through a CounterSource (cpu/ and gpu/ each have one) in a separate pass after
// timing, since profiling perturbs time.
#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "nbody/ceilings.hpp"
#include "nbody/registry.hpp"

namespace nbody {

// Every figure a counter source can derive; each is present only where its counters and
// ceilings were. X(name) once per figure, so the struct and its JSON cannot drift apart.
#define NBODY_DERIVED_FIGURES(X)                                                        \
  X(interactions_credited) /* N^2 */                                                    \
  X(pairs_evaluated)       /* N^2, or N(N-1)/2 for symmetric kernels */                 \
  X(kernel_seconds)        /* of the profiled evaluation */                             \
  X(interactions_per_second)                                                            \
  X(counted_flops) /* GPU: FADD + FMUL + 2 FFMA (and FP64) */                           \
  X(counted_flops_fp32)                                                                 \
  X(counted_flops_fp64)                                                                 \
  X(counted_flops_per_interaction)                                                      \
  X(counted_flops_per_pair)                                                             \
  X(gflops_counted)                                                                     \
  X(gflops_at_20)              /* the 20-flop convention */                             \
  X(fraction_of_measured_peak) /* counted FLOP/s over the measured FMA ceiling */       \
  X(fraction_of_datasheet_peak)                                                         \
  X(fraction_of_machine_peak)            /* CPU: of the widest ISA's ceiling */         \
  X(fraction_of_interaction_mix_ceiling) /* GPU float32: of gpu.fp32_interaction_mix */ \
  X(fp_instructions_per_pair)            /* CPU: arithmetic vector instructions */      \
  X(rsqrt_per_pair)                                                                     \
  X(sqrt_per_pair)                                                                      \
  X(div_per_pair)                                                                       \
  X(fp32_instructions_per_pair) /* GPU pipes */                                         \
  X(fp32_pipe_fraction_of_measured)                                                     \
  X(fp64_instructions_per_pair)                                                         \
  X(fp64_pipe_fraction_of_measured)                                                     \
  X(fma_pipe_instructions_per_pair)                                                     \
  X(xu_instructions_per_pair)                                                           \
  X(xu_pipe_fraction_of_measured_mufu)                                                  \
  X(dram_bytes) /* GPU memory */                                                        \
  X(dram_bytes_per_second)                                                              \
  X(dram_fraction_of_measured_bandwidth)                                                \
  X(dram_fraction_of_datasheet_bandwidth)                                               \
  X(arithmetic_intensity_flops_per_dram_byte)                                           \
  X(l2_bytes_per_second)                                                                \
  X(achieved_occupancy)                                                                 \
  X(instructions_per_pair) /* the kernel's own instruction bound */                     \
  X(instructions_per_interaction)                                                       \
  X(issue_bound_interactions_per_second)                                                \
  X(issue_bound_at_kernel_clock_interactions_per_second)                                \
  X(fp64_pipe_bound_interactions_per_second)                                            \
  X(mufu_bound_interactions_per_second)                                                 \
  X(instruction_bound_interactions_per_second)                                          \
  X(fraction_of_instruction_bound)

struct DerivedFigures {
#define NBODY_DECLARE_FIGURE(name) std::optional<double> name;
  NBODY_DERIVED_FIGURES(NBODY_DECLARE_FIGURE)
#undef NBODY_DECLARE_FIGURE
};

struct CounterReadout {
  std::string source;                     // e.g. "cupti-range-profiler", "disassembly"
  std::string unavailable_reason;         // empty when counters were read
  std::map<std::string, double> metrics;  // raw counter name -> value, as the source names it
  DerivedFigures derived;
  bool available() const { return unavailable_reason.empty(); }
};

// The raw counter `name` of `metrics`, where the source read it.
std::optional<double> find_metric(const std::map<std::string, double>& metrics,
                                  const std::string& name);

void to_json(nlohmann::json& j, const DerivedFigures& v);
void from_json(const nlohmann::json& j, DerivedFigures& v);
// {"source", "available", "unavailable_reason" (when unavailable), "metrics", "derived"}
void to_json(nlohmann::json& j, const CounterReadout& v);
void from_json(const nlohmann::json& j, CounterReadout& v);

class CounterSource {
 public:
  virtual ~CounterSource() = default;
  virtual bool applies_to(const ImplementationInfo& info) const = 0;
  // Reads counters over one kernel-scope evaluation of `run` on `n` bodies and derives figures
  // against `ceilings`. Never throws: a failure (no permission, no library, MIG, ...) becomes
  // unavailable_reason.
  virtual CounterReadout read(PreparedRun& run, const ImplementationInfo& info, std::size_t n,
                              const Ceilings& ceilings) = 0;
};

}  // namespace nbody
