// nbody-fair under mpirun, as a user runs it: 2 ranks, oversubscribed, the CPU
// formulations decomposed. Rank 0 alone writes results whose accuracy and trajectories are the
// one-process run's; bad input on any rank is one line and exit 2 on every rank; a rank failing
// mid-run ends the job with an error, not a hang; an interrupt keeps what was measured. Skipped,
// saying why, where mpirun is absent; in a build without MPI, nbody-fair refuses to be decomposed.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "nbody/app/wiring.hpp"
#include "nbody/results.hpp"

extern char** environ;

namespace nbody {
namespace {

namespace fs = std::filesystem;

// mpirun's own limit: a job that outlives it hung.
constexpr int kJobSeconds = 120;

std::string text_of(const fs::path& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::size_t count_lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

bool have_mpirun() {
  return std::system("command -v mpirun >/dev/null 2>&1") == 0;
}

class MpiCommandLine : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_mpirun()) GTEST_SKIP() << "mpirun not found: install openmpi-bin";
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           (std::string("nbody-fair-mpi-") + info->name() + "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  // mpirun's options: oversubscribed (CI has 2 cores), as root where CI runs as root, quiet
  // (mpirun's own notices would add lines to nbody-fair's one).
  static std::vector<std::string> mpirun_options() {
    std::vector<std::string> options = {"--oversubscribe", "-q", "--timeout",
                                        std::to_string(kJobSeconds)};
    if (::geteuid() == 0) options.push_back("--allow-run-as-root");
    return options;
  }

  // One program of an mpirun command line: its ranks, mpirun's options for them (-wdir), and
  // nbody-fair's arguments. Several: the MPMD form, separated by ':'.
  struct App {
    std::vector<std::string> args;
    int ranks = 2;
    std::vector<std::string> placement = {};
  };

  pid_t start(const std::vector<App>& apps, const std::string& name) const {
    std::vector<std::string> words = {"mpirun"};
    for (const std::string& o : mpirun_options()) words.push_back(o);
    for (std::size_t a = 0; a < apps.size(); ++a) {
      if (a > 0) words.push_back(":");
      words.insert(words.end(), {"-np", std::to_string(apps[a].ranks)});
      words.insert(words.end(), apps[a].placement.begin(), apps[a].placement.end());
      words.push_back(NBODY_FAIR_EXE);
      words.insert(words.end(), apps[a].args.begin(), apps[a].args.end());
    }
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, (dir_ / (name + ".stdout")).c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, (dir_ / (name + ".stderr")).c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, "mpirun", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    EXPECT_EQ(rc, 0);
    return pid;
  }

  static int wait_for(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  struct Job {
    int exit_code;
    std::string stderr_text;
  };
  Job run(const std::vector<App>& apps, const std::string& name = "job") {
    const int code = wait_for(start(apps, name));
    return {code, text_of(dir_ / (name + ".stderr"))};
  }

  // nbody-fair in one process, no mpirun.
  static int run_alone(const std::vector<std::string>& args) {
    std::string command = NBODY_FAIR_EXE;
    for (const std::string& a : args) command += " '" + a + "'";
    const int status = std::system((command + " >/dev/null 2>&1").c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // One line on stderr, exit 2, and no output folder: bad input.
  void expect_refused(const Job& job, const std::string& message, const fs::path& out) {
    EXPECT_EQ(job.exit_code, 2) << job.stderr_text;
    EXPECT_EQ(job.stderr_text, "nbody-fair: " + message + "\n");
    EXPECT_EQ(count_lines(job.stderr_text), 1u) << job.stderr_text;
    EXPECT_FALSE(fs::exists(out)) << out;
  }

  fs::path dir_;
};

#if NBODY_HAVE_MPI

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

const std::vector<std::string> kRun = {"run",
                                       "--sizes",
                                       "1,7,100,1000",
                                       "--impl",
                                       "^cpu\\.(soa|simd|tbb|tbb\\.symmetric)$",
                                       "--threads",
                                       "1",
                                       "--reps",
                                       "2",
                                       "--min-time",
                                       "0.002",
                                       "--max-attempts",
                                       "1",
                                       "--no-reference-cache"};

const std::vector<std::string> kSimulate = {
    "simulate", "--sizes", "7,200",        "--impl", "^cpu\\.(soa|simd|tbb)$", "--threads", "1",
    "--steps",  "24",      "--diag-every", "8",      "--phase-steps",          "24"};

// Each rank runs in its own folder with the same relative --out: rank 1's stays empty.
TEST_F(MpiCommandLine, RunValidatesAsOneProcessAndRankZeroAloneWrites) {
  ASSERT_EQ(run_alone(with(kRun, {"--out", (dir_ / "alone").string()})), 0);
  for (const char* rank : {"rank0", "rank1"}) fs::create_directories(dir_ / rank);
  const std::vector<std::string> args = with(kRun, {"--out", "out"});
  const Job job =
      run({{.args = args, .ranks = 1, .placement = {"-wdir", (dir_ / "rank0").string()}},
           {.args = args, .ranks = 1, .placement = {"-wdir", (dir_ / "rank1").string()}}});
  ASSERT_EQ(job.exit_code, 0) << job.stderr_text;
  EXPECT_TRUE(fs::is_empty(dir_ / "rank1"));
  EXPECT_TRUE(fs::exists(dir_ / "rank0" / "out" / "report.md"));
  const ResultsDocument alone = load_results(dir_ / "alone" / "results.json");
  const ResultsDocument decomposed = load_results(dir_ / "rank0" / "out" / "results.json");
  EXPECT_EQ(decomposed.settings.ranks, 2);
  EXPECT_EQ(decomposed.settings.decomposition, "target_range");
  EXPECT_EQ(decomposed.settings.rank_hosts.size(), 2u);
  EXPECT_EQ(alone.settings.ranks, 1);
  EXPECT_EQ(alone.settings.decomposition, "none");
  EXPECT_TRUE(decomposed.complete);
  ASSERT_EQ(decomposed.results.size(), alone.results.size());
  for (std::size_t i = 0; i < alone.results.size(); ++i) {
    const ResultRecord &one = alone.results[i], &two = decomposed.results[i];
    const std::string what = two.implementation + " N=" + std::to_string(two.n);
    EXPECT_EQ(two.implementation, one.implementation);
    EXPECT_EQ(two.n, one.n);
    EXPECT_EQ(two.input_hash, one.input_hash) << what;
    if (two.implementation == "cpu.tbb.symmetric") {  // takes no slice
      EXPECT_EQ(two.status, Status::skipped) << what;
      EXPECT_NE(two.reason.find("target range"), std::string::npos) << two.reason;
      continue;
    }
    ASSERT_EQ(two.status, Status::ok) << what << ": " << two.reason;
    // The same accelerations, bit for bit, so the same errors against the same reference.
    ASSERT_TRUE(one.accuracy && two.accuracy) << what;
    EXPECT_EQ(two.accuracy->metrics.relative_l2, one.accuracy->metrics.relative_l2) << what;
    EXPECT_EQ(two.accuracy->metrics.max_relative, one.accuracy->metrics.max_relative) << what;
    EXPECT_EQ(two.accuracy->metrics.net_force_residual, one.accuracy->metrics.net_force_residual)
        << what;
    // The all-gather is timed beside the computation.
    ASSERT_TRUE(two.kernel && two.end_to_end && two.communication) << what;
    EXPECT_FALSE(one.communication) << what;
    EXPECT_GE(two.end_to_end->median_s, two.kernel->median_s) << what;
    EXPECT_EQ(two.details.at("ranks"), "2") << what;
  }
}

// The trajectories are the one-process ones: the same conservation and the same divergence from
// the float64 leapfrog, at every check.
TEST_F(MpiCommandLine, SimulateFollowsTheOneProcessTrajectory) {
  ASSERT_EQ(run_alone(with(kSimulate, {"--out", (dir_ / "alone").string()})), 0);
  const Job job = run({{.args = with(kSimulate, {"--out", (dir_ / "decomposed").string()})}});
  ASSERT_EQ(job.exit_code, 0) << job.stderr_text;
  const ResultsDocument alone = load_results(dir_ / "alone" / "results.json");
  const ResultsDocument decomposed = load_results(dir_ / "decomposed" / "results.json");
  EXPECT_EQ(decomposed.settings.ranks, 2);
  ASSERT_EQ(decomposed.simulations.size(), alone.simulations.size());
  for (std::size_t i = 0; i < alone.simulations.size(); ++i) {
    const SimulationRecord &one = alone.simulations[i], &two = decomposed.simulations[i];
    const std::string what = two.implementation + " N=" + std::to_string(two.n);
    ASSERT_EQ(two.status, Status::ok) << what << ": " << two.reason;
    EXPECT_EQ(two.steps, 24);
    ASSERT_EQ(two.conservation.size(), one.conservation.size()) << what;
    for (std::size_t c = 0; c < one.conservation.size(); ++c) {
      EXPECT_EQ(two.conservation[c].kinetic_energy, one.conservation[c].kinetic_energy) << what;
      EXPECT_EQ(two.conservation[c].potential_energy, one.conservation[c].potential_energy) << what;
      EXPECT_EQ(two.conservation[c].angular_momentum, one.conservation[c].angular_momentum) << what;
    }
    ASSERT_TRUE(one.divergence && two.divergence) << what;
    EXPECT_EQ(two.divergence->position, one.divergence->position) << what;
    EXPECT_EQ(two.divergence->velocity, one.divergence->velocity) << what;
    EXPECT_GT(two.per_step.communication_s, 0.0) << what;
    EXPECT_EQ(one.per_step.communication_s, 0.0) << what;
  }
}

TEST_F(MpiCommandLine, BadSizesOrDtExitTwoWithOneLine) {
  expect_refused(run({{.args = {"run", "--sizes", "12x", "--out", (dir_ / "out").string()}}}),
                 "--sizes: invalid size '12x': expected a whole number of bodies >= 1",
                 dir_ / "out");
  expect_refused(run({{.args = {"simulate", "--sizes", "64", "--dt", "-1", "--out",
                                (dir_ / "out").string()}}}),
                 "--dt: must be greater than 0", dir_ / "out");
}

// mpirun's MPMD form can give one rank other arguments: its bad input is every rank's.
TEST_F(MpiCommandLine, BadInputOnOneRankAloneExitsTwoOnEveryRank) {
  const std::vector<std::string> good = {
      "run", "--sizes", "64", "--impl", "^cpu\\.soa$", "--out", (dir_ / "out").string()};
  const std::vector<std::string> bad = {
      "run", "--sizes", "6x4", "--impl", "^cpu\\.soa$", "--out", (dir_ / "out").string()};
  expect_refused(run({{.args = good, .ranks = 1}, {.args = bad, .ranks = 1}}),
                 "rank 1: --sizes: invalid size '6x4': expected a whole number of bodies >= 1",
                 dir_ / "out");
  const std::vector<std::string> other = {
      "run", "--sizes", "128", "--impl", "^cpu\\.soa$", "--out", (dir_ / "out").string()};
  expect_refused(run({{.args = good, .ranks = 1}, {.args = other, .ranks = 1}}),
                 "the ranks were given different arguments: every rank must run the same command",
                 dir_ / "out");
}

TEST_F(MpiCommandLine, OnlyRunValidateAndSimulateAreDecomposed) {
  expect_refused(run({{.args = {"list"}}}),
                 "list runs in one process: under mpirun only run, validate and simulate are "
                 "decomposed",
                 dir_ / "out");
}

// Rank 0 cannot write its results mid-run (its folder replaced by a file): the job ends with
// rank 0's error, non-zero, without a hang, the other rank taken down with it.
TEST_F(MpiCommandLine, ARankFailingMidRunEndsTheJob) {
  const fs::path out = dir_ / "out";
  const pid_t pid =
      start({{.args = {"run", "--sizes", "7,31,64,128,256,512,1K,2K", "--impl", "^cpu\\.(aos|soa)$",
                       "--threads", "1", "--reps", "20", "--min-time", "0.02", "--max-attempts",
                       "1", "--out", out.string()}}},
            "job");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(out / "results.json") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(fs::exists(out / "results.json"));
  // Moved away in one step: removing it file by file raced rank 0 writing its next checkpoint
  // there ("Directory not empty", seen under a loaded machine).
  fs::rename(out, dir_ / "out-moved");
  std::ofstream(out) << "not a folder\n";
  const auto started = std::chrono::steady_clock::now();
  const int code = wait_for(pid);
  const std::string stderr_text = text_of(dir_ / "job.stderr");
  EXPECT_NE(code, 0) << stderr_text;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(kJobSeconds / 2))
      << "the job hung until mpirun's --timeout";
  // "cannot write" a checkpoint's file, or "cannot rename" one written just before the folder
  // went: which depends on where in a checkpoint the removal falls.
  EXPECT_NE(stderr_text.find("nbody-fair: rank 0: error: cannot "), std::string::npos)
      << stderr_text;
}

// An interrupt (mpirun passes it to the ranks) stops every rank at the same point; rank 0 keeps
// what was measured, saying it was interrupted.
TEST_F(MpiCommandLine, InterruptKeepsWhatWasMeasured) {
  const fs::path out = dir_ / "out";
  const pid_t pid =
      start({{.args = {"run", "--sizes", "7,31,64,128,256,512,1K,2K,4K", "--impl",
                       "^cpu\\.(aos|soa)$", "--threads", "1", "--reps", "20", "--min-time", "0.02",
                       "--max-attempts", "1", "--out", out.string()}}},
            "job");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(out / "results.json") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(fs::exists(out / "results.json"));
  kill(pid, SIGINT);
  EXPECT_NE(wait_for(pid), 0);
  const ResultsDocument doc = load_results(out / "results.json");
  EXPECT_FALSE(doc.complete);
  EXPECT_GE(doc.results.size(), 1u);
  EXPECT_LT(doc.results.size(), 18u);
}

// Help and the version come once, from rank 0, not once per rank.
TEST_F(MpiCommandLine, HelpAndVersionArePrintedOnce) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "--help"}, std::vector<std::string>{"--version"}}) {
    const Job job = run({{.args = args}});
    EXPECT_EQ(job.exit_code, 0) << job.stderr_text;
    const std::string printed = text_of(dir_ / "job.stdout");
    const std::string marker = args.front() == "run" ? "Usage:" : "nbody-fair ";
    std::size_t count = 0;
    for (std::size_t at = printed.find(marker); at != std::string::npos;
         at = printed.find(marker, at + 1)) {
      ++count;
    }
    EXPECT_EQ(count, 1u) << printed;
  }
}

