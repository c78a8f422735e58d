#pragma once
// How the CPU and the GPU tree codes cut their sorted bodies into groups of targets, each walked
// once (as Bonsai's groups): one rule for both, so that both walk the same groups and count the
// same interactions. A cell can be a group when it is a leaf or holds at most group_capacity
// bodies; below a cell that cannot, its children that can are taken in runs of consecutive
// siblings of at most group_capacity bodies together. The children of a cell just over the
// capacity so form one or two groups rather than eight small ones, which would leave most SIMD
// lanes and warp lanes idle and walk the tree four times as often.
#include <cstddef>
#include <cstdint>

#include "nbody/host_device.hpp"

namespace nbody {

// The trees' defaults, one for both sides, so that both build and walk the same tree. The error
// does not move with the leaf capacity; 24 builds fewer cells than 16 for as long a walk, on both
// sides (docs/perf-notes.md, "Leaves of 24").
inline constexpr std::size_t kDefaultLeafCapacity = 24;
inline constexpr std::size_t kDefaultGroupCapacity = 64;

NBODY_HOST_DEVICE inline bool can_be_target_group(std::uint32_t bodies, bool is_leaf,
                                                  std::uint32_t group_capacity) {
  return is_leaf || bodies <= group_capacity;
}

// Whether a sibling of `bodies` bodies that can be a group ends the run before it, which holds
// run_cells cells (0: none yet) of run_bodies bodies, and starts a new one.
NBODY_HOST_DEVICE inline bool starts_new_group_run(std::uint32_t run_cells,
                                                   std::uint32_t run_bodies, std::uint32_t bodies,
                                                   std::uint32_t group_capacity) {
  return run_cells == 0 || std::uint64_t{run_bodies} + bodies > group_capacity;
}

}  // namespace nbody
