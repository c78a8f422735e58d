#pragma once
// The scale a measurement ran at (FAIRNESS.md rule 8): how many GPUs, MPI ranks, cores and hosts
// it used. One document is one scale per device kind; a scaling study sets several side by side.
#include <string>

#include "nbody/properties.hpp"
#include "nbody/results.hpp"

namespace nbody::reports {

struct RunScale {
  DeviceKind device = DeviceKind::cpu;  // of the formulation measured
  int ranks = 1;
  int hosts = 1;             // distinct rank hosts; 1 where none are recorded
  int gpus = 0;              // GPU formulations: ranks × the GPUs each rank drives; CPU: 0
  int threads_per_rank = 1;  // the record's CPU threads (a GPU rank's host thread: 1)
  // GPU formulations over several ranks: how their slices travelled ("nccl" between the ranks'
  // GPUs, "mpi" through host memory); empty otherwise.
  std::string gpu_exchange;

  // What a scaling study counts: GPUs for GPU formulations, ranks for CPU ones.
  int devices() const { return device == DeviceKind::gpu ? gpus : ranks; }
  int cores() const { return ranks * threads_per_rank; }
  bool operator==(const RunScale&) const = default;
};

// The scale of a record of `threads` CPU threads, of a formulation on `device`, in a document
// with `settings`.
RunScale scale_of(const RunSettings& settings, DeviceKind device, int threads);

// Several devices: more than one rank, or more than one GPU driven by a rank.
bool spans_several_devices(const RunSettings& settings);

// Every label of a scale names its GPUs, ranks, cores and hosts, e.g. "2 ranks × 1 thread: 2
// cores, 0 GPUs, 1 host" or "4 GPUs: 2 ranks × 2 GPUs, 2 cores, 1 host, NCCL between the ranks".
std::string describe(const RunScale& scale);

// How several devices were joined: "the GPUs of one process", "ranks, NCCL between them", "ranks,
// through host memory" (GPU formulations), "ranks" (CPU ones); empty for one device.
std::string describe_joining(const RunScale& scale);

}  // namespace nbody::reports
