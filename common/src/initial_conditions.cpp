#include "nbody/initial_conditions.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include <fmt/format.h>

#include "nbody/errors.hpp"

namespace nbody {
namespace {

// SplitMix64 (Steele, Lea & Flood 2014): tiny, statistically sound for this use, and fully
// specified, so every platform draws the same stream from the same seed.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, 1), exactly representable: the top 53 bits over 2^53.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

// Isotropic unit vector by rejection from the cube: no trigonometry, hence platform-independent.
Vec3<double> random_direction(SplitMix64& rng) {
  for (;;) {
    const double x = 2.0 * rng.uniform() - 1.0;
    const double y = 2.0 * rng.uniform() - 1.0;
    const double z = 2.0 * rng.uniform() - 1.0;
    const double s = x * x + y * y + z * z;
    if (s > 1e-12 && s <= 1.0) {
      const double inv = 1.0 / std::sqrt(s);
      return {x * inv, y * inv, z * inv};
    }
  }
}

void shift_to_centre_of_mass(Snapshot& snapshot) {
  double mass = 0, cx = 0, cy = 0, cz = 0, vx = 0, vy = 0, vz = 0;
  for (std::size_t i = 0; i < snapshot.bodies.size(); ++i) {
    const Body<double>& b = snapshot.bodies[i];
    mass += b.m;
    cx += b.m * b.x;
    cy += b.m * b.y;
    cz += b.m * b.z;
    vx += b.m * snapshot.velocities[i].x;
    vy += b.m * snapshot.velocities[i].y;
    vz += b.m * snapshot.velocities[i].z;
  }
  for (std::size_t i = 0; i < snapshot.bodies.size(); ++i) {
    snapshot.bodies[i].x -= cx / mass;
    snapshot.bodies[i].y -= cy / mass;
    snapshot.bodies[i].z -= cz / mass;
    snapshot.velocities[i].x -= vx / mass;
    snapshot.velocities[i].y -= vy / mass;
    snapshot.velocities[i].z -= vz / mass;
  }
}

template <class T>
std::uint64_t fnv1a(std::span<const Body<T>> bodies) {
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const Body<T>& b : bodies) {
    for (const T value : {b.x, b.y, b.z, b.m}) {
      const Bits bits = std::bit_cast<Bits>(value);
      for (std::size_t byte = 0; byte < sizeof(Bits); ++byte) {
        hash ^= static_cast<std::uint64_t>((bits >> (8 * byte)) & 0xffu);
        hash *= 0x100000001b3ULL;
      }
    }
  }
  return hash;
}

}  // namespace

std::string_view to_string(InitialCondition ic) {
  switch (ic) {
    case InitialCondition::uniform_ball:
      return "uniform";
    case InitialCondition::plummer:
      return "plummer";
  }
  return "unknown";
}

InitialCondition parse_initial_condition(std::string_view text) {
  if (text == "uniform" || text == "uniform_ball") return InitialCondition::uniform_ball;
  if (text == "plummer") return InitialCondition::plummer;
  throw UsageError(
      fmt::format("unknown initial condition '{}' (expected uniform or plummer)", text));
}

Snapshot make_uniform_ball(std::size_t n, std::uint64_t seed) {
  SplitMix64 rng(seed);
  Snapshot snapshot{std::vector<Body<double>>(n), std::vector<Vec3<double>>(n, {0, 0, 0})};
  const double mass = 1.0 / static_cast<double>(n);
  for (Body<double>& b : snapshot.bodies) {
    for (;;) {
      const double x = 2.0 * rng.uniform() - 1.0;
      const double y = 2.0 * rng.uniform() - 1.0;
      const double z = 2.0 * rng.uniform() - 1.0;
      if (x * x + y * y + z * z <= 1.0) {
        b = {x, y, z, mass};
        break;
      }
    }
  }
  return snapshot;
}

Snapshot make_plummer(std::size_t n, std::uint64_t seed) {
  SplitMix64 rng(seed);
  Snapshot snapshot{std::vector<Body<double>>(n), std::vector<Vec3<double>>(n)};
  const double mass = 1.0 / static_cast<double>(n);
  constexpr double kPi = 3.14159265358979323846;
  // Structural units (scale radius 1) first, then Henon units: lengths x 3 pi / 16.
  const double length_scale = 3.0 * kPi / 16.0;
  const double velocity_scale = std::sqrt(1.0 / length_scale);
  constexpr double kTruncationRadius = 10.0;
  for (std::size_t i = 0; i < n; ++i) {
    // Enclosed mass fraction X = u^3 with u the largest of three uniforms (its CDF is u^3), so
    // r = u / sqrt(1 - u^2) needs no cube root.
    double r = 0;
    do {
      const double u = std::max({rng.uniform(), rng.uniform(), rng.uniform()});
      r = u / std::sqrt(1.0 - u * u);
    } while (!(r <= kTruncationRadius));
    const Vec3<double> position_direction = random_direction(rng);

    // Speed by von Neumann rejection on g(q) = q^2 (1 - q^2)^(7/2), whose maximum is below 0.1.
    double q = 0;
    for (;;) {
      q = rng.uniform();
      const double g_bound = 0.1 * rng.uniform();
      const double one_minus_q2 = 1.0 - q * q;
      const double g = q * q * one_minus_q2 * one_minus_q2 * one_minus_q2 * std::sqrt(one_minus_q2);
      if (g_bound < g) break;
    }
    const double escape_speed = std::sqrt(2.0) / std::sqrt(std::sqrt(1.0 + r * r));
    const double speed = q * escape_speed;
    const Vec3<double> velocity_direction = random_direction(rng);

    snapshot.bodies[i] = {position_direction.x * r * length_scale,
                          position_direction.y * r * length_scale,
                          position_direction.z * r * length_scale, mass};
    snapshot.velocities[i] = {velocity_direction.x * speed * velocity_scale,
                              velocity_direction.y * speed * velocity_scale,
                              velocity_direction.z * speed * velocity_scale};
  }
  shift_to_centre_of_mass(snapshot);
  return snapshot;
}

Snapshot make_initial_condition(InitialCondition ic, std::size_t n, std::uint64_t seed) {
  switch (ic) {
    case InitialCondition::uniform_ball:
      return make_uniform_ball(n, seed);
    case InitialCondition::plummer:
      return make_plummer(n, seed);
  }
  throw UsageError("unknown initial condition");
}

std::uint64_t input_hash(std::span<const Body<double>> bodies) {
  return fnv1a(bodies);
}
std::uint64_t input_hash(std::span<const Body<float>> bodies) {
  return fnv1a(bodies);
}

std::string hash_to_hex(std::uint64_t hash) {
  return fmt::format("{:016x}", hash);
}

}  // namespace nbody
