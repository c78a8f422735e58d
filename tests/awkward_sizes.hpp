#pragma once
// The sizes every kernel is checked at: one body, two, a few, one short of a warp, about a
// thousand, and one past a power of two, so that blocks, warps and SIMD tails are partly filled.
#include <cstddef>

namespace nbody::testing {

#ifdef NBODY_SANITIZED_BUILD
// The sanitizers watch memory, which 1031 bodies (past 1024: every SIMD width's and block's tail
// partly filled) exercise through the same paths as 4097, at a sixteenth of the all-pairs work.
// The optimized build checks 4097.
inline constexpr std::size_t kLargestAwkwardSize = 1031;
#else
inline constexpr std::size_t kLargestAwkwardSize = 4097;
#endif
inline constexpr std::size_t kAwkwardSizes[] = {1, 2, 7, 31, 1000, kLargestAwkwardSize};

}  // namespace nbody::testing
