#pragma once
// The first words of a simulation report or summary where a simulation went wrong: every printer
// says the same thing, in its own markup.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "nbody/reports/analysis.hpp"

namespace nbody::reports {

// "2 simulations kept energy or momentum outside their bounds and are not to be trusted: cpu.soa
// at N = 1024 (|ΔE/E| 2.6e-03, bound 1.0e-04: <likely cause>); …" Empty where every checked
// simulation kept them.
inline std::string conservation_sentence(const std::vector<IntegrationRow>& rows) {
  std::vector<std::string> outside;
  for (const IntegrationRow& r : rows) {
    if (!r.conservation || r.conservation->within()) continue;
    const ConservationCheck& c = *r.conservation;
    std::string figures =
        fmt::format("|ΔE/E| {:.1e}, bound {:.0e}", c.energy_error, c.energy_bound);
    if (c.end_energy_error && *c.end_energy_error > c.end_energy_bound) {
      figures += fmt::format("; {:.1e} at the float64 leapfrog's last step, bound {:.1e}",
                             *c.end_energy_error, c.end_energy_bound);
    }
    if (!c.momentum_within()) {
      figures +=
          fmt::format("; momentum drift {:.1e}, bound {:.1e}", *c.momentum_drift, c.momentum_bound);
    }
    outside.push_back(fmt::format("{} at N = {} ({}): likely {}", r.implementation, r.n, figures,
                                  c.likely_cause));
  }
  if (outside.empty()) return {};
  return fmt::format(
      "{} kept energy or momentum outside {} bounds and {} not to be trusted: {}.",
      outside.size() == 1 ? "1 simulation" : fmt::format("{} simulations", outside.size()),
      outside.size() == 1 ? "its" : "their", outside.size() == 1 ? "is" : "are",
      fmt::join(outside, "; "));
}

}  // namespace nbody::reports
