#pragma once
// The sequence `run` and `simulate` share: the output folder made ready where it is written,
// results.json and the reports rewritten at every checkpoint (an interrupted run keeps what it
// measured), the summary and the files written said at the end.
#include <filesystem>
#include <functional>
#include <vector>

#include "command_line/processes.hpp"
#include "nbody/results.hpp"

namespace nbody::commands {

class ReportedSuite {
 public:
  // Prepares `folder` (Processes::prepare_output; `replace`: --replace): call it once the input is
  // known to be good.
  ReportedSuite(Processes& processes, std::filesystem::path folder, bool replace);

  // For SuiteContext::checkpoint: empty where this process does not write. Borrows this object.
  std::function<void(const ResultsDocument&)> checkpoint();

  // The summary and the files written, where this process writes; the exit code.
  int finish(const ResultsDocument& doc) const;

 private:
  const Processes& processes_;
  std::filesystem::path folder_;
  std::vector<std::filesystem::path> reports_written_;
};

// 130 when interrupted, 1 when a measurement or simulation failed, else 0.
int exit_code(const ResultsDocument& doc);

}  // namespace nbody::commands
