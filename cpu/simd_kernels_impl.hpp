#pragma once
// The SIMD kernels, written once over xsimd::batch<T, Arch> (T float or double) and the shared
// interaction of physics.hpp, and instantiated by each cpu/simd_arch_*.cpp with its own compile
// flags, its own approximate rsqrt and its own horizontal sum. Include only from those files:
// everything here has internal linkage, so each ISA's copy stays in its own object file.
#include <cstddef>
#include <type_traits>
#include <utility>

#include <xsimd/xsimd.hpp>

#include "nbody/cpu/simd_kernels.hpp"
#include "nbody/physics.hpp"

namespace nbody::cpu::simd {
namespace {

// kSteps Newton-Raphson steps on the approximate y0 ~ 1/sqrt(x): y1 = y0 + y0/2 (1 - x y0^2).
// Written as a correction, the rounding of the small correction term is second order, so the
// last step ends within about 1 ulp. Each step squares the relative error (times 1.5): in float32
// one step takes a 12- or 14-bit start to full accuracy, like the GPU's rsqrtf (FAIRNESS.md
// rule 2); in float64 a 14-bit start needs two (1.5^3 2^-56 < 2^-53), a 12-bit one three.
template <class Batch, class BareRsqrt, int kSteps>
struct NewtonRsqrt {
  NBODY_FORCE_INLINE Batch operator()(const Batch& x) const {
    using T = typename Batch::value_type;
    Batch y = BareRsqrt{}(x);
    for (int step = 0; step < kSteps; ++step) {
      const Batch residual = xsimd::fnma(x * y, y, Batch(T(1)));
      y = xsimd::fma(Batch(T(0.5)) * y, residual, y);
    }
    return y;
  }
};

// d^-3 = x^(-3/2) (x = d^2) straight from the ISA's approximate y ~ 1/sqrt(x), no Newton step:
// physics.hpp's inv_sqrt_cubed_series, as the `cubed` its inv_sqrt_cubed calls. |e| is below 2^-13
// for a 14-bit start (rsqrt14), 2^-10.4 for a 12-bit one (rsqrtps, 1.5 x 2^-12): float32 takes 2
// terms from either start; float64 4 from 14 bits (693/256 e^5 < 2^-63), 5 from 12 bits
// (3003/1024 e^6 < 2^-64).
template <class Batch, class BareRsqrt, int kTerms>
struct CubeSeries {
  NBODY_FORCE_INLINE Batch cubed(const Batch& x) const {
    return inv_sqrt_cubed_series<kTerms>(x, BareRsqrt{}(x));
  }
};

// The exact 1/sqrt of the physics function (a correctly rounded square root, then a division),
// with the ISA's square root (xsimd's, or an ISA file's own where xsimd's trips a compiler bug).
struct XsimdSqrt {
  template <class Batch>
  NBODY_FORCE_INLINE Batch operator()(const Batch& x) const {
    return xsimd::sqrt(x);
  }
};

// An ISA file's Sqrt may bring its own exact 1/sqrt (`inverse`) where xsimd's division is not
// exact (NEON float32: a reciprocal estimate and two steps).
template <class Batch, class Sqrt>
struct SqrtDivide {
  NBODY_FORCE_INLINE Batch operator()(const Batch& x) const {
    if constexpr (requires { Sqrt{}.inverse(x); }) {
      return Sqrt{}.inverse(x);
    } else {
      return Batch(typename Batch::value_type(1)) / Sqrt{}(x);
    }
  }
};

// Calls f(std::integral_constant<std::size_t, k>{}) for k = 0 .. kCount-1. Indexing the small
// per-kernel arrays with compile-time constants lets GCC keep them in registers; indexed by a loop
// variable, it spilled the accumulators to the stack.
template <std::size_t kCount, class F>
NBODY_FORCE_INLINE void for_each_index(F&& f) {
  [&]<std::size_t... k>(std::index_sequence<k...>) {
    (f(std::integral_constant<std::size_t, k>{}), ...);
  }
  (std::make_index_sequence<kCount>{});
}

// Targets in vectors (kUnroll of them, independent dependency chains), sources broadcast one at a
// time in index order: each lane sums exactly like the scalar loop, and no source tail exists.
template <class T, class Arch, class InvSqrt, std::size_t kUnroll>
void all_pairs(const BodiesView<T>& bodies, T softening_squared, std::size_t target_begin,
               std::size_t target_end, AccelerationsView<T> out) {
  using Batch = xsimd::batch<T, Arch>;
  constexpr std::size_t kLanes = Batch::size;
  constexpr std::size_t kStep = kLanes * kUnroll;
  static_assert(kBodyPadding % kStep == 0, "a step must tile the padding");
  const Batch eps2(softening_squared);
  for (std::size_t i = target_begin; i < target_end; i += kStep) {
    Batch xi[kUnroll], yi[kUnroll], zi[kUnroll], ax[kUnroll], ay[kUnroll], az[kUnroll];
    for_each_index<kUnroll>([&](auto u) {
      xi[u] = Batch::load_aligned(bodies.x + i + u * kLanes);
      yi[u] = Batch::load_aligned(bodies.y + i + u * kLanes);
      zi[u] = Batch::load_aligned(bodies.z + i + u * kLanes);
      ax[u] = ay[u] = az[u] = Batch(T(0));
    });
    for (std::size_t j = 0; j < bodies.count; ++j) {
      const Batch xj(bodies.x[j]), yj(bodies.y[j]), zj(bodies.z[j]), mj(bodies.m[j]);
      for_each_index<kUnroll>([&](auto u) {
        accumulate_interaction<Batch, InvSqrt>(xi[u], yi[u], zi[u], xj, yj, zj, mj, eps2, ax[u],
                                               ay[u], az[u]);
      });
    }
    for_each_index<kUnroll>([&](auto u) {
      ax[u].store_aligned(out.x + i + u * kLanes);
      ay[u].store_aligned(out.y + i + u * kLanes);
      az[u].store_aligned(out.z + i + u * kLanes);
    });
  }
}

// Newton's third law: kCluster bodies of the first range, broadcast, against one vector of the
// second range. Each pair's d / |d|^3 is evaluated once (pair_acceleration with unit mass) and
// applied as +m_j to the broadcast body (reduced across lanes once per range) and -m_i to the
// vector's bodies (accumulated over the cluster in registers, then added to memory).
template <class T, class Arch, class InvSqrt, class ReduceAdd, std::size_t kCluster>
void symmetric_tile(const BodiesView<T>& bodies, T softening_squared, std::size_t first_begin,
                    std::size_t first_end, std::size_t second_begin, std::size_t second_end,
                    AccelerationsView<T> out) {
  using Batch = xsimd::batch<T, Arch>;
  constexpr std::size_t kLanes = Batch::size;
  static_assert(kLanes % kCluster == 0, "a cluster must not straddle a vector block");
  const Batch eps2(softening_squared);
  const Batch unit_mass(T(1));
  const bool diagonal = first_begin == second_begin;
  for (std::size_t i = first_begin; i < first_end; i += kCluster) {
    Batch xi[kCluster], yi[kCluster], zi[kCluster], mi[kCluster];
    Batch ax[kCluster], ay[kCluster], az[kCluster];
    for_each_index<kCluster>([&](auto c) {
      xi[c] = Batch(bodies.x[i + c]);
      yi[c] = Batch(bodies.y[i + c]);
      zi[c] = Batch(bodies.z[i + c]);
      mi[c] = Batch(bodies.m[i + c]);
      ax[c] = ay[c] = az[c] = Batch(T(0));
    });
    std::size_t j = second_begin;
    if (diagonal) {
      // The cluster's own vector block: one-sided, so each pair inside a block is evaluated from
      // both of its sides (and the zero self term is simply included, as in all_pairs).
      const std::size_t own_block = i - (i - first_begin) % kLanes;
      const Batch xj = Batch::load_aligned(bodies.x + own_block);
      const Batch yj = Batch::load_aligned(bodies.y + own_block);
      const Batch zj = Batch::load_aligned(bodies.z + own_block);
      const Batch mj = Batch::load_aligned(bodies.m + own_block);
      for_each_index<kCluster>([&](auto c) {
        accumulate_interaction<Batch, InvSqrt>(xi[c], yi[c], zi[c], xj, yj, zj, mj, eps2, ax[c],
                                               ay[c], az[c]);
      });
      j = own_block + kLanes;
    }
    for (; j < second_end; j += kLanes) {
      const Batch xj = Batch::load_aligned(bodies.x + j);
      const Batch yj = Batch::load_aligned(bodies.y + j);
      const Batch zj = Batch::load_aligned(bodies.z + j);
      const Batch mj = Batch::load_aligned(bodies.m + j);
      Batch reaction_x(T(0)), reaction_y(T(0)), reaction_z(T(0));
      for_each_index<kCluster>([&](auto c) {
        const PairAcceleration<Batch> per_unit_mass =
            pair_acceleration<Batch, InvSqrt>(xi[c], yi[c], zi[c], xj, yj, zj, unit_mass, eps2);
        ax[c] = xsimd::fma(mj, per_unit_mass.x, ax[c]);
        ay[c] = xsimd::fma(mj, per_unit_mass.y, ay[c]);
        az[c] = xsimd::fma(mj, per_unit_mass.z, az[c]);
        reaction_x = xsimd::fnma(mi[c], per_unit_mass.x, reaction_x);
        reaction_y = xsimd::fnma(mi[c], per_unit_mass.y, reaction_y);
        reaction_z = xsimd::fnma(mi[c], per_unit_mass.z, reaction_z);
      });
      (Batch::load_aligned(out.x + j) + reaction_x).store_aligned(out.x + j);
      (Batch::load_aligned(out.y + j) + reaction_y).store_aligned(out.y + j);
      (Batch::load_aligned(out.z + j) + reaction_z).store_aligned(out.z + j);
    }
    for_each_index<kCluster>([&](auto c) {
      out.x[i + c] += ReduceAdd{}(ax[c]);
      out.y[i + c] += ReduceAdd{}(ay[c]);
      out.z[i + c] += ReduceAdd{}(az[c]);
    });
  }
}

// The kernel set of one ISA in value type T. BareRsqrt, ReduceAdd and Sqrt take
// xsimd::batch<T, Arch>.
template <class T, class Arch, class BareRsqrt, class ReduceAdd, std::size_t kUnroll,
          std::size_t kCluster, int kNewtonSteps, int kCubeSeriesTerms, class Sqrt = XsimdSqrt>
KernelSet<T> make_kernel_set(Isa isa, const char* rsqrt_instruction, InvSqrtMethod full_accuracy,
                             bool fma) {
  using Batch = xsimd::batch<T, Arch>;
  using FullRsqrt = NewtonRsqrt<Batch, BareRsqrt, kNewtonSteps>;
  return {.isa = isa,
          .lanes = Batch::size,
          .all_pairs_step = Batch::size * kUnroll,
          .symmetric_cluster = kCluster,
          .rsqrt_instruction = rsqrt_instruction,
          .newton_steps = kNewtonSteps,
          .cube_series_terms = kCubeSeriesTerms,
          .full_accuracy = full_accuracy,
          .fma = fma,
          .all_pairs = &all_pairs<T, Arch, FullRsqrt, kUnroll>,
          .all_pairs_bare_rsqrt = &all_pairs<T, Arch, BareRsqrt, kUnroll>,
          .all_pairs_sqrt_divide = &all_pairs<T, Arch, SqrtDivide<Batch, Sqrt>, kUnroll>,
          .all_pairs_cube_series =
              &all_pairs<T, Arch, CubeSeries<Batch, BareRsqrt, kCubeSeriesTerms>, kUnroll>,
          .symmetric_tile = &symmetric_tile<T, Arch, FullRsqrt, ReduceAdd, kCluster>,
          .symmetric_tile_sqrt_divide =
              &symmetric_tile<T, Arch, SqrtDivide<Batch, Sqrt>, ReduceAdd, kCluster>,
          .symmetric_tile_cube_series =
              &symmetric_tile<T, Arch, CubeSeries<Batch, BareRsqrt, kCubeSeriesTerms>, ReduceAdd,
                              kCluster>};
}

}  // namespace
}  // namespace nbody::cpu::simd
