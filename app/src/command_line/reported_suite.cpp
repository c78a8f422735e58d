#include "command_line/reported_suite.hpp"

#include <utility>

#include <fmt/format.h>

#include "command_line/exit_codes.hpp"
#include "nbody/reports/markdown_report.hpp"
#include "nbody/reports/report_files.hpp"

namespace nbody::commands {

ReportedSuite::ReportedSuite(Processes& processes, std::filesystem::path folder, bool replace)
    : processes_(processes), folder_(std::move(folder)) {
  processes.prepare_output(folder_, replace);
}

std::function<void(const ResultsDocument&)> ReportedSuite::checkpoint() {
  if (!processes_.writes()) return nullptr;
  return [this](const ResultsDocument& doc) {
    save_results(doc, folder_ / "results.json");
    reports_written_ = reports::write_report_files(doc, folder_);
  };
}

int ReportedSuite::finish(const ResultsDocument& doc) const {
  if (processes_.writes()) {
    fmt::print("{}", reports::render_summary(doc));
    fmt::print("\nwrote {}", (folder_ / "results.json").string());
    for (const std::filesystem::path& file : reports_written_) fmt::print(", {}", file.string());
    fmt::print("\n");
    if (doc.interrupted) {
      const bool simulation = kind_of(doc.settings) == DocumentKind::simulate;
      fmt::print(stderr, "nbody-fair: interrupted; kept {} {}\n",
                 simulation ? doc.simulations.size() : doc.results.size(),
                 simulation ? "simulations" : "measurements");
    }
  }
  return exit_code(doc);
}

int exit_code(const ResultsDocument& doc) {
  if (doc.interrupted) return kExitInterrupted;
  for (const ResultRecord& r : doc.results) {
    if (r.status == Status::failed) return kExitFailed;
  }
  for (const SimulationRecord& r : doc.simulations) {
    if (r.status == Status::failed) return kExitFailed;
  }
  return 0;
}

}  // namespace nbody::commands
