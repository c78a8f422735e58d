#pragma once
// In-process runs of the suite over stand-in formulations: a registry entry around a run the test
// defines, and a context that prints nothing, measures no ceilings and reads no counters.
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "nbody/app/runner.hpp"
#include "nbody/registry.hpp"

namespace nbody {

inline Implementation stand_in_implementation(
    ImplementationInfo info,
    std::function<std::unique_ptr<PreparedRun>(std::span<const Body<double>> bodies,
                                               double softening)>
        make_run) {
  return {.info = std::move(info),
          .unavailable_reason = [] { return std::optional<std::string>(); },
          .prepare = [make_run = std::move(make_run)](
                         std::span<const Body<double>> bodies, double softening,
                         const ExecutionOptions&) { return make_run(bodies, softening); },
          .threads_used = [](const ExecutionOptions&) { return 1; },
          .size_limit_reason = {},
          .simulate = {}};
}

inline SuiteContext quiet_context(const Registry& registry, ProgressSink& progress) {
  return {.registry = registry,
          .counter_sources = {},
          .ceilings = std::nullopt,
          .ceilings_seconds = 0,
          .gpus = {},
          .gpu_observation = {},
          .progress = progress,
          .checkpoint = {}};
}

}  // namespace nbody
