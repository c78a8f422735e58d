#pragma once
// The xsimd and oneTBB formulations (cpu.simd, cpu.simd.approx, cpu.tbb, cpu.tbb.symmetric, and
// cpu.simd.f64, cpu.tbb.f64, cpu.tbb.symmetric.f64 in float64): the run-time ISA choice, the padded
// layout their kernels read, and their runs, exposed so that the tests and the micro-benchmark
// (cpu/bench) can drive them with settings the registry does not carry (the oneTBB grain and tile).
// T is the value type the kernels compute in: float or double.
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

// As ExecutionOptions::isa spells them: "sse4.2", "avx2", "avx512f"; "neon64".
using nbody::isa_name;
// For reports: "AVX-512F, 16 lanes" (lanes of `precision`).
std::string isa_description(Isa isa, Precision precision = Precision::f32);

// The widest ISA of this build's list that this CPU runs; empty where it runs none.
std::optional<Isa> widest_isa();
// The ISA a run uses: `forced` (an ExecutionOptions::isa) or, when empty, `widest`. Throws
// UsageError for an unknown name or one past `widest` in the list (or when there is no `widest`).
Isa resolve_isa(std::string_view forced, std::optional<Isa> widest);
// The same against this CPU: `forced` must be one it runs.
Isa resolve_isa(std::string_view forced);
// The kernels of `isa` in T (defined for float and double).
template <class T>
KernelSet<T> kernels_for(Isa isa);
template <>
KernelSet<float> kernels_for<float>(Isa isa);
template <>
KernelSet<double> kernels_for<double>(Isa isa);

// Pair evaluations of symmetric_tile on a diagonal tile of `size` bodies with `lanes`-wide
// vectors: pairs inside one vector block from both sides, all others once.
std::uint64_t diagonal_tile_pair_evaluations(std::size_t size, std::size_t lanes);

// Bodies rounded to T in the padded layout the kernels read (defined for float and double).
template <class T>
class PaddedBodies {
 public:
  explicit PaddedBodies(std::span<const Body<double>> bodies);
  // New positions and masses for the same count (time integration); the padding stays.
  void assign(std::span<const Body<double>> bodies);
  BodiesView<T> view() const;
  std::size_t count() const { return count_; }
  std::size_t padded_count() const { return storage_.size(); }

 private:
  BodiesSoA<T> storage_;
  std::size_t count_;
};

// Accelerations in the same padded layout (defined for float and double).
template <class T>
class PaddedAccelerations {
 public:
  explicit PaddedAccelerations(std::size_t padded_count = 0) : storage_(padded_count) {}
  AccelerationsView<T> view();
  std::size_t padded_count() const { return storage_.size(); }
  // The entries of `targets`, promoted to double.
  std::vector<Vec3<double>> promoted(TargetRange targets) const;

 private:
  AccelerationsSoA<T> storage_;
};

// The bounds an all-pairs kernel of `step` targets per iteration (KernelSet::all_pairs_step)
// runs over to compute `targets`: the range widened to multiples of `step` (at most padded_count,
// a multiple of every step), empty for no targets. The targets widened into are computed too,
// each exactly as in a run of all bodies, and never read.
TargetRange kernel_bounds(TargetRange targets, std::size_t step);

// Bodies per oneTBB task of cpu.tbb, chosen by measurement (docs/perf-notes.md).
inline constexpr std::size_t kDefaultTbbGrain = 64;
// Bodies per tile edge of cpu.tbb.symmetric and cpu.tbb.symmetric.f64, chosen by measurement
// (docs/perf-notes.md: float64 is flat within 4% from 256 to 4096 on the dev VM, so it keeps
// float32's), and the tiles registered beside it as tuning variants.
inline constexpr std::size_t kDefaultSymmetricTile = 1024;
inline constexpr std::size_t kSymmetricTiles[] = {256, 512, 1024, 2048, 4096};

// Threads a oneTBB formulation uses: options.threads, or all oneTBB would use when 0. Throws
// UsageError for a negative count or more than this machine's hardware threads.
int tbb_threads(const ExecutionOptions& options);

// The 1/sqrt of the float64 formulations' entries: none forced (the shipped entry, which takes its
// ISA's KernelSet::full_accuracy), then each full-accuracy method forced, a tuning variant
// (`[inv_sqrt=...]`).
inline constexpr std::optional<InvSqrtMethod> kFloat64InvSqrtEntries[] = {
    std::nullopt, InvSqrtMethod::newton, InvSqrtMethod::sqrt_divide, InvSqrtMethod::cube_series};

// As tuning variants spell it: "newton", "bare_rsqrt", "sqrt_divide", "cube_series".
std::string_view inv_sqrt_method_name(InvSqrtMethod method);

// The runs (defined for float and double). Each computes 1/sqrt by `method`, or, when empty, by
// its ISA's faster full-accuracy method (KernelSet::full_accuracy); the symmetric run takes only
// the full-accuracy methods (those of kFloat64InvSqrtEntries).
template <class T>
std::unique_ptr<PreparedRun> prepare_single_thread(std::span<const Body<double>> bodies,
                                                   double softening,
                                                   const ExecutionOptions& options,
                                                   std::optional<InvSqrtMethod> method);
template <class T>
std::unique_ptr<PreparedRun> prepare_tbb_all_pairs(
    std::span<const Body<double>> bodies, double softening, const ExecutionOptions& options,
    std::size_t grain = kDefaultTbbGrain, std::optional<InvSqrtMethod> method = std::nullopt);
template <class T>
std::unique_ptr<PreparedRun> prepare_tbb_symmetric(
    std::span<const Body<double>> bodies, double softening, const ExecutionOptions& options,
    std::size_t tile = kDefaultSymmetricTile, std::optional<InvSqrtMethod> method = std::nullopt);

// What a run's details() says of its 1/sqrt: "vrsqrt14pd + 2 Newton-Raphson steps".
template <class T>
std::string inv_sqrt_detail(const KernelSet<T>& kernels, InvSqrtMethod method);

// Tolerances (docs/tolerances.md, sections "CPU SIMD/TBB" and "Float64 on the CPU").
Tolerance simd_full_tolerance();
Tolerance simd_bare_rsqrt_tolerance();
Tolerance simd_float64_tolerance();

// What the registry lists of an xsimd formulation: the kernel's own optimizations (layout, ISA
// chosen at run time, how it computes 1/sqrt in which precision, FMA), then `own`. The run's
// details() has the ISA and the 1/sqrt actually used. `method` empty: each ISA's faster one.
std::vector<std::string> simd_kernel_optimizations(Precision precision,
                                                   std::optional<InvSqrtMethod> method,
                                                   std::vector<std::string> own);

// Why the SIMD formulations cannot run here (a CPU without SSE4.2), or empty.
std::optional<std::string> simd_unavailable_reason();

// An xsimd formulation's registry entry from what is its own (`info`: name, description,
// precision, accuracy class, pairs, role, multithreaded, optimizations, tolerance, bytes per body)
// and its run. What the family shares is filled in: the CPU, the padded SoA layout, the ISA chosen
// at run time (--isa), availability where the CPU has SSE4.2, and its threads (one, or oneTBB's
// where `info.multithreaded`).
Implementation make_simd_implementation(
    ImplementationInfo info, decltype(Implementation::prepare) prepare,
    decltype(Implementation::size_limit_reason) size_limit = {});

}  // namespace nbody::cpu::simd
