#pragma once
// Generic plumbing for CPU formulations: layout conversion, output buffers and steady-clock timing,
// so a formulation's own file holds only its kernel and its registration.
#include <chrono>
#include <functional>

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "nbody/bodies.hpp"
#include "nbody/registry.hpp"

namespace nbody::cpu {

template <class Clock = std::chrono::steady_clock, class F>
double time_seconds(F&& f) {
  const auto start = Clock::now();
  std::forward<F>(f)();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The arrays a scalar kernel of layout L reads and writes, and how a run gets them from float64
// bodies and back to float64 accelerations.
template <class T, Layout L>
struct ScalarLayout;

template <class T>
struct ScalarLayout<T, Layout::aos> {
  using Bodies = std::vector<Body<T>>;
  using Accelerations = std::vector<Vec3<T>>;
  static Bodies bodies(std::span<const Body<double>> b) { return convert_precision<T, double>(b); }
  static std::vector<Vec3<double>> promoted(const Accelerations& a) {
    return promote(std::span<const Vec3<T>>(a));
  }
};

template <class T>
struct ScalarLayout<T, Layout::soa> {
  using Bodies = BodiesSoA<T>;
  using Accelerations = AccelerationsSoA<T>;
  static Bodies bodies(std::span<const Body<double>> b) {
    return to_soa<T>(convert_precision<T, double>(b));
  }
  static std::vector<Vec3<double>> promoted(const Accelerations& a) { return promote(a); }
};

// Writes accelerations[k] = a of body targets.begin + k, for the targets.size() bodies of the
// range, summing over every body in index order (so a target's sum does not depend on the range).
template <class T, Layout L>
using ScalarKernel = std::function<void(const typename ScalarLayout<T, L>::Bodies& bodies,
                                        T softening_squared, TargetRange targets,
                                        typename ScalarLayout<T, L>::Accelerations& accelerations)>;

// One scalar kernel bound to one input in layout L, timed on a steady clock. Computes
// options.targets (all bodies when empty).
template <class T, Layout L>
class ScalarRun final : public PreparedRun {
 public:
  ScalarRun(std::span<const Body<double>> bodies, double softening, const ExecutionOptions& options,
            ScalarKernel<T, L> kernel)
      : bodies_(ScalarLayout<T, L>::bodies(bodies)),
        targets_(resolve_targets(options.targets, bodies.size())),
        accelerations_(targets_.size()),
        softening_squared_(static_cast<T>(softening * softening)),
        kernel_(std::move(kernel)) {}

  Seconds evaluate(Scope) override {
    return Seconds::kernel_only(
        time_seconds([&] { kernel_(bodies_, softening_squared_, targets_, accelerations_); }));
  }
  void set_bodies(std::span<const Body<double>> bodies) override {
    bodies_ = ScalarLayout<T, L>::bodies(bodies);
  }
  std::vector<Vec3<double>> accelerations() override {
    return ScalarLayout<T, L>::promoted(accelerations_);
  }

 private:
  typename ScalarLayout<T, L>::Bodies bodies_;
  TargetRange targets_;
  typename ScalarLayout<T, L>::Accelerations accelerations_;
  T softening_squared_;
  ScalarKernel<T, L> kernel_;
};

// Tolerances of the single-threaded scalar formulations (docs/tolerances.md).
Tolerance scalar_float32_tolerance();
Tolerance scalar_float64_tolerance();

}  // namespace nbody::cpu
