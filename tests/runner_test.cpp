// The runner, the results model and the command line: round trips, sizes, and bad input.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>

#include <gtest/gtest.h>

#include "nbody/app/benchmark_harness.hpp"
#include "nbody/app/gpu_exchange.hpp"
#include "nbody/app/run_plan.hpp"
#include "nbody/app/runner.hpp"
#include "nbody/errors.hpp"
#include "nbody/machine_info.hpp"
#include "nbody/reference.hpp"
#include "nbody/reports/markdown_report.hpp"
#include "nbody/results.hpp"
#include "nbody/results_validation.hpp"
#include "nbody/sizes.hpp"
#include "program_run.hpp"
#include "stand_in_suite.hpp"

extern char** environ;

namespace nbody {
namespace {

namespace fs = std::filesystem;

// The tests' runs of nbody-fair keep their caches (references, ceilings) in a folder of their
// own: ceilings measured while ctest runs other tests in parallel would be wrong, and must not
// land in the user's cache.
class ScratchCacheEnvironment final : public ::testing::Environment {
 public:
  void SetUp() override {
    directory_ =
        fs::temp_directory_path() / ("nbody-fair-test-cache-" + std::to_string(::getpid()));
    fs::create_directories(directory_);
    ::setenv("NBODY_FAIR_CACHE_DIR", directory_.c_str(), 1);
  }
  void TearDown() override { fs::remove_all(directory_); }

 private:
  fs::path directory_;
};
[[maybe_unused]] const ::testing::Environment* const kScratchCache =
    ::testing::AddGlobalTestEnvironment(new ScratchCacheEnvironment);

// A fresh, empty folder per test.
fs::path scratch(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("nbody-fair-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

pid_t spawn(const std::vector<std::string>& args, const fs::path& stderr_file,
            const fs::path& stdout_file = "/dev/null") {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(NBODY_FAIR_EXE));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, NBODY_FAIR_EXE, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0);
  return pid;
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

using testing::CommandResult;
using testing::read_and_remove;

CommandResult run_tool(const std::vector<std::string>& args) {
  const std::string stem =
      (fs::temp_directory_path() / "nbody-fair-test-").string() + std::to_string(::getpid());
  const int code = wait_exit_code(spawn(args, stem + "-stderr", stem + "-stdout"));
  const std::string err = read_and_remove(stem + "-stderr");
  return {code, err, read_and_remove(stem + "-stdout")};
}

std::size_t count_lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(Sizes, ParseListsAndSuffixes) {
  EXPECT_EQ(parse_sizes("1000,4096"), (std::vector<std::size_t>{1000, 4096}));
  EXPECT_EQ(parse_sizes("1K,64K,1M"), (std::vector<std::size_t>{1024, 65536, 1048576}));
  EXPECT_EQ(parse_sizes(std::vector<std::string>{"7", "31"}), (std::vector<std::size_t>{7, 31}));
  for (const char* bad : {"0", "-5", "abc", "1.5", "", "12x", "99999999999999999999", "3000M",
                          "8,,16", "8,", ",8", "8,8", "1K,1024"}) {
    EXPECT_THROW(parse_sizes(std::string(bad)), UsageError) << bad;
  }
  EXPECT_THROW(parse_sizes(std::vector<std::string>{"7", "7"}), UsageError);
  EXPECT_EQ(format_size(65536), "64K");
  EXPECT_EQ(format_size(1000), "1000");
}

TEST(Results, JsonRoundTripPreservesEverything) {
  ResultsDocument doc;
  doc.generated_at = "2026-11-21T00:00:00Z";
  doc.command_line = {"nbody-fair", "run"};
  doc.complete = true;
  doc.machine.cpu_model = "Test CPU";
  doc.machine.isa_features = {"avx2"};
  doc.build.libraries = {{"fmt", "9.1.0"}};
  doc.settings.sizes = {7, 31};
  doc.ceilings = Ceilings{.entries = {{.name = "cpu.fp32_flops.avx2.one_core", .value = 1.5e9}}};
  doc.implementations.push_back({.name = "cpu.soa", .optimizations = {"structure of arrays"}});
  doc.inputs.push_back({"uniform", 31, 5, "abc", "def"});
  ResultRecord r;
  r.implementation = "cpu.soa";
  r.n = 31;
  r.status = Status::ok;
  r.details = {{"isa", "avx2"}};
  r.accuracy =
      AccuracyRecord{.metrics = {.relative_l2 = 1e-7, .bodies_compared = 31}, .passed = true};
  r.kernel = TimingStatistics{.repetitions = 3, .samples_s = {1, 2, 3}, .median_s = 2};
  r.kernel_rate = RateFigures{.interactions_per_second = 480.5};
  r.counters = CounterReadout{.source = "test", .derived = {.gflops_counted = 2.5}};
  doc.results.push_back(r);
  ResultRecord skipped;
  skipped.n = 31;
  skipped.status = Status::skipped;
  skipped.reason = "no GPU";
  doc.results.push_back(skipped);

  const fs::path dir = scratch("roundtrip");
  save_results(doc, dir / "results.json");
  const ResultsDocument loaded = load_results(dir / "results.json");
  EXPECT_EQ(nlohmann::json(loaded), nlohmann::json(doc));
  EXPECT_FALSE(loaded.results[1].kernel.has_value());
  EXPECT_EQ(loaded.results[0].kernel->samples_s.size(), 3u);
  fs::remove_all(dir);
}

// A failed kernel's NaN or infinite errors are written as null and read back as NaN.
TEST(Results, NonFiniteErrorsSurviveTheRoundTrip) {
  ResultsDocument doc;
  ResultRecord r;
  r.n = 7;
  r.status = Status::failed;
  r.accuracy = AccuracyRecord{.metrics = {.relative_l2 = std::numeric_limits<double>::infinity(),
                                          .max_relative = std::nan("")}};
  doc.results.push_back(r);
  const fs::path dir = scratch("nonfinite");
  save_results(doc, dir / "results.json");
  const ResultsDocument loaded = load_results(dir / "results.json");
  EXPECT_TRUE(std::isnan(loaded.results[0].accuracy->metrics.relative_l2));
  EXPECT_TRUE(std::isnan(loaded.results[0].accuracy->metrics.max_relative));
  EXPECT_EQ(loaded.results[0].accuracy->metrics.p99_relative, 0.0);
  fs::remove_all(dir);
}

// Version 1 files (before roles and typed records) still load: a real one, from the GPU host.
TEST(Results, ReadsVersionOneFiles) {
  const fs::path v1 = fs::path(NBODY_SOURCE_DIR) / "tests/data/results-schema-1-h200.json";
  ASSERT_EQ(nlohmann::json::parse(std::ifstream(v1)).value("schema_version", 0), 1);
  const ResultsDocument doc = load_results(v1);
  EXPECT_EQ(doc.schema_version, kResultsSchemaVersion);
  ASSERT_FALSE(doc.implementations.empty());
  for (const ImplementationRecord& impl : doc.implementations) {
    const bool naive = impl.name == "cpu.aos" || impl.name == "gpu.aos";
    EXPECT_EQ(impl.role, naive ? Role::naive_baseline : Role::optimized) << impl.name;
    EXPECT_EQ(impl.device, impl.name.starts_with("gpu") ? DeviceKind::gpu : DeviceKind::cpu);
  }
  ASSERT_TRUE(doc.ceilings.has_value());
  EXPECT_TRUE(doc.ceilings->value(kGpuInteractionMixCeiling).has_value() ||
              doc.ceilings->value(kGpuFp32FlopsCeiling).has_value());
  ASSERT_FALSE(doc.machine.gpus.empty());
  EXPECT_GT(doc.machine.gpus.front().sm_count, 0);
  std::size_t counted = 0;
  for (const ResultRecord& r : doc.results) {
    if (r.status == Status::ok && r.counters && r.counters->available()) {
      EXPECT_TRUE(r.counters->derived.interactions_credited.has_value()) << r.implementation;
      ++counted;
    }
  }
  EXPECT_GT(counted, 0u);
  // Saved again, it is a version 2 file that reads back the same.
  const fs::path dir = scratch("v1");
  save_results(doc, dir / "results.json");
  EXPECT_EQ(nlohmann::json(load_results(dir / "results.json")), nlohmann::json(doc));
  fs::remove_all(dir);
}

// An enum spelling the schema does not have is refused, naming the spellings it has.
TEST(Results, UnknownSpellingsAreRefused) {
  ResultsDocument doc;
  doc.implementations.push_back({.name = "cpu.soa"});
  nlohmann::json j = doc;
  j["implementations"][0]["device"] = "fpga";
  const fs::path dir = scratch("spelling");
  std::ofstream(dir / "results.json") << j.dump();
  try {
    load_results(dir / "results.json");
    ADD_FAILURE() << "an unknown device was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'fpga' is not one of cpu, gpu"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("/implementations/0/device"), std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

// A results document whose values a measurement could have produced, four records deep.
nlohmann::json plausible_results() {
  ResultsDocument doc;
  doc.settings.sizes = {7, 31};
  for (const std::size_t n : {7, 31, 64, 128}) {
    ResultRecord r;
    r.implementation = "cpu.soa";
    r.n = n;
    r.kernel = TimingStatistics{.repetitions = 2, .samples_s = {1e-6, 2e-6}, .median_s = 1.5e-6};
    r.kernel_rate = RateFigures{.interactions_per_second = 1e9};
    doc.results.push_back(r);
  }
  return doc;
}

// What load_results says about `j`, or "" when it loads.
std::string load_error(const nlohmann::json& j) {
  const fs::path dir = scratch("impossible");
  std::ofstream(dir / "results.json") << j.dump();
  std::string message;
  try {
    load_results(dir / "results.json");
  } catch (const UsageError& e) {
    message = e.what();
  }
  fs::remove_all(dir);
  return message;
}

// Values no measurement could produce are refused, naming the field; so are type errors (through
// nlohmann's JSON_DIAGNOSTICS). A failed kernel's NaN errors stay valid (above).
// A simulate results file (the H100 sample) loads; an impossible figure in it is refused by name.
TEST(Results, ImpossibleSimulationValuesAreRefusedNamingTheField) {
  std::ifstream in(fs::path(NBODY_SOURCE_DIR) / "docs/samples/simulation/results.json");
  const nlohmann::json sample = nlohmann::json::parse(in);
  EXPECT_EQ(load_error(sample), "");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/simulations/2/steps_per_second",
       "simulations[2].steps_per_second is -5; it must not be negative"},
      {"/simulations/0/per_step/force_s",
       "simulations[0].per_step.force_s is -5; it must not be negative"},
      {"/simulations/1/n", "simulations[1].n is 0; it must be positive"},
      {"/settings/dt", "settings.dt is -5; it must not be negative"},
  };
  for (const auto& [pointer, message] : cases) {
    nlohmann::json j = sample;
    j[nlohmann::json::json_pointer(pointer)] = message.find(" is 0;") != std::string::npos ? 0 : -5;
    EXPECT_NE(load_error(j).find(message), std::string::npos) << pointer << ": " << load_error(j);
  }
}

TEST(Results, ImpossibleValuesAreRefusedNamingTheField) {
  EXPECT_EQ(load_error(plausible_results()), "");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/results/3/kernel_rate/interactions_per_second",
       "results[3].kernel_rate.interactions_per_second is -5; it must be positive"},
      {"/results/0/n", "results[0].n is 0; it must be positive"},
      {"/results/1/kernel/median_s", "results[1].kernel.median_s is -5; it must be positive"},
      {"/results/2/kernel/samples_s/1",
       "results[2].kernel.samples_s[1] is -5; it must be positive"},
      {"/results/2/kernel/repetitions",
       "results[2].kernel.repetitions is -5; it must not be negative"},
      {"/settings/sizes/1", "settings.sizes[1] is 0; it must be positive"},
      {"/settings/repetitions", "settings.repetitions is -5; it must not be negative"},
  };
  for (const auto& [pointer, message] : cases) {
    nlohmann::json j = plausible_results();
    j[nlohmann::json::json_pointer(pointer)] = message.find(" is 0;") != std::string::npos ? 0 : -5;
    EXPECT_NE(load_error(j).find(message), std::string::npos) << load_error(j);
  }
  // JSON has no infinity (nlohmann refuses 1e999 as an overflow): the check itself, in memory.
  ResultsDocument infinite = plausible_results().get<ResultsDocument>();
  infinite.results[1].kernel->mean_s = std::numeric_limits<double>::infinity();
  try {
    check_results_values(infinite);
    ADD_FAILURE() << "an infinite time was accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "results[1].kernel.mean_s is inf; it must be finite");
  }
  nlohmann::json wrong_type = plausible_results();
  wrong_type["results"][2]["n"] = "many";
  EXPECT_NE(load_error(wrong_type).find("(/results/2/n)"), std::string::npos)
      << load_error(wrong_type);
}

// Values that parse but cannot be: a negative count (which an unsigned field would wrap to near
// 2^64), extremes on the wrong side of the median, repetitions without their samples; and a
// document that is JSON but no object. Each is UsageError naming the field (exit 2), never the
// JSON library's own words.
TEST(Results, InconsistentOrNegativeFiguresAndNonObjectsAreRefused) {
  struct Case {
    std::string pointer;
    nlohmann::json value;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"/results/0/n", -5, "results[0].n is -5; it must not be negative"},
      {"/inputs/0/seed", -1, "inputs[0].seed is -1; it must not be negative"},
      {"/settings/sizes/0", -64, "settings.sizes[0] is -64; it must not be negative"},
      {"/results/2/kernel/min_s", 1.0, "results[2].kernel.min_s is 1; it must not exceed "},
      {"/results/2/kernel/max_s", 1e-12, "results[2].kernel.median_s is "},
      {"/results/2/kernel/samples_s", nlohmann::json::array(),
       "results[2].kernel.samples_s is 0 long; it must have one per repetition"},
  };
  for (const Case& c : cases) {
    nlohmann::json j = plausible_results();
    j[nlohmann::json::json_pointer(c.pointer)] = c.value;
    EXPECT_NE(load_error(j).find(c.message), std::string::npos)
        << c.pointer << ": " << load_error(j);
  }
  for (const nlohmann::json& not_an_object :
       {nlohmann::json::array({1, 2}), nlohmann::json("x"), nlohmann::json(3)}) {
    EXPECT_NE(
        load_error(not_an_object).find("is not an nbody-fair results file (not a JSON object)"),
        std::string::npos)
        << not_an_object.dump();
  }
}

