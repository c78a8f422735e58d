#pragma once
// The float64 reference (FAIRNESS.md rule 2): exact 1/sqrt and Neumaier-compensated sums, spread
// over all cores with oneTBB, optionally cached on disk keyed by the input hash.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <vector>

#include "nbody/bodies.hpp"

namespace nbody {

// Accelerations of the bodies whose indices are in `targets`, in that order.
std::vector<Vec3<double>> reference_accelerations(std::span<const Body<double>> bodies,
                                                  double softening,
                                                  std::span<const std::uint32_t> targets);

// Which bodies to validate: all of them up to `max_targets`, otherwise `max_targets` indices
// spread evenly over [0, n), always including the first and the last body.
std::vector<std::uint32_t> validation_targets(std::size_t n, std::size_t max_targets);

// Reference results on disk, keyed by (input hash, softening, targets). An empty directory disables
// the cache. A damaged or mismatched file is ignored and recomputed.
class ReferenceCache {
 public:
  explicit ReferenceCache(std::filesystem::path directory) : directory_(std::move(directory)) {}

  // The default location (also of the ceilings): $NBODY_FAIR_CACHE_DIR, else
  // $XDG_CACHE_HOME/nbody-fair, else
  // ~/.cache/nbody-fair; empty when none can be determined.
  static std::filesystem::path default_directory();

  std::vector<Vec3<double>> get_or_compute(std::span<const Body<double>> bodies, double softening,
                                           std::span<const std::uint32_t> targets) const;

 private:
  std::filesystem::path directory_;
};

}  // namespace nbody
