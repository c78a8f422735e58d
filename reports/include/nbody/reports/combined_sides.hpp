#pragma once
// One report from two runs of the same problem on different hosts: the CPU side measured on one
// (a laptop), the GPU side on another (a cloud GPU), for `nbody-fair report --cpu-from --gpu-from`.
#include <string>
#include <vector>

#include "nbody/results.hpp"

namespace nbody::reports {

struct SidedDocument {
  ResultsDocument document;
  std::string file;  // where it was read from, as the user named it
};

// The CPU formulations' records of `cpu` and the GPU formulations' of `gpu` as one document, the
// machine's CPU from the first and its GPUs from the second, each side's ceilings from its own
// run, `sides_from` naming both. Throws UsageError, naming --cpu-from or --gpu-from, where either
// is not a run, the two are of different problems (initial condition, seed, softening, or an
// input hash at an N both measured), or a side measured nothing on its device.
ResultsDocument combine_sides(const SidedDocument& cpu, const SidedDocument& gpu);

// Where a report's sides were measured: "the cpu side measured on host a (its CPU) at T (file),
// the gpu side on host b (its GPU) at T' (file): different hosts, combined by report".
std::string sides_from_sentence(const std::vector<SideSource>& sides);

}  // namespace nbody::reports
