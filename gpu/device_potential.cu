// The device potential (nbody/gpu/device_potential.hpp): pairs j > i in float64 with the device's
// rsqrt, in chunks of j per thread, then per row, then over rows on the host.
#include <algorithm>
#include <cstddef>
#include <span>

#include "nbody/diagnostics.hpp"
#include "nbody/gpu/cuda_check.hpp"
#include "nbody/gpu/device_math.cuh"
#include "nbody/gpu/device_potential.hpp"
#include "nbody/physics.hpp"

namespace nbody::gpu {
namespace {

constexpr int kPotentialBlock = 128;
// The j range is cut into (at most) this many chunks, each summed by its own threads, which a
// second kernel adds per row. Whole rows (one thread each) took 11 ms at N = 65536, where block
// 0's rows alone are 65536 terms long: a chunk's length is the kernel's longest dependent chain.
// More chunks shorten it but cost chunks x N doubles of partial sums (2048-long chunks would take
// 4.3 GB at N = 1M, 67 GB at 4M).
constexpr int kPotentialChunks = 32;

// The chunks' length for `count` bodies: a multiple of the block, at least one block.
int potential_chunk_length(int count) {
  const int spread = (count + kPotentialChunks - 1) / kPotentialChunks;
  return std::max(1, (spread + kPotentialBlock - 1) / kPotentialBlock) * kPotentialBlock;
}

int potential_chunks(int count) {
  const int length = potential_chunk_length(count);
  return (count + length - 1) / length;
}

// partials[c][i] = the compensated sum of pair_potential over j > i in chunk c of the j range
// (chunks `chunk_length` long), in float64 (with the device's rsqrt). Written for every row i whose
// pairs reach into chunk c (c at least (i + 1) / chunk_length); blocks whose rows all lie beyond
// the chunk have nothing to do.
template <class T>
__global__ void __launch_bounds__(kPotentialBlock)
    potential_partials(const Body<T>* bodies, int count, int chunk_length, double softening_squared,
                       double* partials) {
  __shared__ Body<double> tile[kPotentialBlock];
  const int block_start = static_cast<int>(blockIdx.x) * kPotentialBlock;
  const int chunk = static_cast<int>(blockIdx.y);
  if (chunk < (block_start + 1) / chunk_length) return;  // uniform across the block
  const int i = block_start + static_cast<int>(threadIdx.x);
  const auto promoted = [&](int k) {
    const Body<T> b = bodies[k];
    return Body<double>{b.x, b.y, b.z, b.m};
  };
  const Body<double> bi = i < count ? promoted(i) : Body<double>{0, 0, 0, 0};
  const int chunk_end = min(count, (chunk + 1) * chunk_length);
  // Tiles wholly at or below the block's first row hold no j > i for any of its rows.
  const int first_tile = max(chunk * chunk_length, block_start / kPotentialBlock * kPotentialBlock);
  CompensatedSum row;
  for (int tile_start = first_tile; tile_start < chunk_end; tile_start += kPotentialBlock) {
    const int load = tile_start + static_cast<int>(threadIdx.x);
    tile[threadIdx.x] = load < chunk_end ? promoted(load) : Body<double>{0, 0, 0, 0};
    __syncthreads();
    const int tile_size = min(kPotentialBlock, chunk_end - tile_start);
    for (int k = 0; k < tile_size; ++k) {
      if (tile_start + k > i) {
        const Body<double>& bj = tile[k];
        row.add(pair_potential<double, DeviceInvSqrt>(bi.x, bi.y, bi.z, bi.m, bj.x, bj.y, bj.z,
                                                      bj.m, softening_squared));
      }
    }
    __syncthreads();  // the tile is overwritten next
  }
  if (i < count) partials[static_cast<std::size_t>(chunk) * count + i] = row.value();
}

// rows[i] = the compensated sum of row i's chunk sums, in chunk order.
__global__ void potential_rows(const double* partials, int count, int chunk_length, int chunks,
                               double* rows) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= count) return;
  CompensatedSum row;
  for (int chunk = (i + 1) / chunk_length; chunk < chunks; ++chunk) {
    row.add(partials[static_cast<std::size_t>(chunk) * count + i]);
  }
  rows[i] = row.value();
}

}  // namespace

template <class T>
DevicePotential<T>::DevicePotential(int count)
    : count_(count),
      partials_(static_cast<std::size_t>(potential_chunks(count)) *
                static_cast<std::size_t>(count)),
      rows_(static_cast<std::size_t>(count)),
      host_rows_(static_cast<std::size_t>(count)) {
  // CUDA loads a kernel at its first use: load these here, in setup, not in the first
  // conservation check (it made that check several times the later ones at N = 1K).
  cudaFuncAttributes attributes{};
  check_cuda(cudaFuncGetAttributes(&attributes, potential_partials<T>));
  check_cuda(cudaFuncGetAttributes(&attributes, potential_rows));
}

template <class T>
double DevicePotential<T>::sum(const Body<T>* bodies, double softening, const Stream& stream) {
  const unsigned row_blocks =
      static_cast<unsigned>((count_ + kPotentialBlock - 1) / kPotentialBlock);
  const int chunk_length = potential_chunk_length(count_);
  const int chunks = potential_chunks(count_);
  const dim3 grid(row_blocks, static_cast<unsigned>(chunks));
  potential_partials<T><<<grid, kPotentialBlock, 0, stream.get()>>>(
      bodies, count_, chunk_length, softening * softening, partials_.data());
  check_launch();
  potential_rows<<<row_blocks, kPotentialBlock, 0, stream.get()>>>(
      partials_.data(), count_, chunk_length, chunks, rows_.data());
  check_launch();
  check_cuda(cudaMemcpyAsync(host_rows_.data(), rows_.data(), rows_.bytes(), cudaMemcpyDeviceToHost,
                             stream.get()));
  stream.synchronize();
  return potential_from_rows(std::span<const double>(host_rows_.data(), host_rows_.size()));
}

template class DevicePotential<float>;
template class DevicePotential<double>;

}  // namespace nbody::gpu
