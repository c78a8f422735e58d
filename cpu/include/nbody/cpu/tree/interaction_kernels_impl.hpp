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
// compiler warning. Exact rather than the all-pairs kernels' rsqrt and Newton step: the tree's
// accuracy bounds (tests/tree_test.cpp, docs/tolerances.md "Tree codes") were measured with it,
// theta = 0 is checked against the scalar kernels' tolerance, and the Newton step has not been
// surveyed against them.
struct XsimdSqrt {
  template <class Batch>
  NBODY_FORCE_INLINE Batch operator()(const Batch& x) const {
    return xsimd::sqrt(x);
  }
};

template <class Sqrt>
struct ExactBatchInvSqrt {
  template <class Batch>
  NBODY_FORCE_INLINE Batch operator()(const Batch& x) const {
    return Batch(typename Batch::value_type(1)) / Sqrt{}(x);
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

// Targets in batches of the ISA's width, sources broadcast one at a time: each lane sums in the
// lists' order, as the scalar loop would. One batch at a time rather than several: the square
// root and division bound the loop (they share one unit), so more independent chains would not
// help, and narrower steps waste fewer lanes on a group's last batch.
template <class T, class Arch, class InvSqrt>
void evaluate_group(const GroupWork<T>& work) {
  using Batch = xsimd::batch<T, Arch>;
  constexpr std::size_t kLanes = Batch::size;
  const Batch eps2(work.softening_squared);
  for (std::size_t first = work.target_begin; first < work.target_end; first += kLanes) {
    Batch xi, yi, zi;
    load_targets<T, Arch>(work.sources, first, work.target_end, xi, yi, zi);
    Batch ax(T(0)), ay(T(0)), az(T(0));
    for (std::size_t r = 0; r < work.range_count; ++r) {
      for (std::size_t j = work.ranges[r].begin; j < work.ranges[r].end; ++j) {
        const Body<T>& s = work.sources[j];
        accumulate_interaction<Batch, InvSqrt>(xi, yi, zi, Batch(s.x), Batch(s.y), Batch(s.z),
                                               Batch(s.m), eps2, ax, ay, az);
      }
    }
    for (std::size_t c = 0; c < work.cell_count; ++c) {
      accumulate_cell<Batch, T, InvSqrt>(xi, yi, zi, work.multipoles[work.cells[c]], eps2, ax, ay,
                                         az);
    }
    alignas(Arch::alignment()) T out_x[kLanes], out_y[kLanes], out_z[kLanes];
    ax.store_aligned(out_x);
    ay.store_aligned(out_y);
    az.store_aligned(out_z);
    for (std::size_t lane = 0; lane < kLanes && first + lane < work.target_end; ++lane) {
      work.accelerations[work.input_index[first + lane]] = {out_x[lane], out_y[lane], out_z[lane]};
    }
  }
}

template <class Arch, class Sqrt = XsimdSqrt>
GroupKernels make_group_kernels() {
  return {.f32 = &evaluate_group<float, Arch, ExactBatchInvSqrt<Sqrt>>,
          .f64 = &evaluate_group<double, Arch, ExactBatchInvSqrt<Sqrt>>};
}

}  // namespace
}  // namespace nbody::cpu::tree
