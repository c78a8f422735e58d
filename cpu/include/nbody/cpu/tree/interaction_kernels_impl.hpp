#pragma once
// The walk's interaction evaluation, written once over xsimd::batch<T, Arch> and instantiated by
// each cpu/tree/interactions_*.cpp with its own compile flags. Include only from those files:
// everything here has internal linkage, so each ISA's copy stays in its own object file.
#include <cstddef>
#include <cstdint>

#include <xsimd/xsimd.hpp>

#include "nbody/cpu/tree/interaction_kernels.hpp"
#include "nbody/cpu/tree/multipole.hpp"
#include "nbody/physics.hpp"

namespace nbody::cpu::tree {
namespace {

// The exact 1/sqrt of physics.hpp's ExactInvSqrt (a correctly rounded square root, then a
// division), with the ISA's square root: xsimd's, or an ISA file's own where xsimd's trips a
// compiler warning. The float64 walk's on SSE4.2, AVX2 and NEON; AVX-512F takes
// SeriesBatchInvSqrt (below).
struct XsimdSqrt {
  template <class Batch>
  NBODY_FORCE_INLINE Batch operator()(const Batch& x) const {
    return xsimd::sqrt(x);
  }
};

// An ISA file's Sqrt may bring its own exact 1/sqrt (`inverse`) where xsimd's division is not
// exact (NEON float32).
template <class Sqrt>
struct ExactBatchInvSqrt {
  template <class Batch>
  NBODY_FORCE_INLINE Batch operator()(const Batch& x) const {
    if constexpr (requires { Sqrt{}.inverse(x); }) {
      return Sqrt{}.inverse(x);
    } else {
      return Batch(typename Batch::value_type(1)) / Sqrt{}(x);
    }
  }
};

// The float32 walk's 1/sqrt: the all-pairs float32 kernels' full-accuracy method
// (cpu/simd_kernels_impl.hpp's NewtonRsqrt, one step), so that a tree and all-pairs are compared
// at the same arithmetic (FAIRNESS.md rule 3): the ISA's approximate rsqrt (12 or 14 bits) and one
// Newton-Raphson step, y1 = y0 + y0/2 (1 - x y0^2), within about 1 ulp. A third of the exact
// square root and division's cost, which set the walk's pace; the tree's accuracy bounds hold with
// it (docs/tolerances.md, "Tree codes"). kSteps for float64.
template <class BareRsqrt, int kSteps = 1>
struct NewtonBatchInvSqrt {
  template <class Batch>
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

// The float64 walk's 1/sqrt where the ISA has a 14-bit rsqrt (AVX-512F's vrsqrt14pd): the
// all-pairs float64 kernels' method there (cpu/simd_kernels_impl.hpp's CubeSeries: d^-3 from the
// approximate rsqrt by its series, 4 terms), and for the cell terms, which need 1/d itself, two
// Newton-Raphson steps from the same start (1.5^3 2^-56 < 2^-53), as the all-pairs kernels'
// newton method takes it; the GPU's float64 walk takes both from MUFU.RSQ64H alike. The exact
// square root and division it replaces set the float64 walk's pace (docs/perf-notes.md).
template <class BareRsqrt>
struct SeriesBatchInvSqrt : NewtonBatchInvSqrt<BareRsqrt, 2> {
  template <class Batch>
  NBODY_FORCE_INLINE Batch cubed(const Batch& x) const {
    return inv_sqrt_cubed_series<4>(x, BareRsqrt{}(x));
  }
};

// Loads the targets [first, first + lanes) of the sorted bodies; lanes past `end` repeat the last
// target (their results are not stored).
template <class T, class Arch>
NBODY_FORCE_INLINE void load_targets(const Body<T>* bodies, std::size_t first, std::size_t end,
                                     xsimd::batch<T, Arch>& x, xsimd::batch<T, Arch>& y,
                                     xsimd::batch<T, Arch>& z) {
  using Batch = xsimd::batch<T, Arch>;
  alignas(Arch::alignment()) T lane_x[Batch::size], lane_y[Batch::size], lane_z[Batch::size];
  for (std::size_t lane = 0; lane < Batch::size; ++lane) {
    const Body<T>& b = bodies[first + lane < end ? first + lane : end - 1];
    lane_x[lane] = b.x;
    lane_y[lane] = b.y;
    lane_z[lane] = b.z;
  }
  x = Batch::load_aligned(lane_x);
  y = Batch::load_aligned(lane_y);
  z = Batch::load_aligned(lane_z);
}

// kBatches batches of targets [first, first + kBatches lanes) against the lists, each lane summing
// in the lists' order, as the scalar loop would; stores the results of the targets before `end`.
// The batch loops are unrolled: GCC 12 otherwise keeps them as loops inside each source's, the
// accumulators in memory (loaded and stored a term) and the cell's broadcasts spilled.
template <class T, class Arch, class InvSqrt, std::size_t kBatches>
NBODY_FORCE_INLINE void evaluate_targets(const GroupWork<T>& work, std::size_t first) {
  using Batch = xsimd::batch<T, Arch>;
  constexpr std::size_t kLanes = Batch::size;
  const Batch eps2(work.softening_squared);
  Batch xi[kBatches], yi[kBatches], zi[kBatches], ax[kBatches], ay[kBatches], az[kBatches];
  for (std::size_t b = 0; b < kBatches; ++b) {
    load_targets<T, Arch>(work.sources, first + b * kLanes, work.target_end, xi[b], yi[b], zi[b]);
    ax[b] = ay[b] = az[b] = Batch(T(0));
  }
  for (std::size_t r = 0; r < work.range_count; ++r) {
    for (std::size_t j = work.ranges[r].begin; j < work.ranges[r].end; ++j) {
      const Body<T>& s = work.sources[j];
      const Batch sx(s.x), sy(s.y), sz(s.z), sm(s.m);
#pragma GCC unroll 4
      for (std::size_t b = 0; b < kBatches; ++b) {
        accumulate_interaction<Batch, InvSqrt>(xi[b], yi[b], zi[b], sx, sy, sz, sm, eps2, ax[b],
                                               ay[b], az[b]);
      }
    }
  }
  for (std::size_t c = 0; c < work.cell_count; ++c) {
    const CellMultipole<T>& cell = work.multipoles[work.cells[c]];
#pragma GCC unroll 4
    for (std::size_t b = 0; b < kBatches; ++b) {
      accumulate_cell<Batch, T, InvSqrt>(xi[b], yi[b], zi[b], cell, eps2, ax[b], ay[b], az[b]);
    }
  }
  for (std::size_t b = 0; b < kBatches; ++b) {
    alignas(Arch::alignment()) T out_x[kLanes], out_y[kLanes], out_z[kLanes];
    ax[b].store_aligned(out_x);
    ay[b].store_aligned(out_y);
    az[b].store_aligned(out_z);
    const std::size_t base = first + b * kLanes;
    for (std::size_t lane = 0; lane < kLanes && base + lane < work.target_end; ++lane) {
      work.accelerations[work.input_index[base + lane]] = {out_x[lane], out_y[lane], out_z[lane]};
    }
  }
}

// Targets in batches of the ISA's width, two at a time while more than one batch is left, sources
// broadcast one at a time. Two: with the rsqrt and Newton step the loop is bound by the latency
// of the accumulators' adds (each cell adds to them twice), which a second independent batch
// hides; it also halves the loads and broadcasts of the lists. Three where exactly three are left
// (a group of 33 to 48 targets in 16 lanes, a quarter of the groups of 64), so that the third is
// not walked alone at the latency's pace; one for a last lone batch. Lane sums are the same in
// every case.
template <class T, class Arch, class InvSqrt>
void evaluate_group(const GroupWork<T>& work) {
  constexpr std::size_t kLanes = xsimd::batch<T, Arch>::size;
  std::size_t first = work.target_begin;
  while (first < work.target_end) {
    const std::size_t left = work.target_end - first;
    if (left > 2 * kLanes && left <= 3 * kLanes) {
      evaluate_targets<T, Arch, InvSqrt, 3>(work, first);
      first += 3 * kLanes;
    } else if (left > kLanes) {
      evaluate_targets<T, Arch, InvSqrt, 2>(work, first);
      first += 2 * kLanes;
    } else {
      evaluate_targets<T, Arch, InvSqrt, 1>(work, first);
      first += kLanes;
    }
  }
}

// BareRsqrt: the ISA's approximate 1/sqrt of a float32 batch, as its all-pairs kernels take it.
// Float64InvSqrt: ExactBatchInvSqrt<Sqrt>, unless the ISA's file names its faster method.
template <class Arch, class BareRsqrt, class Sqrt = XsimdSqrt,
          class Float64InvSqrt = ExactBatchInvSqrt<Sqrt>>
GroupKernels make_group_kernels() {
  return {.f32 = &evaluate_group<float, Arch, NewtonBatchInvSqrt<BareRsqrt>>,
          .f64 = &evaluate_group<double, Arch, Float64InvSqrt>};
}

}  // namespace
}  // namespace nbody::cpu::tree
