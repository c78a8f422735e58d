#pragma once
// Several runs of one side of a comparison (the same build, back to back) as one document: each
// measurement's fastest repetition the fastest over the runs, each run first divided by its own
// shift against the others, so that a run the machine slowed down as a whole does not decide. On a
// shared machine other tenants only ever slow a measurement down, by tens of percent now and then:
// the fastest of three runs is the time least disturbed (docs/perf-notes.md, "compare on a shared
// machine").
#include <cstddef>
#include <map>
#include <span>

#include "nbody/results.hpp"

namespace nbody::reports {

struct RunSet {
  ResultsDocument combined;  // the first run's document, its timings those of the set
  std::size_t runs = 0;
  // 1.4826 x the median absolute deviation of each run's log fastest time from the set's median,
  // over every measurement timed in every run (each run's shift removed): one measurement's
  // scatter from one run to the next, as a standard deviation of its log. 0 for one run.
  double scatter = 0;
  // Per device, the largest shift between two of the set's runs (the slowest run's over the
  // fastest's, as a ratio): how far the machine moved between unchanged runs. Absent for one run.
  std::map<DeviceKind, double> run_drift;
};

// The time a verdict stands on: the fastest repetition (interference from other processes only
// adds time; Chen & Revels, "Robust benchmarking in noisy environments", 2016), or the median
// where a record has no samples.
double fastest_s(const TimingStatistics& kernel);

// The device an implementation of `doc` runs on (by its record; by its name in older files).
DeviceKind device_of(const ResultsDocument& doc, const std::string& implementation);

// The runs must be of one command and problem (compare_results checks it first). Throws
// UsageError where `runs` is empty.
RunSet combine_runs(std::span<const ResultsDocument> runs);

}  // namespace nbody::reports
