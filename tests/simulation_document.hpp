#pragma once
// A hand-made results document of `nbody-fair simulate` for the reports' tests: a CPU and (unless
// asked not to) a GPU simulation at N = 1024, a skipped CPU one and a GPU one at N = 4096, with
// figures whose shortest text is long (so a lossy printer shows) and a GPU step whose `other` is
// below zero, as the GPU's noise makes it.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nbody/results.hpp"

namespace nbody::testing {

inline ImplementationRecord simulated_implementation(std::string name, DeviceKind device,
                                                     Role role) {
  ImplementationRecord i;
  i.name = std::move(name);
  i.device = device;
  i.role = role;
  i.available = true;
  return i;
}

// Conservation every `every` steps up to `steps`: the error grows from 0 at step 0.
inline std::vector<ConservationSample> conservation(std::int64_t steps, std::int64_t every,
                                                    double dt, double error_per_step) {
  std::vector<ConservationSample> samples;
  for (std::int64_t s = 0; s <= steps; s += every) {
    ConservationSample c;
    c.step = s;
    c.time = static_cast<double>(s) * dt;
    c.kinetic_energy = 0.25;
    c.potential_energy = -0.5;
    c.relative_energy_error = error_per_step * static_cast<double>(s);
    c.virial_ratio = 1;
    samples.push_back(c);
  }
  return samples;
}

inline SimulationRecord simulation(std::string name, std::size_t n, const StepSplit& split,
                                   double steps_per_second, std::int64_t diag_every) {
  SimulationRecord r;
  r.implementation = std::move(name);
  r.initial_condition = "plummer";
  r.n = n;
  r.input_hash = "51dcb269d37937da";
  r.threads = 2;
  r.steps = 100;
  r.dt = 0.01;
  r.wall_seconds = 100 / steps_per_second + 0.1;
  r.steps_per_second = steps_per_second;
  r.per_step = split;
  r.conservation =
      conservation(100, diag_every > 0 ? diag_every : 100, r.dt, 1.2345678901234567e-8);
  r.max_relative_energy_error = r.conservation.back().relative_energy_error;
  // The float64 leapfrog lost about as much: the formulation is within its conservation bounds.
  r.divergence = TrajectoryDivergence{
      .steps = 100, .position = 2.9e-7, .velocity = 7.9e-7, .reference_energy_error = 1.2e-6};
  return r;
}

inline ResultsDocument simulation_document(bool with_gpu = true, std::int64_t diag_every = 25) {
  ResultsDocument doc;
  doc.generated_at = "2026-11-24T10:00:00Z";
  doc.command_line = {"nbody-fair", "simulate"};
  doc.complete = true;
  doc.machine.cpu_model = "Test CPU";
  doc.settings.command = "simulate";
  doc.settings.initial_condition = "plummer";
  doc.settings.dt = 0.01;
  doc.settings.steps = 100;
  doc.settings.diag_every = diag_every;
  doc.settings.softening = 0.01;
  doc.implementations = {simulated_implementation("cpu.aos", DeviceKind::cpu, Role::naive_baseline),
                         simulated_implementation("cpu.tbb", DeviceKind::cpu, Role::optimized)};
  doc.simulations.push_back(simulation("cpu.tbb", 1024,
                                       {.step_s = 1e-3,
                                        .force_s = 0.1 + 0.2 - 0.3 + 9e-4,
                                        .integration_s = 1e-4,
                                        .other_s = 0,
                                        .diagnostics_s = 5e-5,
                                        .snapshots_s = 0},
                                       1 / 1.05e-3, diag_every));
  SimulationRecord skipped;
  skipped.implementation = "cpu.aos";
  skipped.initial_condition = "plummer";
  skipped.n = 4096;
  skipped.status = Status::skipped;
  skipped.reason = "128 steps predicted to take 14 s, over the --max-seconds budget of 8 s";
  skipped.threads = 1;
  skipped.dt = 0.01;
  doc.simulations.push_back(skipped);
  if (with_gpu) {
    doc.implementations.push_back(
        simulated_implementation("gpu.tuned", DeviceKind::gpu, Role::optimized));
    // other below zero: the step timed as a whole read shorter than its parts timed apart.
    const StepSplit gpu_split{.step_s = 2e-5,
                              .force_s = 1.5e-5,
                              .integration_s = 6e-6,
                              .other_s = -1e-6,
                              .diagnostics_s = 1e-5,
                              .snapshots_s = 0};
    doc.simulations.push_back(simulation("gpu.tuned", 1024, gpu_split, 1 / 3e-5, diag_every));
    doc.simulations.push_back(simulation("gpu.tuned", 4096, gpu_split, 1 / 3e-5, diag_every));
    doc.simulations.back().divergence.reset();  // above divergence_up_to
  }
  return doc;
}

}  // namespace nbody::testing
