#pragma once
// Every report format of a results document, written side by side into one folder. `run` writes
// them after each measurement (an interrupted run keeps a report of what it measured); `report`
// re-renders them from a results file.
#include <filesystem>
#include <vector>

#include "nbody/results.hpp"

namespace nbody::reports {

// Writes report.md (and the other formats) into `directory`, each atomically; returns the files
// written, in the order a reader would open them.
std::vector<std::filesystem::path> write_report_files(const ResultsDocument& document,
                                                      const std::filesystem::path& directory);

}  // namespace nbody::reports
