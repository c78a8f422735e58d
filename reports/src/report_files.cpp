#include "nbody/reports/report_files.hpp"

#include "nbody/files.hpp"
#include "nbody/reports/analysis.hpp"
#include "nbody/reports/csv_report.hpp"
#include "nbody/reports/html_report.hpp"
#include "nbody/reports/markdown_report.hpp"

namespace nbody::reports {

std::vector<std::filesystem::path> write_report_files(const ResultsDocument& document,
                                                      const std::filesystem::path& directory) {
  // Analyzed once: every printer formats the same analysis.
  const Analysis analysis = analyze(document);
  std::vector<std::filesystem::path> written;
  write_markdown(document, analysis, directory);
  written.push_back(directory / "report.md");
  write_html(document, analysis, directory);
  written.push_back(directory / "report.html");
  write_file_atomically(directory / "results.csv", render_csv(document, analysis));
  written.push_back(directory / "results.csv");
  return written;
}

}  // namespace nbody::reports
