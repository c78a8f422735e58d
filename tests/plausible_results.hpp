#pragma once
// A results document whose values a measurement could have produced, four records deep: the
// starting point of tests that spoil one value.
#include <nlohmann/json.hpp>

#include "nbody/results.hpp"

namespace nbody::testing {

inline nlohmann::json plausible_results() {
  ResultsDocument doc;
  doc.settings.sizes = {7, 31};
  for (const std::size_t n : {7, 31, 64, 128}) {
    ResultRecord r;
    r.implementation = "cpu.soa";
    r.n = n;
    r.kernel = TimingStatistics{.repetitions = 2, .samples_s = {1e-6, 2e-6}, .median_s = 1.5e-6};
    r.kernel_rate = RateFigures{.interactions_per_second = 1e9};
    doc.results.push_back(r);
  }
  return doc;
}

}  // namespace nbody::testing
