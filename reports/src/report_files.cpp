#include "nbody/reports/report_files.hpp"

#include "nbody/reports/analysis.hpp"
#include "nbody/reports/html_report.hpp"
#include "nbody/reports/markdown_report.hpp"

namespace nbody::reports {

std::vector<std::filesystem::path> write_report_files(const ResultsDocument& document,
                                                      const std::filesystem::path& directory) {
  std::vector<std::filesystem::path> written;
  write_markdown(document, directory);
  written.push_back(directory / "report.md");
  write_html(document, analyze(document), directory);
  written.push_back(directory / "report.html");
  return written;
}

}  // namespace nbody::reports
