#pragma once
// The checks of a loaded results file that its schema (docs/results.schema.json) cannot express:
// values no measurement could have produced, and records that contradict each other.
#include "nbody/results.hpp"

namespace nbody {

// Throws UsageError naming the first impossible value by its field path: a negative or non-finite
// time or rate, N = 0, a negative count, e.g. "results[3].kernel_rate.interactions_per_second is
// -5; it must be positive"; a timing's min_s above its median_s; a second result for the same
// implementation, initial condition and N; an ok result of a run without its kernel timing. A
// failed kernel's accuracy errors may be NaN (null in the file).
void check_results_values(const ResultsDocument& document);

}  // namespace nbody
