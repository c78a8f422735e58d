// What NVML's board energy counter can resolve, measured before any figure is built on it:
// how often nvmlDeviceGetTotalEnergyConsumption advances (at idle and under load), and whether
// its joules agree with nvmlDeviceGetPowerUsage integrated over the same interval, for a busy
// kernel of several lengths. Prints one line per finding.
//
//   nvcc -O2 -arch=sm_90 gpu/bench/nvml_energy_probe.cu -lnvidia-ml -o nvml_energy_probe
//   ./nvml_energy_probe [DEVICE]
#include <cuda_runtime.h>
#include <nvml.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void check(nvmlReturn_t status, const char* what) {
  if (status != NVML_SUCCESS) {
    std::fprintf(stderr, "%s: %s\n", what, nvmlErrorString(status));
    std::exit(1);
  }
}

// A chain of dependent FMAs per thread on every SM, `rounds` long: full load, no memory traffic.
__global__ void busy(float* out, long long rounds) {
  float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 1e-7f, d = 0.5f;
  for (long long i = 0; i < rounds; ++i) {
    a = fmaf(a, b, c);
    d = fmaf(d, b, c);
  }
  if (a + d == 42.0f) out[threadIdx.x] = a;
}

struct Poll {
  std::vector<double> t;
  std::vector<unsigned long long> energy_mj;
  std::vector<double> power_w;  // sampled at the same instants
};

// Polls the counter and the power reading every ~`step_us` until `done` says stop.
template <class Done>
Poll poll(nvmlDevice_t dev, int step_us, Done done) {
  Poll p;
  const auto t0 = Clock::now();
  while (!done(seconds_since(t0))) {
    unsigned long long e = 0;
    unsigned int mw = 0;
    check(nvmlDeviceGetTotalEnergyConsumption(dev, &e), "energy");
    check(nvmlDeviceGetPowerUsage(dev, &mw), "power");
    p.t.push_back(seconds_since(t0));
    p.energy_mj.push_back(e);
    p.power_w.push_back(mw * 1e-3);
    if (step_us > 0) {
      const auto until = Clock::now() + std::chrono::microseconds(step_us);
      while (Clock::now() < until) {
      }
    }
  }
  return p;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Seconds between changes of the counter, and of the power reading.
void report_periods(const char* label, const Poll& p) {
  std::vector<double> energy_steps, power_steps, increments;
  double last_e = p.t.front(), last_p = p.t.front();
  for (std::size_t i = 1; i < p.t.size(); ++i) {
    if (p.energy_mj[i] != p.energy_mj[i - 1]) {
      energy_steps.push_back(p.t[i] - last_e);
      increments.push_back(double(p.energy_mj[i] - p.energy_mj[i - 1]));
      last_e = p.t[i];
    }
    if (p.power_w[i] != p.power_w[i - 1]) {
      power_steps.push_back(p.t[i] - last_p);
      last_p = p.t[i];
    }
  }
  std::sort(energy_steps.begin(), energy_steps.end());
  std::printf(
      "%s: %zu polls over %.3f s; energy counter changed %zu times, median every %.2f ms "
      "(min %.2f, max %.2f), median increment %.1f mJ; power reading changed %zu times, median "
      "every %.2f ms\n",
      label, p.t.size(), p.t.back() - p.t.front(), energy_steps.size(), 1e3 * median(energy_steps),
      energy_steps.empty() ? 0 : 1e3 * energy_steps.front(),
      energy_steps.empty() ? 0 : 1e3 * energy_steps.back(), median(increments), power_steps.size(),
      1e3 * median(power_steps));
}

// Joules by the counter and by the power readings integrated (trapezoids) over the same polls.
void report_agreement(const char* label, const Poll& p, double kernel_s) {
  double integrated = 0;
  for (std::size_t i = 1; i < p.t.size(); ++i) {
    integrated += 0.5 * (p.power_w[i] + p.power_w[i - 1]) * (p.t[i] - p.t[i - 1]);
  }
  const double counted = 1e-3 * double(p.energy_mj.back() - p.energy_mj.front());
  const double span = p.t.back() - p.t.front();
  std::printf(
      "%s: kernel %.3f s, polled %.3f s: counter %.3f J (%.1f W), power integrated %.3f J "
      "(%.1f W), counter/integrated %.4f\n",
      label, kernel_s, span, counted, counted / span, integrated, integrated / span,
      counted / integrated);
}

}  // namespace

