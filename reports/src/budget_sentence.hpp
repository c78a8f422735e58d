#pragma once
// What a run planned within a budget (run --budget) says of its plan: every printer the same
// words, in its own markup.
#include <string>

#include <fmt/format.h>

#include "nbody/reports/analysis.hpp"

namespace nbody::reports {

// "Planned within a budget of 75 s: estimated 72 s, took 74 s; 2 measurements left out by the
// plan (under Skipped, with why)." Empty for a run without a budget.
inline std::string budget_sentence(const RunSummary& s) {
  if (s.budget_s <= 0) return {};
  std::string text =
      fmt::format("Planned within a budget of {:.0f} s: estimated {:.0f} s, took {:.0f} s",
                  s.budget_s, s.planned_s, s.measured_s);
  if (s.left_out_by_plan > 0) {
    text += fmt::format(
        "; {} measurement{} left out by the plan (under Skipped, with why; --budget "
        "sets it, 0 for none)",
        s.left_out_by_plan, s.left_out_by_plan == 1 ? "" : "s");
  }
  return text + ".";
}

}  // namespace nbody::reports
