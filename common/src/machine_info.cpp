#include "nbody/machine_info.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace nbody {
namespace {

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t");
  const auto end = s.find_last_not_of(" \t\r\n");
  return begin == std::string::npos ? std::string{} : s.substr(begin, end - begin + 1);
}

// Fields of /proc/cpuinfo for the first processor, plus the count of distinct physical cores.
void read_cpuinfo(MachineRecord& machine) {
  std::ifstream in("/proc/cpuinfo");
  std::string line, physical_id;
  std::set<std::pair<std::string, std::string>> cores;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon));
    const std::string value = trim(line.substr(colon + 1));
    if (key == "model name" && machine.cpu_model.empty()) machine.cpu_model = value;
    if (key == "physical id") physical_id = value;
    if (key == "core id") cores.insert({physical_id, value});
  }
  machine.physical_cores = static_cast<int>(cores.size());
}

}  // namespace

MachineRecord describe_machine() {
  MachineRecord machine;
  read_cpuinfo(machine);
  machine.logical_cpus = static_cast<int>(std::thread::hardware_concurrency());
  if (machine.physical_cores == 0) machine.physical_cores = machine.logical_cpus;
  __builtin_cpu_init();
  const std::pair<const char*, bool> features[] = {
      {"sse4.2", __builtin_cpu_supports("sse4.2")},
      {"avx", __builtin_cpu_supports("avx")},
      {"avx2", __builtin_cpu_supports("avx2")},
      {"fma", __builtin_cpu_supports("fma")},
      {"avx512f", __builtin_cpu_supports("avx512f")},
      {"avx512dq", __builtin_cpu_supports("avx512dq")},
      {"avx512vl", __builtin_cpu_supports("avx512vl")}};
  for (const auto& [name, supported] : features) {
    if (supported) machine.isa_features.emplace_back(name);
  }
  if (utsname u{}; ::uname(&u) == 0) {
    machine.hostname = u.nodename;
    machine.os = fmt::format("{} {} {}", u.sysname, u.release, u.machine);
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) {
    machine.memory_bytes =
        static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
  }
  return machine;
}

std::uint64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::uint64_t value = 0;
  while (in >> key >> value >> unit) {
    if (key == "MemAvailable:") return value * 1024;
  }
  return 0;
}

std::optional<CpuActivity> sample_cpu_activity() {
  std::ifstream stat("/proc/stat");
  std::string label;
  stat >> label;
  if (!stat || label != "cpu") return std::nullopt;
  // user nice system idle iowait irq softirq steal, in clock ticks.
  double ticks[8] = {};
  for (double& field : ticks) stat >> field;
  if (!stat) return std::nullopt;
  const double per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  CpuActivity activity;
  activity.busy_seconds = (ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6]) / per_second;
  activity.steal_seconds = ticks[7] / per_second;
  activity.own_seconds = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  activity.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  activity.online_cpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  double mhz_sum = 0;
  int cpus = 0;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    mhz_sum += std::strtod(line.c_str() + colon + 1, nullptr);
    ++cpus;
  }
  if (cpus > 0) activity.clock_mhz = mhz_sum / cpus;
  return activity;
}

MeasurementConditions conditions_between(const CpuActivity& before, const CpuActivity& after) {
  MeasurementConditions c;
  c.wall_seconds = after.wall_seconds - before.wall_seconds;
  c.online_cpus = after.online_cpus;
  const double capacity = c.wall_seconds * std::max(1, after.online_cpus);
  if (capacity > 0) {
    const double others =
        (after.busy_seconds - before.busy_seconds) - (after.own_seconds - before.own_seconds);
    c.other_processes_cpu_share = std::clamp(others / capacity, 0.0, 1.0);
    c.steal_cpu_share =
        std::clamp((after.steal_seconds - before.steal_seconds) / capacity, 0.0, 1.0);
  }
  c.cpu_clock_mhz_before = before.clock_mhz;
  c.cpu_clock_mhz_after = after.clock_mhz;
  return c;
}

std::string utc_timestamp() {
  const auto now = std::chrono::system_clock::now();
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                     fmt::gmtime(std::chrono::system_clock::to_time_t(now)));
}

}  // namespace nbody
