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

// ln(u) for a finite u > 0: u = m 2^e exactly (frexp), m moved into [sqrt(1/2), sqrt(2)), and
// ln(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, by its odd series to s^25 (the next
// term is below 2^-60 of the sum). Arithmetic only, so the same bits everywhere; accurate to a
// few ulp, which only shapes the distribution.
double natural_log(double u) {
  constexpr double kLn2 = 0.693147180559945309417;
  constexpr double kSqrtHalf = 0.707106781186547524401;
  int exponent = 0;
  double mantissa = std::frexp(u, &exponent);
  if (mantissa < kSqrtHalf) {
    mantissa *= 2;
    exponent -= 1;
  }
  const double s = (mantissa - 1) / (mantissa + 1);
  const double s2 = s * s;
  double series = 0;
  for (int k = 12; k >= 0; --k) series = series * s2 + 1.0 / (2 * k + 1);
  return static_cast<double>(exponent) * kLn2 + 2 * s * series;
}

// A uniform in (0, 1]: never 0, so its logarithm is finite.
double uniform_open_at_zero(SplitMix64& rng) {
  return 1.0 - rng.uniform();
}

// A second, independent stream's seed from the first: seed + 1 would make the second clump of
// one seed the first clump of the next.
std::uint64_t derived_seed(std::uint64_t seed) {
  SplitMix64 rng(seed ^ 0x5851f42d4c957f2dULL);
  return rng.next();
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
    case InitialCondition::two_plummer:
      return "two_plummer";
    case InitialCondition::coincident:
      return "coincident";
    case InitialCondition::thin_disc:
      return "thin_disc";
  }
  return "unknown";
}

std::string initial_condition_choices() {
  std::string choices;
  for (std::size_t i = 0; i < kAllInitialConditions.size(); ++i) {
    if (i > 0) choices += i + 1 == kAllInitialConditions.size() ? " or " : ", ";
    choices += to_string(kAllInitialConditions[i]);
  }
  return choices;
}

InitialCondition parse_initial_condition(std::string_view text) {
  if (text == "uniform_ball") return InitialCondition::uniform_ball;
  for (const InitialCondition ic : kAllInitialConditions) {
    if (text == to_string(ic)) return ic;
  }
  throw UsageError(fmt::format("--ic: unknown initial condition '{}' (expected {})", text,
                               initial_condition_choices()));
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

Snapshot make_two_plummer(std::size_t n, std::uint64_t seed) {
  constexpr double kPi = 3.14159265358979323846;
  // 20 scale radii, the Plummer scale radius being 3 pi / 16 in Henon units.
  const double separation = 20.0 * 3.0 * kPi / 16.0;
  const std::size_t counts[2] = {n - n / 2, n / 2};
  const std::uint64_t seeds[2] = {seed, derived_seed(seed)};
  const double total = static_cast<double>(n);
  // Half the parabolic relative speed sqrt(2 G M / separation) (M = 1): a bound pair that meets
  // after about a crossing of the gap, slow beside each sphere's inner speeds.
  const double closing_speed = 0.5 * std::sqrt(2.0 / separation);
  Snapshot snapshot;
  for (int side = 0; side < 2; ++side) {
    const Snapshot sphere = make_plummer(counts[side], seeds[side]);
    const double mass_fraction = static_cast<double>(counts[side]) / total;
    // Henon units are for a unit mass: the same radii with a mass fraction f need speeds x sqrt f
    // to stay in virial equilibrium.
    const double speed_scale = std::sqrt(mass_fraction);
    // Each sphere's share of the closing speed keeps the pair's momentum zero.
    const double direction = side == 0 ? 1.0 : -1.0;
    const double offset = -direction * 0.5 * separation;
    const double drift = direction * closing_speed * (1.0 - mass_fraction);
    for (std::size_t i = 0; i < sphere.bodies.size(); ++i) {
      const Body<double>& b = sphere.bodies[i];
      const Vec3<double>& v = sphere.velocities[i];
      snapshot.bodies.push_back({b.x + offset, b.y, b.z, 1.0 / total});
      snapshot.velocities.push_back(
          {v.x * speed_scale + drift, v.y * speed_scale, v.z * speed_scale});
    }
  }
  shift_to_centre_of_mass(snapshot);
  return snapshot;
}

Snapshot make_coincident(std::size_t n, std::uint64_t seed) {
  Snapshot snapshot = make_plummer(n, seed);
  // Every cluster takes its first body's position: a fair sample of the sphere's positions. The
  // shift to the centre-of-mass frame subtracts one value from all, so they stay coincident.
  for (std::size_t i = 0; i < n; ++i) {
    const Body<double>& first = snapshot.bodies[i - i % kCoincidentClusterSize];
    snapshot.bodies[i] = {first.x, first.y, first.z, snapshot.bodies[i].m};
  }
  shift_to_centre_of_mass(snapshot);
  return snapshot;
}

Snapshot make_thin_disc(std::size_t n, std::uint64_t seed) {
  SplitMix64 rng(seed);
  Snapshot snapshot{std::vector<Body<double>>(n), std::vector<Vec3<double>>(n)};
  const double mass = 1.0 / static_cast<double>(n);
  // exp(-10): the truncations at 10 scale lengths and 10 scale heights.
  constexpr double kTailBeyondTen = 4.539992976248485e-5;
  for (std::size_t i = 0; i < n; ++i) {
    // The radial density R exp(-R / R_d) is a Gamma(2) law: x = -ln(u1 u2), and then
    // exp(-x) = u1 u2, so the mass inside R, 1 - (1 + x) exp(-x), needs no exponential.
    double product = 0;
    do {
      product = uniform_open_at_zero(rng) * uniform_open_at_zero(rng);
    } while (product < kTailBeyondTen);
    const double x = -natural_log(product);
    const double radius = x * kDiscScaleLength;
    const double enclosed = 1.0 - (1.0 + x) * product;
    // sech^2(z / z_0) by its inverse CDF, z = z_0 atanh(v), v uniform in (-1, 1) (v = 1, an
    // infinite z, is drawn again).
    double z = 0;
    for (;;) {
      const double v = 2.0 * uniform_open_at_zero(rng) - 1.0;
      if (v >= 1.0) continue;
      z = kDiscScaleHeight * 0.5 * natural_log((1.0 + v) / (1.0 - v));
      if (z * z <= 100.0 * kDiscScaleHeight * kDiscScaleHeight) break;
    }
    // An azimuth by rejection from the square: no trigonometry.
    double cx = 0, cy = 0, s = 0;
    do {
      cx = 2.0 * rng.uniform() - 1.0;
      cy = 2.0 * rng.uniform() - 1.0;
      s = cx * cx + cy * cy;
    } while (!(s > 1e-12 && s <= 1.0));
    const double norm = 1.0 / std::sqrt(s);
    cx *= norm;
    cy *= norm;
    const double speed = radius > 0 ? std::sqrt(enclosed / radius) : 0.0;
    snapshot.bodies[i] = {cx * radius, cy * radius, z, mass};
    snapshot.velocities[i] = {-cy * speed, cx * speed, 0.0};
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
    case InitialCondition::two_plummer:
      return make_two_plummer(n, seed);
    case InitialCondition::coincident:
      return make_coincident(n, seed);
    case InitialCondition::thin_disc:
      return make_thin_disc(n, seed);
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