// --gpu-exchange takes nccl or mpi: anything else is bad input on every rank, one line, exit 2,
// and in one process too (where the option changes nothing).
TEST_F(MpiCommandLine, BadGpuExchangeExitsTwoWithOneLine) {
  const fs::path out = dir_ / "out";
  expect_refused(run({{.args = {"run", "--sizes", "64", "--impl", "^cpu\\.soa$", "--gpu-exchange",
                                "pigeons", "--out", out.string()}}}),
                 "--gpu-exchange: 'pigeons' is neither nccl (between the ranks' GPUs) nor mpi "
                 "(through host memory)",
                 out);
  EXPECT_EQ(run_alone({"simulate", "--sizes", "64", "--gpu-exchange", "", "--out", out.string()}),
            2);
  EXPECT_FALSE(fs::exists(out));
}

// Asked for NCCL where a rank cannot have it (no GPU, two ranks on one GPU, a build without NCCL):
// bad input, said once with that rank's reason, exit 2 on every rank, nothing written. (With a
// GPU for every rank there is nothing to refuse: tests/nccl_ranks_test.cpp runs NCCL there.)
TEST_F(MpiCommandLine, GpuExchangeNcclIsRefusedWhereARankCannotHaveIt) {
  if (describe_gpus().size() >= 2) GTEST_SKIP() << "every rank has a GPU here: nothing to refuse";
  const fs::path out = dir_ / "out";
  const Job job = run({{.args = {"run", "--sizes", "64", "--impl", "^gpu\\.tuned$",
                                 "--gpu-exchange", "nccl", "--out", out.string()}}});
  EXPECT_EQ(job.exit_code, 2) << job.stderr_text;
  EXPECT_EQ(job.stderr_text.rfind("nbody-fair: --gpu-exchange nccl: ", 0), 0u) << job.stderr_text;
  EXPECT_EQ(count_lines(job.stderr_text), 1u) << job.stderr_text;
  EXPECT_FALSE(fs::exists(out));
}

