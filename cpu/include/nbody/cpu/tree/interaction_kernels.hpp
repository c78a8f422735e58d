#pragma once
// The interface of the walk's interaction evaluation, compiled once per ISA in
// cpu/tree/interactions_*.cpp with that ISA's flags and chosen at run time as the all-pairs SIMD
// kernels are (nbody/cpu/simd_kernels.hpp). Only plain pointers, sizes and aggregates without
// member functions cross it: an inline function instantiated both here and in a wider-ISA file
// could be linked from the wrong one and fault on a narrower CPU.
#include <cstddef>
#include <cstdint>

#include "nbody/bodies.hpp"
#include "nbody/cpu/tree/multipole.hpp"

namespace nbody::cpu::tree {

// Bodies [begin, end) of the sorted order.
struct BodyRange {
  std::uint32_t begin, end;
};

// One group's targets and the interaction lists of its walk.
template <class T>
struct GroupWork {
  const Body<T>* sources;                  // the sorted bodies
  const std::uint32_t* input_index;        // input_index[k]: the input index of sorted body k
  std::uint32_t target_begin, target_end;  // the group's bodies, in the sorted order
  const BodyRange* ranges;                 // the bodies of opened leaves
  std::size_t range_count;
  const std::uint32_t* cells;  // accepted cells, indices into multipoles
  std::size_t cell_count;
  const CellMultipole<T>* multipoles;
  T softening_squared;
  Vec3<T>* accelerations;  // written at each target's input index
};

// Writes the acceleration of every target of `work` from its lists: each target's sum in T, in the
// lists' order (bodies, then cells), with the all-pairs kernels' full-accuracy 1/sqrt in float32
// (rsqrt and a Newton step) and the exact one in float64.
template <class T>
using GroupKernel = void (*)(const GroupWork<T>& work);

struct GroupKernels {
  GroupKernel<float> f32;
  GroupKernel<double> f64;
};

GroupKernels group_kernels_sse4_2();
GroupKernels group_kernels_avx2();
GroupKernels group_kernels_avx512f();

}  // namespace nbody::cpu::tree
