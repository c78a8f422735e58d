#pragma once
// Seeded initial conditions, bit-identical on every platform: a SplitMix64 stream, uniform doubles
// from its top 53 bits, and only +, -, *, / and sqrt (all correctly rounded in IEEE 754), never
// std:: distributions or libm transcendentals, whose results differ between C libraries.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nbody/bodies.hpp"

namespace nbody {

enum class InitialCondition { uniform_ball, plummer };

std::string_view to_string(InitialCondition ic);
// Accepts "uniform" / "uniform_ball" and "plummer"; throws UsageError otherwise.
InitialCondition parse_initial_condition(std::string_view text);

struct Snapshot {
  std::vector<Body<double>> bodies;      // positions and masses: the force input
  std::vector<Vec3<double>> velocities;  // for integration and the virial check
};

// Uniform density in the unit ball, equal masses summing to 1, at rest.
Snapshot make_uniform_ball(std::size_t n, std::uint64_t seed);
// Plummer sphere in Henon units (G = M = 1, E = -1/4), Aarseth, Henon & Wielen (1974), radii
// truncated at 10 scale radii, shifted to the centre-of-mass frame.
Snapshot make_plummer(std::size_t n, std::uint64_t seed);
Snapshot make_initial_condition(InitialCondition ic, std::size_t n, std::uint64_t seed);

// FNV-1a over the little-endian bytes of the bodies: recorded with every result (FAIRNESS rule 1).
std::uint64_t input_hash(std::span<const Body<double>> bodies);
std::uint64_t input_hash(std::span<const Body<float>> bodies);
std::string hash_to_hex(std::uint64_t hash);

}  // namespace nbody
