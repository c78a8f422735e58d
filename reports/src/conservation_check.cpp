// A simulation's conservation against the bounds of a trustworthy run, and where it is outside
// them, the likely cause read from its own samples.
#include "conservation_check.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "nbody/accuracy.hpp"
#include "nbody/simulation.hpp"

namespace nbody::reports {
namespace {

// Steps per dynamical time below which the leapfrog's error grows past the trusted bound.
constexpr double kStepsPerDynamicalTime = 100;

// What the samples say of the system's evolution: its start and its deepest potential.
struct Evolution {
  double virial_ratio_at_start = 0;
  double potential_at_start = 0;
  double deepest_potential = 0;
};

Evolution evolution_of(const std::vector<ConservationSample>& samples) {
  Evolution e{.virial_ratio_at_start = samples.front().virial_ratio,
              .potential_at_start = samples.front().potential_energy,
              .deepest_potential = samples.front().potential_energy};
  for (const ConservationSample& s : samples) {
    e.deepest_potential = std::min(e.deepest_potential, s.potential_energy);
  }
  return e;
}

// The crossing time of a system of total mass 1 (the suite's initial conditions) whose potential
// energy is `w` (G = 1): |W|^(-3/2), 2.8 for the Plummer sphere in Henon units.
double dynamical_time(double w) {
  return std::pow(std::abs(w), -1.5);
}

// Why the integration itself (not the precision) lost energy, from its samples and settings.
std::string integration_cause(const Evolution& e, const RunSettings& s, std::size_t n) {
  std::vector<std::string> causes;
  const double deepened =
      e.potential_at_start != 0 ? e.deepest_potential / e.potential_at_start : 1;
  const bool own_units = s.ic_file.empty();  // total mass 1: the dynamical time is known
  if (e.virial_ratio_at_start < 0.5 && deepened > 1.5) {
    causes.push_back(fmt::format(
        "a collapse: the initial condition starts cold (2K/|W| = {:.2f}) and the potential energy "
        "deepened {:.2g}×",
        e.virial_ratio_at_start, deepened));
  }
  if (own_units && s.dt > 0) {
    const double per_dynamical_time = dynamical_time(e.deepest_potential) / s.dt;
    if (per_dynamical_time < kStepsPerDynamicalTime) {
      causes.push_back(fmt::format(
          "dt = {:.3g} against the dynamical time: {:.0f} steps per dynamical time at the deepest "
          "potential (|W|^-3/2 = {:.3g}), where the leapfrog wants {:.0f} or more",
          s.dt, per_dynamical_time, dynamical_time(e.deepest_potential), kStepsPerDynamicalTime));
    }
  }
  if (causes.empty()) {
    causes.push_back(fmt::format(
        "close encounters: with softening {:.3g} and N = {}, pairs pass closer than a step of "
        "{:.3g} resolves",
        s.softening, n, s.dt));
  }
  return fmt::format("{} (a smaller --dt or a larger --softening tells)", fmt::join(causes, "; "));
}

double unit_roundoff_of(const ImplementationRecord* impl) {
  if (impl && impl->tolerance.unit_roundoff > 0) return impl->tolerance.unit_roundoff;
  return impl && impl->precision == Precision::f64 ? kFloat64UnitRoundoff : kFloat32UnitRoundoff;
}

// Where the float64 leapfrog of the same steps was followed and the formulation is of full
// accuracy: its error at that last step against what its precision may add (energy_error_bound).
void set_end_energy_bound(ConservationCheck& check, const SimulationRecord& r,
                          const std::vector<ConservationSample>& samples,
                          const ImplementationRecord* impl) {
  if (!r.divergence || !impl || impl->accuracy_class != AccuracyClass::full) return;
  if (samples.back().step != r.divergence->steps) return;
  check.end_energy_error = samples.back().relative_energy_error;
  check.end_energy_bound =
      energy_error_bound(r.divergence->reference_energy_error, unit_roundoff_of(impl));
}

std::optional<double> momentum_drift(const std::vector<ConservationSample>& samples) {
  // sqrt(M |W0|), M = 1: the momentum a body of the whole mass has at the virial speed.
  const double scale = std::sqrt(std::abs(samples.front().potential_energy));
  if (!(scale > 0)) return std::nullopt;
  double drift = 0;
  const std::array<double, 3>& p0 = samples.front().momentum;
  for (const ConservationSample& s : samples) {
    drift = std::max(
        drift, std::hypot(s.momentum[0] - p0[0], s.momentum[1] - p0[1], s.momentum[2] - p0[2]));
  }
  return drift / scale;
}

}  // namespace

std::optional<ConservationCheck> check_conservation(const SimulationRecord& r,
                                                    const ImplementationRecord* impl,
                                                    const RunSettings& settings) {
  if (r.steps <= 0 || r.conservation.size() < 2) return std::nullopt;
  std::vector<ConservationSample> samples = r.conservation;
  std::sort(
      samples.begin(), samples.end(),
      [](const ConservationSample& a, const ConservationSample& b) { return a.step < b.step; });
  ConservationCheck check{.energy_error = r.max_relative_energy_error,
                          .energy_bound = kTrustedEnergyError};
  set_end_energy_bound(check, r, samples, impl);
  check.momentum_drift = momentum_drift(samples);
  // Rounding's random walk: u a step; the surveyed runs drift at most 0.04 u sqrt(steps).
  check.momentum_bound = unit_roundoff_of(impl) * std::sqrt(static_cast<double>(r.steps));
  // A tree's truncation drifts both further, by what the survey measured at its angle.
  if (impl && impl->tolerance.relative_l2_truncation > 0) {
    const TruncationDrift drift = truncation_drift(impl->tolerance.relative_l2_truncation,
                                                   static_cast<double>(r.steps) * r.dt);
    check.energy_bound += drift.energy;
    if (check.end_energy_error) check.end_energy_bound += drift.energy;
    check.momentum_bound += drift.momentum;
  }
  std::vector<std::string> causes;
  if (check.energy_error > check.energy_bound) {
    causes.push_back(integration_cause(evolution_of(samples), settings, r.n));
  } else if (!check.energy_within()) {
    causes.push_back(fmt::format(
        "the formulation's precision: the float64 leapfrog lost {:.2g} on the same steps, this "
        "formulation {:.2g}",
        r.divergence->reference_energy_error, *check.end_energy_error));
  }
  if (!check.momentum_within()) {
    causes.push_back(
        "forces not equal and opposite beyond rounding (and, for a tree, beyond its angle's "
        "surveyed truncation): an approximate formulation, or a defect");
  }
  check.likely_cause = fmt::format("{}", fmt::join(causes, "; "));
  return check;
}

}  // namespace nbody::reports
