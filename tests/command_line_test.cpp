// nbody-fair's command line, run as a user runs it: what each command writes and says, bad input
// refused in one line with exit code 2, interrupted runs keeping what they measured.
#include <signal.h>
#include <stdlib.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "awkward_sizes.hpp"
#include "nbody/accuracy.hpp"
#include "nbody/app/wiring.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/isas.hpp"
#include "nbody/physics.hpp"
#include "nbody/reference.hpp"
#include "nbody/registry.hpp"
#include "nbody/results.hpp"
#include "nbody/sizes.hpp"
#include "nbody_fair_tool.hpp"
#include "plausible_results.hpp"

namespace nbody {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::plausible_results;
using testing::read_and_remove;
using testing::run_tool;
using testing::scratch;
using testing::wait_exit_code;

// nbody-fair started, not waited for (an interrupt test signals it midway).
pid_t spawn(std::vector<std::string> args, const fs::path& stderr_file,
            const fs::path& stdout_file = "/dev/null") {
  args.insert(args.begin(), NBODY_FAIR_EXE);
  return testing::spawn_program(args, stdout_file.string(), stderr_file.string());
}

std::size_t count_lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// The words of `text`, as a shell splits a line without quotes.
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> split;
  std::istringstream in(text);
  for (std::string word; in >> word;) split.push_back(word);
  return split;
}

