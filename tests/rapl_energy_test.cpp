// The CPU's RAPL meter on fake powercap trees and perf power PMUs in a scratch folder: domains,
// deltas, wrap-around, and the one-line reasons where RAPL cannot be read.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "nbody/cpu_peaks/rapl_energy.hpp"
#include "scratch_folder.hpp"

namespace {

namespace fs = std::filesystem;
using nbody::EnergyMeter;
using nbody::EnergyReadError;
using nbody::peaks::make_rapl_meter;
using nbody::peaks::RaplPaths;

// A real package zone's range (about 262 kJ).
constexpr std::uint64_t kRange = 262143328850;

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text << "\n";
}

// One powercap zone: its name, counter and range.
fs::path make_zone(const fs::path& dir, const std::string& name, std::uint64_t energy_uj) {
  write_file(dir / "name", name);
  write_file(dir / "energy_uj", std::to_string(energy_uj));
  write_file(dir / "max_energy_range_uj", std::to_string(kRange));
  return dir;
}

void set_energy(const fs::path& zone, std::uint64_t energy_uj) {
  write_file(zone / "energy_uj", std::to_string(energy_uj));
}

// Paths with neither interface present under `root`.
RaplPaths absent_paths(const fs::path& root) {
  RaplPaths paths;
  paths.powercap = root / "no-powercap";
  paths.perf_power = root / "no-power-pmu";
  return paths;
}

