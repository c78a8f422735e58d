// Energy per evaluation on both sides (FAIRNESS.md rule 10), from what each timing's device
// counters read, and when a GPU/CPU energy ratio may be formed.
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "nbody/reports/analysis.hpp"

namespace nbody::reports {
namespace {

const EnergyMeterRecord* meter_of(const ResultsDocument& doc, DeviceKind device) {
  for (const EnergyMeterRecord& m : doc.energy) {
    if (m.device == device) return &m;
  }
  return nullptr;
}

std::string side_name(DeviceKind device) {
  return device == DeviceKind::gpu ? "the GPU's" : "the CPU's";
}

// Why the two sides' energy cannot be set against each other, or empty where it can: both read,
// alike, within one run.
std::string why_no_energy_ratio(const ResultsDocument& doc) {
  if (doc.energy.empty()) {
    return kind_of(doc.settings) == DocumentKind::validate
               ? "validate times nothing, so it reads no energy"
               : "the run read no energy (results written before version 10)";
  }
  if (!doc.sides_from.empty()) {
    return "energy is compared within one run only, and the two sides come from two runs";
  }
  for (const DeviceKind device : {DeviceKind::cpu, DeviceKind::gpu}) {
    const EnergyMeterRecord* m = meter_of(doc, device);
    if (m == nullptr)
      return fmt::format("{} energy was not read: no formulation of it ran", side_name(device));
    if (!m->available) {
      return fmt::format("{} energy is not read: {}", side_name(device), m->unavailable_reason);
    }
  }
  const EnergyMeterRecord* cpu = meter_of(doc, DeviceKind::cpu);
  const EnergyMeterRecord* gpu = meter_of(doc, DeviceKind::gpu);
  if (cpu->idle_accounting != gpu->idle_accounting) {
    return fmt::format("idle power is {} on the CPU but {} on the GPU", cpu->idle_accounting,
                       gpu->idle_accounting);
  }
  return {};
}

// The energy of the kernel's evaluations: its timing's, or where the kernel was timed alone (a GPU
// kernel under 1 ms) the end-to-end timing's, copies included.
const EnergyStatistics* energy_of(const ResultRecord& r) {
  if (r.kernel && r.kernel->energy) return &*r.kernel->energy;
  if (r.end_to_end && r.end_to_end->energy) return &*r.end_to_end->energy;
  return nullptr;
}

}  // namespace

std::optional<EnergyFigure> energy_figure(const ResultsDocument& doc, const ResultRecord& r) {
  const EnergyStatistics* found = energy_of(r);
  if (found == nullptr || found->evaluations <= 0) return std::nullopt;
  const EnergyStatistics& e = *found;
  if (!(e.per_evaluation_j > 0)) return std::nullopt;
  const ImplementationRecord* impl = find_implementation(doc, r.implementation);
  const EnergyMeterRecord* meter = impl ? meter_of(doc, impl->device) : nullptr;
  EnergyFigure f{.joules_per_evaluation = e.per_evaluation_j,
                 .low_j = e.ci_low_j,
                 .high_j = e.ci_high_j,
                 .mean_watts = e.mean_watts,
                 .idle_watts = meter ? meter->idle_total_watts() : 0,
                 .interactions_per_joule = std::nullopt,
                 .bodies_per_joule = static_cast<double>(r.n) / e.per_evaluation_j,
                 .periods_spanned = e.periods_spanned,
                 .resolved = e.resolved};
  if (r.interactions_credited > 0) {
    f.interactions_per_joule = r.interactions_credited / e.per_evaluation_j;
  }
  return f;
}

std::optional<RateRatio> energy_ratio(const EnergyFigure& gpu, const EnergyFigure& cpu) {
  if (!gpu.resolved || !cpu.resolved) return std::nullopt;
  return RateRatio{.value = cpu.joules_per_evaluation / gpu.joules_per_evaluation,
                   .low = gpu.high_j > 0 ? cpu.low_j / gpu.high_j : 0,
                   .high = gpu.low_j > 0 ? cpu.high_j / gpu.low_j : 0};
}

EnergyAnalysis analyze_energy(const ResultsDocument& doc) {
  EnergyAnalysis a;
  for (const EnergyMeterRecord& m : doc.energy) {
    a.devices.push_back({.device = m.device,
                         .measured = m.available,
                         .source = m.source,
                         .domains = m.domains,
                         .idle_watts = m.idle_total_watts(),
                         .update_period_s = m.update_period_s,
                         .limit_watts = m.limit_watts,
                         .unavailable_reason = m.unavailable_reason});
    a.idle_accounting = m.idle_accounting;
  }
  for (const ResultRecord& r : doc.results) {
    const std::optional<EnergyFigure>& f = a.of_results.emplace_back(energy_figure(doc, r));
    const ImplementationRecord* impl = find_implementation(doc, r.implementation);
    if (impl == nullptr || r.status != Status::ok || !r.kernel || !f) continue;
    a.points.push_back({.implementation = r.implementation,
                        .device = impl->device,
                        .n = r.n,
                        .seconds = r.kernel->median_s,
                        .energy = *f});
  }
  a.no_ratio_reason = why_no_energy_ratio(doc);
  return a;
}

void add_energy_ratios(Analysis& a) {
  if (!a.energy.compares()) return;
  const auto ratio = [](const std::optional<RateFigure>& gpu,
                        const std::optional<RateFigure>& cpu) {
    return gpu && cpu && gpu->energy && cpu->energy ? energy_ratio(*gpu->energy, *cpu->energy)
                                                    : std::nullopt;
  };
  for (HeadlineRow& row : a.headline.rows) {
    row.best_energy_ratio = ratio(row.best_gpu, row.best_cpu);
    row.naive_energy_ratio = ratio(row.naive_gpu, row.naive_cpu);
  }
  for (BarHeadlineRow& row : a.algorithms.rows) {
    if (row.gpu && row.cpu && row.gpu->energy && row.cpu->energy) {
      row.energy_ratio = energy_ratio(*row.gpu->energy, *row.cpu->energy);
    }
  }
}

}  // namespace nbody::reports