// Version 5's decomposition over ranks: older files read as one process; impossible values (no
// rank, a host list that does not match the ranks, an unknown scheme, a negative all-gather) are
// refused by name.
TEST(Results, DecompositionOverRanksIsReadAndChecked) {
  nlohmann::json old = plausible_results();
  old["settings"].erase("ranks");
  old["settings"].erase("decomposition");
  old["settings"].erase("rank_hosts");
  EXPECT_EQ(load_error(old), "");
  nlohmann::json decomposed = plausible_results();
  decomposed["settings"]["ranks"] = 2;
  decomposed["settings"]["decomposition"] = "target_range";
  decomposed["settings"]["rank_hosts"] = {"a", "b"};
  decomposed["results"][1]["communication"] = decomposed["results"][1]["kernel"];
  EXPECT_EQ(load_error(decomposed), "");
  const std::vector<std::pair<std::pair<std::string, nlohmann::json>, std::string>> cases = {
      {{"/settings/ranks", 0}, "settings.ranks is 0; it must be positive"},
      {{"/settings/rank_hosts", nlohmann::json::array({"a", "b", "c"})},
       "settings.rank_hosts is 3 long; it must have one per rank"},
      {{"/settings/decomposition", "rows"},
       "settings.decomposition is 'rows'; it must be one of none, target_range"},
      {{"/results/1/communication/median_s", -5},
       "results[1].communication.median_s is -5; it must be positive"},
  };
  for (const auto& [change, message] : cases) {
    nlohmann::json j = decomposed;
    j[nlohmann::json::json_pointer(change.first)] = change.second;
    EXPECT_NE(load_error(j).find(message), std::string::npos) << load_error(j);
  }
}

