#pragma once
// The measured ceilings (nbody/ceilings.hpp) as a small Markdown table: what `nbody-fair peaks`
// prints and the report shows beside fractions of peak.
#include <optional>
#include <string>

#include "nbody/ceilings.hpp"

namespace nbody::reports {

// SI-prefixed value with its unit: "1.23 TFLOP/s", "3.35 TB/s".
std::string format_si(double value, const std::string& unit);

// A heading line, one row per ceiling (measured, datasheet, theoretical, threads, method) and the
// ceilings that could not be measured, with why. No ceilings render as one sentence.
std::string render_ceilings_table(const std::optional<Ceilings>& ceilings);

}  // namespace nbody::reports
