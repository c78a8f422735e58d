#pragma once
// The xsimd and oneTBB formulations (cpu.simd, cpu.simd.approx, cpu.tbb, cpu.tbb.symmetric): the
// run-time ISA choice, the padded layout their kernels read, and their runs, exposed so that the
// tests and the micro-benchmark (cpu/bench) can drive them with settings the registry does not
// carry (the oneTBB grain and tile).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nbody/bodies.hpp"
#include "nbody/cpu/cpu_run.hpp"
#include "nbody/cpu/simd_kernels.hpp"
#include "nbody/registry.hpp"

namespace nbody::cpu::simd {

// As ExecutionOptions::isa spells them: "sse4.2", "avx2", "avx512f".
std::string_view isa_name(Isa isa);
// For reports: "AVX-512F, 16 lanes".
std::string isa_description(Isa isa);

// The widest ISA this CPU has, chosen by xsimd's run-time dispatch; empty without SSE4.2.
std::optional<Isa> widest_isa();
// The ISA a run uses: `forced` (an ExecutionOptions::isa) or, when empty, `widest`. Throws
// UsageError for an unknown name or one wider than `widest` (or when there is no `widest`).
Isa resolve_isa(std::string_view forced, std::optional<Isa> widest);
// The same against this CPU.
Isa resolve_isa(std::string_view forced);
KernelSet kernels_for(Isa isa);

// Pair evaluations of symmetric_tile on a diagonal tile of `size` bodies with `lanes`-wide
// vectors: pairs inside one vector block from both sides, all others once.
std::uint64_t diagonal_tile_pair_evaluations(std::size_t size, std::size_t lanes);

// Float32 bodies in the padded layout the kernels read.
class PaddedBodies {
 public:
  explicit PaddedBodies(std::span<const Body<double>> bodies);
  // New positions and masses for the same count (time integration); the padding stays.
  void assign(std::span<const Body<double>> bodies);
  BodiesView view() const;
  std::size_t count() const { return count_; }
  std::size_t padded_count() const { return storage_.size(); }

 private:
  BodiesSoA<float> storage_;
  std::size_t count_;
};

// Accelerations in the same padded layout.
class PaddedAccelerations {
 public:
  explicit PaddedAccelerations(std::size_t padded_count = 0) : storage_(padded_count) {}
  AccelerationsView view();
  std::size_t padded_count() const { return storage_.size(); }
  // The entries of `targets`, promoted to double.
  std::vector<Vec3<double>> promoted(TargetRange targets) const;

 private:
  AccelerationsSoA<float> storage_;
};

// The bounds an all-pairs kernel of `step` targets per iteration (KernelSet::all_pairs_step)
// runs over to compute `targets`: the range widened to multiples of `step` (at most padded_count,
// a multiple of every step), empty for no targets. The targets widened into are computed too,
// each exactly as in a run of all bodies, and never read.
TargetRange kernel_bounds(TargetRange targets, std::size_t step);

// Bodies per oneTBB task of cpu.tbb, chosen by measurement (docs/perf-notes.md).
inline constexpr std::size_t kDefaultTbbGrain = 64;
// Bodies per tile edge of cpu.tbb.symmetric, chosen by measurement (docs/perf-notes.md).
inline constexpr std::size_t kDefaultSymmetricTile = 1024;

// Threads a oneTBB formulation uses: options.threads, or all oneTBB would use when 0. Throws
// UsageError for a negative count or more than this machine's hardware threads.
int tbb_threads(const ExecutionOptions& options);

std::unique_ptr<PreparedRun> prepare_single_thread(std::span<const Body<double>> bodies,
                                                   double softening,
                                                   const ExecutionOptions& options,
                                                   bool newton_step);
std::unique_ptr<PreparedRun> prepare_tbb_all_pairs(std::span<const Body<double>> bodies,
                                                   double softening,
                                                   const ExecutionOptions& options,
                                                   std::size_t grain = kDefaultTbbGrain);
std::unique_ptr<PreparedRun> prepare_tbb_symmetric(std::span<const Body<double>> bodies,
                                                   double softening,
                                                   const ExecutionOptions& options,
                                                   std::size_t tile = kDefaultSymmetricTile);

// Tolerances (docs/tolerances.md, section "CPU SIMD/TBB").
Tolerance simd_full_tolerance();
Tolerance simd_bare_rsqrt_tolerance();

// What the registry lists of an xsimd formulation: the kernel's own optimizations (layout, ISA
// chosen at run time, rsqrt with or without a Newton-Raphson step, FMA), then `own`. The run's
// details() has the ISA actually used.
std::vector<std::string> simd_kernel_optimizations(bool newton_step, std::vector<std::string> own);

// Why the SIMD formulations cannot run here (a CPU without SSE4.2), or empty.
std::optional<std::string> simd_unavailable_reason();

}  // namespace nbody::cpu::simd
