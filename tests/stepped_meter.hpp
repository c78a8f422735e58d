#pragma once
// A meter whose counter the test drives: a constant power integrated by the clock and published
// only at each update period, as NVML's and RAPL's counters are.
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "nbody/energy_meter.hpp"

namespace nbody {

// `watts` on one domain, readable only as of the last update (every `period_s`).
class SteppedMeter final : public EnergyMeter {
 public:
  SteppedMeter(double watts, double period_s) : watts_(watts), period_s_(period_s) {}
  std::string source() const override { return "powercap"; }
  std::vector<std::string> domains() const override { return {"package-0"}; }
  std::vector<double> joules() override {
    if (fail_) throw EnergyReadError("package-0 energy_uj vanished");
    const double t =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return {watts_ * period_s_ * std::floor(t / period_s_)};
  }
  double unit_j() const override { return 1e-6; }
  void fail() { fail_ = true; }

 private:
  double watts_, period_s_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  bool fail_ = false;
};

}  // namespace nbody
