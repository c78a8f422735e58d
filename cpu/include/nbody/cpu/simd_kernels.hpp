#pragma once
// The interface of the explicitly vectorized kernels (xsimd), compiled once per ISA in
// cpu/simd_arch_*.cpp with that ISA's flags. Only plain pointers and sizes cross it: an inline
// function that both the baseline code and a wider-ISA file instantiated (a std::vector member,
// say) could be linked from the wrong one and fault on a narrower CPU.
#include <cstddef>
#include <cstdint>

namespace nbody::cpu::simd {

// Ordered narrowest to widest: a CPU that has one has all those before it.
enum class Isa { sse4_2, avx2, avx512f };
// Every ISA the kernels are compiled for (one cpu/simd_arch_*.cpp each).
inline constexpr Isa kAllIsas[] = {Isa::sse4_2, Isa::avx2, Isa::avx512f};

// Bodies are stored padded to a multiple of this (the widest vector, 16 lanes, times the widest
// unroll); the padding bodies have zero mass and sit far from the system, so they add nothing to
// real bodies, and their own results are never read.
inline constexpr std::size_t kBodyPadding = 64;

// Structure-of-arrays float32 bodies, 64-byte aligned, `padded_count` entries in each array.
struct BodiesView {
  const float* x;
  const float* y;
  const float* z;
  const float* m;
  std::size_t count;         // real bodies
  std::size_t padded_count;  // a multiple of kBodyPadding
};

struct AccelerationsView {
  float* x;
  float* y;
  float* z;
};

// Writes out[i] = a_i for i in [target_begin, target_end), summing over the `count` real bodies
// in index order. Both bounds are multiples of KernelSet::all_pairs_step, at most padded_count.
using AllPairsKernel = void (*)(const BodiesView& bodies, float softening_squared,
                                std::size_t target_begin, std::size_t target_end,
                                AccelerationsView out);
// Adds to `out` the interactions between bodies [first_begin, first_end) and
// [second_begin, second_end), each pair evaluated once and applied to both bodies (Newton's third
// law). The ranges are equal (a diagonal tile) or disjoint with first_end <= second_begin. Bounds
// are multiples of kBodyPadding. On a diagonal tile, pairs inside one `lanes`-wide block are
// evaluated from both sides, one-sided, as an all-pairs kernel would.
using SymmetricTileKernel = void (*)(const BodiesView& bodies, float softening_squared,
                                     std::size_t first_begin, std::size_t first_end,
                                     std::size_t second_begin, std::size_t second_end,
                                     AccelerationsView out);

// The kernels of one ISA.
struct KernelSet {
  Isa isa;
  std::size_t lanes;
  std::size_t all_pairs_step;     // targets per all-pairs iteration: lanes times the unroll
  std::size_t symmetric_cluster;  // bodies broadcast against each source vector (symmetric)
  const char* rsqrt_instruction;
  bool fma;
  AllPairsKernel all_pairs;             // approximate rsqrt + one Newton-Raphson step
  AllPairsKernel all_pairs_bare_rsqrt;  // the approximate rsqrt alone (approximate class)
  SymmetricTileKernel symmetric_tile;   // approximate rsqrt + one Newton-Raphson step
};

KernelSet kernels_sse4_2();
KernelSet kernels_avx2();
KernelSet kernels_avx512f();

}  // namespace nbody::cpu::simd
