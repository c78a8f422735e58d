// Which devices a run measured, and where one is missing, why and what would give the ratio.
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "nbody/reports/analysis.hpp"

namespace nbody::reports {
namespace {

bool measured(const ResultsDocument& doc, DeviceKind device) {
  const auto on_device = [&](const std::string& name) {
    const ImplementationRecord* impl = find_implementation(doc, name);
    return impl != nullptr && impl->device == device;
  };
  const bool run = std::any_of(doc.results.begin(), doc.results.end(), [&](const ResultRecord& r) {
    return r.status == Status::ok && on_device(r.implementation);
  });
  return run || std::any_of(doc.simulations.begin(), doc.simulations.end(),
                            [&](const SimulationRecord& s) {
                              return s.status == Status::ok && on_device(s.implementation);
                            });
}

// The first reason a device's measurements give for not being ok (skipped or failed).
std::string first_reason(const ResultsDocument& doc, DeviceKind device) {
  const auto reason_of = [&](const std::string& name, const std::string& reason) {
    const ImplementationRecord* impl = find_implementation(doc, name);
    return impl != nullptr && impl->device == device && !reason.empty();
  };
  for (const ResultRecord& r : doc.results) {
    if (reason_of(r.implementation, r.reason)) return r.reason;
  }
  for (const SimulationRecord& s : doc.simulations) {
    if (reason_of(s.implementation, s.reason)) return s.reason;
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
