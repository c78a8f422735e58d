#pragma once
// The first words of a report or summary whose run measured one side only: every printer says the
// same thing, in its own markup.
#include <string>

#include "nbody/reports/analysis.hpp"

namespace nbody::reports {

// "No GPU/CPU ratio from this run: no GPU measured: <why>. It measured the CPU side only; for the
// ratio, <remedy>." Empty where both sides were measured.
inline std::string sides_sentence(const MeasuredSides& sides) {
  if (sides.compares()) return {};
  const char* measured = sides.cpu   ? "It measured the CPU side only"
                         : sides.gpu ? "It measured the GPU side only"
                                     : "It measured neither side";
  return "No GPU/CPU ratio from this run: " + sides.missing + ". " + measured +
         "; for the ratio, " + sides.remedy + ".";
}

}  // namespace nbody::reports
