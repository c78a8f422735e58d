#include "nbody/app/rank_energy.hpp"

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "nbody/energy_meter.hpp"
#include "nbody/results.hpp"

namespace nbody {
namespace {

namespace distributed = nbody::distributed;

std::set<int> parse_packages(const std::string& text) {
  std::set<int> packages;
  for (const int p : nlohmann::json::parse(text).get<std::vector<int>>()) packages.insert(p);
  return packages;
}

// Every rank's record of `device`, combined on every rank alike.
EnergyMeterRecord combined_record(distributed::Decomposition& decomposition,
                                  const EnergyMeterRecord& own) {
  std::vector<EnergyMeterRecord> records;
  std::vector<std::string> labels;
  int rank = 0;
  for (const std::string& text : decomposition.gather_strings(nlohmann::json(own).dump())) {
    records.push_back(nlohmann::json::parse(text).get<EnergyMeterRecord>());
    labels.push_back(fmt::format("rank {}", rank++));
  }
  return combine_energy_records(records, labels);
}

std::optional<EnergyStatistics> sum_over_ranks(distributed::Decomposition& decomposition,
                                               const std::optional<EnergyStatistics>& own) {
  const nlohmann::json mine = own ? nlohmann::json(*own) : nlohmann::json(nullptr);
  std::vector<std::optional<EnergyStatistics>> figures;
  for (const std::string& text : decomposition.gather_strings(mine.dump())) {
    const nlohmann::json figure = nlohmann::json::parse(text);
    if (figure.is_null()) {
      figures.emplace_back();
    } else {
      figures.push_back(figure.get<EnergyStatistics>());
    }
  }
  return sum_energy(figures);
}

}  // namespace

std::set<int> packages_this_rank_meters(distributed::Decomposition& decomposition,
                                        std::span<const std::string> hosts,
                                        const std::set<int>& packages) {
  std::vector<std::set<int>> every;
  for (const std::string& text : decomposition.gather_strings(nlohmann::json(packages).dump())) {
    every.push_back(parse_packages(text));
  }
  return packages_first_used(static_cast<std::size_t>(decomposition.rank()), hosts, every);
}

EnergyMeters join_rank_energy(distributed::Decomposition& decomposition, EnergyMeters own) {
  decomposition.agree_asleep(distributed::AgreementPoint::decision);
  EnergyMeters::AcrossProcesses across{
      .cpu = combined_record(decomposition, own.cpu.record),
      .gpu = combined_record(decomposition, own.gpu.record),
      .sum =
          [&decomposition](const std::optional<EnergyStatistics>& figure) {
            return sum_over_ranks(decomposition, figure);
          },
      .all_opened = [&decomposition] { decomposition.max_over_ranks(0); }};
  // A device not read on every rank is read on none: no window opens.
  if (!across.cpu.available) own.cpu.meter.reset();
  if (!across.gpu.available) own.gpu.meter.reset();
  own.across_processes = std::move(across);
  return own;
}

}  // namespace nbody
