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
#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#endif

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

#if defined(__x86_64__)
// The SIMD features the suite's x86 kernels and audit look for.
void read_isa_features(MachineRecord& machine) {
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
}
#elif defined(__aarch64__)
// Arm's cores by their MIDR_EL1 (implementer, part number), as the vendors' manuals number them:
// the Neoverse cores of Graviton, Grace and Ampere Altra, and Ampere's own.
std::string arm_core_name(std::uint64_t midr) {
  const unsigned implementer = (midr >> 24) & 0xff;
  const unsigned part = (midr >> 4) & 0xfff;
  struct Core {
    unsigned implementer, part;
    const char* name;
  };
  constexpr Core kCores[] = {
      {0x41, 0xd08, "Arm Cortex-A72"},   {0x41, 0xd0b, "Arm Cortex-A76"},
      {0x41, 0xd0c, "Arm Neoverse N1"},  {0x41, 0xd40, "Arm Neoverse V1"},
      {0x41, 0xd49, "Arm Neoverse N2"},  {0x41, 0xd4f, "Arm Neoverse V2"},
      {0x41, 0xd8e, "Arm Neoverse N3"},  {0x41, 0xd84, "Arm Neoverse V3"},
      {0xc0, 0xac3, "Ampere AmpereOne"}, {0x41, 0xd03, "Arm Cortex-A53"},
      {0x41, 0xd07, "Arm Cortex-A57"},   {0x41, 0xd0d, "Arm Cortex-A77"},
      {0x41, 0xd41, "Arm Cortex-A78"},   {0x41, 0xd44, "Arm Cortex-X1"},
      {0x41, 0xd4d, "Arm Cortex-A715"},  {0x41, 0xd4e, "Arm Cortex-X3"},
      {0x46, 0x001, "Fujitsu A64FX"},    {0x48, 0xd01, "HiSilicon TaiShan v110"},
      {0x51, 0x001, "Qualcomm Oryon"},   {0x61, 0x022, "Apple M1"}};
  for (const Core& core : kCores) {
    if (core.implementer == implementer && core.part == part) {
      return fmt::format("{} (MIDR {:#010x})", core.name, midr);
    }
  }
  return fmt::format("Arm core, implementer {:#04x}, part {:#05x} (MIDR {:#010x})", implementer,
                     part, midr);
}

// SVE's vector length in bits, as the kernel sets it for this process (0 where it cannot say).
int sve_vector_bits() {
#ifdef PR_SVE_GET_VL
  const int vl = ::prctl(PR_SVE_GET_VL);
  if (vl > 0) return (vl & PR_SVE_VL_LEN_MASK) * 8;
#endif
  return 0;
}

// NEON (Advanced SIMD) and SVE from the kernel's hardware capabilities, SVE named with its vector
// length ("sve128", as an SVE kernel of that length would be named: the audit compares widths);
// the core from MIDR_EL1, which Linux lets user space read where it sets HWCAP_CPUID.
void read_isa_features(MachineRecord& machine) {
  const unsigned long hwcap = getauxval(AT_HWCAP);
  const unsigned long hwcap2 = getauxval(AT_HWCAP2);
  if (hwcap & HWCAP_ASIMD) machine.isa_features.emplace_back("neon64");
  if (hwcap & HWCAP_SVE) {
    const int bits = sve_vector_bits();
    machine.isa_features.push_back(bits > 0 ? fmt::format("sve{}", bits) : std::string("sve"));
  }
#ifdef HWCAP2_SVE2
  if (hwcap2 & HWCAP2_SVE2) machine.isa_features.emplace_back("sve2");
#else
  (void)hwcap2;
#endif
  // MIDR over /proc/cpuinfo, which on an Arm host names no model and under qemu-user is the
  // host's.
  if (hwcap & HWCAP_CPUID) {
    std::uint64_t midr = 0;
    asm volatile("mrs %0, MIDR_EL1" : "=r"(midr));
    machine.cpu_model = arm_core_name(midr);
  }
}
#else
void read_isa_features(MachineRecord&) {}
#endif

}  // namespace

MachineRecord describe_machine() {
  MachineRecord machine;
  read_cpuinfo(machine);
  machine.logical_cpus = static_cast<int>(std::thread::hardware_concurrency());
  if (machine.physical_cores == 0) machine.physical_cores = machine.logical_cpus;
  read_isa_features(machine);
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
