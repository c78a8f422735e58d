#include "nbody/cpu_peaks/rapl_energy.hpp"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace nbody::peaks {
namespace {

namespace fs = std::filesystem;

const fs::path kCpuRoot = "/sys/devices/system/cpu";

std::string error_text(int error) {
  return std::error_code(error, std::generic_category()).message();
}

// A small file read whole with open/read, as sysfs wants, its trailing blanks dropped: nullopt
// with `error` set to why it could not be read (the errno's text: "Permission denied").
std::optional<std::string> read_text(const fs::path& path, std::string& error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = error_text(errno);
    return std::nullopt;
  }
  std::string text;
  char buffer[256];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      error = error_text(errno);
      ::close(fd);
      return std::nullopt;
    }
    if (got == 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(fd);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

std::optional<std::string> read_text(const fs::path& path) {
  std::string ignored;
  return read_text(path, ignored);
}

// A whole unsigned number; `base` 0 also takes "0x02".
std::optional<std::uint64_t> parse_unsigned(const std::string& text, int base = 10) {
  if (text.empty() || !std::isxdigit(static_cast<unsigned char>(text.front()))) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), &end, base);
  if (errno != 0 || end != text.c_str() + text.size()) return std::nullopt;
  return static_cast<std::uint64_t>(value);
}

std::optional<int> parse_int(const std::string& text) {
  const std::optional<std::uint64_t> value = parse_unsigned(text);
  if (!value || *value > 1'000'000) return std::nullopt;
  return static_cast<int>(*value);
}

// A counter's value: nullopt with `error` set where the file is unreadable or holds no number.
std::optional<std::uint64_t> read_counter(const fs::path& path, std::string& error) {
  const std::optional<std::string> text = read_text(path, error);
  if (!text) return std::nullopt;
  const std::optional<std::uint64_t> value = parse_unsigned(*text);
  if (!value) error = fmt::format("it holds \"{}\", not a number", text->substr(0, 40));
  return value;
}

std::optional<int> package_of_cpu(int cpu) {
  const std::optional<std::string> text =
      read_text(kCpuRoot / fmt::format("cpu{}", cpu) / "topology" / "physical_package_id");
  if (!text) return std::nullopt;
  return parse_int(*text);
}

// The CPUs this process may run on; empty when the affinity cannot be read.
std::vector<int> cpus_of_this_process() {
  // The mask grows until the kernel's fits: machines with more than 1024 CPUs exist.
  for (int count = 1024; count <= (1 << 20); count *= 2) {
    cpu_set_t* set = CPU_ALLOC(count);
    if (set == nullptr) return {};
    const std::size_t size = CPU_ALLOC_SIZE(count);
    CPU_ZERO_S(size, set);
    if (::sched_getaffinity(0, size, set) == 0) {
      std::vector<int> cpus;
      for (int cpu = 0; cpu < count; ++cpu) {
        if (CPU_ISSET_S(cpu, size, set)) cpus.push_back(cpu);
      }
      CPU_FREE(set);
      return cpus;
    }
    const int error = errno;
    CPU_FREE(set);
    if (error != EINVAL) return {};
  }
  return {};
}

// "package-3" → 3.
std::optional<int> package_of_zone_name(const std::string& name) {
  constexpr std::string_view prefix = "package-";
  if (name.rfind(prefix, 0) != 0) return std::nullopt;
  return parse_int(name.substr(prefix.size()));
}

// --- powercap -----------------------------------------------------------------------------------

struct PowercapDomain {
  std::string label;        // "package-0", "package-0 dram"
  fs::path energy;          // its energy_uj
  std::uint64_t range = 0;  // max_energy_range_uj: where the counter wraps
  std::uint64_t last = 0;   // the last raw value read
  std::uint64_t total = 0;  // microjoules since the meter was made
};

class PowercapMeter final : public EnergyMeter {
 public:
  explicit PowercapMeter(std::vector<PowercapDomain> domains) : domains_(std::move(domains)) {}

