#pragma once
// Decomposition by target range: each rank or device owns a contiguous slice of the
// bodies and computes the accelerations of its slice from all N sources; the slices are then
// all-gathered. One type for both sides: CPU ranks (MPI) and GPU devices (NCCL) cut N alike.
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

namespace nbody {

// Bodies [begin, end) in body order; empty when begin == end (a rank with nothing to compute,
// where there are fewer bodies than ranks).
struct TargetRange {
  std::size_t begin = 0;
  std::size_t end = 0;

  std::size_t size() const { return end - begin; }
  bool operator==(const TargetRange&) const = default;
};

// Part `part` of `parts` of n targets: contiguous, in part order, covering [0, n); the first
// n % parts parts have one body more than the others, so the slowest part has at most one more.
inline TargetRange balanced_slice(std::size_t n, int part, int parts) {
  if (parts < 1 || part < 0 || part >= parts) {
    throw std::invalid_argument("balanced_slice: part " + std::to_string(part) + " of " +
                                std::to_string(parts));
  }
  const auto p = static_cast<std::size_t>(part);
  const auto count = static_cast<std::size_t>(parts);
  const std::size_t base = n / count, extra = n % count;
  const std::size_t begin = p * base + (p < extra ? p : extra);
  return {begin, begin + base + (p < extra ? 1 : 0)};
}

// The targets a run of n bodies computes when asked for `requested` (ExecutionOptions::targets):
// all n when empty. Throws std::invalid_argument for a range that is reversed or passes n.
inline TargetRange resolve_targets(const std::optional<TargetRange>& requested, std::size_t n) {
  if (!requested) return {0, n};
  if (requested->begin > requested->end || requested->end > n) {
    throw std::invalid_argument("target range [" + std::to_string(requested->begin) + ", " +
                                std::to_string(requested->end) + ") is not a slice of " +
                                std::to_string(n) + " bodies");
  }
  return *requested;
}

// Whether `requested` asks a run of n bodies for less than all of them.
inline bool is_partial(const std::optional<TargetRange>& requested, std::size_t n) {
  return requested && !(requested->begin == 0 && requested->end == n);
}

}  // namespace nbody