int main(int argc, char** argv) {
  const int ordinal = argc > 1 ? std::atoi(argv[1]) : 0;
  check(nvmlInit_v2(), "init");
  char bus[64] = {};
  cudaDeviceGetPCIBusId(bus, sizeof bus, ordinal);
  nvmlDevice_t dev{};
  check(nvmlDeviceGetHandleByPciBusId_v2(bus, &dev), "device");
  char name[96] = {};
  nvmlDeviceGetName(dev, name, sizeof name);
  unsigned int limit_mw = 0;
  check(nvmlDeviceGetEnforcedPowerLimit(dev, &limit_mw), "limit");
  std::printf("device %s (%s), enforced power limit %.0f W\n", name, bus, limit_mw * 1e-3);

  // Cost of one read of each.
  {
    unsigned long long e = 0;
    unsigned int mw = 0;
    auto t0 = Clock::now();
    for (int i = 0; i < 1000; ++i) nvmlDeviceGetTotalEnergyConsumption(dev, &e);
    const double energy_read = seconds_since(t0) / 1000;
    t0 = Clock::now();
    for (int i = 0; i < 1000; ++i) nvmlDeviceGetPowerUsage(dev, &mw);
    std::printf("one read: energy %.1f us, power %.1f us\n", 1e6 * energy_read,
                1e6 * seconds_since(t0) / 1000);
  }

  float* out = nullptr;
  cudaMalloc(&out, 4096);
  cudaSetDevice(ordinal);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, ordinal);
  const int blocks = prop.multiProcessorCount * 8;
  busy<<<blocks, 256>>>(out, 1000);
  cudaDeviceSynchronize();

  // Idle: 2 s of polling with nothing running.
  const Poll idle = poll(dev, 200, [](double t) { return t > 2.0; });
  report_periods("idle", idle);
  report_agreement("idle", idle, 0);

  // Calibrate rounds per second.
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  const long long calib_rounds = 200000;
  cudaEventRecord(a);
  busy<<<blocks, 256>>>(out, calib_rounds);
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  const double rounds_per_s = calib_rounds / (ms * 1e-3);

  for (double seconds : {0.05, 0.1, 0.3, 1.0, 2.0}) {
    const long long rounds = static_cast<long long>(seconds * rounds_per_s);
    cudaEventRecord(a);
    busy<<<blocks, 256>>>(out, rounds);
    cudaEventRecord(b);
    // Poll while the kernel runs, then a little after (the counter may lag).
    bool finished = false;
    double finished_at = 0;
    const Poll load = poll(dev, 200, [&](double t) {
      if (!finished && cudaEventQuery(b) == cudaSuccess) {
        finished = true;
        finished_at = t;
      }
      return finished && t > finished_at;
    });
    cudaEventElapsedTime(&ms, a, b);
    char label[64];
    std::snprintf(label, sizeof label, "load %.2fs", seconds);
    report_periods(label, load);
    report_agreement(label, load, ms * 1e-3);
    // The same interval read as the suite will: the counter before the launch and after sync.
    unsigned long long e0 = 0, e1 = 0;
    nvmlDeviceGetTotalEnergyConsumption(dev, &e0);
    const auto t0 = Clock::now();
    busy<<<blocks, 256>>>(out, rounds);
    cudaDeviceSynchronize();
    const double wall = seconds_since(t0);
    nvmlDeviceGetTotalEnergyConsumption(dev, &e1);
    std::printf("%s around launch+sync: %.3f s, %.3f J, %.1f W (idle..limit bounds %.1f..%.1f J)\n",
                label, wall, 1e-3 * double(e1 - e0), 1e-3 * double(e1 - e0) / wall,
                wall * median(idle.power_w), wall * limit_mw * 1e-3);
  }
  // The tail: does the counter keep rising after the kernel, at what rate, for how long.
  const Poll after = poll(dev, 200, [](double t) { return t > 1.0; });
  report_periods("after load", after);
  report_agreement("after load", after, 0);
  cudaFree(out);
  nvmlShutdown();
  return 0;
}
