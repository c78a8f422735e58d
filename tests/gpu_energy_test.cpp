// The GPU board's energy through NVML, on a GPU: about one second of gpu.tuned at full load reads
// between the board's idle power and its power limit, times the seconds. Skips with the reason
// where there is no GPU or no NVML.
#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "nbody/app/wiring.hpp"
#include "nbody/energy_meter.hpp"
#include "nbody/gpu/gpu_energy.hpp"
#include "nbody/initial_conditions.hpp"

namespace nbody {
namespace {

TEST(GpuEnergy, OneSecondAtFullLoadLiesBetweenIdleAndTheBoardLimit) {
  const Registry registry = make_default_registry();
  const Implementation* tuned = registry.find("gpu.tuned");
  ASSERT_NE(tuned, nullptr);
  if (const auto reason = tuned->unavailable_reason()) GTEST_SKIP() << *reason;
  std::string why_not;
  std::unique_ptr<EnergyMeter> meter = gpu::make_gpu_energy_meter({0}, why_not);
  if (!meter) GTEST_SKIP() << "no GPU energy: " << why_not;
  const EnergyMeterRecord record = describe_energy_meter(meter.get(), DeviceKind::gpu, "", 1.0);
  ASSERT_TRUE(record.available) << record.unavailable_reason;
  ASSERT_TRUE(record.limit_watts.has_value());
  // NVML's board counter moves about every 100 ms on an H100 or H200.
  EXPECT_GT(record.update_period_s, 0.0);
  EXPECT_LT(record.update_period_s, 0.5);
  const double idle_w = record.idle_total_watts();
  EXPECT_GT(idle_w, 10.0);
  EXPECT_LT(idle_w, *record.limit_watts);

  const Snapshot snapshot = make_initial_condition(InitialCondition::uniform_ball, 1u << 17, 7);
  auto run = tuned->prepare(snapshot.bodies, 0.01, ExecutionOptions{});
  run->evaluate(PreparedRun::Scope::kernel);  // warm-up
  EnergyWindow window(*meter, record);
  const auto start = std::chrono::steady_clock::now();
  std::int64_t evaluations = 0;
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(1)) {
    run->evaluate(PreparedRun::Scope::kernel);
    ++evaluations;
  }
  const EnergyStatistics e = window.close(evaluations);
  EXPECT_TRUE(e.resolved) << e.periods_spanned << " periods";
  // The counter may lag one update period either way: the bounds take it in.
  const double lag_j = record.update_period_s * *record.limit_watts;
  EXPECT_GE(e.joules + lag_j, idle_w * e.seconds)
      << e.joules << " J over " << e.seconds << " s, idle " << idle_w << " W";
  EXPECT_LE(e.joules, *record.limit_watts * e.seconds + lag_j)
      << e.joules << " J over " << e.seconds << " s, limit " << *record.limit_watts << " W";
  EXPECT_GT(e.mean_watts, idle_w) << "a full-load kernel draws more than the idle board";
  std::printf(
      "gpu.tuned N=128K: %.1f J over %.3f s (%lld evaluations): %.0f W, idle %.0f W, "
      "limit %.0f W, update period %.1f ms\n",
      e.joules, e.seconds, static_cast<long long>(evaluations), e.mean_watts, idle_w,
      *record.limit_watts, 1e3 * record.update_period_s);
}

}  // namespace
}  // namespace nbody
