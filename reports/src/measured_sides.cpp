// Which devices a run measured, and where one is missing, why and what would give the ratio.
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "nbody/reports/analysis.hpp"

namespace nbody::reports {
namespace {

// Whether the record of implementation `name` is one of `device`'s.
bool on_device(const ResultsDocument& doc, const std::string& name, DeviceKind device) {
  const ImplementationRecord* impl = find_implementation(doc, name);
  return impl != nullptr && impl->device == device;
}

bool measured(const ResultsDocument& doc, DeviceKind device) {
  const auto ok = [&](const auto& record) {
    return record.status == Status::ok && on_device(doc, record.implementation, device);
  };
  return std::any_of(doc.results.begin(), doc.results.end(), ok) ||
         std::any_of(doc.simulations.begin(), doc.simulations.end(), ok);
}

// The first reason a device's measurements give for not being ok (skipped or failed).
std::string first_reason(const ResultsDocument& doc, DeviceKind device) {
  const auto said = [&](const auto& record) {
    return !record.reason.empty() && on_device(doc, record.implementation, device);
  };
  if (const auto r = std::find_if(doc.results.begin(), doc.results.end(), said);
      r != doc.results.end()) {
    return r->reason;
  }
  if (const auto s = std::find_if(doc.simulations.begin(), doc.simulations.end(), said);
      s != doc.simulations.end()) {
    return s->reason;
  }
  return "every measurement on it was skipped or failed";
}

// Why `device` was not measured, said of this build and machine.
std::string why_not(const ResultsDocument& doc, DeviceKind device) {
  if (device == DeviceKind::gpu && doc.build.cuda_compiler.empty()) {
    return "this nbody-fair was built without CUDA (a CPU-only build)";
  }
  const auto first =
      std::find_if(doc.implementations.begin(), doc.implementations.end(),
                   [&](const ImplementationRecord& i) { return i.device == device; });
  if (first == doc.implementations.end()) {
    return fmt::format("no {} formulation was selected (--impl '{}')",
                       device == DeviceKind::gpu ? "GPU" : "CPU",
                       doc.settings.implementation_pattern);
  }
  const auto unavailable = std::find_if(
      doc.implementations.begin(), doc.implementations.end(),
      [&](const ImplementationRecord& i) { return i.device == device && !i.available; });
  if (unavailable != doc.implementations.end()) return unavailable->unavailable_reason;
  return first_reason(doc, device);
}

std::string remedy(const ResultsDocument& doc, DeviceKind missing) {
  if (missing == DeviceKind::cpu) {
    return "run again with CPU formulations selected (no --impl, or one that takes cpu.*)";
  }
  if (doc.build.cuda_compiler.empty()) {
    return "install the CUDA toolkit (nvcc) and rebuild on a machine with an NVIDIA GPU and its "
           "driver, then run again there";
  }
  return "run the same command on a machine with an NVIDIA GPU and its driver (README, \"Two "
         "commands\"), where both sides are measured";
}

}  // namespace

MeasuredSides measured_sides(const ResultsDocument& doc) {
  MeasuredSides sides{.cpu = measured(doc, DeviceKind::cpu), .gpu = measured(doc, DeviceKind::gpu)};
  if (sides.compares()) return sides;
  const DeviceKind absent = sides.gpu ? DeviceKind::cpu : DeviceKind::gpu;
  sides.missing_side = !sides.gpu && !sides.cpu    ? "nothing measured"
                       : absent == DeviceKind::gpu ? "no GPU measured"
                                                   : "no CPU measured";
  sides.missing = fmt::format("{}: {}", sides.missing_side, why_not(doc, absent));
  sides.remedy = remedy(doc, absent);
  return sides;
}

}  // namespace nbody::reports