  std::string source() const override { return "powercap"; }
  std::vector<std::string> domains() const override {
    std::vector<std::string> labels;
    for (const PowercapDomain& domain : domains_) labels.push_back(domain.label);
    return labels;
  }
  double unit_j() const override { return 1e-6; }

  std::vector<double> joules() override {
    // Every counter read before any is updated: a failed read leaves the meter as it was.
    std::vector<std::uint64_t> raw(domains_.size());
    for (std::size_t i = 0; i < domains_.size(); ++i) {
      std::string error;
      const std::optional<std::uint64_t> value = read_counter(domains_[i].energy, error);
      if (!value) {
        throw EnergyReadError(fmt::format("powercap's {} energy_uj could not be read ({})",
                                          domains_[i].label, error));
      }
      raw[i] = *value;
    }
    std::vector<double> result;
    for (std::size_t i = 0; i < domains_.size(); ++i) {
      PowercapDomain& domain = domains_[i];
      // Below the last value, the counter wrapped once (as LIKWID and PAPI undo it).
      if (raw[i] >= domain.last) {
        domain.total += raw[i] - domain.last;
      } else if (domain.range >= domain.last) {
        domain.total += domain.range - domain.last + raw[i];
      } else {
        domain.total += raw[i];
      }
      domain.last = raw[i];
      result.push_back(static_cast<double>(domain.total) * 1e-6);
    }
    return result;
  }

 private:
  std::vector<PowercapDomain> domains_;
};

// A zone's directory name, "intel-rapl:0" or "amd-rapl:0": a name ending in "rapl", a colon and
// digits ("intel-rapl:0:0", a subzone, has a second colon; "intel-rapl-mmio:0" repeats the package
// zone on some Intel client parts and would count it twice).
bool is_rapl_zone_directory(const std::string& name) {
  const std::size_t colon = name.find(':');
  if (colon == std::string::npos || name.find(':', colon + 1) != std::string::npos) return false;
  const std::string type = name.substr(0, colon);
  return type.size() >= 4 && type.ends_with("rapl") && parse_int(name.substr(colon + 1));
}

std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::vector<fs::path> entries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    entries.push_back(it->path());
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

// The package zones under `root`, by package number: zones at the top (the class's links) and in
// a control type's folder ("intel-rapl/", "amd-rapl/"); the first found of a package is kept.
std::map<int, fs::path> find_package_zones(const fs::path& root) {
  std::vector<fs::path> candidates;
  for (const fs::path& entry : sorted_entries(root)) {
    const std::string name = entry.filename().string();
    std::error_code ec;
    if (is_rapl_zone_directory(name)) {
      candidates.push_back(entry);
    } else if (name.ends_with("-rapl") && fs::is_directory(entry, ec)) {
      for (const fs::path& inner : sorted_entries(entry)) {
        if (is_rapl_zone_directory(inner.filename().string())) candidates.push_back(inner);
      }
    }
  }
  // Intel's name first where a machine shows two types.
  std::stable_sort(candidates.begin(), candidates.end(), [](const fs::path& a, const fs::path& b) {
    return a.filename().string().starts_with("intel-rapl:") &&
           !b.filename().string().starts_with("intel-rapl:");
  });
  std::map<int, fs::path> zones;
  for (const fs::path& zone : candidates) {
    const std::optional<std::string> name = read_text(zone / "name");
    if (!name) continue;
    if (const std::optional<int> package = package_of_zone_name(*name)) {
      zones.emplace(*package, zone);
    }
  }
  return zones;
}

// The zone's "dram" subzone ("intel-rapl:0:0"), inside it or beside it; empty when it has none.
fs::path find_dram_subzone(const fs::path& zone) {
  const std::string prefix = zone.filename().string() + ":";
  for (const fs::path& dir : {zone, zone.parent_path()}) {
    for (const fs::path& entry : sorted_entries(dir)) {
      if (!entry.filename().string().starts_with(prefix)) continue;
      if (read_text(entry / "name") == std::optional<std::string>("dram")) return entry;
    }
  }
  return {};
}