// NCCL between the ranks' GPUs, as a user runs it: a run, then a simulation, each job ending
// cleanly (the communicator left once, before MPI ends: exit 0, no crash on the way out), every
// measurement ok and recorded as NCCL's.
TEST_F(MpiCommandLine, GpuExchangeNcclRunsAndSimulatesAndEndsCleanly) {
  if (describe_gpus().size() < 2) GTEST_SKIP() << "NCCL between 2 ranks takes 2 GPUs";
  const fs::path run_out = dir_ / "run", simulate_out = dir_ / "simulate";
  const Job run_job = run({{.args = {"run", "--sizes", "31,4097", "--impl", "^gpu\\.tuned$",
                                     "--gpu-exchange", "nccl", "--reps", "2", "--min-time", "0.002",
                                     "--no-counters", "--out", run_out.string()}}},
                          "run");
  ASSERT_EQ(run_job.exit_code, 0) << run_job.stderr_text;
  const ResultsDocument runs = load_results(run_out / "results.json");
  EXPECT_EQ(runs.settings.gpu_exchange, "nccl");
  ASSERT_EQ(runs.results.size(), 2u);
  for (const ResultRecord& r : runs.results) EXPECT_EQ(r.status, Status::ok) << r.reason;
  const Job simulate_job =
      run({{.args = {"simulate", "--sizes", "4097", "--impl", "^gpu\\.tuned$", "--gpu-exchange",
                     "nccl", "--steps", "16", "--out", simulate_out.string()}}},
          "simulate");
  ASSERT_EQ(simulate_job.exit_code, 0) << simulate_job.stderr_text;
  const ResultsDocument simulated = load_results(simulate_out / "results.json");
  EXPECT_EQ(simulated.settings.gpu_exchange, "nccl");
  ASSERT_EQ(simulated.simulations.size(), 1u);
  EXPECT_EQ(simulated.simulations.front().status, Status::ok)
      << simulated.simulations.front().reason;
}

