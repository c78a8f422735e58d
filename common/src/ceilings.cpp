#include "nbody/ceilings.hpp"

#include <fmt/format.h>

#include "nbody/json_optional.hpp"

namespace nbody {

std::string cpu_fp32_flops_ceiling(std::string_view isa, bool all_cores) {
  return fmt::format("cpu.fp32_flops.{}.{}", isa, all_cores ? "all_cores" : "one_core");
}

std::string cpu_fp64_flops_ceiling(std::string_view isa, bool all_cores) {
  return fmt::format("cpu.fp64_flops.{}.{}", isa, all_cores ? "all_cores" : "one_core");
}

std::string cpu_flops_ceiling(Precision precision, std::string_view isa, bool all_cores) {
  return precision == Precision::f64 ? cpu_fp64_flops_ceiling(isa, all_cores)
                                     : cpu_fp32_flops_ceiling(isa, all_cores);
}

const CeilingEntry* Ceilings::find(std::string_view name) const {
  for (const CeilingEntry& e : entries) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::optional<double> Ceilings::value(std::string_view name) const {
  const CeilingEntry* e = find(name);
  if (e == nullptr) return std::nullopt;
  return e->value;
}

std::optional<double> Ceilings::datasheet_value(std::string_view name) const {
  const CeilingEntry* e = find(name);
  if (e == nullptr || !e->datasheet) return std::nullopt;
  return e->datasheet->value;
}

// Fields of one kind of entry only are written where they apply.
void to_json(nlohmann::json& j, const CeilingEntry& v) {
  j = {{"name", v.name},           {"device", v.device},
       {"quantity", v.quantity},   {"value", v.value},
       {"unit", v.unit},           {"method", v.method},
       {"datasheet", v.datasheet}, {"theoretical", v.theoretical},
       {"threads", v.threads}};
  if (!v.isa.empty()) j["isa"] = v.isa;
  if (v.lanes != 0) j["lanes"] = v.lanes;
  if (v.fp_instructions_per_second) j["fp_instructions_per_second"] = *v.fp_instructions_per_second;
  if (!v.device_name.empty()) j["device_name"] = v.device_name;
  if (!v.datasheet_note.empty()) j["datasheet_note"] = v.datasheet_note;
}

void from_json(const nlohmann::json& j, CeilingEntry& v) {
  const CeilingEntry defaults;
  v.name = j.value("name", defaults.name);
  v.device = j.value("device", defaults.device);
  v.quantity = j.value("quantity", defaults.quantity);
  v.value = j.value("value", defaults.value);
  v.unit = j.value("unit", defaults.unit);
  v.method = j.value("method", defaults.method);
  v.datasheet = j.value("datasheet", defaults.datasheet);
  v.theoretical = j.value("theoretical", defaults.theoretical);
  v.threads = j.value("threads", defaults.threads);
  v.isa = j.value("isa", defaults.isa);
  v.lanes = j.value("lanes", defaults.lanes);
  v.fp_instructions_per_second =
      j.value("fp_instructions_per_second", defaults.fp_instructions_per_second);
  v.device_name = j.value("device_name", defaults.device_name);
  v.datasheet_note = j.value("datasheet_note", defaults.datasheet_note);
}

}  // namespace nbody
