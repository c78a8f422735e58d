// The upward pass of the GPU tree: each level's cells from the level below (leaves from their
// bodies), by the suite's one moments arithmetic (nbody/multipole_physics.hpp). This file is
// compiled with -fmad=false (gpu/CMakeLists.txt): without contraction the device rounds every
// operation as the CPU build does, so both trees hold the same moments to the bit and make the
// same opening decisions. The pass moves a few bytes per body and is bound by memory, not by the
// FMAs it gives up.
#include "nbody/gpu/cuda_check.hpp"
#include "tree_kernels.cuh"

namespace nbody::gpu::tree::detail {
namespace {

template <class T>
__global__ void level_moments_kernel(const GpuCell* cells, std::uint32_t first, std::uint32_t count,
                                     const Body<T>* sorted, const std::uint64_t* keys,
                                     const BoundingCube* cube, double softening_squared,
                                     CellMoments* moments, CellCriterion* criterion,
                                     CellMultipole<T>* multipoles) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const std::uint32_t c = first + i;
  const GpuCell cell = cells[c];
  const Box cube_box = box_of(cell_cube(keys[cell.begin], cell.level, *cube));
  const CellMoments m =
      cell.child_count == 0
          ? moments_of_bodies<T>(sorted + cell.begin, cell.end - cell.begin, cube_box)
          : moments_of_children(moments + cell.first_child, cell.child_count, cube_box);
  moments[c] = m;
  criterion[c] = {m.centre.x, m.centre.y, m.centre.z, m.b_max};
  multipoles[c] = round_multipole<T>(m, softening_squared);
}

}  // namespace

template <class T>
void enqueue_level_moments(const GpuCell* cells, std::uint32_t first, std::uint32_t count,
                           const Body<T>* sorted, const std::uint64_t* keys,
                           const BoundingCube* cube, double softening_squared, CellMoments* moments,
                           CellCriterion* criterion, CellMultipole<T>* multipoles,
                           cudaStream_t stream) {
  constexpr int kThreads = 128;
  const unsigned blocks = (count + kThreads - 1) / kThreads;
  level_moments_kernel<T><<<blocks, kThreads, 0, stream>>>(
      cells, first, count, sorted, keys, cube, softening_squared, moments, criterion, multipoles);
  check_launch();
}

template void enqueue_level_moments<float>(const GpuCell*, std::uint32_t, std::uint32_t,
                                           const Body<float>*, const std::uint64_t*,
                                           const BoundingCube*, double, CellMoments*,
                                           CellCriterion*, CellMultipole<float>*, cudaStream_t);
template void enqueue_level_moments<double>(const GpuCell*, std::uint32_t, std::uint32_t,
                                            const Body<double>*, const std::uint64_t*,
                                            const BoundingCube*, double, CellMoments*,
                                            CellCriterion*, CellMultipole<double>*, cudaStream_t);

}  // namespace nbody::gpu::tree::detail
