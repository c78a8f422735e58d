#pragma once
// Generic plumbing for CPU formulations: layout conversion, output buffers and steady-clock timing,
// so a formulation's own file holds only its kernel and its registration.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "nbody/bodies.hpp"
#include "nbody/registry.hpp"

namespace nbody::cpu {

template <class T>
using SoaKernel = std::function<void(const BodiesSoA<T>& bodies, T softening_squared,
                                     AccelerationsSoA<T>& accelerations)>;
template <class T>
using AosKernel = std::function<void(std::span<const Body<T>> bodies, T softening_squared,
                                     std::span<Vec3<T>> accelerations)>;

template <class Clock = std::chrono::steady_clock, class F>
double time_seconds(F&& f) {
  const auto start = Clock::now();
  std::forward<F>(f)();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

template <class T>
class SoaRun final : public PreparedRun {
 public:
  SoaRun(std::span<const Body<double>> bodies, double softening, SoaKernel<T> kernel,
         std::map<std::string, std::string> details = {})
      : bodies_(to_soa<T>(convert_precision<T, double>(bodies))),
        accelerations_(bodies.size()),
        softening_squared_(static_cast<T>(softening * softening)),
        kernel_(std::move(kernel)),
        details_(std::move(details)) {}

  double evaluate(Scope) override {
    return time_seconds([&] { kernel_(bodies_, softening_squared_, accelerations_); });
  }
  std::vector<Vec3<double>> accelerations() override { return promote(accelerations_); }
  std::map<std::string, std::string> details() const override { return details_; }

 private:
  BodiesSoA<T> bodies_;
  AccelerationsSoA<T> accelerations_;
  T softening_squared_;
  SoaKernel<T> kernel_;
  std::map<std::string, std::string> details_;
};

template <class T>
class AosRun final : public PreparedRun {
 public:
  AosRun(std::span<const Body<double>> bodies, double softening, AosKernel<T> kernel,
         std::map<std::string, std::string> details = {})
      : bodies_(convert_precision<T, double>(bodies)),
        accelerations_(bodies.size()),
        softening_squared_(static_cast<T>(softening * softening)),
        kernel_(std::move(kernel)),
        details_(std::move(details)) {}

  double evaluate(Scope) override {
    return time_seconds([&] { kernel_(bodies_, softening_squared_, accelerations_); });
  }
  std::vector<Vec3<double>> accelerations() override {
    return promote(std::span<const Vec3<T>>(accelerations_));
  }
  std::map<std::string, std::string> details() const override { return details_; }

 private:
  std::vector<Body<T>> bodies_;
  std::vector<Vec3<T>> accelerations_;
  T softening_squared_;
  AosKernel<T> kernel_;
  std::map<std::string, std::string> details_;
};

// Tolerances of the single-threaded scalar float32 formulations (docs/tolerances.md).
Tolerance scalar_float32_tolerance();

}  // namespace nbody::cpu
