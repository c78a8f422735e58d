#pragma once
// Bodies in the two layouts the formulations use, and conversions between them.
#include <cstddef>
#include <span>
#include <vector>

#include <xsimd/memory/xsimd_aligned_allocator.hpp>

#include "nbody/physics.hpp"

namespace nbody {

// 64-byte alignment: one cache line, and the widest SIMD register (AVX-512).
inline constexpr std::size_t kSimdAlignment = 64;

template <class T>
using AlignedVector = std::vector<T, xsimd::aligned_allocator<T, kSimdAlignment>>;

// Array of structures: position and mass, laid out like CUDA's float4 / double4.
template <class T>
struct alignas(4 * sizeof(T)) Body {
  T x, y, z, m;
};

template <class T>
struct Vec3 {
  T x, y, z;
};

// Structure of arrays: one aligned array per coordinate.
template <class T>
struct BodiesSoA {
  AlignedVector<T> x, y, z, m;

  explicit BodiesSoA(std::size_t n = 0) : x(n), y(n), z(n), m(n) {}
  std::size_t size() const { return x.size(); }
};

template <class T>
struct AccelerationsSoA {
  AlignedVector<T> x, y, z;

  explicit AccelerationsSoA(std::size_t n = 0) : x(n), y(n), z(n) {}
  std::size_t size() const { return x.size(); }
};

template <class To, class From>
std::vector<Body<To>> convert_precision(std::span<const Body<From>> bodies) {
  std::vector<Body<To>> out(bodies.size());
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    out[i] = {static_cast<To>(bodies[i].x), static_cast<To>(bodies[i].y),
              static_cast<To>(bodies[i].z), static_cast<To>(bodies[i].m)};
  }
  return out;
}

template <class T>
BodiesSoA<T> to_soa(std::span<const Body<T>> bodies) {
  BodiesSoA<T> soa(bodies.size());
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    soa.x[i] = bodies[i].x;
    soa.y[i] = bodies[i].y;
    soa.z[i] = bodies[i].z;
    soa.m[i] = bodies[i].m;
  }
  return soa;
}

template <class T>
std::vector<Body<T>> to_aos(const BodiesSoA<T>& soa) {
  std::vector<Body<T>> bodies(soa.size());
  for (std::size_t i = 0; i < soa.size(); ++i) bodies[i] = {soa.x[i], soa.y[i], soa.z[i], soa.m[i]};
  return bodies;
}

// Every formulation's output is promoted to this for validation.
template <class T>
std::vector<Vec3<double>> promote(const AccelerationsSoA<T>& acc) {
  std::vector<Vec3<double>> out(acc.size());
  for (std::size_t i = 0; i < acc.size(); ++i) {
    out[i] = {static_cast<double>(acc.x[i]), static_cast<double>(acc.y[i]),
              static_cast<double>(acc.z[i])};
  }
  return out;
}

template <class T>
std::vector<Vec3<double>> promote(std::span<const Vec3<T>> acc) {
  std::vector<Vec3<double>> out(acc.size());
  for (std::size_t i = 0; i < acc.size(); ++i) {
    out[i] = {static_cast<double>(acc[i].x), static_cast<double>(acc[i].y),
              static_cast<double>(acc[i].z)};
  }
  return out;
}

}  // namespace nbody