std::string read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Bad input as the contract has it: exit code 2, exactly one line on stderr that names
// `named` (the option, or each of two), nothing on stdout, and `out` not made.
void expect_refused(const std::vector<std::string>& args, const std::vector<std::string>& named,
                    const fs::path& out) {
  const CommandResult r = run_tool(args);
  std::string what;
  for (const std::string& arg : args) what += arg + " ";
  EXPECT_EQ(r.exit_code, 2) << what << ": " << r.stderr_text;
  EXPECT_EQ(count_lines(r.stderr_text), 1u) << what << ": " << r.stderr_text;
  EXPECT_TRUE(r.stderr_text.starts_with("nbody-fair: ")) << what << ": " << r.stderr_text;
  for (const std::string& name : named) {
    EXPECT_NE(r.stderr_text.find(name), std::string::npos) << what << ": " << r.stderr_text;
  }
  EXPECT_EQ(r.stdout_text, "") << what;
  EXPECT_FALSE(fs::exists(out)) << what << " left " << out << " behind";
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
// its progress says the simulation was skipped. Ten steps, so that N = 1K fits the 5 s even
// sanitized on a host whose cores every other test shares.
TEST(CommandLine, SimulateSkipsFromTheSmallerStepsEstimateAndSaysSo) {
  const fs::path dir = scratch("simulate-estimate");
  const CommandResult r =
      run_tool({"simulate", "--impl", "^cpu\\.soa$", "--sizes", "1K,1M", "--steps", "10",
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

// Overwrites the accelerations of every cached float64 reference in `cache` (after each file's
// header) with ones no formulation computes.
void falsify_cached_references(const fs::path& cache) {
  for (const auto& entry : fs::directory_iterator(cache / "reference")) {
    std::string bytes = read_file(entry.path());
    const std::size_t accelerations = 64 * 3 * sizeof(double);
    ASSERT_GT(bytes.size(), accelerations) << entry.path();
    const double wrong = 1e3;
    for (std::size_t at = bytes.size() - accelerations; at < bytes.size(); at += sizeof wrong) {
      std::copy_n(reinterpret_cast<const char*>(&wrong), sizeof wrong, bytes.begin() + at);
    }
    std::ofstream(entry.path(), std::ios::binary | std::ios::trunc) << bytes;
  }
}

// A run whose every measurement failed, and a simulation that failed, exit 1 (and keep what they
// wrote): a script or CI job must not read a failure as success. No softening the command line
// takes breaks float32 (SofteningBoundsAreWhatTheKernelsSurvive), so the run meets a float64
// reference it disagrees with: its cached one, altered. A step of 1e300 takes the state past any
// double.
TEST(CommandLine, RunsAndSimulationsThatFailedExitOne) {
  const fs::path dir = scratch("failed");
  const std::string out = (dir / "run").string();
  // The second run replaces the first's documents.
  std::vector<std::string> run_args =
      words("run --impl ^cpu\\.soa$ --sizes 64 --reps 2 --min-time 0.001 --no-counters --replace");
  run_args.insert(run_args.end(), {"--out", out});
  // A cache of this test's own, so that no other run meets the altered reference.
  const std::string tests_cache = ::getenv("NBODY_FAIR_CACHE_DIR");
  ::setenv("NBODY_FAIR_CACHE_DIR", (dir / "cache").c_str(), 1);
  ASSERT_EQ(run_tool(run_args).exit_code, 0);
  falsify_cached_references(dir / "cache");
  const CommandResult run = run_tool(run_args);
  ::setenv("NBODY_FAIR_CACHE_DIR", tests_cache.c_str(), 1);
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
  // This processor's list: sse4.2, avx2, avx512f on x86-64, neon64 on aarch64.
  EXPECT_NE(
      r.stdout_text.find("CPU SIMD kernels: " + compiled_isa_names() + "; widest on this CPU: "),
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
      {"run", "--softening", "1e-20", "--out", out},  // (1/eps)^3 past float32's largest
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

// Every comma list, on every command that takes it, parsed alike: an empty item (doubled, leading,
// trailing or lone comma), an item given twice, or an item that is not a value of its kind is
// refused naming the option; a lone comma takes no other option as its value.
TEST(CommandLine, EveryListOptionIsParsedAlike) {
  const fs::path dir = scratch("lists");
  const std::string out = (dir / "out").string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"validate", "--sizes", "1K,,2K"}, "--sizes"},
      {{"run", "--sizes", ",", "--impl", "^cpu\\.soa$", "--out", out}, "--sizes"},
      {{"simulate", "--sizes", "64,64", "--out", out}, "--sizes"},
      {{"run", "--theta", "0.5,,0.7", "--out", out}, "--theta"},
      {{"validate", "--theta", "0.5,0.5"}, "--theta"},
      {{"validate", "--theta", "0.5,0.50"}, "--theta"},
      {{"validate", "--theta", ",", "--sizes", "8"}, "--theta"},
      {{"validate", "--theta", "0.5,", "--sizes", "8"}, "--theta"},
      {{"run", "--theta", "nan", "--out", out}, "--theta"},
      {{"run", "--theta", "inf", "--out", out}, "--theta"},
      {{"simulate", "--theta", "1.5", "--out", out}, "--theta"},
      {{"bench", "--theta", "x"}, "--theta"},
      {{"run", "--gpus", "0,,1", "--out", out}, "--gpus"},
      {{"validate", "--gpus", "0,0"}, "--gpus"},
      {{"validate", "--gpus", "all,0"}, "--gpus"},
      {{"peaks", "--gpus", "0,"}, "--gpus"},
      {{"run", "--sizes", "8", "--counters-at", "8,", "--out", out}, "--counters-at"},
      {{"run", "--sizes", "8", "--counters-at", "all,8", "--out", out}, "--counters-at"},
      {{"bench", "--scope", "kernel,kernel"}, "--scope"},
      {{"bench", "--scope", "kernel,,end_to_end"}, "--scope"},
      {{"bench", "--scope", "both"}, "--scope"},
      {{"bench", "--profile-metrics", "a,a"}, "--profile-metrics"},
      {{"bench", "--profile-metrics", ","}, "--profile-metrics"},
  };
  for (const auto& [args, option] : cases) expect_refused(args, {option}, out);
  fs::remove_all(dir);
}

// A number is checked for its type before its range, on every kind of number option: a whole
// number's "is not a whole number" before "must be from 1 to 1000", a real's "is not a number"
// (or "is not a finite number") before its bound.
TEST(CommandLine, NumbersAreCheckedForTheirTypeBeforeTheirRange) {
  const fs::path dir = scratch("numbers");
  const std::string out = (dir / "out").string();
  struct Case {
    std::vector<std::string> args;
    std::string said;
  };
  const std::vector<Case> cases = {
      {{"run", "--reps", "2.5", "--out", out}, "--reps: '2.5' is not a whole number"},
      {{"run", "--reps", "abc", "--out", out}, "--reps: 'abc' is not a whole number"},
      {{"run", "--reps", "0", "--out", out}, "--reps: must be from 1 to 1000"},
      {{"run", "--max-attempts", "1.5", "--out", out}, "--max-attempts: '1.5' is not a whole"},
      {{"run", "--max-attempts", "21", "--out", out}, "--max-attempts: must be from 1 to 20"},
      {{"run", "--threads", "1.5", "--out", out}, "--threads: '1.5' is not a whole number"},
      {{"run", "--seed", "1e3", "--out", out}, "--seed: '1e3' is not a whole number"},
      {{"run", "--seed", "-1", "--out", out}, "--seed: must be at least 0"},
      {{"validate", "--validate-bodies", "0"}, "--validate-bodies: must be at least 1"},
      {{"list", "--gpu", "x"}, "--gpu: 'x' is not a whole number"},
      {{"list", "--threads", "-2"}, "--threads: must be from 0 to"},
      {{"simulate", "--steps", "2.5", "--out", out}, "--steps: '2.5' is not a whole number"},
      {{"simulate", "--diag-every", "x", "--out", out}, "--diag-every: 'x' is not a whole number"},
      {{"bench", "--iterations", "1.5"}, "--iterations: '1.5' is not a whole number"},
      {{"run", "--min-time", "abc", "--out", out}, "--min-time: 'abc' is not a number"},
      {{"run", "--min-time", "0", "--out", out}, "--min-time: must be greater than 0"},
      {{"run", "--budget", "nan", "--out", out}, "--budget: 'nan' is not a finite number"},
      {{"simulate", "--dt", "1/256", "--out", out}, "--dt: '1/256' is not a number"},
      {{"simulate", "--max-seconds", "-1", "--out", out}, "--max-seconds: must be greater"},
      {{"run", "--softening", "0.01x", "--out", out}, "--softening: '0.01x' is not a number"},
  };
  for (const Case& c : cases) expect_refused(c.args, {c.said}, out);
  fs::remove_all(dir);
}

// --softening outside what the kernels survive is refused before anything runs, saying why; its
// bounds themselves run, float32 on bodies at one point included.
TEST(CommandLine, SofteningOutsideWhatTheKernelsSurviveIsRefused) {
  const fs::path dir = scratch("softening");
  const std::string out = (dir / "out").string();
  const std::string floor = fmt::format("{:g}", kSmallestSoftening);
  const std::string ceiling = fmt::format("{:g}", kLargestSoftening);
  expect_refused({"run", "--softening", "1e-30", "--out", out},
                 {"--softening", "1e-30 is below " + floor, "overflow"}, out);
  expect_refused({"run", "--softening", "1.4e-13", "--out", out}, {"--softening", "below"}, out);
  expect_refused({"validate", "--softening", "1e308"}, {"--softening", "1e308 is above " + ceiling},
                 out);
  expect_refused({"simulate", "--softening", "2e8", "--out", out}, {"--softening", "above"}, out);
  expect_refused({"bench", "--softening", "1e10"}, {"--softening", "above"}, out);
  for (const std::string& eps : {floor, ceiling}) {
    for (const char* ic : {"coincident", "uniform"}) {
      const CommandResult r =
          run_tool({"validate", "--impl", "^cpu\\.(soa|simd|tbb|tbb.symmetric|tree)$", "--sizes",
                    "64", "--theta", "0.5", "--softening", eps, "--ic", ic});
      EXPECT_EQ(r.exit_code, 0) << eps << " " << ic << ": " << r.stdout_text << r.stderr_text;
    }
  }
  fs::remove_all(dir);
}

// The GPU's float32 interaction as this CPU can run it: physics.hpp's pair_acceleration, which
// every GPU kernel calls (x^(-3/2) the cube of a reciprocal square root, rsqrtf there), summed over
// all bodies with subnormals flushed to zero, as gpu.tuned is compiled (-ftz=true).
std::vector<Vec3<double>> flushed_float32_accelerations(const std::vector<Body<float>>& bodies,
                                                        double softening,
                                                        const std::vector<std::uint32_t>& targets) {
  std::vector<Vec3<double>> accelerations(bodies.size());
#if defined(__SSE__)
  const unsigned int control = _mm_getcsr();
  _mm_setcsr(control | 0x8040);  // flush to zero, denormals are zero
#endif
  const auto eps2 = static_cast<float>(softening * softening);
  for (const std::uint32_t i : targets) {
    float ax = 0, ay = 0, az = 0;
    for (const Body<float>& b : bodies) {
      accumulate_interaction<float>(bodies[i].x, bodies[i].y, bodies[i].z, b.x, b.y, b.z, b.m, eps2,
                                    ax, ay, az);
    }
    accelerations[i] = {ax, ay, az};
  }
#if defined(__SSE__)
  _mm_setcsr(control);
#endif
  return accelerations;
}

bool finite(const Vec3<double>& a) {
  return std::isfinite(a.x) && std::isfinite(a.y) && std::isfinite(a.z);
}

// What --softening's bounds stand on, found by bisection on log10(eps) to 0.02 decades with the
// kernels of this build. Its floor: the smallest softening at which every formulation (both
// precisions, the tree codes at theta 0, 0.5 and 1) and the GPU kernels' shared interaction give
// finite accelerations for bodies at one point: two of them, and the coincident input at 8 and
// kSearchSize bodies. Its ceilings: the largest at which every formulation still validates on the
// uniform and Plummer inputs at kSearchSize bodies, and the GPU's flushed float32 interaction at
// the tests' largest GPU size within the float32 all-pairs bound.
class SofteningSearch {
 public:
  SofteningSearch() : registry_(make_default_registry()) {
    registry_.bind_opening_angles(std::vector<double>{0.0, 0.5, 1.0});
    for (const Implementation* impl : registry_.select(".")) {
      if (!impl->unavailable_reason()) available_.push_back(impl);
    }
    one_point_.push_back({{0.25, -0.5, 0.125, 0.5}, {0.25, -0.5, 0.125, 0.5}});
    for (const std::size_t n : {std::size_t{8}, kSearchSize}) {
      one_point_.push_back(make_initial_condition(InitialCondition::coincident, n, 1).bodies);
    }
  }

  const std::vector<const Implementation*>& formulations() const { return available_; }

  // Where eps gives a non-finite acceleration: what gave it, or nothing. A formulation that refuses
  // eps (a tree below kSmallestSoftening) gives none.
  std::optional<std::string> not_finite(double eps) const {
    const PairAcceleration<float> pair =
        pair_acceleration<float>(0, 0, 0, 0, 0, 0, 1, static_cast<float>(eps * eps));
    if (!finite({pair.x, pair.y, pair.z})) return "the GPU kernels' pair_acceleration<float>";
    for (const std::vector<Body<double>>& bodies : one_point_) {
      for (const Implementation* impl : available_) {
        try {
          const auto run = impl->prepare(bodies, eps, {});
          run->evaluate(PreparedRun::Scope::kernel);
          const auto a = run->accelerations();
          if (!std::all_of(a.begin(), a.end(), finite)) {
            return fmt::format("{}, {} bodies at one point", impl->info.name, bodies.size());
          }
        } catch (const std::invalid_argument&) {
        }
      }
    }
    return std::nullopt;
  }

  // Where a formulation fails validation at eps, N = kSearchSize: which, or nothing.
  std::optional<std::string> formulation_not_validated(double eps) const {
    for (const InitialCondition ic : {InitialCondition::uniform_ball, InitialCondition::plummer}) {
      const std::vector<Body<double>> bodies = make_initial_condition(ic, kSearchSize, 1).bodies;
      for (const Precision precision : {Precision::f32, Precision::f64}) {
        const std::vector<Body<double>> seen = seen_by(precision, bodies);
        const std::vector<std::uint32_t> targets = validation_targets(seen.size(), seen.size());
        const std::vector<Vec3<double>> reference = reference_accelerations(seen, eps, targets);
        for (const Implementation* impl : available_) {
          if (impl->info.precision != precision) continue;
          const auto run = impl->prepare(bodies, eps, {});
          run->evaluate(PreparedRun::Scope::kernel);
          const AccuracyMetrics metrics =
              compare_with_reference(run->accelerations(), reference, targets, seen);
          if (!impl->info.tolerance.accepts(metrics, seen.size())) {
            return fmt::format("{}, {}", impl->info.name, to_string(ic));
          }
        }
      }
    }
    return std::nullopt;
  }

  // Where the GPU's flushed float32 interaction fails the float32 all-pairs bound (cpu.soa's) at
  // eps, N = kLargestGpuTestSize, 1024 bodies compared: on which input, or nothing.
  std::optional<std::string> flushed_not_validated(double eps) const {
    const std::size_t n = kLargestGpuTestSize;
    const Tolerance bound = registry_.find("cpu.soa")->info.tolerance;
    for (const InitialCondition ic : {InitialCondition::uniform_ball, InitialCondition::plummer}) {
      const std::vector<Body<double>> bodies = make_initial_condition(ic, n, 1).bodies;
      const std::vector<Body<double>> seen = seen_by(Precision::f32, bodies);
      const std::vector<std::uint32_t> targets = validation_targets(n, 1024);
      const AccuracyMetrics metrics = compare_with_reference(
          flushed_float32_accelerations(convert_precision<float, double>(seen), eps, targets),
          reference_accelerations(seen, eps, targets), targets, seen);
      if (!bound.accepts(metrics, n)) {
        return fmt::format("the GPU's float32 interaction, subnormals flushed, {}", to_string(ic));
      }
    }
    return std::nullopt;
  }

  // A ceiling measured at fewer bodies is carried to kMaxBodies alike.
  static constexpr std::size_t kSearchSize = nbody::testing::kLargestAwkwardSize;
#ifdef NBODY_SANITIZED_BUILD
  // The GPU tests stop at 4097 there.
  static constexpr std::size_t kLargestGpuTestSize = 4097;
#else
  static constexpr std::size_t kLargestGpuTestSize = 65536;
#endif

 private:
  static std::vector<Body<double>> seen_by(Precision precision, std::vector<Body<double>> bodies) {
    if (precision == Precision::f64) return bodies;
    return convert_precision<double, float>(convert_precision<float, double>(bodies));
  }

  Registry registry_;
  std::vector<const Implementation*> available_;
  std::vector<std::vector<Body<double>>> one_point_;
};

// The boundary of `fails` between a passing log10(eps) `good` and a failing `bad`, to 0.02
// decades: the last passing eps, and what failed beyond it.
template <class Fails>
std::pair<double, std::string> bisect(double good, double bad, Fails fails) {
  std::string failure = fails(std::pow(10.0, bad)).value_or("nothing");
  while (std::abs(good - bad) > 0.02) {
    const double middle = (good + bad) / 2;
    if (const auto reason = fails(std::pow(10.0, middle))) {
      bad = middle;
      failure = *reason;
    } else {
      good = middle;
    }
  }
  return {std::pow(10.0, good), failure};
}

// --softening's bounds are what the kernels survive. The floor is the measured one, rounded up
// (kSmallestSoftening: at most 5% above it). A ceiling falls with N (the masses are 1/N, and
// m/eps^3 leaves float32's normal range sooner), at most as N^(-1/3) where every term underflows
// at once: kLargestSoftening holds where each measured ceiling, carried so to kMaxBodies, does.
TEST(CommandLine, SofteningBoundsAreWhatTheKernelsSurvive) {
  const SofteningSearch search;
  const auto [floor, below] = bisect(-2, -20, [&](double eps) { return search.not_finite(eps); });
  const auto [ceiling, above] =
      bisect(0, 19, [&](double eps) { return search.formulation_not_validated(eps); });
  const auto [flushed_ceiling, flushed_above] =
      bisect(0, 19, [&](double eps) { return search.flushed_not_validated(eps); });
  const auto at_most_bodies = [](double measured, std::size_t n) {
    return measured * std::cbrt(static_cast<double>(n) / static_cast<double>(kMaxBodies));
  };
  std::printf(
      "softening floor %.4g (below it: %s); ceilings: formulations %.3g at N = %zu (above: %s), "
      "%.3g carried to N = %zu; the GPU's flushed float32 %.3g at N = %zu (above: %s), %.3g "
      "carried to N = %zu\n",
      floor, below.c_str(), ceiling, SofteningSearch::kSearchSize, above.c_str(),
      at_most_bodies(ceiling, SofteningSearch::kSearchSize), kMaxBodies, flushed_ceiling,
      SofteningSearch::kLargestGpuTestSize, flushed_above.c_str(),
      at_most_bodies(flushed_ceiling, SofteningSearch::kLargestGpuTestSize), kMaxBodies);
  EXPECT_LE(floor, kSmallestSoftening);
  EXPECT_LE(kSmallestSoftening, 1.05 * floor);
  EXPECT_EQ(search.not_finite(kSmallestSoftening), std::nullopt);
  EXPECT_LE(kLargestSoftening, at_most_bodies(ceiling, SofteningSearch::kSearchSize));
  EXPECT_LE(kLargestSoftening,
            at_most_bodies(flushed_ceiling, SofteningSearch::kLargestGpuTestSize));
}

// bench keeps the contract: Google Benchmark's flag errors, and a run that would time nothing, are
// bad input, one line with nbody-fair's prefix, exit 2, no --benchmark_out file left.
TEST(CommandLine, BenchFlagErrorsAndRunningNothingAreBadInput) {
  const fs::path dir = scratch("bench-flags");
  const fs::path out = dir / "bench.json";
  const std::string out_flag = "--benchmark_out=" + out.string();
  const std::vector<std::string> soa = {"bench", "--impl", "^cpu\\.soa$", "--sizes", "64"};
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--benchmark_filter=([", out_flag}, "--benchmark_filter"},
      {{"--benchmark_filter=nothing-is-named-so", out_flag}, "--benchmark_filter"},
      {{"--benchmark_filter=-.", out_flag}, "--benchmark_filter"},
      {{"--benchmark_filter", out_flag}, "--benchmark_filter"},
      {{"--benchmark_format=xml", out_flag}, "--benchmark_format"},
      {{"--benchmark_out_format=xml", out_flag}, "--benchmark_out_format"},
      {{"--benchmark_min_time=abc", out_flag}, "--benchmark_min_time"},
      {{"--benchmark_min_warmup_time=-1", out_flag}, "--benchmark_min_warmup_time"},
      {{"--benchmark_repetitions=0", out_flag}, "--benchmark_repetitions"},
      {{"--benchmark_time_unit=h", out_flag}, "--benchmark_time_unit"},
      {{"--benchmark_color=", out_flag}, "--benchmark_color"},
      {{"--benchmark_context=nokey", out_flag}, "--benchmark_context"},
      {{"--benchmark_no_such_flag", out_flag}, "--benchmark_no_such_flag"},
      {{"--benchmark_out=" + (dir / "missing" / "bench.json").string()}, "--benchmark_out"},
      {{"--benchmark_out=" + dir.string()}, "--benchmark_out"},
      {{"--scope", "end_to_end", out_flag}, "--scope"},
      {{"--profile-metrics", "dram__bytes_read.sum", out_flag}, "--profile-metrics"},
  };
  for (const auto& [extra, option] : cases) {
    std::vector<std::string> args = soa;
    args.insert(args.end(), extra.begin(), extra.end());
    expect_refused(args, {option}, out);
  }
  EXPECT_FALSE(fs::exists(dir / "missing"));
  // What runs, runs: the filter keeps what it names.
  const CommandResult r =
      run_tool({"bench", "--impl", "^cpu\\.(soa|aos)$", "--sizes", "64", "--benchmark_filter=soa",
                "--benchmark_min_time=0.001", out_flag, "--benchmark_out_format=json"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const nlohmann::json json = nlohmann::json::parse(std::ifstream(out));
  ASSERT_EQ(json["benchmarks"].size(), 1u) << json.dump();
  EXPECT_EQ(json["benchmarks"][0]["name"], "cpu.soa/kernel/n:64/manual_time");
  fs::remove_all(dir);
}

// Options that contradict each other are refused naming both, never one of them ignored.
TEST(CommandLine, ConflictingOptionsAreRefusedNamingBoth) {
  const fs::path dir = scratch("conflicts");
  const std::string out = (dir / "out").string();
  const std::string ic_file = (dir / "initial.hdf5").string();
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"run", "--counters-at", "all", "--no-counters", "--out", out},
       {"--counters-at", "--no-counters"}},
      {{"run", "--sizes", "8", "--counters-at", "8", "--no-counters", "--out", out},
       {"--counters-at", "--no-counters"}},
      {{"run", "--gpu", "0", "--gpus", "0", "--out", out}, {"--gpu", "--gpus"}},
      {{"run", "--extra-work", "cpu.simd=10%", "--impl", "^cpu\\.soa$", "--out", out},
       {"--extra-work", "--impl"}},
      {{"simulate", "--steps", "8", "--t-end", "1", "--out", out}, {"--steps", "--t-end"}},
      {{"simulate", "--ic-file", ic_file, "--sizes", "64", "--out", out}, {"--ic-file", "--sizes"}},
      {{"simulate", "--ic-file", ic_file, "--ic", "uniform", "--out", out}, {"--ic-file", "--ic"}},
      {{"simulate", "--ic-file", ic_file, "--seed", "3", "--out", out}, {"--ic-file", "--seed"}},
      {{"validate", "--gpu", "0", "--gpus", "all"}, {"--gpu", "--gpus"}},
  };
  for (const auto& [args, named] : cases) expect_refused(args, named, out);
  fs::remove_all(dir);
}

// --out never mixes two runs: a folder holding another run's documents is refused, naming
// --replace, and left as it was; with --replace those documents (snapshots/ included) are removed
// before the new run writes, and the user's own files stay. An empty folder, and a run's own
// folder for report --in, need no flag.
TEST(CommandLine, OutFolderHoldingAnotherRunIsRefusedUnlessReplaced) {
  const fs::path dir = scratch("out-mixing");
  const fs::path out = dir / "out";
  // A build without HDF5 writes no snapshots: the simulation's results.json is the other run.
  constexpr bool kSnapshots = NBODY_FAIR_HAS_HDF5;
  std::vector<std::string> simulate =
      words("simulate --impl ^cpu\\.soa$ --sizes 64 --steps 4 --out");
  simulate.push_back(out.string());
  if (kSnapshots) simulate.insert(simulate.end(), {"--snapshot-every", "2"});
  ASSERT_EQ(run_tool(simulate).exit_code, 0);
  ASSERT_EQ(fs::is_directory(out / "snapshots"), kSnapshots);
  std::ofstream(out / "notes.txt") << "the user's own";
  const std::string simulation = read_file(out / "results.json");
  std::vector<std::string> run =
      words("run --impl ^cpu\\.soa$ --sizes 64 --reps 2 --min-time 0.001 --no-counters --out");
  run.push_back(out.string());

  const CommandResult refused = run_tool(run);
  EXPECT_EQ(refused.exit_code, 2) << refused.stderr_text;
  EXPECT_EQ(count_lines(refused.stderr_text), 1u) << refused.stderr_text;
  EXPECT_TRUE(refused.stderr_text.starts_with("nbody-fair: --out " + out.string() +
                                              ": the folder holds another run's results.json"))
      << refused.stderr_text;
  EXPECT_NE(refused.stderr_text.find("--replace"), std::string::npos) << refused.stderr_text;
  EXPECT_EQ(refused.stdout_text, "");
  EXPECT_EQ(read_file(out / "results.json"), simulation) << "the refused run wrote";
  EXPECT_EQ(fs::is_directory(out / "snapshots"), kSnapshots);

  run.push_back("--replace");
  const CommandResult replaced = run_tool(run);
  ASSERT_EQ(replaced.exit_code, 0) << replaced.stderr_text;
  EXPECT_FALSE(fs::exists(out / "snapshots")) << "a simulation's snapshots stayed beside a run";
  EXPECT_EQ(load_results(out / "results.json").settings.command, "run");
  EXPECT_EQ(read_file(out / "notes.txt"), "the user's own");
  // A report of the run, or a comparison, into a folder holding another comparison: the same.
  const fs::path other = dir / "other";
  fs::create_directories(other);
  std::ofstream(other / "compare.md") << "another comparison";
  expect_refused({"report", "--in", out.string(), "--out", other.string()}, {"--out", "--replace"},
                 other / "report.md");
  expect_refused({"compare", out.string(), out.string(), "--out", other.string()},
                 {"--out", "--replace"}, other / "compare.html");
  // The run's own folder takes its reports again, named as --in or as --out; an empty folder
  // needs no flag.
  EXPECT_EQ(run_tool({"report", "--in", out.string()}).exit_code, 0);
  EXPECT_EQ(run_tool({"report", "--in", (out / "results.json").string(), "--out", out.string()})
                .exit_code,
            0);
  fs::create_directories(dir / "empty");
  EXPECT_EQ(run_tool({"report", "--in", out.string(), "--out", (dir / "empty").string()}).exit_code,
            0);
  fs::remove_all(dir);
}

// --impl finds a tree formulation at each opening angle by its own name, as `list` gives it:
// '^cpu\.tree$' selects cpu.tree[theta=...] at every --theta, and not cpu.tree.f64.
TEST(CommandLine, ImplFindsATreeFormulationByItsOwnName) {
  const CommandResult r =
      run_tool({"validate", "--impl", "^cpu\\.tree$", "--sizes", "64", "--theta", "0.3,0.7"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("cpu.tree[theta=0.3]"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("cpu.tree[theta=0.7]"), std::string::npos) << r.stdout_text;
  EXPECT_EQ(r.stdout_text.find("cpu.tree.f64"), std::string::npos) << r.stdout_text;
  EXPECT_EQ(r.stdout_text.find("cpu.soa"), std::string::npos) << r.stdout_text;
}

}  // namespace
}  // namespace nbody
