#pragma once
// The checks of a loaded results file that its schema cannot express: values no measurement could
// have produced.
#include "nbody/results.hpp"

namespace nbody {

// Throws UsageError naming the first impossible value by its field path: a negative or non-finite
// time or rate, N = 0, a negative count, e.g. "results[3].kernel_rate.interactions_per_second is
// -5; it must be positive". A failed kernel's accuracy errors may be NaN (null in the file).
void check_results_values(const ResultsDocument& document);

}  // namespace nbody
