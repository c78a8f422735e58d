#pragma once
#include <algorithm>
#include <vector>

namespace nbody::reports {

// The median of a non-empty set of values (the mean of the middle two for an even count).
inline double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t half = values.size() / 2;
  return values.size() % 2 == 1 ? values[half] : (values[half - 1] + values[half]) / 2;
}

}  // namespace nbody::reports
