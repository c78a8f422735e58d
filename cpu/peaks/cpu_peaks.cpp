#include "nbody/cpu_peaks/cpu_peaks.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>

#include <unistd.h>

#include <fmt/core.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>

#include "nbody/isas.hpp"

namespace nbody::peaks {
namespace {

using Clock = std::chrono::steady_clock;

template <class F>
double seconds_of(F&& f) {
  const auto start = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

const IsaInfo& known_isa(const std::string& isa) {
  const std::optional<Isa> found = find_isa(isa);
  if (!found) throw std::invalid_argument("unknown ISA " + isa);
  return isa_info(*found);
}

double run_chains(const std::string& isa, Precision precision, long iterations) {
  const bool f64 = precision == Precision::f64;
  switch (known_isa(isa).isa) {
#define NBODY_ISA(id, ...) \
  case Isa::id:            \
    return f64 ? detail::fma_chains_f64_##id(iterations) : detail::fma_chains_##id(iterations);
#include NBODY_ISAS_INC
#undef NBODY_ISA
  }
  throw std::invalid_argument("unknown ISA " + isa);
}

int lanes_of(const std::string& isa, Precision precision) {
  const int float_lanes = known_isa(isa).vector_bits / 32;
  return precision == Precision::f64 ? float_lanes / 2 : float_lanes;
}

// Runs `body(thread_index)` once on each of `threads` threads at the same time: one task per
// thread of an arena of exactly that size, statically partitioned.
template <class Body>
void on_every_thread(int threads, Body&& body) {
  if (threads == 1) {
    body(0);
    return;
  }
  tbb::task_arena arena(threads);
  arena.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<int>(0, threads, 1),
        [&](const tbb::blocked_range<int>& range) {
          for (int t = range.begin(); t != range.end(); ++t) body(t);
        },
        tbb::static_partitioner{});
  });
}

}  // namespace

std::vector<std::string> cpu_isa_names() {
  std::vector<std::string> names;
  for (const IsaInfo& info : compiled_isas()) names.emplace_back(info.name);
  return names;
}

bool cpu_isa_available(const std::string& isa) {
  const std::optional<Isa> found = find_isa(isa);
  return found && isa_available(*found);
}

int all_cores_threads() {
  return tbb::info::default_concurrency();
}

std::size_t default_triad_bytes_per_array() {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 <= 0) return 256 * kMiB;
  return std::clamp(4 * static_cast<std::size_t>(l3), 64 * kMiB, 256 * kMiB);
}

int detail::fma_chains_per_iteration(const std::string& isa) {
  return known_isa(isa).vector_registers >= 32 ? kChainsThirtyTwoRegisters
                                               : kChainsSixteenRegisters;
}

std::optional<FmaPeak> measure_fma_peak(const std::string& isa, int threads, double seconds,
                                        Precision precision) {
  if (!cpu_isa_available(isa) || threads < 1) return std::nullopt;
  // Calibrate on one thread (this also raises the clock), then size one run to `seconds`.
  long iterations = 1 << 16;
  double calibration_s = 0;
  while ((calibration_s = seconds_of([&] { run_chains(isa, precision, iterations); })) < 0.02) {
    iterations *= 2;
  }
  iterations = std::max(1L, static_cast<long>(static_cast<double>(iterations) * seconds /
                                              std::max(calibration_s, 1e-9)));
  std::vector<double> sink(static_cast<std::size_t>(threads));
  double best_s = 0;
  constexpr int kRuns = 3;  // a peak is the best run: anything slower was disturbed
  for (int run = 0; run < kRuns; ++run) {
    const double s = seconds_of([&] {
      on_every_thread(threads, [&](int t) { sink[t] = run_chains(isa, precision, iterations); });
    });
    if (run == 0 || s < best_s) best_s = s;
  }
  const int lanes = lanes_of(isa, precision);
  const double fma_instructions =
      static_cast<double>(iterations) * threads * detail::fma_chains_per_iteration(isa);
  FmaPeak peak;
  peak.isa = isa;
  peak.threads = threads;
  peak.precision = precision;
  peak.lanes = lanes;
  // Without FMA (SSE) each chain step is a multiply and an add, two arithmetic instructions.
  const bool fma = known_isa(isa).fma;
  peak.fp_instructions_per_second = (fma ? 1.0 : 2.0) * fma_instructions / best_s;
  peak.flops_per_second = 2.0 * lanes * fma_instructions / best_s;
  peak.method = fmt::format(
      "{} independent {}-lane {} {} chains per thread (xsimd), {} thread(s) in a oneTBB "
      "arena, best of {} runs of {:.2f} s",
      detail::fma_chains_per_iteration(isa), lanes,
      precision == Precision::f64 ? "float64" : "float32", fma ? "FMA" : "multiply+add", threads,
      kRuns, best_s);
  return peak;
}

BandwidthPeak measure_triad_bandwidth(int threads, std::size_t bytes_per_array, int repetitions) {
  const std::size_t n = bytes_per_array / sizeof(double);
  // Uninitialised on purpose: every thread first touches the pages it will stream (NUMA).
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
  const auto chunk = [&](int t) {
    const std::size_t begin = n * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads);
    const std::size_t end = n * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(threads);
    return std::pair{begin, end};
  };
  on_every_thread(threads, [&](int t) {
    const auto [begin, end] = chunk(t);
    for (std::size_t i = begin; i < end; ++i) {
      a[i] = 0.0;
      b[i] = 1.0;
      c[i] = 2.0;
    }
  });
  const double scalar = 3.0;
  double best_s = 0;
  for (int rep = 0; rep <= repetitions; ++rep) {  // the first is a warm-up
    const double s = seconds_of([&] {
      on_every_thread(threads, [&](int t) {
        const auto [begin, end] = chunk(t);
        for (std::size_t i = begin; i < end; ++i) a[i] = b[i] + scalar * c[i];
      });
    });
    if (rep == 1 || (rep > 1 && s < best_s)) best_s = s;
  }
  if (a[n / 2] != 7.0) throw std::logic_error("triad produced a wrong value");
  BandwidthPeak peak;
  peak.threads = threads;
  peak.bytes_per_array = n * sizeof(double);
  peak.bytes_per_second = 3.0 * sizeof(double) * static_cast<double>(n) / best_s;
  peak.method = fmt::format(
      "STREAM triad a = b + s*c, float64, 3 arrays of {} MiB, {} thread(s) (oneTBB, static "
      "partition, first touch by the streaming thread), best of {}; 24 bytes per element "
      "(write-allocate not counted)",
      peak.bytes_per_array >> 20, threads, repetitions);
  return peak;
}

}  // namespace nbody::peaks