// The domain of one zone, its counter read once: nullopt with `why_not` set where unreadable.
std::optional<PowercapDomain> open_powercap_domain(const fs::path& zone, std::string label,
                                                   std::string& why_not) {
  PowercapDomain domain;
  domain.label = std::move(label);
  domain.energy = zone / "energy_uj";
  std::string error;
  const std::optional<std::uint64_t> first = read_counter(domain.energy, error);
  if (!first) {
    why_not = fmt::format(
        "powercap's {} energy_uj is not readable ({}); RAPL needs root or a readable powercap",
        domain.label, error);
    return std::nullopt;
  }
  const std::optional<std::uint64_t> range = read_counter(zone / "max_energy_range_uj", error);
  if (!range) {
    why_not =
        fmt::format("powercap's {} max_energy_range_uj is not readable ({})", domain.label, error);
    return std::nullopt;
  }
  domain.last = *first;
  domain.range = *range;
  return domain;
}

std::string package_list(const std::map<int, fs::path>& zones) {
  std::string list;
  for (const auto& [package, zone] : zones) {
    list += (list.empty() ? "package-" : ", package-") + std::to_string(package);
  }
  return list;
}

std::unique_ptr<EnergyMeter> make_powercap_meter(const fs::path& root,
                                                 const std::set<int>& packages,
                                                 std::string& why_not) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    why_not = fmt::format("no {}", root.string());
    return nullptr;
  }
  const std::map<int, fs::path> zones = find_package_zones(root);
  if (zones.empty()) {
    why_not =
        fmt::format("{} has no RAPL package zone (a *-rapl:N named package-N)", root.string());
    return nullptr;
  }
  std::vector<PowercapDomain> domains;
  for (const int package : packages) {
    const auto zone = zones.find(package);
    if (zone == zones.end()) {
      why_not =
          fmt::format("powercap has no package-{} zone (it has {})", package, package_list(zones));
      return nullptr;
    }
    const std::string label = fmt::format("package-{}", package);
    std::optional<PowercapDomain> domain = open_powercap_domain(zone->second, label, why_not);
    if (!domain) return nullptr;
    domains.push_back(std::move(*domain));
    if (const fs::path dram = find_dram_subzone(zone->second); !dram.empty()) {
      domain = open_powercap_domain(dram, label + " dram", why_not);
      if (!domain) return nullptr;
      domains.push_back(std::move(*domain));
    }
  }
  return std::make_unique<PowercapMeter>(std::move(domains));
}

