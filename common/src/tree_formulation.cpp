#include "nbody/tree_formulation.hpp"

#include <string>
#include <utility>

#include <fmt/format.h>

namespace nbody {
namespace {

Implementation at_angle(const Implementation& unbound, double theta,
                        const PrepareAtAngle& prepare_at) {
  Implementation bound = unbound;
  bound.info.name = name_at_opening_angle(unbound.info.name, theta);
  bound.info.theta = theta;
  bound.info.tolerance = barnes_hut_tolerance(unbound.info.tolerance, theta);
  bound.info.optimizations.push_back(fmt::format("opening angle theta = {}", theta));
  bound.prepare = [prepare_at, theta](std::span<const Body<double>> bodies, double softening,
                                      const ExecutionOptions& options) {
    return prepare_at(bodies, softening, options, theta);
  };
  bound.at_opening_angle = nullptr;
  return bound;
}

}  // namespace

Implementation tree_formulation(Implementation unbound, double default_theta,
                                PrepareAtAngle prepare_at) {
  Implementation registered = at_angle(unbound, default_theta, prepare_at);
  registered.info.name = unbound.info.name;
  registered.at_opening_angle = [unbound = std::move(unbound), prepare_at = std::move(prepare_at)](
                                    double theta) { return at_angle(unbound, theta, prepare_at); };
  return registered;
}

}  // namespace nbody
