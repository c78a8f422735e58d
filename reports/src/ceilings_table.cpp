#include "nbody/reports/ceilings_table.hpp"

#include <array>
#include <cmath>

#include <fmt/core.h>

namespace nbody::reports {
namespace {

std::string cell_value(const nlohmann::json& figure, const std::string& unit) {
  if (!figure.is_object() || !figure.contains("value") || !figure["value"].is_number()) return "";
  return format_si(figure["value"].get<double>(), unit);
}

// Pipes would end a Markdown table cell.
std::string escape_cell(std::string text) {
  for (std::size_t at = 0; (at = text.find('|', at)) != std::string::npos; at += 2) {
    text.replace(at, 1, "\\|");
  }
  return text;
}

}  // namespace

std::string format_si(double value, const std::string& unit) {
  static constexpr std::array<std::pair<double, const char*>, 5> kPrefixes = {
      {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
  if (!std::isfinite(value)) return "n/a";
  for (const auto& [scale, prefix] : kPrefixes) {
    if (std::fabs(value) >= scale) return fmt::format("{:.3g} {}{}", value / scale, prefix, unit);
  }
  return fmt::format("{:.3g} {}", value, unit);
}

std::string render_ceilings_table(const nlohmann::json& ceilings) {
  if (!ceilings.is_object() || !ceilings.contains("entries")) {
    return "No ceilings were measured.\n";
  }
  std::string out;
  const nlohmann::json machine = ceilings.value("machine", nlohmann::json::object());
  std::string gpus;
  for (const nlohmann::json& gpu : machine.value("gpus", nlohmann::json::array())) {
    gpus += (gpus.empty() ? "" : ", ") + gpu.value("name", std::string("?"));
  }
  out +=
      fmt::format("Ceilings of {} ({}, {} logical CPUs{}{}), measured {}{}.\n\n",
                  machine.value("hostname", std::string("?")),
                  machine.value("cpu_model", std::string("?")), machine.value("logical_cpus", 0),
                  gpus.empty() ? "" : "; ", gpus, ceilings.value("measured_at", std::string("?")),
                  ceilings.value("from_cache", false)
                      ? " (from the cache " + ceilings.value("cache_file", std::string()) + ")"
                      : "");
  out += "| Ceiling | Measured | Datasheet | Theoretical | Threads | How measured |\n";
  out += "|---|---:|---:|---:|---:|---|\n";
  for (const nlohmann::json& e : ceilings["entries"]) {
    const std::string unit = e.value("unit", std::string());
    const nlohmann::json threads = e.value("threads", nlohmann::json());
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", e.value("name", std::string("?")),
                       format_si(e.value("value", 0.0), unit),
                       cell_value(e.value("datasheet", nlohmann::json()), unit),
                       cell_value(e.value("theoretical", nlohmann::json()), unit),
                       threads.is_number() ? std::to_string(threads.get<int>()) : "",
                       escape_cell(e.value("method", std::string())));
  }
  const nlohmann::json warnings = ceilings.value("warnings", nlohmann::json::array());
  if (!warnings.empty()) {
    out += "\n**These ceilings may read low** (used for this run only, not cached):\n";
    for (const nlohmann::json& w : warnings) out += "- " + w.get<std::string>() + "\n";
  }
  const nlohmann::json unavailable = ceilings.value("unavailable", nlohmann::json::array());
  if (!unavailable.empty()) {
    out += "\nNot measured:\n";
    for (const nlohmann::json& u : unavailable) {
      out += fmt::format("- {}: {}\n", u.value("name", std::string("?")),
                         u.value("reason", std::string("?")));
    }
  }
  return out;
}

}  // namespace nbody::reports