// Version 6's GPUs per rank: a round trip keeps them; a real version 5 file (no such field) reads
// as version 6 with none, i.e. the one device of gpu_device; a GPU named twice or a negative
// ordinal is refused by name.
TEST(Results, GpuDevicesRoundTripAndVersionFiveFilesRead) {
  ResultsDocument doc = plausible_results().get<ResultsDocument>();
  doc.settings.gpu_devices = {0, 3};
  const fs::path dir = scratch("gpu-devices");
  save_results(doc, dir / "results.json");
  const ResultsDocument loaded = load_results(dir / "results.json");
  EXPECT_EQ(loaded.schema_version, kResultsSchemaVersion);
  EXPECT_EQ(loaded.settings.gpu_devices, (std::vector<int>{0, 3}));
  EXPECT_EQ(nlohmann::json(loaded), nlohmann::json(doc));
  fs::remove_all(dir);

  const fs::path v5 = fs::path(NBODY_SOURCE_DIR) / "docs/samples/simulation/results.json";
  const nlohmann::json v5_json = nlohmann::json::parse(std::ifstream(v5));
  ASSERT_EQ(v5_json.value("schema_version", 0), 5);
  ASSERT_FALSE(v5_json["settings"].contains("gpu_devices"));
  const ResultsDocument old = load_results(v5);
  EXPECT_EQ(old.schema_version, kResultsSchemaVersion);
  EXPECT_TRUE(old.settings.gpu_devices.empty());
  EXPECT_EQ(old.settings.ranks, 1);
  EXPECT_EQ(old.results.size(), v5_json["results"].size());

  nlohmann::json twice = nlohmann::json(doc);
  twice["settings"]["gpu_devices"] = {1, 2, 1};
  EXPECT_NE(load_error(twice).find("settings.gpu_devices[2] is 1 again; each GPU is named once"),
            std::string::npos)
      << load_error(twice);
  nlohmann::json negative = nlohmann::json(doc);
  negative["settings"]["gpu_devices"] = {-1};
  EXPECT_NE(load_error(negative).find("settings.gpu_devices[0] is -1; it must not be negative"),
            std::string::npos)
      << load_error(negative);
}

// Version 7's exchange between ranks: a round trip keeps it; a real version 6 file (no such
// field) reads with none; an unknown spelling, or an exchange in one process, is refused by name.
TEST(Results, GpuExchangeRoundTripsAndVersionSixFilesRead) {
  ResultsDocument doc = plausible_results().get<ResultsDocument>();
  doc.settings.ranks = 2;
  doc.settings.decomposition = "target_range";
  doc.settings.rank_hosts = {"a", "b"};
  doc.settings.gpu_exchange = "nccl";
  const fs::path dir = scratch("gpu-exchange");
  save_results(doc, dir / "results.json");
  const ResultsDocument loaded = load_results(dir / "results.json");
  EXPECT_EQ(loaded.schema_version, kResultsSchemaVersion);
  EXPECT_EQ(loaded.settings.gpu_exchange, "nccl");
  EXPECT_EQ(nlohmann::json(loaded), nlohmann::json(doc));
  fs::remove_all(dir);

  const fs::path v6 = fs::path(NBODY_SOURCE_DIR) / "tests/data/results-schema-6-two-ranks.json";
  const nlohmann::json v6_json = nlohmann::json::parse(std::ifstream(v6));
  ASSERT_EQ(v6_json.value("schema_version", 0), 6);
  ASSERT_FALSE(v6_json["settings"].contains("gpu_exchange"));
  const ResultsDocument old = load_results(v6);
  EXPECT_EQ(old.schema_version, kResultsSchemaVersion);
  EXPECT_EQ(old.settings.ranks, 2);
  EXPECT_TRUE(old.settings.gpu_exchange.empty());
  EXPECT_EQ(old.settings.budget_s, 0);  // version 8's budget: none in older files

  nlohmann::json unknown = nlohmann::json(doc);
  unknown["settings"]["gpu_exchange"] = "pigeons";
  EXPECT_NE(
      load_error(unknown).find("settings.gpu_exchange is 'pigeons'; it must be one of nccl, mpi"),
      std::string::npos)
      << load_error(unknown);
  nlohmann::json alone = nlohmann::json(doc);
  alone["settings"]["ranks"] = 1;
  alone["settings"]["rank_hosts"] = {"a"};
  EXPECT_NE(load_error(alone).find("settings.gpu_exchange is 'nccl' with 1 rank; only runs "
                                   "decomposed over ranks exchange between them"),
            std::string::npos)
      << load_error(alone);
}

// The report says what the median's interval is and what its bracketed coverage means.
TEST(Report, ExplainsTheMediansIntervalAndItsCoverage) {
  ResultsDocument doc = plausible_results().get<ResultsDocument>();
  doc.implementations.push_back({.name = "cpu.soa"});
  doc.results[0].kernel->ci_confidence = 0.9375;  // five repetitions: [min, max]
  const std::string report = reports::render_markdown(doc, reports::analyze(doc));
  EXPECT_NE(report.find("| CI of median (coverage) |"), std::string::npos);
  EXPECT_EQ(report.find("95% CI of median"), std::string::npos);
  EXPECT_NE(report.find("[min, max], covering 1 − 2^(1−K) of K repetitions: 93.75% for 5"),
            std::string::npos);
  EXPECT_NE(report.find("(94%)"), std::string::npos);
}

// A run decomposed over ranks says so, and how; one in one process says nothing of it.
TEST(Report, SaysHowARunWasDecomposedOverRanks) {
  ResultsDocument doc = plausible_results().get<ResultsDocument>();
  doc.implementations.push_back({.name = "cpu.soa"});
  EXPECT_EQ(reports::render_markdown(doc, reports::analyze(doc)).find("MPI ranks"),
            std::string::npos);
  doc.settings.ranks = 3;
  doc.settings.decomposition = "target_range";
  doc.settings.rank_hosts = {"b", "a", "b"};
  const std::string report = reports::render_markdown(doc, reports::analyze(doc));
  EXPECT_NE(report.find("Decomposed over 3 MPI ranks on 2 hosts (a, b) by target range: each rank "
                        "computes a slice of the bodies from all N, and the slices are "
                        "all-gathered after every evaluation (the accelerations); a kernel time "
                        "is the slowest rank's computation, an end-to-end time adds the "
                        "all-gather."),
            std::string::npos)
      << report;
  // Version 7: how GPU formulations' slices traveled.
  doc.settings.gpu_exchange = "nccl";
  EXPECT_NE(reports::render_markdown(doc, reports::analyze(doc))
                .find("all-gather. GPU formulations run one GPU per rank, and their slices travel "
                      "between the GPUs by NCCL (ncclAllGather on device buffers)"),
            std::string::npos);
  doc.settings.gpu_exchange = "mpi";
  EXPECT_NE(reports::render_markdown(doc, reports::analyze(doc))
                .find("all-gather. Every formulation's slices travel through host memory "
                      "(MPI_Allgatherv), GPU formulations' too."),
            std::string::npos);
}

TEST(Results, LoadRejectsOtherFiles) {
  const fs::path dir = scratch("load");
  std::ofstream(dir / "bad.json") << "{ not json";
  std::ofstream(dir / "other.json") << R"({"schema": "something else"})";
  EXPECT_THROW(load_results(dir / "bad.json"), UsageError);
  EXPECT_THROW(load_results(dir / "other.json"), UsageError);
  EXPECT_THROW(load_results(dir / "missing.json"), UsageError);
  fs::remove_all(dir);
}

