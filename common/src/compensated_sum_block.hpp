#pragma once
// Neumaier's improvement of Kahan summation for Block sums side by side (the float64 reference's
// targets, the diagnostics' potential rows): the error does not grow with the number of terms.
// Written with selects rather than branches, and as arrays indexed by lane, so that the compiler
// vectorizes a block's sums; each sum's operations and their order are those of one
// CompensatedSum alone, so the results are bit-identical either way.
#include <array>
#include <cmath>
#include <cstddef>

#include "nbody/host_device.hpp"

namespace nbody {

template <std::size_t Block>
struct CompensatedSumBlock {
  std::array<double, Block> sum{};
  std::array<double, Block> compensation{};

  NBODY_FORCE_INLINE void add(std::size_t q, double value) {
    const double t = sum[q] + value;
    const bool sum_larger = std::abs(sum[q]) >= std::abs(value);
    const double larger = sum_larger ? sum[q] : value;
    const double smaller = sum_larger ? value : sum[q];
    compensation[q] += (larger - t) + smaller;
    sum[q] = t;
  }
  double value(std::size_t q) const { return sum[q] + compensation[q]; }
};

}  // namespace nbody
