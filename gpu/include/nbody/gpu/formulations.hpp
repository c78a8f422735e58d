#pragma once
// The GPU formulations in gpu/, one registration function per file, and their tolerances.
#include <vector>

#include "nbody/registry.hpp"

namespace nbody {

// Every GPU formulation, added to a registry (gpu/register_gpu.cu lists them).
void register_gpu_implementations(Registry& registry);

}  // namespace nbody

namespace nbody::gpu {

void register_gpu_aos(Registry& registry);
void register_gpu_shared(Registry& registry);
void register_gpu_atomic(Registry& registry);
void register_gpu_shuffle(Registry& registry);
void register_gpu_tuned(Registry& registry);

// Other shapes of gpu.tuned (bodies per thread, block size, unroll), named "gpu.tuned[8x128u4]":
// not registered; the tuning tool nbody-gpu-bench times them with --variants.
std::vector<Implementation> tuned_variants();

// Measured on an H100 over both generators and N = 1 .. 65536, with margin (docs/tolerances.md).
Tolerance gpu_float32_tolerance();
Tolerance gpu_float64_tolerance();

}  // namespace nbody::gpu