// Which exchange the ranks used is recorded: in the settings, and in each result's details.
TEST_F(MpiCommandLine, TheExchangeIsRecorded) {
  const fs::path out = dir_ / "out";
  const Job job =
      run({{.args = {"run", "--sizes", "64", "--impl", "^cpu\\.soa$", "--gpu-exchange", "mpi",
                     "--reps", "2", "--min-time", "0.002", "--out", out.string()}}});
  ASSERT_EQ(job.exit_code, 0) << job.stderr_text;
  const ResultsDocument doc = load_results(out / "results.json");
  EXPECT_EQ(doc.settings.gpu_exchange, "mpi");
  ASSERT_EQ(doc.results.size(), 1u);
  EXPECT_EQ(doc.results[0].details.at("exchange"), "MPI_Allgatherv through host memory");
  // One process exchanges nothing, whatever was asked.
  ASSERT_EQ(run_alone({"run", "--sizes", "64", "--impl", "^cpu\\.soa$", "--gpu-exchange", "nccl",
                       "--reps", "2", "--min-time", "0.002", "--out", (dir_ / "alone").string()}),
            0);
  EXPECT_EQ(load_results(dir_ / "alone" / "results.json").settings.gpu_exchange, "");
}

// One rank under mpirun is a plain process: nothing decomposed, nothing recorded as such.
TEST_F(MpiCommandLine, OneRankRunsAsOneProcess) {
  const Job job = run({{.args = {"run", "--sizes", "64", "--impl", "^cpu\\.soa$", "--reps", "2",
                                 "--min-time", "0.002", "--out", (dir_ / "out").string()},
                        .ranks = 1}});
  ASSERT_EQ(job.exit_code, 0) << job.stderr_text;
  const ResultsDocument doc = load_results(dir_ / "out" / "results.json");
  EXPECT_EQ(doc.settings.ranks, 1);
  EXPECT_EQ(doc.settings.decomposition, "none");
  for (const ResultRecord& r : doc.results) EXPECT_FALSE(r.communication) << r.implementation;
}

#else

TEST_F(MpiCommandLine, ABuildWithoutMpiRefusesToBeDecomposed) {
  const Job job = run({{.args = {"run", "--sizes", "64", "--out", (dir_ / "out").string()}}});
  EXPECT_EQ(job.exit_code, 2);
  EXPECT_EQ(count_lines(job.stderr_text), 1u) << job.stderr_text;
  EXPECT_NE(job.stderr_text.find("but this nbody-fair was built "), std::string::npos)
      << job.stderr_text;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

#endif

}  // namespace
}  // namespace nbody