// --- perf power PMU -----------------------------------------------------------------------------

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept {
    if (this != &other) {
      close();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() { close(); }
  int get() const { return fd_; }

 private:
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd_;
};

struct PerfDomain {
  std::string label;
  FileDescriptor fd;
  double scale = 0;         // joules per count
  std::uint64_t start = 0;  // the count when the meter was made
};

// One system-wide count of the event: nullopt with `error` set where it cannot be read.
std::optional<std::uint64_t> read_perf_count(int fd, std::string& error) {
  std::uint64_t count = 0;
  const ssize_t got = ::read(fd, &count, sizeof count);
  if (got == static_cast<ssize_t>(sizeof count)) return count;
  error = got < 0 ? error_text(errno) : fmt::format("{} bytes read of 8", got);
  return std::nullopt;
}

class PerfPowerMeter final : public EnergyMeter {
 public:
  explicit PerfPowerMeter(std::vector<PerfDomain> domains) : domains_(std::move(domains)) {}

  std::string source() const override { return "perf_power"; }
  std::vector<std::string> domains() const override {
    std::vector<std::string> labels;
    for (const PerfDomain& domain : domains_) labels.push_back(domain.label);
    return labels;
  }
  // The coarsest step where DRAM's scale differs from the package's.
  double unit_j() const override {
    double unit = 0;
    for (const PerfDomain& domain : domains_) unit = std::max(unit, domain.scale);
    return unit;
  }

  // The counts are 64 bits wide: they do not wrap.
  std::vector<double> joules() override {
    std::vector<double> result;
    for (const PerfDomain& domain : domains_) {
      std::string error;
      const std::optional<std::uint64_t> count = read_perf_count(domain.fd.get(), error);
      if (!count) {
        throw EnergyReadError(
            fmt::format("the perf power PMU's {} could not be read ({})", domain.label, error));
      }
      result.push_back(static_cast<double>(*count - domain.start) * domain.scale);
    }
    return result;
  }

 private:
  std::vector<PerfDomain> domains_;
};

struct PerfEvent {
  std::uint64_t config = 0;
  double scale = 0;
};

// The PMU's events ("energy-pkg, energy-psys"), their .scale and .unit files left out.
std::string offered_events(const fs::path& pmu) {
  std::string list;
  for (const fs::path& entry : sorted_entries(pmu / "events")) {
    const std::string name = entry.filename().string();
    if (name.find('.') != std::string::npos) continue;
    list += (list.empty() ? "" : ", ") + name;
  }
  return list.empty() ? "none" : list;
}

// events/NAME ("event=0x02") and events/NAME.scale: nullopt with `why_not` set when either is
// missing or not understood.
std::optional<PerfEvent> read_perf_event(const fs::path& pmu, const std::string& name,
                                         std::string& why_not) {
  const std::optional<std::string> encoding = read_text(pmu / "events" / name);
  if (!encoding) {
    why_not = fmt::format("the perf power PMU has no {} (it offers {})", name, offered_events(pmu));
    return std::nullopt;
  }
  constexpr std::string_view field = "event=";
  std::optional<std::uint64_t> config;
  if (encoding->rfind(field, 0) == 0) config = parse_unsigned(encoding->substr(field.size()), 0);
  const std::optional<std::string> scale_text = read_text(pmu / "events" / (name + ".scale"));
  char* end = nullptr;
  const double scale = scale_text ? std::strtod(scale_text->c_str(), &end) : 0.0;
  if (!config || !scale_text || end != scale_text->c_str() + scale_text->size() || !(scale > 0)) {
    why_not = fmt::format("the perf power PMU's {} (\"{}\") or its scale is not understood", name,
                          encoding->substr(0, 40));
    return std::nullopt;
  }
  return PerfEvent{*config, scale};
}

// The first CPU of each package, from the CPUs' topology.
std::map<int, int> first_cpu_of_each_package() {
  std::map<int, int> first;
  for (const fs::path& entry : sorted_entries(kCpuRoot)) {
    const std::string name = entry.filename().string();
    if (!name.starts_with("cpu")) continue;
    const std::optional<int> cpu = parse_int(name.substr(3));
    if (!cpu) continue;
    if (const std::optional<int> package = package_of_cpu(*cpu)) {
      const auto [it, added] = first.emplace(*package, *cpu);
      if (!added) it->second = std::min(it->second, *cpu);
    }
  }
  return first;
}

std::string refused_reason(int error, const std::string& event, int cpu) {
  std::string reason = fmt::format("perf_event_open of power/{} on CPU {} failed ({})", event, cpu,
                                   error_text(error));
  if (error == EACCES || error == EPERM) {
    const std::optional<std::string> paranoid = read_text("/proc/sys/kernel/perf_event_paranoid");
    reason += fmt::format(": it needs perf_event_paranoid 0 or less (it is {}) or CAP_PERFMON",
                          paranoid.value_or("unknown"));
  }
  return reason;
}

// The event counting system-wide on `cpu`: nullopt with `why_not` set where refused.
std::optional<PerfDomain> open_perf_domain(std::uint32_t type, const PerfEvent& event,
                                           const std::string& event_name, int cpu,
                                           std::string label, std::string& why_not) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = type;
  attr.config = event.config;
  const long fd = ::syscall(SYS_perf_event_open, &attr, -1, cpu, -1, 0UL);
  if (fd < 0) {
    why_not = refused_reason(errno, event_name, cpu);
    return std::nullopt;
  }
  PerfDomain domain{std::move(label), FileDescriptor(static_cast<int>(fd)), event.scale, 0};
  std::string error;
  const std::optional<std::uint64_t> start = read_perf_count(domain.fd.get(), error);
  if (!start) {
    why_not = fmt::format("the perf power PMU's {} on CPU {} is not readable ({})", event_name, cpu,
                          error);
    return std::nullopt;
  }
  domain.start = *start;
  return domain;
}

