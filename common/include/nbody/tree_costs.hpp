#pragma once
// How one evaluation of a tree formulation is bounded (FAIRNESS.md rules 3 and 6: each formulation
// is held against its own bound; a tree's walk and build apart): what the walk's terms cost, in
// the units of a measured ceiling's rate, and the bytes the build must move at the measured memory
// bandwidth. Each tree formulation states its own (cpu/formulations/tree.cpp,
// gpu/formulations/tree.cu) with the interactions it counted; the runner records it in the
// result's tree_work, and the reports divide it by the document's ceilings (docs/perf-notes.md,
// "Tree codes").
#include <string>
#include <string_view>
#include <utility>

#include "nbody/properties.hpp"

namespace nbody {

// Which figure of a ceiling entry rates a walk: its measured `value` (interactions per second,
// FLOP/s), or, for a CPU FMA entry, its `fp_instructions_per_second`.
enum class CeilingFigure { value, fp_instructions_per_second };

template <>
struct EnumNames<CeilingFigure> {
  static constexpr std::pair<CeilingFigure, std::string_view> kNames[] = {
      {CeilingFigure::value, "value"},
      {CeilingFigure::fp_instructions_per_second, "fp_instructions_per_second"}};
};

struct TreeCostModel {
  // The walk: body_body × body_body_cost + body_cell × body_cell_cost units of work, at the rate
  // of the ceiling entry `walk_ceiling`: its `walk_figure` times `walk_scale` (0.5 where FLOP/s
  // rate FMA instructions), and, for a CPU entry measured on more threads than the run used,
  // scaled down to those threads.
  std::string walk_ceiling;
  CeilingFigure walk_figure = CeilingFigure::value;
  double walk_scale = 1;
  double body_body_cost = 0;
  double body_cell_cost = 0;
  std::string cost_unit;   // what a unit of cost is, e.g. "AVX-512F FP instructions"
  std::string cost_basis;  // how the costs were counted
  // The build: build_bytes moved (read and written) at the ceiling entry `build_ceiling`, a
  // memory bandwidth in bytes per second.
  std::string build_ceiling;
  double build_bytes = 0;
  std::string build_basis;  // the traffic model, in words
};

}  // namespace nbody
