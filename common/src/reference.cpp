#include "nbody/reference.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <system_error>

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "nbody/files.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/physics.hpp"

namespace nbody {
namespace {

// Neumaier's improvement of Kahan summation, for kTargetBlock sums side by side: the error does
// not grow with the number of terms. Written with selects rather than branches, and as arrays
// indexed by target, so that the compiler vectorizes a block's sums; each sum's operations and
// their order are those of one sum alone, so the results are bit-identical either way.
constexpr std::size_t kTargetBlock = 8;

struct CompensatedSums {
  std::array<double, kTargetBlock> sum{};
  std::array<double, kTargetBlock> compensation{};

  NBODY_FORCE_INLINE void add(std::size_t q, double value) {
    const double t = sum[q] + value;
    const bool sum_larger = std::abs(sum[q]) >= std::abs(value);
    const double larger = sum_larger ? sum[q] : value;
    const double smaller = sum_larger ? value : sum[q];
    compensation[q] += (larger - t) + smaller;
    sum[q] = t;
  }
  double value(std::size_t q) const { return sum[q] + compensation[q]; }
};

// The accelerations of kTargetBlock targets at (x[q], y[q], z[q]) from every body, exactly as one
// target at a time would compute them. The inner loop over the block is what vectorizes: the
// target_clones pick AVX-512, AVX2 or the baseline at load time (no FMA contraction in this file,
// and vector sqrt and division round exactly as scalar ones, so every ISA gives the same bits).
#if defined(__x86_64__)
#define NBODY_REFERENCE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define NBODY_REFERENCE_CLONES  // aarch64: NEON is the baseline, 2 float64 lanes
#endif
NBODY_REFERENCE_CLONES void accelerate_block(std::span<const Body<double>> bodies,
                                             double softening_squared,
                                             const std::array<double, kTargetBlock>& x,
                                             const std::array<double, kTargetBlock>& y,
                                             const std::array<double, kTargetBlock>& z,
                                             std::array<Vec3<double>, kTargetBlock>& out) {
  CompensatedSums ax, ay, az;
  for (const Body<double>& bj : bodies) {
    for (std::size_t q = 0; q < kTargetBlock; ++q) {
      const PairAcceleration<double> a =
          pair_acceleration<double>(x[q], y[q], z[q], bj.x, bj.y, bj.z, bj.m, softening_squared);
      ax.add(q, a.x);
      ay.add(q, a.y);
      az.add(q, a.z);
    }
  }
  for (std::size_t q = 0; q < kTargetBlock; ++q) out[q] = {ax.value(q), ay.value(q), az.value(q)};
}

std::uint64_t hash_targets(std::span<const std::uint32_t> targets) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const std::uint32_t t : targets) {
    hash ^= t;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

struct CacheHeader {
  char magic[8] = {'N', 'B', 'R', 'E', 'F', '0', '0', '1'};
  std::uint64_t input_hash = 0;
  std::uint64_t softening_bits = 0;
  std::uint64_t body_count = 0;
  std::uint64_t target_count = 0;
  std::uint64_t target_hash = 0;

  bool operator==(const CacheHeader&) const = default;
};

}  // namespace

std::vector<Vec3<double>> reference_accelerations(std::span<const Body<double>> bodies,
                                                  double softening,
                                                  std::span<const std::uint32_t> targets) {
  std::vector<Vec3<double>> result(targets.size());
  const double softening_squared = softening * softening;
  const std::size_t blocks = (targets.size() + kTargetBlock - 1) / kTargetBlock;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 2),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      for (std::size_t block = range.begin(); block != range.end(); ++block) {
                        // A last, partial block repeats its last target; the copies are dropped.
                        const std::size_t first = block * kTargetBlock;
                        const std::size_t count = std::min(kTargetBlock, targets.size() - first);
                        std::array<double, kTargetBlock> x{}, y{}, z{};
                        for (std::size_t q = 0; q < kTargetBlock; ++q) {
                          const Body<double>& bi = bodies[targets[first + std::min(q, count - 1)]];
                          x[q] = bi.x;
                          y[q] = bi.y;
                          z[q] = bi.z;
                        }
                        std::array<Vec3<double>, kTargetBlock> out;
                        accelerate_block(bodies, softening_squared, x, y, z, out);
                        std::copy_n(out.begin(), count, result.begin() + first);
                      }
                    });
  return result;
}

std::vector<std::uint32_t> validation_targets(std::size_t n, std::size_t max_targets) {
  std::vector<std::uint32_t> targets;
  if (n <= max_targets || max_targets < 2) {
    targets.resize(n);
    for (std::size_t i = 0; i < n; ++i) targets[i] = static_cast<std::uint32_t>(i);
    return targets;
  }
  targets.resize(max_targets);
  for (std::size_t k = 0; k < max_targets; ++k) {
    targets[k] = static_cast<std::uint32_t>(k * (n - 1) / (max_targets - 1));
  }
  return targets;
}

std::filesystem::path ReferenceCache::default_directory() {
  if (const char* dir = std::getenv("NBODY_FAIR_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::filesystem::path(xdg) / "nbody-fair";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::filesystem::path(home) / ".cache" / "nbody-fair";
  }
  return {};
}

std::vector<Vec3<double>> ReferenceCache::get_or_compute(
    std::span<const Body<double>> bodies, double softening,
    std::span<const std::uint32_t> targets) const {
  if (directory_.empty()) return reference_accelerations(bodies, softening, targets);

  CacheHeader key;
  key.input_hash = input_hash(bodies);
  key.softening_bits = std::bit_cast<std::uint64_t>(softening);
  key.body_count = bodies.size();
  key.target_count = targets.size();
  key.target_hash = hash_targets(targets);
  const std::filesystem::path file = directory_ / "reference" /
                                     fmt::format("{:016x}-{:016x}-{:016x}.f64", key.input_hash,
                                                 key.softening_bits, key.target_hash);

  if (std::ifstream in(file, std::ios::binary); in) {
    CacheHeader stored;
    std::vector<Vec3<double>> cached(targets.size());
    in.read(reinterpret_cast<char*>(&stored), sizeof stored);
    in.read(reinterpret_cast<char*>(cached.data()),
            static_cast<std::streamsize>(cached.size() * sizeof(Vec3<double>)));
    if (in && stored == key) return cached;
  }

  std::vector<Vec3<double>> computed = reference_accelerations(bodies, softening, targets);
  // Best effort: a cache that cannot be written only costs time.
  std::string bytes(sizeof key + computed.size() * sizeof(Vec3<double>), '\0');
  std::memcpy(bytes.data(), &key, sizeof key);
  std::memcpy(bytes.data() + sizeof key, computed.data(), computed.size() * sizeof(Vec3<double>));
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  try {
    write_file_atomically(file, bytes);
  } catch (const std::exception&) {
  }
  return computed;
}

}  // namespace nbody
