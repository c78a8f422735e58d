// Two runs of one problem, one side each, as one document for the reports.
#include "nbody/reports/combined_sides.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "nbody/errors.hpp"
#include "nbody/reports/analysis.hpp"

namespace nbody::reports {
namespace {

const char* option_of(DeviceKind device) {
  return device == DeviceKind::cpu ? "--cpu-from" : "--gpu-from";
}

bool on_device(const ResultsDocument& doc, const std::string& name, DeviceKind device) {
  const ImplementationRecord* impl = find_implementation(doc, name);
  return impl != nullptr && impl->device == device;
}

// A side must be a run that measured at least one of its device's formulations.
void check_side(const SidedDocument& side, DeviceKind device) {
  const ResultsDocument& doc = side.document;
  if (kind_of(doc.settings) != DocumentKind::run) {
    throw UsageError(
        fmt::format("{}: {} holds a {}, not a run: report combines the force "
                    "evaluations of two runs",
                    option_of(device), side.file, doc.settings.command));
  }
  const bool measured =
      std::any_of(doc.results.begin(), doc.results.end(), [&](const ResultRecord& r) {
        return r.status == Status::ok && on_device(doc, r.implementation, device);
      });
  if (!measured) {
    throw UsageError(fmt::format("{}: {} measured no {} formulation", option_of(device), side.file,
                                 to_string(device)));
  }
}

std::string problem_of(const RunSettings& s) {
  return fmt::format("{}, seed {}, softening {}", s.initial_condition, s.seed, s.softening);
}

// Same generator, seed and softening, and at every N both generated, the same bodies.
void check_same_problem(const SidedDocument& cpu, const SidedDocument& gpu) {
  const RunSettings& a = cpu.document.settings;
  const RunSettings& b = gpu.document.settings;
  if (problem_of(a) != problem_of(b)) {
    throw UsageError(
        fmt::format("--gpu-from: {} is of another problem ({}) than --cpu-from's {} "
                    "({}): a ratio needs the same bodies",
                    gpu.file, problem_of(b), cpu.file, problem_of(a)));
  }
  for (const InputRecord& x : cpu.document.inputs) {
    for (const InputRecord& y : gpu.document.inputs) {
      if (x.n == y.n && x.initial_condition == y.initial_condition &&
          (x.hash_f64 != y.hash_f64 || x.hash_f32 != y.hash_f32)) {
        throw UsageError(fmt::format(
            "--gpu-from: the input at N = {} of {} has hash {}, --cpu-from's {} has {}: not the "
            "same bodies",
            x.n, gpu.file, y.hash_f64, cpu.file, x.hash_f64));
      }
    }
  }
}

SideSource source_of(const SidedDocument& side, DeviceKind device) {
  return {.device = device,
          .file = side.file,
          .generated_at = side.document.generated_at,
          .command_line = side.document.command_line,
          .machine = side.document.machine};
}

// Each side's own ceilings: the CPU's entries from the CPU run, the GPU's from the GPU run.
std::optional<Ceilings> combined_ceilings(const ResultsDocument& cpu, const ResultsDocument& gpu) {
  if (!cpu.ceilings && !gpu.ceilings) return std::nullopt;
  Ceilings out = cpu.ceilings ? *cpu.ceilings : *gpu.ceilings;
  out.entries.clear();
  out.unavailable.clear();
  out.warnings.clear();
  for (const auto& [doc, device, prefix] : std::array{std::tuple{&cpu, DeviceKind::cpu, "cpu."},
                                                      std::tuple{&gpu, DeviceKind::gpu, "gpu."}}) {
    if (!doc->ceilings) continue;
    const MachineFingerprint& measured_on = doc->ceilings->machine;
    if (measured_on.hostname != doc->machine.hostname ||
        measured_on.cpu_model != doc->machine.cpu_model) {
      out.warnings.push_back(fmt::format(
          "the {} side's ceilings were measured on {} ({}), not on its run's machine: left out",
          to_string(device), measured_on.hostname, measured_on.cpu_model));
      continue;
    }
    for (const CeilingEntry& e : doc->ceilings->entries) {
      if (e.device == device) out.entries.push_back(e);
    }
    for (const UnavailableCeiling& u : doc->ceilings->unavailable) {
      if (u.name.starts_with(prefix)) out.unavailable.push_back(u);
    }
    for (const std::string& warning : doc->ceilings->warnings) {
      if (warning.starts_with(prefix)) out.warnings.push_back(warning);
    }
  }
  return out;
}

// The records of `from` whose implementation runs on `device`, with those implementations.
void take_side(ResultsDocument& into, const ResultsDocument& from, DeviceKind device) {
  for (const ImplementationRecord& impl : from.implementations) {
    if (impl.device == device) into.implementations.push_back(impl);
  }
  for (const ResultRecord& r : from.results) {
    if (on_device(from, r.implementation, device)) into.results.push_back(r);
  }
  for (const InputRecord& in : from.inputs) {
    const bool known = std::any_of(into.inputs.begin(), into.inputs.end(), [&](const auto& x) {
      return x.n == in.n && x.initial_condition == in.initial_condition;
    });
    if (!known) into.inputs.push_back(in);
  }
  for (const std::size_t n : from.settings.sizes) {
    if (std::find(into.settings.sizes.begin(), into.settings.sizes.end(), n) ==
        into.settings.sizes.end()) {
      into.settings.sizes.push_back(n);
    }
  }
}

}  // namespace

// Where a report's two sides come from: "the CPU side measured on host a (its CPU) at T by `…`,
// the GPU side on host b (its GPU) at T' by `…`: different hosts".
std::string sides_from_sentence(const std::vector<SideSource>& sides) {
  std::vector<std::string> parts;
  std::set<std::string> machines;  // hostnames repeat between VMs: the hardware tells them apart
  for (const SideSource& side : sides) {
    const MachineRecord& m = side.machine;
    machines.insert(fmt::format("{}/{}/{}/{}", m.hostname, m.cpu_model, m.logical_cpus,
                                m.gpus.empty() ? std::string() : m.gpus.front().name));
    const std::string hardware =
        side.device == DeviceKind::gpu && !m.gpus.empty()
            ? m.gpus.front().name
            : fmt::format("{}, {} logical CPUs", m.cpu_model, m.logical_cpus);
    parts.push_back(fmt::format("the {} side measured on host {} ({}) at {} ({})",
                                to_string(side.device), m.hostname, hardware, side.generated_at,
                                side.file));
  }
  return fmt::format("{}: {}", fmt::join(parts, ", "),
                     machines.size() > 1 ? "different machines, combined by report"
                                         : "one machine, two runs, combined by report");
}

ResultsDocument combine_sides(const SidedDocument& cpu, const SidedDocument& gpu) {
  check_side(cpu, DeviceKind::cpu);
  check_side(gpu, DeviceKind::gpu);
  check_same_problem(cpu, gpu);
  ResultsDocument out;
  out.generated_at = std::max(cpu.document.generated_at, gpu.document.generated_at);
  out.command_line = {"nbody-fair", "report", "--cpu-from", cpu.file, "--gpu-from", gpu.file};
  out.complete = cpu.document.complete && gpu.document.complete;
  out.interrupted = cpu.document.interrupted || gpu.document.interrupted;
  out.machine = cpu.document.machine;
  out.machine.gpus = gpu.document.machine.gpus;
  out.build = cpu.document.build;
  out.settings = cpu.document.settings;
  out.settings.sizes.clear();
  // Each side was planned apart (its command line says how); the two together had no one plan.
  out.settings.budget_s = 0;
  out.settings.gpu_device = gpu.document.settings.gpu_device;
  out.settings.gpu_devices = gpu.document.settings.gpu_devices;
  out.ceilings = combined_ceilings(cpu.document, gpu.document);
  take_side(out, cpu.document, DeviceKind::cpu);
  take_side(out, gpu.document, DeviceKind::gpu);
  std::sort(out.settings.sizes.begin(), out.settings.sizes.end());
  out.sides_from = {source_of(cpu, DeviceKind::cpu), source_of(gpu, DeviceKind::gpu)};
  return out;
}

}  // namespace nbody::reports
