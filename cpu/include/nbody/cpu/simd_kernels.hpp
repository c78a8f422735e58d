#pragma once
// The interface of the explicitly vectorized kernels (xsimd), compiled once per ISA in
// cpu/simd_arch_*.cpp with that ISA's flags, in float32 and float64 (T). Only plain pointers and
// sizes cross it: an inline function that both the baseline code and a wider-ISA file instantiated
// (a std::vector member, say) could be linked from the wrong one and fault on a narrower CPU.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "nbody/isas.hpp"

namespace nbody::cpu::simd {

// The ISAs of this build (nbody/isas.hpp): one cpu/simd_arch_<id>.cpp each.
using nbody::Isa;

// Bodies are stored padded to a multiple of this (the widest vector, 16 lanes, times the widest
// unroll); the padding bodies have zero mass and sit far from the system, so they add nothing to
// real bodies, and their own results are never read.
inline constexpr std::size_t kBodyPadding = 64;

// Structure-of-arrays bodies of value type T, 64-byte aligned, `padded_count` entries in each
// array.
template <class T>
struct BodiesView {
  const T* x;
  const T* y;
  const T* z;
  const T* m;
  std::size_t count;         // real bodies
  std::size_t padded_count;  // a multiple of kBodyPadding
};

template <class T>
struct AccelerationsView {
  T* x;
  T* y;
  T* z;
};

// Writes out[i] = a_i for i in [target_begin, target_end), summing over the `count` real bodies
// in index order. Both bounds are multiples of KernelSet::all_pairs_step, at most padded_count.
template <class T>
using AllPairsKernel = void (*)(const BodiesView<T>& bodies, T softening_squared,
                                std::size_t target_begin, std::size_t target_end,
                                AccelerationsView<T> out);
// Adds to `out` the interactions between bodies [first_begin, first_end) and
// [second_begin, second_end), each pair evaluated once and applied to both bodies (Newton's third
// law). The ranges are equal (a diagonal tile) or disjoint with first_end <= second_begin. Bounds
// are multiples of kBodyPadding. On a diagonal tile, pairs inside one `lanes`-wide block are
// evaluated from both sides, one-sided, as an all-pairs kernel would.
template <class T>
using SymmetricTileKernel = void (*)(const BodiesView<T>& bodies, T softening_squared,
                                     std::size_t first_begin, std::size_t first_end,
                                     std::size_t second_begin, std::size_t second_end,
                                     AccelerationsView<T> out);

// How an all-pairs kernel computes 1/sqrt(d^2).
enum class InvSqrtMethod {
  newton,       // the ISA's approximate rsqrt + KernelSet::newton_steps Newton-Raphson steps
  bare_rsqrt,   // the approximate rsqrt alone (the approximate class)
  sqrt_divide,  // exact: a correctly rounded square root, then a division
  cube_series,  // d^-3 straight from the approximate rsqrt by its series, no Newton step
};

// The kernels of one ISA in value type T.
template <class T>
struct KernelSet {
  Isa isa;
  std::size_t lanes;
  std::size_t all_pairs_step;     // targets per all-pairs iteration: lanes times the unroll
  std::size_t symmetric_cluster;  // bodies broadcast against each source vector (symmetric)
  const char* rsqrt_instruction;  // the approximate rsqrt (float64: with its conversions)
  int newton_steps;               // after it, for full accuracy in T (float32 1, float64 2 or 3)
  int cube_series_terms;          // of cube_series, for full accuracy in T
  // The faster full-accuracy 1/sqrt on this ISA, by measurement (docs/perf-notes.md): newton for
  // float32; for float64 cube_series on AVX-512F (rsqrt14pd), sqrt_divide where the start is a
  // float32 rsqrtps that needs two conversions.
  InvSqrtMethod full_accuracy;
  bool fma;
  AllPairsKernel<T> all_pairs;              // approximate rsqrt + newton_steps steps
  AllPairsKernel<T> all_pairs_bare_rsqrt;   // the approximate rsqrt alone (approximate class)
  AllPairsKernel<T> all_pairs_sqrt_divide;  // square root, then divide
  AllPairsKernel<T> all_pairs_cube_series;  // approximate rsqrt + cube_series_terms terms
  SymmetricTileKernel<T> symmetric_tile;    // approximate rsqrt + newton_steps steps
  SymmetricTileKernel<T> symmetric_tile_sqrt_divide;  // square root, then divide
  SymmetricTileKernel<T> symmetric_tile_cube_series;  // approximate rsqrt + its series

  AllPairsKernel<T> all_pairs_by(InvSqrtMethod method) const {
    switch (method) {
      case InvSqrtMethod::newton:
        return all_pairs;
      case InvSqrtMethod::bare_rsqrt:
        return all_pairs_bare_rsqrt;
      case InvSqrtMethod::sqrt_divide:
        return all_pairs_sqrt_divide;
      case InvSqrtMethod::cube_series:
        return all_pairs_cube_series;
    }
    throw std::logic_error("all_pairs_by: no such method");
  }

  // The symmetric tile kernel of a full-accuracy method (newton, sqrt_divide or cube_series).
  SymmetricTileKernel<T> symmetric_tile_by(InvSqrtMethod method) const {
    switch (method) {
      case InvSqrtMethod::newton:
        return symmetric_tile;
      case InvSqrtMethod::sqrt_divide:
        return symmetric_tile_sqrt_divide;
      case InvSqrtMethod::cube_series:
        return symmetric_tile_cube_series;
      case InvSqrtMethod::bare_rsqrt:
        break;
    }
    throw std::logic_error("symmetric_tile_by: no symmetric kernel with that method");
  }
};

// Defined in cpu/simd_arch_<id>.cpp for every ISA of the list.
#define NBODY_ISA(id, ...)         \
  KernelSet<float> kernels_##id(); \
  KernelSet<double> kernels_f64_##id();
#include NBODY_ISAS_INC
#undef NBODY_ISA

}  // namespace nbody::cpu::simd
