#pragma once
// Seeded initial conditions, bit-identical on every platform: a SplitMix64 stream, uniform doubles
// from its top 53 bits, and only +, -, *, / and sqrt (all correctly rounded in IEEE 754) and the
// exact std::frexp, never std:: distributions or libm transcendentals, whose results differ
// between C libraries (the disc's logarithm is a fixed series of those operations).
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nbody/bodies.hpp"

namespace nbody {

// The first two are the suite's everyday inputs (FAIRNESS.md rule 1); the last three are the
// inputs that hurt tree codes: two separated clumps (a nearly empty root), clusters of exactly
// coincident bodies (cells that never split), and a disc a hundred times thinner than it is wide
// (flat, mostly empty cubes).
enum class InitialCondition { uniform_ball, plummer, two_plummer, coincident, thin_disc };

inline constexpr std::array<InitialCondition, 5> kAllInitialConditions = {
    InitialCondition::uniform_ball, InitialCondition::plummer, InitialCondition::two_plummer,
    InitialCondition::coincident, InitialCondition::thin_disc};

// The --ic spelling: "uniform", "plummer", "two_plummer", "coincident", "thin_disc".
std::string_view to_string(InitialCondition ic);
// Every --ic spelling, as help text lists them: "uniform, plummer, ... or thin_disc".
std::string initial_condition_choices();
// Accepts every to_string spelling, and "uniform_ball" for uniform; throws UsageError naming
// --ic and the choices otherwise.
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
// Two Plummer spheres (of n - n / 2 and n / 2 bodies, equal masses summing to 1, each in virial
// equilibrium for its own mass) 20 scale radii apart along x, falling towards each other head on
// at half their parabolic speed; centre-of-mass frame.
Snapshot make_two_plummer(std::size_t n, std::uint64_t seed);
// A Plummer sphere whose bodies come in clusters of kCoincidentClusterSize sharing exactly one
// position (the last cluster holds what is left); each keeps its own velocity. Equal masses
// summing to 1, centre-of-mass frame.
inline constexpr std::size_t kCoincidentClusterSize = 8;
Snapshot make_coincident(std::size_t n, std::uint64_t seed);
// An exponential disc in the plane z = 0: surface density exp(-R / R_d) to 10 R_d, vertical
// density sech^2(z / z_0) to 10 z_0, with z_0 = R_d / 100; equal masses summing to 1; each body
// on the circular orbit of the mass inside its radius (taken as spherical: roughly circular).
inline constexpr double kDiscScaleLength = 0.5;  // half-mass radius 0.84, near the Plummer's 0.77
inline constexpr double kDiscScaleHeight = kDiscScaleLength / 100;
Snapshot make_thin_disc(std::size_t n, std::uint64_t seed);
Snapshot make_initial_condition(InitialCondition ic, std::size_t n, std::uint64_t seed);

// FNV-1a over the little-endian bytes of the bodies: recorded with every result (FAIRNESS rule 1).
std::uint64_t input_hash(std::span<const Body<double>> bodies);
std::uint64_t input_hash(std::span<const Body<float>> bodies);
std::string hash_to_hex(std::uint64_t hash);

}  // namespace nbody
