#pragma once
// Several runs of one side of a comparison (the same build, back to back) as one document: each
// measurement's time the median over the runs, each run first divided by its own shift against
// the others, so that a run the machine slowed down does not pull every median. On a shared machine
// single measurements stray by tens of percent from one run to the next; the median of three is
// what a verdict can stand on (docs/perf-notes.md, "compare on a shared machine").
#include <cstddef>
#include <span>

#include "nbody/results.hpp"

namespace nbody::reports {

struct RunSet {
  ResultsDocument combined;  // the first run's document, its timings those of the set
  std::size_t runs = 0;
  // 1.4826 x the median absolute deviation of each run's log time from the set's, over every
  // measurement timed in every run (each run's shift removed): one measurement's scatter from one
  // run to the next, as a standard deviation of its log. 0 for one run.
  double scatter = 0;
};

// The device an implementation of `doc` runs on (by its record; by its name in older files).
DeviceKind device_of(const ResultsDocument& doc, const std::string& implementation);

// The runs must be of one command and problem (compare_results checks it first). Throws
// UsageError where `runs` is empty.
RunSet combine_runs(std::span<const ResultsDocument> runs);

}  // namespace nbody::reports