TEST(CommandLine, RunWritesResultsAndReport) {
  const fs::path dir = scratch("run");
  const CommandResult r =
      run_tool({"run", "--impl", "^cpu\\.(aos|soa)$", "--sizes", "7,31", "--reps", "2",
                "--min-time", "0.01", "--out", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const ResultsDocument doc = load_results(dir / "out" / "results.json");
  EXPECT_TRUE(doc.complete);
  ASSERT_EQ(doc.results.size(), 4u);
  for (const ResultRecord& rec : doc.results) {
    EXPECT_EQ(rec.status, Status::ok) << rec.reason;
    ASSERT_TRUE(rec.kernel.has_value());
    EXPECT_EQ(rec.kernel->repetitions, 2);
    EXPECT_GT(rec.kernel_rate->interactions_per_second, 0);
    EXPECT_FALSE(rec.input_hash.empty());
  }
  EXPECT_TRUE(fs::exists(dir / "out" / "report.md"));
  fs::remove_all(dir);
}

// A first size far too large for a slow formulation is skipped from a small probe, not started.
TEST(CommandLine, HopelessFirstSizeIsSkippedWithTheEstimate) {
  const fs::path dir = scratch("probe");
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r =
      run_tool({"run", "--impl", "^cpu\\.aos$", "--sizes", "1M", "--out", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  const ResultsDocument doc = load_results(dir / "out" / "results.json");
  ASSERT_EQ(doc.results.size(), 1u);
  EXPECT_EQ(doc.results[0].status, Status::skipped);
  EXPECT_NE(doc.results[0].reason.find("--max-eval-seconds"), std::string::npos)
      << doc.results[0].reason;
  fs::remove_all(dir);
}

// The plan keeps the best formulation's measurements first, then the naive one's, then the rest,
// in the run's order while they fit; what does not is left out with why, and a planned one that no
// longer fits once the run fell behind is left out too.
TEST(RunPlan, KeepsTheBestAndNaiveFirstAndLeavesOutWhatDoesNotFit) {
  const auto stand_in = [](std::string name, Role role, AccuracyClass accuracy) {
    ImplementationInfo info;
    info.name = std::move(name);
    info.role = role;
    info.accuracy_class = accuracy;
    return stand_in_implementation(
        info, [](std::span<const Body<double>>, double) { return std::unique_ptr<PreparedRun>(); });
  };
  const Implementation approx = stand_in("approx", Role::optimized, AccuracyClass::approximate);
  const Implementation naive = stand_in("naive", Role::naive_baseline, AccuracyClass::full);
  const Implementation best = stand_in("best", Role::optimized, AccuracyClass::full);
  const std::vector<const Implementation*> selected = {&approx, &naive, &best};
  const std::map<std::string, double> at_1k = {{"approx", 5e-4}, {"naive", 0.01}, {"best", 1e-3}};
  SuiteOptions options;
  options.max_eval_seconds = 10;
  options.counters = false;
  const RunPlan plan =
      plan_run(selected, options, {1024, 4096, 16384}, {}, 12, [&](const Implementation& impl) {
        return std::optional<EvaluationEstimate>(
            std::pair{std::size_t{1024}, at_1k.at(impl.info.name)});
      });
  ASSERT_EQ(plan.measurements.size(), 9u);
  double planned = 0;
  for (const PlannedMeasurement& m : plan.measurements) {
    if (m.included) planned += m.estimated_s;
  }
  EXPECT_NEAR(plan.planned_s, planned, 1e-12);
  EXPECT_LE(plan.planned_s, 12);
  // best at 16K: 0.256 s an evaluation, 0.256 + 5 x 0.256 = 1.5 s; naive there: 2.56 s, 15.4 s.
  EXPECT_FALSE(plan.left_out("best", 16384));
  ASSERT_TRUE(plan.left_out("naive", 16384));
  EXPECT_NE(plan.left_out("naive", 16384)->find("left out by the plan"), std::string::npos);
  EXPECT_FALSE(plan.left_out("approx", 16384));  // 1.1 s still fits after naive's is left out
  EXPECT_NE(plan.describe().find("left out: "), std::string::npos) << plan.describe();
  EXPECT_FALSE(plan.no_longer_fits("best", 16384, 0));
  ASSERT_TRUE(plan.no_longer_fits("best", 16384, 11.5));
  EXPECT_NE(plan.no_longer_fits("best", 16384, 11.5)->find("fell behind"), std::string::npos);
}

// run --budget plans before measuring, says its plan, and records the budget and the estimate.
TEST(CommandLine, RunWithABudgetSaysItsPlanAndRecordsIt) {
  const fs::path dir = scratch("budget");
  const CommandResult r =
      run_tool({"run", "--impl", "^cpu\\.(soa|tbb)$", "--sizes", "1K,4K", "--budget", "4",
                "--no-counters", "--out", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("plan: "), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("Planned within a budget of 4 s"), std::string::npos)
      << r.stdout_text;
  const ResultsDocument doc = load_results(dir / "out" / "results.json");
  EXPECT_EQ(doc.settings.budget_s, 4);
  ASSERT_TRUE(doc.phase_seconds.contains("planned"));
  EXPECT_LE(doc.phase_seconds.at("planned"), 4);
  fs::remove_all(dir);
}

// simulate estimates a larger N from its smaller N's step before preparing anything there, and
// its progress says the simulation was skipped.
TEST(CommandLine, SimulateSkipsFromTheSmallerStepsEstimateAndSaysSo) {
  const fs::path dir = scratch("simulate-estimate");
  const CommandResult r =
      run_tool({"simulate", "--impl", "^cpu\\.soa$", "--sizes", "1K,1M", "--steps", "100",
                "--max-seconds", "5", "--out", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const ResultsDocument doc = load_results(dir / "out" / "results.json");
  ASSERT_EQ(doc.simulations.size(), 2u);
  EXPECT_EQ(doc.simulations[0].status, Status::ok);
  EXPECT_EQ(doc.simulations[1].status, Status::skipped);
  EXPECT_NE(doc.simulations[1].reason.find("estimated to take"), std::string::npos)
      << doc.simulations[1].reason;
  EXPECT_NE(doc.simulations[1].reason.find("a step at N = 1K"), std::string::npos)
      << doc.simulations[1].reason;
  EXPECT_NE(r.stderr_text.find("cpu.soa N=1M: skipped"), std::string::npos) << r.stderr_text;
  EXPECT_EQ(r.stderr_text.find("cpu.soa N=1M: preparing"), std::string::npos) << r.stderr_text;
  fs::remove_all(dir);
}

// simulate --budget leaves out a simulation its smaller N's step says will not fit what is left.
TEST(CommandLine, SimulateLeavesOutWhatTheBudgetCannotHold) {
  const fs::path dir = scratch("simulate-budget");
  const CommandResult r =
      run_tool({"simulate", "--impl", "^cpu\\.soa$", "--sizes", "1K,64K", "--steps", "100",
                "--budget", "2", "--max-seconds", "1e6", "--out", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const ResultsDocument doc = load_results(dir / "out" / "results.json");
  ASSERT_EQ(doc.simulations.size(), 2u);
  EXPECT_EQ(doc.simulations[1].status, Status::skipped);
  EXPECT_TRUE(doc.simulations[1].reason.starts_with("left out by the budget"))
      << doc.simulations[1].reason;
  fs::remove_all(dir);
}

// Each command's help names every file it writes.
TEST(CommandLine, HelpNamesEveryFileACommandWrites) {
  for (const char* command : {"run", "simulate", "report"}) {
    const CommandResult help = run_tool({command, "--help"});
    EXPECT_EQ(help.exit_code, 0) << command;
    for (const char* file : {"results.json", "report.md", "report.html", "results.csv"}) {
      if (std::string(command) == "report" && std::string(file) == "results.json") continue;
      EXPECT_NE(help.stdout_text.find(file), std::string::npos) << command << " " << file;
    }
  }
  EXPECT_NE(run_tool({"simulate", "--help"}).stdout_text.find("snapshots/"), std::string::npos);
  EXPECT_NE(run_tool({"peaks", "--help"}).stdout_text.find("~/.cache/nbody-fair"),
            std::string::npos);
}

// bench's help lists its own options, then Google Benchmark's; its FLOP rate counter carries its
// unit once; it warms up unless told otherwise.
TEST(CommandLine, BenchHelpListsBothOptionSetsAndItsCountersNameTheirUnitOnce) {
  const CommandResult help = run_tool({"bench", "--help"});
  EXPECT_EQ(help.exit_code, 0) << help.stderr_text;
  for (const char* option :
       {"--impl", "--sizes", "--scope", "--accuracy", "--variants", "--profile-metrics",
        "--benchmark_filter", "--benchmark_repetitions", "warms up for 0.05 s"}) {
    EXPECT_NE(help.stdout_text.find(option), std::string::npos) << option;
  }
  const fs::path dir = scratch("bench-counters");
  const fs::path out = dir / "bench.json";
  const CommandResult r =
      run_tool({"bench", "--impl", "^cpu\\.soa$", "--sizes", "64", "--benchmark_min_time=0.001",
                "--benchmark_out=" + out.string(), "--benchmark_out_format=json"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const nlohmann::json json = nlohmann::json::parse(std::ifstream(out));
  ASSERT_FALSE(json["benchmarks"].empty());
  EXPECT_GT(json["benchmarks"][0].value("flops_at_20", 0.0), 0) << json["benchmarks"][0].dump();
  EXPECT_FALSE(json["benchmarks"][0].contains("GFLOP/s@20"));
  EXPECT_EQ(r.stdout_text.find("/s/s"), std::string::npos) << r.stdout_text;
  fs::remove_all(dir);
}

// --version beside any command prints the version (not "--in is required"), exit 0.
TEST(CommandLine, VersionBesideAnyCommandPrintsTheVersion) {
  for (const char* command :
       {"list", "validate", "run", "simulate", "bench", "report", "compare", "scaling", "peaks"}) {
    const CommandResult r = run_tool({command, "--version"});
    EXPECT_EQ(r.exit_code, 0) << command << ": " << r.stderr_text;
    EXPECT_TRUE(r.stdout_text.starts_with("nbody-fair " NBODY_VERSION)) << command;
  }
}

// A run whose every measurement failed, and a simulation that failed, exit 1 (and keep what they
// wrote): a script or CI job must not read a failure as success. Float32 cannot hold the square
// of a 1e30 softening; a step of 1e300 takes the state past any double.
TEST(CommandLine, RunsAndSimulationsThatFailedExitOne) {
  const fs::path dir = scratch("failed");
  const CommandResult run =
      run_tool({"run", "--impl", "^cpu\\.soa$", "--sizes", "64", "--softening", "1e30", "--reps",
                "2", "--min-time", "0.001", "--no-counters", "--out", (dir / "run").string()});
  EXPECT_EQ(run.exit_code, 1) << run.stderr_text;
  const ResultsDocument runs = load_results(dir / "run" / "results.json");
  ASSERT_EQ(runs.results.size(), 1u);
  EXPECT_EQ(runs.results[0].status, Status::failed);
  const CommandResult simulate =
      run_tool({"simulate", "--impl", "^cpu\\.soa$", "--sizes", "64", "--dt", "1e300", "--steps",
                "4", "--out", (dir / "simulate").string()});
  EXPECT_EQ(simulate.exit_code, 1) << simulate.stderr_text;
  const ResultsDocument simulated = load_results(dir / "simulate" / "results.json");
  ASSERT_EQ(simulated.simulations.size(), 1u);
  EXPECT_EQ(simulated.simulations[0].status, Status::failed);
  fs::remove_all(dir);
}

// Bad input: one line on stderr, exit code 2, and no files left behind.
// `bench` runs what the registry has under Google Benchmark, with its flags passed through; tuning
// variants only with --variants.
TEST(CommandLine, BenchTimesRegisteredFormulationsWithGoogleBenchmarkFlags) {
  const fs::path dir = scratch("bench");
  const fs::path out = dir / "bench.json";
  const CommandResult r =
      run_tool({"bench", "--impl", "^cpu\\.tbb", "--variants", "--sizes", "64", "--accuracy",
                "--benchmark_min_time=0.001", "--benchmark_out=" + out.string(),
                "--benchmark_out_format=json"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const nlohmann::json json = nlohmann::json::parse(std::ifstream(out));
  std::vector<std::string> names;
  for (const nlohmann::json& b : json["benchmarks"]) {
    names.push_back(b["name"].get<std::string>());
    EXPECT_GT(b.value("items_per_second", 0.0), 0) << b.dump();
    EXPECT_LT(b.value("rel_l2", 1.0), 1e-5) << b.dump();
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "cpu.tbb/kernel/n:64/manual_time"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "cpu.tbb[grain=16]/kernel/n:64/manual_time"),
            names.end());
  EXPECT_EQ(run_tool({"bench", "--impl", "^cpu\\.tbb\\[", "--sizes", "64"}).exit_code, 2)
      << "variants without --variants";
  fs::remove_all(dir);
}

// What other processes and the hypervisor took between two samples, as shares of every CPU.
TEST(Conditions, SharesOfOtherProcessesAndSteal) {
  const CpuActivity before{.busy_seconds = 100,
                           .steal_seconds = 10,
                           .own_seconds = 5,
                           .wall_seconds = 1000,
                           .online_cpus = 4,
                           .clock_mhz = 2000.0};
  CpuActivity after = before;
  after.wall_seconds += 2;  // 8 CPU-seconds of capacity
  after.busy_seconds += 5;  // 3 of them this process's, 2 others'
  after.own_seconds += 3;
  after.steal_seconds += 0.8;  // 10% steal
  after.clock_mhz = 1800.0;
  const MeasurementConditions c = conditions_between(before, after);
  EXPECT_DOUBLE_EQ(c.wall_seconds, 2);
  EXPECT_DOUBLE_EQ(c.other_processes_cpu_share, 0.25);
  EXPECT_NEAR(c.steal_cpu_share, 0.1, 1e-12);
  EXPECT_EQ(c.cpu_clock_mhz_after, 1800.0);
  const auto sample = sample_cpu_activity();
  ASSERT_TRUE(sample.has_value()) << "/proc/stat unreadable";
  EXPECT_GT(sample->online_cpus, 0);
}

// The GPU side of a timing's conditions: held-down clocks (NVML's reasons) and a low SM clock are
// disturbances; a GPU at its maximum clock with no reason, or only at its power cap, is not.
TEST(Conditions, GpuClockLimitsAndLowClocksAreDisturbances) {
  MeasurementConditions c;
  c.online_cpus = 16;
  c.gpu_after = GpuSample{.sm_clock_mhz = 1980, .max_sm_clock_mhz = 1980, .temperature_c = 50};
  EXPECT_TRUE(disturbances(c).empty());
  c.gpu_after->clock_limits = {"hw_thermal_slowdown"};
  ASSERT_EQ(disturbances(c).size(), 1u);
  EXPECT_NE(disturbances(c).front().find("hw_thermal_slowdown"), std::string::npos);
  // The kernel's own draw at the power limit, clocks at 98% of maximum: steady, not disturbed.
  c.gpu_after->clock_limits = {"sw_power_cap"};
  c.gpu_after->sm_clock_mhz = 1950;
  EXPECT_TRUE(disturbances(c).empty());
  // ... but a power cap that pulls the clock below 90% is.
  c.gpu_after->sm_clock_mhz = 1600;
  ASSERT_EQ(disturbances(c).size(), 1u);
  EXPECT_NE(disturbances(c).front().find("sw_power_cap; 1600 of 1980 MHz"), std::string::npos);
  c.gpu_after->clock_limits.clear();
  c.gpu_after->sm_clock_mhz = 1400;
  ASSERT_EQ(disturbances(c).size(), 1u);
  EXPECT_NE(disturbances(c).front().find("1400 of its 1980 MHz"), std::string::npos);
  c.other_processes_cpu_share = 0.5;
  EXPECT_EQ(disturbances(c).size(), 2u);
}

// A run whose evaluations report fixed seconds: 3 ms end to end, of which the kernel took 1 ms,
// growing by one part in a thousand per evaluation so that the repetitions differ.
class FixedSecondsRun final : public PreparedRun {
 public:
  Seconds evaluate(Scope scope) override {
    const double drift = 1.0 + 1e-3 * static_cast<double>(evaluations_++ % 7);
    return scope == Scope::kernel ? Seconds::kernel_only(1e-3 * drift)
                                  : Seconds{.total = 3e-3 * drift, .kernel = 1e-3 * drift};
  }
  std::vector<Vec3<double>> accelerations() override { return {}; }

 private:
  int evaluations_ = 0;
};

// One end-to-end timing yields the end-to-end and the kernel statistics, each from its own clock
// and with the same conditions; in kernel scope the two are the same figure.
TEST(Timing, EndToEndTimingCarriesTheKernelsOwnFigure) {
  FixedSecondsRun run;
  const RepetitionSettings settings{
      .repetitions = 5, .min_time_s = 0.01, .warmup_s = 0, .noise_threshold_cv = 0.05};
  const Timings both = time_repetitions(run, PreparedRun::Scope::end_to_end, 1000, settings);
  ASSERT_EQ(both.total.repetitions, 5);
  ASSERT_EQ(both.kernel.repetitions, 5);
  EXPECT_EQ(both.kernel.iterations_per_repetition, both.total.iterations_per_repetition);
  for (std::size_t i = 0; i < both.total.samples_s.size(); ++i) {
    EXPECT_NEAR(both.total.samples_s[i], 3 * both.kernel.samples_s[i], 1e-12);
  }
  EXPECT_NEAR(both.total.median_s, 3.0e-3, 1e-5);
  EXPECT_NEAR(both.kernel.median_s, 1.0e-3, 1e-5);
  EXPECT_NEAR(both.kernel.min_s,
              *std::min_element(both.kernel.samples_s.begin(), both.kernel.samples_s.end()), 1e-15);
  EXPECT_LE(both.kernel.ci_low_s, both.kernel.median_s);
  EXPECT_GE(both.kernel.ci_high_s, both.kernel.median_s);
  EXPECT_NEAR(both.kernel.cv, both.total.cv, 1e-9);
  EXPECT_GT(both.kernel.ci_confidence, 0.9);
  ASSERT_TRUE(both.kernel.conditions.has_value());
  EXPECT_EQ(both.kernel.conditions->attempts, both.total.conditions->attempts);

  const Timings kernel = time_repetitions(run, PreparedRun::Scope::kernel, 1000, settings);
  EXPECT_EQ(kernel.kernel.samples_s, kernel.total.samples_s);
  EXPECT_NEAR(kernel.kernel.median_s, 1.0e-3, 1e-5);
}

// A float64 "GPU" formulation whose kernel reads 0.6 ms inside its end-to-end evaluation and 0.5 ms
// alone, as a short kernel does right behind a host-to-device copy; its accelerations are the
// reference's own.
class ShortKernelRun final : public PreparedRun {
 public:
  ShortKernelRun(std::span<const Body<double>> bodies, double softening) {
    std::vector<std::uint32_t> all(bodies.size());
    for (std::uint32_t i = 0; i < all.size(); ++i) all[i] = i;
    accelerations_ = reference_accelerations(bodies, softening, all);
  }
  Seconds evaluate(Scope scope) override {
    const double drift = 1.0 + 1e-3 * static_cast<double>(evaluations_++ % 7);
    return scope == Scope::kernel ? Seconds::kernel_only(0.5e-3 * drift)
                                  : Seconds{.total = 2e-3 * drift, .kernel = 0.6e-3 * drift};
  }
  std::vector<Vec3<double>> accelerations() override { return accelerations_; }

 private:
  std::vector<Vec3<double>> accelerations_;
  int evaluations_ = 0;
};

ResultRecord run_short_kernel_suite(double separate_kernel_timing_below_s) {
  Registry registry;
  registry.add(stand_in_implementation(
      {.name = "gpu.short",
       .description = "a fixed-seconds stand-in",
       .device = DeviceKind::gpu,
       .precision = Precision::f64,
       .tolerance = {.unit_roundoff = kFloat64UnitRoundoff,
                     .relative_l2_coefficient = 1,
                     .max_relative_coefficient = 1}},
      [](std::span<const Body<double>> bodies, double softening) -> std::unique_ptr<PreparedRun> {
        return std::make_unique<ShortKernelRun>(bodies, softening);
      }));
  const std::unique_ptr<ProgressSink> progress = make_silent_progress();
  const SuiteContext context = quiet_context(registry, *progress);
  SuiteOptions options;
  options.sizes = {64};
  options.counters = false;
  options.reference_cache = false;
  options.timing.min_time_s = 0.01;
  options.separate_kernel_timing_below_s = separate_kernel_timing_below_s;
  const ResultsDocument doc = run_suite(context, options, SuiteMode::run);
  EXPECT_EQ(doc.settings.separate_kernel_timing_below_s, separate_kernel_timing_below_s);
  EXPECT_EQ(doc.results.size(), 1u);
  return doc.results.at(0);
}

// A GPU kernel shorter than settings.separate_kernel_timing_below_s inside its end-to-end timing
// is also timed alone, and its kernel figure is that steady-state timing; a longer one keeps the
// figure its end-to-end timing gave.
TEST(Runner, ShortGpuKernelsAreAlsoTimedAlone) {
  const ResultRecord separate = run_short_kernel_suite(1e-3);
  ASSERT_EQ(separate.status, Status::ok) << separate.reason;
  ASSERT_TRUE(separate.kernel && separate.end_to_end);
  EXPECT_NEAR(separate.kernel->median_s, 0.5e-3, 1e-5);
  EXPECT_NEAR(separate.end_to_end->median_s, 2e-3, 1e-5);

  const ResultRecord embedded = run_short_kernel_suite(0.4e-3);
  ASSERT_EQ(embedded.status, Status::ok) << embedded.reason;
  ASSERT_TRUE(embedded.kernel && embedded.end_to_end);
  EXPECT_NEAR(embedded.kernel->median_s, 0.6e-3, 1e-5);
  EXPECT_NEAR(embedded.end_to_end->median_s, 2e-3, 1e-5);
}

// A run while other processes load every CPU: its timings carry the contention, were taken again
// (--max-attempts), and the report says so.
TEST(CommandLine, ContendedMeasurementsAreFlaggedAndRetaken) {
  const fs::path dir = scratch("contended");
  std::vector<pid_t> spinners;
  for (long cpu = 0; cpu < ::sysconf(_SC_NPROCESSORS_ONLN); ++cpu) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      volatile unsigned long spin = 0;
      for (;;) spin = spin + 1;
    }
    spinners.push_back(pid);
  }
  const CommandResult r =
      run_tool({"run", "--impl", "^cpu\\.soa$", "--sizes", "512", "--reps", "3", "--min-time",
                "0.05", "--max-attempts", "2", "--no-counters", "--out", (dir / "out").string()});
  for (const pid_t pid : spinners) ::kill(pid, SIGKILL);
  for (const pid_t pid : spinners) ::waitpid(pid, nullptr, 0);
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const ResultsDocument doc = load_results(dir / "out" / "results.json");
  ASSERT_EQ(doc.results.size(), 1u);
  ASSERT_TRUE(doc.results[0].kernel && doc.results[0].kernel->conditions);
  const MeasurementConditions& c = *doc.results[0].kernel->conditions;
  EXPECT_GT(c.other_processes_cpu_share + c.steal_cpu_share, 0.1);
  EXPECT_EQ(c.attempts, 2);
  ASSERT_FALSE(c.disturbances.empty());
  std::ifstream report(dir / "out" / "report.md");
  const std::string text((std::istreambuf_iterator<char>(report)), {});
  EXPECT_NE(text.find("⚠ disturbed: other processes"), std::string::npos) << text;
  fs::remove_all(dir);
}

// --version: the version and what this build has.
TEST(CommandLine, VersionNamesTheBuildsFeatures) {
  const CommandResult r = run_tool({"--version"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(r.stderr_text, "");
  EXPECT_TRUE(r.stdout_text.starts_with(std::string("nbody-fair ") + NBODY_VERSION + " ("))
      << r.stdout_text;
#if defined(NBODY_HAVE_CUDA)
  EXPECT_NE(r.stdout_text.find("CUDA: NVIDIA"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find(", architectures "), std::string::npos) << r.stdout_text;
#else
  EXPECT_NE(r.stdout_text.find("CUDA: built without CUDA"), std::string::npos) << r.stdout_text;
#endif
  EXPECT_NE(r.stdout_text.find("CUPTI: "), std::string::npos) << r.stdout_text;
#if defined(NBODY_HAVE_MPI)
  EXPECT_NE(r.stdout_text.find("): runs decompose under mpirun"), std::string::npos)
      << r.stdout_text;
#else
  EXPECT_NE(r.stdout_text.find("MPI: not in: "), std::string::npos) << r.stdout_text;
#endif
  EXPECT_NE(r.stdout_text.find("CPU SIMD kernels: sse4.2, avx2, avx512f; widest on this CPU: "),
            std::string::npos)
      << r.stdout_text;
}

// A mistyped command is named, with the commands there are.
TEST(CommandLine, UnknownCommandNamesTheCommands) {
  const CommandResult r = run_tool({"frob"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.stderr_text,
            "nbody-fair: unknown command 'frob' (commands: list, validate, run, simulate, bench, "
            "report, compare, scaling, peaks)\n");
}

// report --in takes a results.json or its run folder; a folder without one, or a missing path, is
// bad input.
TEST(CommandLine, ReportReadsARunFolder) {
  const fs::path dir = scratch("report-folder");
  fs::create_directories(dir / "run");
  save_results(ResultsDocument{}, dir / "run" / "results.json");
  const CommandResult r = run_tool({"report", "--in", (dir / "run").string()});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_TRUE(fs::exists(dir / "run" / "report.md"));
  fs::create_directories(dir / "empty");
  for (const fs::path& in : {dir / "empty", dir / "missing"}) {
    const CommandResult bad =
        run_tool({"report", "--in", in.string(), "--out", (dir / "out").string()});
    EXPECT_EQ(bad.exit_code, 2) << in << ": " << bad.stderr_text;
    EXPECT_EQ(count_lines(bad.stderr_text), 1u) << bad.stderr_text;
    EXPECT_TRUE(bad.stderr_text.starts_with("nbody-fair: --in " + in.string() + ": "))
        << bad.stderr_text;
    EXPECT_FALSE(fs::exists(dir / "out")) << "left " << dir / "out"
                                          << " behind";
  }
  EXPECT_TRUE(fs::is_empty(dir / "empty"));
  EXPECT_FALSE(fs::exists(dir / "missing"));
  fs::remove_all(dir);
}

// report refuses a results file with an impossible value, naming the field, and writes nothing.
TEST(CommandLine, ReportRefusesImpossibleValues) {
  const fs::path dir = scratch("report-impossible");
  nlohmann::json j = plausible_results();
  j["results"][3]["kernel_rate"]["interactions_per_second"] = -5;
  std::ofstream(dir / "results.json") << j.dump();
  const CommandResult r = run_tool({"report", "--in", dir.string()});
  EXPECT_EQ(r.exit_code, 2) << r.stderr_text;
  EXPECT_EQ(count_lines(r.stderr_text), 1u) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find(
                "results[3].kernel_rate.interactions_per_second is -5; it must be positive"),
            std::string::npos)
      << r.stderr_text;
  EXPECT_FALSE(fs::exists(dir / "report.md"));
  fs::remove_all(dir);
}

// A --gpu ordinal the machine lacks is refused before anything is measured or written, with or
// without GPUs (and in a build without CUDA); --gpu 0 runs, skipping GPU formulations where there
// is no GPU.
TEST(CommandLine, GpuOrdinalTheMachineLacksIsRefused) {
  const fs::path dir = scratch("gpu-ordinal");
  const std::string out = (dir / "out").string();
  const CommandResult refused =
      run_tool({"run", "--gpu", "5", "--impl", "^(cpu|gpu)\\.aos$", "--sizes", "7", "--out", out});
  EXPECT_EQ(refused.exit_code, 2) << refused.stderr_text;
  EXPECT_EQ(count_lines(refused.stderr_text), 1u) << refused.stderr_text;
  EXPECT_TRUE(refused.stderr_text.starts_with("nbody-fair: --gpu 5: ")) << refused.stderr_text;
  EXPECT_FALSE(fs::exists(out)) << "left " << out << " behind";
  const CommandResult device_zero =
      run_tool({"run", "--gpu", "0", "--impl", "^(cpu|gpu)\\.aos$", "--sizes", "7", "--reps", "2",
                "--min-time", "0.01", "--out", out});
  EXPECT_EQ(device_zero.exit_code, 0) << device_zero.stderr_text;
  EXPECT_TRUE(fs::exists(fs::path(out) / "results.json"));
  fs::remove_all(dir);
}

TEST(CommandLine, BadInputFailsCleanlyWithExitCodeTwo) {
  const fs::path dir = scratch("bad");
  const std::string out = (dir / "out").string();
  const std::vector<std::vector<std::string>> cases = {
      {"run", "--impl", "no-such-implementation", "--out", out},
      {"run", "--impl", "([", "--out", out},
      {"run", "--sizes", "0", "--out", out},
      {"run", "--sizes", "-3", "--out", out},
      {"run", "--sizes", "abc", "--out", out},
      {"run", "--sizes", "2000000000", "--out", out},  // more than this machine's memory
      {"run", "--ic", "spiral", "--out", out},
      {"run", "--reps", "0", "--out", out},
      {"run", "--isa", "avx9", "--out", out},
      {"run", "--threads", "100000", "--out", out},
      {"run", "--softening", "0", "--out", out},
      {"run", "--softening", "1e-20", "--out", out},  // eps^2 below float32's normals
      {"validate", "--sizes", "12q"},
      {"no-such-command"},
  };
  for (const auto& args : cases) {
    const CommandResult r = run_tool(args);
    EXPECT_EQ(r.exit_code, 2) << args[args.size() > 2 ? 2 : 0] << ": " << r.stderr_text;
    EXPECT_EQ(count_lines(r.stderr_text), 1u) << r.stderr_text;
    EXPECT_FALSE(fs::exists(out)) << "left " << out << " behind";
  }
  // An output folder that cannot be created (below a regular file).
  std::ofstream(dir / "file") << "x";
  const CommandResult r =
      run_tool({"run", "--sizes", "7", "--out", (dir / "file" / "sub").string()});
  EXPECT_EQ(r.exit_code, 2) << r.stderr_text;
  EXPECT_EQ(count_lines(r.stderr_text), 1u) << r.stderr_text;
  fs::remove_all(dir);
}

// Bad input by class, each case on every command it reaches: one line naming the option, exit 2,
// nothing written and nothing printed on stdout.
TEST(CommandLine, EveryClassOfBadInputIsRefusedNamingItsOption) {
  const fs::path dir = scratch("bad-classes");
  const std::string out = (dir / "out").string();
  struct Case {
    std::vector<std::string> args;
    std::string option;  // the stderr line names it
  };
  const std::vector<Case> cases = {
      // Whole numbers that are negative or overflow where the option is unsigned.
      {{"run", "--seed", "-1", "--out", out}, "--seed"},
      {{"run", "--seed", "99999999999999999999999", "--out", out}, "--seed"},
      {{"validate", "--validate-bodies", "99999999999999999999"}, "--validate-bodies"},
      {{"simulate", "--divergence-up-to", "-3", "--out", out}, "--divergence-up-to"},
      {{"run", "--threads", "99999999999", "--out", out}, "--threads"},
      // Values that are not finite.
      {{"run", "--softening", "inf", "--out", out}, "--softening"},
      {{"run", "--min-time", "inf", "--out", out}, "--min-time"},
      {{"run", "--max-eval-seconds", "inf", "--out", out}, "--max-eval-seconds"},
      {{"simulate", "--t-end", "inf", "--out", out}, "--t-end"},
      // Lists with an empty item or one N twice.
      {{"run", "--sizes", "8,,16", "--out", out}, "--sizes"},
      {{"run", "--sizes", "8,8", "--out", out}, "--sizes"},
      {{"run", "--sizes", "1K,1024", "--out", out}, "--sizes"},
      {{"run", "--sizes", "8", "--counters-at", "8,8", "--out", out}, "--counters-at"},
      {{"bench", "--sizes", "64,64"}, "--sizes"},
      // An output folder that cannot be made: refused before anything is printed.
      {{"compare", "BASE_RUN", "BASE_RUN", "--out", (dir / "file" / "sub").string()}, "--out"},
      // GPUs the machine lacks, or listed twice, wherever they can be named.
      {{"peaks", "--gpus", "0,0"}, "--gpus"},
      {{"list", "--gpu", "64"}, "--gpu"},
      {{"peaks", "--gpus", "64"}, "--gpus"},
  };
  // A run to compare with itself, and a regular file to make folders below.
  const std::string base = (dir / "base").string();
  ASSERT_EQ(run_tool({"run", "--impl", "^cpu\\.soa$", "--sizes", "32", "--reps", "2", "--min-time",
                      "0.001", "--no-counters", "--out", base})
                .exit_code,
            0);
  std::ofstream(dir / "file") << "x";
  for (Case c : cases) {
    std::replace(c.args.begin(), c.args.end(), std::string("BASE_RUN"), base);
    const CommandResult r = run_tool(c.args);
    const std::string what = c.args[0] + " " + c.args[1] + " " + c.args[2];
    EXPECT_EQ(r.exit_code, 2) << what << ": " << r.stderr_text;
    EXPECT_EQ(count_lines(r.stderr_text), 1u) << what << ": " << r.stderr_text;
    EXPECT_NE(r.stderr_text.find(c.option), std::string::npos) << what << ": " << r.stderr_text;
    EXPECT_EQ(r.stdout_text, "") << what;
    EXPECT_FALSE(fs::exists(out)) << what << " left " << out << " behind";
  }
  fs::remove_all(dir);
}

// simulate's bad input: one line, exit 2, no output folder.
TEST(CommandLine, SimulateRefusesBadInputWithExitCodeTwo) {
  const fs::path dir = scratch("simulate-bad");
  const std::string out = (dir / "out").string();
  std::ofstream(dir / "not-hdf5.hdf5") << "garbage";
  const std::vector<std::vector<std::string>> cases = {
      {"simulate", "--dt", "0", "--out", out},
      {"simulate", "--dt", "-0.1", "--out", out},
      {"simulate", "--dt", "nan", "--out", out},
      {"simulate", "--dt", "inf", "--out", out},
      {"simulate", "--steps", "0", "--out", out},
      {"simulate", "--steps", "-5", "--out", out},
      {"simulate", "--steps", "5", "--t-end", "1", "--out", out},
      {"simulate", "--t-end", "0", "--out", out},
      {"simulate", "--ic-file", (dir / "missing.hdf5").string(), "--out", out},
      {"simulate", "--ic-file", (dir / "not-hdf5.hdf5").string(), "--out", out},
      {"simulate", "--impl", "no-such-implementation", "--out", out},
  };
  for (const auto& args : cases) {
    const CommandResult r = run_tool(args);
    EXPECT_EQ(r.exit_code, 2) << args[1] << " " << args[2] << ": " << r.stderr_text;
    EXPECT_EQ(count_lines(r.stderr_text), 1u) << r.stderr_text;
    EXPECT_FALSE(fs::exists(out)) << "left " << out << " behind";
  }
  fs::remove_all(dir);
}

// A small simulate writes results.json with its simulations and reports with the time split.
TEST(CommandLine, SimulateWritesItsSplitAndConservation) {
  const fs::path dir = scratch("simulate");
  const fs::path out = dir / "out";
  const CommandResult r =
      run_tool({"simulate", "--sizes", "64,100", "--impl", "^cpu\\.(soa|tbb)$", "--steps", "20",
                "--diag-every", "5", "--phase-steps", "4", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const ResultsDocument doc = load_results(out / "results.json");
  EXPECT_EQ(doc.settings.command, "simulate");
  ASSERT_EQ(doc.simulations.size(), 4u);
  for (const SimulationRecord& s : doc.simulations) {
    SCOPED_TRACE(s.implementation + " " + std::to_string(s.n));
    EXPECT_EQ(s.status, Status::ok) << s.reason;
    EXPECT_EQ(s.steps, 20);
    ASSERT_EQ(s.conservation.size(), 5u);  // steps 0, 5, 10, 15, 20
    EXPECT_EQ(s.conservation.back().step, 20);
    EXPECT_LT(s.max_relative_energy_error, 1e-3);
    EXPECT_GT(s.per_step.force_s, 0);
    EXPECT_GT(s.per_step.step_s, 0);
    EXPECT_GT(s.steps_per_second, 0);
    ASSERT_TRUE(s.divergence.has_value());
    EXPECT_LT(s.divergence->position, 1e-4);
  }
  const std::string markdown = read_and_remove(out / "report.md");
  EXPECT_NE(markdown.find("## Time per step"), std::string::npos);
  EXPECT_NE(markdown.find("cpu.tbb"), std::string::npos);
  EXPECT_TRUE(fs::exists(out / "report.html"));
  // results.csv: its own header and one row per simulation.
  const std::string csv = read_and_remove(out / "results.csv");
  EXPECT_TRUE(csv.starts_with("implementation,device,")) << csv;
  EXPECT_NE(csv.find(",steps_per_second,step_s,force_s,"), std::string::npos) << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5) << csv;
  fs::remove_all(dir);
}

// Ctrl-C keeps what was measured: results.json stays valid and says it was interrupted.
TEST(CommandLine, InterruptKeepsPartialResults) {
  const fs::path dir = scratch("interrupt");
  const fs::path out = dir / "out";
  const pid_t pid =
      spawn({"run", "--impl", "^cpu\\.(aos|soa)$", "--sizes", "7,31,64,128,256,512,1K,2K,4K,8K,16K",
             "--reps", "50", "--min-time", "0.05", "--out", out.string()},
            dir / "stderr.txt");
  // Wait for the first checkpoint, then interrupt.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(out / "results.json") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(fs::exists(out / "results.json"));
  // Twice at once, as timeout(1) does (to the process and to its group): still a clean stop.
  kill(pid, SIGINT);
  kill(pid, SIGINT);
  EXPECT_EQ(wait_exit_code(pid), 130);
  const ResultsDocument doc = load_results(out / "results.json");
  EXPECT_TRUE(doc.interrupted);
  EXPECT_FALSE(doc.complete);
  EXPECT_GE(doc.results.size(), 1u);
  EXPECT_LT(doc.results.size(), 22u);
  EXPECT_TRUE(fs::exists(out / "report.md"));
  EXPECT_TRUE(fs::exists(out / "results.csv"));
  EXPECT_TRUE(fs::exists(out / "report.html"));
  // No half-written file of an atomic write is left behind.
  for (const auto& entry : fs::directory_iterator(out)) {
    const fs::path name = entry.path().filename();
    EXPECT_TRUE(name == "results.json" || name == "report.md" || name == "results.csv" ||
                name == "report.html")
        << "stray file " << entry.path();
  }
  fs::remove_all(dir);
}

// --gpu-exchange takes nccl or mpi; anything else is bad input naming the option.
TEST(GpuExchange, TakesNcclOrMpi) {
  EXPECT_EQ(parse_gpu_exchange("nccl"), GpuExchangeRequest::nccl);
  EXPECT_EQ(parse_gpu_exchange("mpi"), GpuExchangeRequest::mpi);
  for (const char* bad : {"", "NCCL", "auto", "nccl,mpi"}) {
    try {
      parse_gpu_exchange(bad);
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                "--gpu-exchange: '" + std::string(bad) +
                    "' is neither nccl (between the ranks' GPUs) nor mpi (through host memory)");
    }
  }
}

// NCCL refuses two ranks on one GPU: named up front, by rank and GPU (host and PCI bus id), before
// any rank waits inside NCCL; ranks without a GPU (empty) share nothing.
TEST(GpuExchange, TwoRanksOnOneGpuAreRefusedByName) {
  const std::vector<std::string> own = {"a/0000:01:00.0", "a/0000:02:00.0", "b/0000:01:00.0"};
  EXPECT_FALSE(shared_gpu_reason(own).has_value());
  EXPECT_FALSE(shared_gpu_reason(std::vector<std::string>{"", ""}).has_value());
  const std::vector<std::string> shared = {"a/0000:01:00.0", "b/0000:01:00.0", "a/0000:01:00.0"};
  EXPECT_EQ(shared_gpu_reason(shared).value_or(""),
            "ranks 0 and 2 would share one GPU (a/0000:01:00.0): NCCL takes one GPU per rank "
            "(start at most as many ranks on a host as it has GPUs)");
}

}  // namespace
}  // namespace nbody
