#include "nbody/reports/ceilings_table.hpp"

#include <array>
#include <cmath>

#include <fmt/core.h>

namespace nbody::reports {
namespace {

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
  static constexpr std::array<std::pair<double, const char*>, 3> kSubunitPrefixes = {
      {{1e-3, "m"}, {1e-6, "µ"}, {1e-9, "n"}}};  // times (an all-gather's latency)
  for (const auto& [scale, prefix] : kPrefixes) {
    if (std::fabs(value) >= scale) return fmt::format("{:.3g} {}{}", value / scale, prefix, unit);
  }
  if (value != 0 && std::fabs(value) < 1) {
    for (const auto& [scale, prefix] : kSubunitPrefixes) {
      if (std::fabs(value) >= scale) {
        return fmt::format("{:.3g} {}{}", value / scale, prefix, unit);
      }
    }
  }
  return fmt::format("{:.3g} {}", value, unit);
}

std::string render_ceilings_table(const std::optional<Ceilings>& measured) {
  if (!measured) return "No ceilings were measured.\n";
  const Ceilings& ceilings = *measured;
  std::string out;
  std::string gpus;
  for (const GpuFingerprint& gpu : ceilings.machine.gpus) {
    gpus += (gpus.empty() ? "" : ", ") + gpu.name;
  }
  out += fmt::format("Ceilings of {} ({}, {} logical CPUs{}{}), measured {}{}.\n\n",
                     ceilings.machine.hostname, ceilings.machine.cpu_model,
                     ceilings.machine.logical_cpus, gpus.empty() ? "" : "; ", gpus,
                     ceilings.measured_at,
                     ceilings.from_cache ? " (from the cache " + ceilings.cache_file + ")" : "");
  out += "| Ceiling | Measured | Datasheet | Theoretical | Threads | How measured |\n";
  out += "|---|---:|---:|---:|---:|---|\n";
  for (const CeilingEntry& e : ceilings.entries) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", e.name, format_si(e.value, e.unit),
                       e.datasheet ? format_si(e.datasheet->value, e.unit) : "",
                       e.theoretical ? format_si(e.theoretical->value, e.unit) : "",
                       e.threads ? std::to_string(*e.threads) : "", escape_cell(e.method));
  }
  if (!ceilings.warnings.empty()) {
    out += "\n**These ceilings may read low** (used for this run only, not cached):\n";
    for (const std::string& w : ceilings.warnings) out += "- " + w + "\n";
  }
  if (!ceilings.unavailable.empty()) {
    out += "\nNot measured:\n";
    for (const UnavailableCeiling& u : ceilings.unavailable) {
      out += fmt::format("- {}: {}\n", u.name, u.reason);
    }
  }
  return out;
}

}  // namespace nbody::reports
