#include "nbody/counters.hpp"

namespace nbody {

std::optional<double> find_metric(const std::map<std::string, double>& metrics,
                                  const std::string& name) {
  const auto it = metrics.find(name);
  if (it == metrics.end()) return std::nullopt;
  return it->second;
}

void to_json(nlohmann::json& j, const DerivedFigures& v) {
  j = nlohmann::json::object();
  // Absent figures are left out; a non-finite one (a zero time) is written as null by nlohmann.
#define NBODY_WRITE_FIGURE(name) \
  if (v.name) j[#name] = *v.name;
  NBODY_DERIVED_FIGURES(NBODY_WRITE_FIGURE)
#undef NBODY_WRITE_FIGURE
}

void from_json(const nlohmann::json& j, DerivedFigures& v) {
  v = {};
#define NBODY_READ_FIGURE(name) \
  if (const auto it = j.find(#name); it != j.end() && it->is_number()) v.name = it->get<double>();
  NBODY_DERIVED_FIGURES(NBODY_READ_FIGURE)
#undef NBODY_READ_FIGURE
}

void to_json(nlohmann::json& j, const CounterReadout& v) {
  j = {{"source", v.source},
       {"available", v.available()},
       {"metrics", v.metrics},
       {"derived", v.derived}};
  if (!v.available()) j["unavailable_reason"] = v.unavailable_reason;
}

void from_json(const nlohmann::json& j, CounterReadout& v) {
  v.source = j.value("source", std::string{});
  v.unavailable_reason = j.value("unavailable_reason", std::string{});
  if (!j.value("available", true) && v.unavailable_reason.empty()) {
    v.unavailable_reason = "unavailable";
  }
  v.metrics = j.value("metrics", std::map<std::string, double>{});
  v.derived = j.value("derived", DerivedFigures{});
}

}  // namespace nbody