std::unique_ptr<EnergyMeter> make_perf_power_meter(const fs::path& pmu,
                                                   const std::set<int>& packages,
                                                   std::string& why_not) {
  std::error_code ec;
  if (!fs::is_directory(pmu, ec)) {
    why_not = fmt::format("no perf power PMU ({})", pmu.string());
    return nullptr;
  }
  const std::optional<PerfEvent> package_event = read_perf_event(pmu, "energy-pkg", why_not);
  if (!package_event) return nullptr;
  const std::optional<std::string> type_text = read_text(pmu / "type");
  const std::optional<std::uint64_t> type_number =
      type_text ? parse_unsigned(*type_text) : std::nullopt;
  if (!type_number || *type_number > UINT32_MAX) {
    why_not = "the perf power PMU's type is not readable";
    return nullptr;
  }
  const auto type = static_cast<std::uint32_t>(*type_number);
  std::string ignored;
  const std::optional<PerfEvent> dram_event = read_perf_event(pmu, "energy-ram", ignored);
  std::map<int, int> first_cpu = first_cpu_of_each_package();
  // Where the topology is unreadable the one package there is can be asked for on CPU 0.
  if (first_cpu.empty()) first_cpu[0] = 0;
  std::vector<PerfDomain> domains;
  for (const int package : packages) {
    const auto cpu = first_cpu.find(package);
    if (cpu == first_cpu.end()) {
      why_not = fmt::format("the perf power PMU has no CPU of package-{}", package);
      return nullptr;
    }
    const std::string label = fmt::format("package-{}", package);
    std::optional<PerfDomain> domain =
        open_perf_domain(type, *package_event, "energy-pkg", cpu->second, label, why_not);
    if (!domain) return nullptr;
    domains.push_back(std::move(*domain));
    if (dram_event) {
      domain =
          open_perf_domain(type, *dram_event, "energy-ram", cpu->second, label + " dram", why_not);
      if (!domain) return nullptr;
      domains.push_back(std::move(*domain));
    }
  }
  return std::make_unique<PerfPowerMeter>(std::move(domains));
}

}  // namespace

RaplPaths RaplPaths::from_environment() {
  RaplPaths paths;
  if (const char* root = std::getenv("NBODY_FAIR_POWERCAP_ROOT"); root != nullptr && *root != 0) {
    paths.powercap = root;
  }
  if (const char* root = std::getenv("NBODY_FAIR_PERF_POWER_ROOT"); root != nullptr && *root != 0) {
    paths.perf_power = root;
  }
  return paths;
}

std::set<int> packages_of_this_process() {
  std::set<int> packages;
  for (const int cpu : cpus_of_this_process()) {
    const std::optional<int> package = package_of_cpu(cpu);
    if (!package) return {0};
    packages.insert(*package);
  }
  if (packages.empty()) return {0};
  return packages;
}

std::unique_ptr<EnergyMeter> make_rapl_meter(const RaplPaths& paths, const std::set<int>& packages,
                                             std::string& why_not) {
  try {
    if (packages.empty()) {
      why_not = "no CPU package to measure";
      return nullptr;
    }
    std::string powercap_reason;
    std::unique_ptr<EnergyMeter> meter =
        make_powercap_meter(paths.powercap, packages, powercap_reason);
    std::string perf_reason;
    if (!meter) meter = make_perf_power_meter(paths.perf_power, packages, perf_reason);
    if (meter) {
      why_not.clear();
      return meter;
    }
    why_not = powercap_reason + ", and " + perf_reason;
  } catch (const std::exception& e) {
    why_not = fmt::format("RAPL could not be read: {}", e.what());
  }
  return nullptr;
}

}  // namespace nbody::peaks