TEST(RaplEnergy, PowercapPackagesAndTheirDramAreReadAndNamed) {
  const fs::path root = nbody::testing::scratch("rapl-packages");
  RaplPaths paths = absent_paths(root);
  paths.powercap = root / "powercap";
  // Package 0's subzones inside its zone, package 1's beside it (sysfs shows both).
  const fs::path p0 = make_zone(paths.powercap / "intel-rapl:0", "package-0", 1'000'000);
  const fs::path d0 = make_zone(p0 / "intel-rapl:0:0", "dram", 50'000);
  const fs::path c0 = make_zone(p0 / "intel-rapl:0:1", "core", 700'000);
  const fs::path p1 = make_zone(paths.powercap / "intel-rapl:1", "package-1", 9'000'000);
  const fs::path d1 = make_zone(paths.powercap / "intel-rapl:1:0", "dram", 80'000);
  const fs::path c1 = make_zone(paths.powercap / "intel-rapl:1:1", "core", 10);
  const fs::path p2 = make_zone(paths.powercap / "intel-rapl:2", "package-2", 5);

  std::string why_not;
  const std::unique_ptr<EnergyMeter> meter = make_rapl_meter(paths, {0, 1}, why_not);
  ASSERT_NE(meter, nullptr) << why_not;
  EXPECT_EQ(meter->source(), "powercap");
  EXPECT_DOUBLE_EQ(meter->unit_j(), 1e-6);
  EXPECT_EQ(meter->domains(), (std::vector<std::string>{"package-0", "package-0 dram", "package-1",
                                                        "package-1 dram"}));
  EXPECT_EQ(meter->joules(), (std::vector<double>{0, 0, 0, 0}));

  set_energy(p0, 2'500'000);
  set_energy(d0, 300'000);
  set_energy(c0, 99'000'000);
  set_energy(p1, 12'000'000);
  set_energy(c1, 99'000'000);
  set_energy(p2, 99'000'000);
  std::vector<double> joules = meter->joules();
  ASSERT_EQ(joules.size(), 4u);
  EXPECT_NEAR(joules[0], 1.5, 1e-12);
  EXPECT_NEAR(joules[1], 0.25, 1e-12);
  EXPECT_NEAR(joules[2], 3.0, 1e-12);
  EXPECT_NEAR(joules[3], 0.0, 1e-12);

  // Cumulative since the meter was made.
  set_energy(d1, 1'080'000);
  joules = meter->joules();
  EXPECT_NEAR(joules[0], 1.5, 1e-12);
  EXPECT_NEAR(joules[3], 1.0, 1e-12);
}

TEST(RaplEnergy, OnlyThePackagesAskedForAreMeasured) {
  const fs::path root = nbody::testing::scratch("rapl-one-package");
  RaplPaths paths = absent_paths(root);
  paths.powercap = root / "powercap";
  make_zone(paths.powercap / "intel-rapl:0", "package-0", 1);
  make_zone(paths.powercap / "intel-rapl:1", "package-1", 1);
  std::string why_not;
  const std::unique_ptr<EnergyMeter> meter = make_rapl_meter(paths, {1}, why_not);
  ASSERT_NE(meter, nullptr) << why_not;
  EXPECT_EQ(meter->domains(), std::vector<std::string>{"package-1"});
}

TEST(RaplEnergy, AMissingPackageMakesNoMeter) {
  const fs::path root = nbody::testing::scratch("rapl-missing-package");
  RaplPaths paths = absent_paths(root);
  paths.powercap = root / "powercap";
  make_zone(paths.powercap / "intel-rapl:0", "package-0", 1);
  std::string why_not;
  EXPECT_EQ(make_rapl_meter(paths, {0, 3}, why_not), nullptr);
  EXPECT_NE(why_not.find("no package-3 zone (it has package-0)"), std::string::npos) << why_not;
}

TEST(RaplEnergy, AmdZonesInTheirControlTypeFolderAreRead) {
  const fs::path root = nbody::testing::scratch("rapl-amd");
  RaplPaths paths = absent_paths(root);
  paths.powercap = root / "powercap";
  const fs::path p0 = make_zone(paths.powercap / "amd-rapl" / "amd-rapl:0", "package-0", 100);
  std::string why_not;
  const std::unique_ptr<EnergyMeter> meter = make_rapl_meter(paths, {0}, why_not);
  ASSERT_NE(meter, nullptr) << why_not;
  EXPECT_EQ(meter->domains(), std::vector<std::string>{"package-0"});
  set_energy(p0, 2'000'100);
  EXPECT_NEAR(meter->joules().at(0), 2.0, 1e-12);
}

TEST(RaplEnergy, WrapAroundWithinAMeasurementIsUndone) {
  const fs::path root = nbody::testing::scratch("rapl-wrap");
  RaplPaths paths = absent_paths(root);
  paths.powercap = root / "powercap";
  const fs::path p0 = make_zone(paths.powercap / "intel-rapl:0", "package-0", kRange - 1'000);
  std::string why_not;
  const std::unique_ptr<EnergyMeter> meter = make_rapl_meter(paths, {0}, why_not);
  ASSERT_NE(meter, nullptr) << why_not;
  set_energy(p0, 500);
  EXPECT_NEAR(meter->joules().at(0), 1'500e-6, 1e-12);
  set_energy(p0, 2'500);
  EXPECT_NEAR(meter->joules().at(0), 3'500e-6, 1e-12);
}

TEST(RaplEnergy, NeitherInterfaceGivesOneLineNamingBoth) {
  const fs::path root = nbody::testing::scratch("rapl-absent");
  const RaplPaths paths = absent_paths(root);
  std::string why_not;
  EXPECT_EQ(make_rapl_meter(paths, {0}, why_not), nullptr);
  EXPECT_EQ(why_not.find('\n'), std::string::npos) << why_not;
  EXPECT_NE(why_not.find("no " + paths.powercap.string() + ", and "), std::string::npos) << why_not;
  EXPECT_NE(why_not.find(paths.perf_power.string()), std::string::npos) << why_not;
}

TEST(RaplEnergy, APowerPmuWithoutEnergyPkgSaysWhatItOffers) {
  const fs::path root = nbody::testing::scratch("rapl-psys");
  RaplPaths paths = absent_paths(root);
  paths.perf_power = root / "power";
  write_file(paths.perf_power / "type", "23");
  write_file(paths.perf_power / "events" / "energy-psys", "event=0x05");
  write_file(paths.perf_power / "events" / "energy-psys.scale", "2.3283064365386962890625e-10");
  write_file(paths.perf_power / "events" / "energy-psys.unit", "Joules");
  std::string why_not;
  EXPECT_EQ(make_rapl_meter(paths, {0}, why_not), nullptr);
  EXPECT_NE(why_not.find(", and the perf power PMU has no energy-pkg (it offers energy-psys)"),
            std::string::npos)
      << why_not;
  EXPECT_EQ(why_not.find('\n'), std::string::npos) << why_not;
}

TEST(RaplEnergy, AnUnreadableCounterMakesNoMeterAndSaysWhy) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "running as root, which reads a file of mode 000 anyway: an unreadable "
                    "energy_uj cannot be made here";
  }
  const fs::path root = nbody::testing::scratch("rapl-unreadable");
  RaplPaths paths = absent_paths(root);
  paths.powercap = root / "powercap";
  const fs::path p0 = make_zone(paths.powercap / "intel-rapl:0", "package-0", 1);
  ASSERT_EQ(::chmod((p0 / "energy_uj").c_str(), 0), 0);
  std::string why_not;
  EXPECT_EQ(make_rapl_meter(paths, {0}, why_not), nullptr);
  EXPECT_NE(why_not.find("powercap's package-0 energy_uj is not readable (Permission denied); "
                         "RAPL needs root or a readable powercap, and "),
            std::string::npos)
      << why_not;
  EXPECT_EQ(why_not.find(p0.string()), std::string::npos) << "names a build path: " << why_not;
}

TEST(RaplEnergy, ACounterGoneMidRunThrowsEnergyReadError) {
  const fs::path root = nbody::testing::scratch("rapl-gone");
  RaplPaths paths = absent_paths(root);
  paths.powercap = root / "powercap";
  const fs::path p0 = make_zone(paths.powercap / "intel-rapl:0", "package-0", 1);
  const fs::path d0 = make_zone(p0 / "intel-rapl:0:0", "dram", 1);
  std::string why_not;
  const std::unique_ptr<EnergyMeter> meter = make_rapl_meter(paths, {0}, why_not);
  ASSERT_NE(meter, nullptr) << why_not;
  EXPECT_EQ(meter->joules().size(), 2u);
  fs::remove(d0 / "energy_uj");
  EXPECT_THROW(meter->joules(), EnergyReadError);
}

TEST(RaplEnergy, TheEnvironmentReplacesTheSystemsPaths) {
  ::unsetenv("NBODY_FAIR_POWERCAP_ROOT");
  ::unsetenv("NBODY_FAIR_PERF_POWER_ROOT");
  RaplPaths paths = RaplPaths::from_environment();
  EXPECT_EQ(paths.powercap, "/sys/class/powercap");
  EXPECT_EQ(paths.perf_power, "/sys/bus/event_source/devices/power");
  ::setenv("NBODY_FAIR_POWERCAP_ROOT", "/tmp/fake-powercap", 1);
  ::setenv("NBODY_FAIR_PERF_POWER_ROOT", "/tmp/fake-power", 1);
  paths = RaplPaths::from_environment();
  ::unsetenv("NBODY_FAIR_POWERCAP_ROOT");
  ::unsetenv("NBODY_FAIR_PERF_POWER_ROOT");
  EXPECT_EQ(paths.powercap, "/tmp/fake-powercap");
  EXPECT_EQ(paths.perf_power, "/tmp/fake-power");
}

TEST(RaplEnergy, ThisProcessRunsOnSomePackage) {
  const std::set<int> packages = nbody::peaks::packages_of_this_process();
  ASSERT_FALSE(packages.empty());
  EXPECT_GE(*packages.begin(), 0);
}

}  // namespace
