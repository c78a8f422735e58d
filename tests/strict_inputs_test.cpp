// Inputs are opened only where they are readable regular files: a FIFO, a device or a folder given
// where a file belongs is refused at once, in one line with exit code 2, never waited on; a file
// or folder the user may not read is said to be so. And a results document the schema refuses is
// refused by nbody-fair itself the same way, naming the file and the field.
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "nbody/files.hpp"
#include "nbody/io/snapshot.hpp"
#include "nbody_fair_tool.hpp"

namespace nbody {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::read_and_remove;
using testing::scratch;

constexpr auto kPatience = std::chrono::seconds(30);

// nbody-fair with `args`, or nothing where it was still running after kPatience (it is then
// killed): a tool that waits on a FIFO must fail the test, not hang it.
std::optional<CommandResult> run_tool_within(std::vector<std::string> args) {
  args.insert(args.begin(), NBODY_FAIR_EXE);
  const std::string stem =
      (fs::temp_directory_path() / "nbody-fair-strict-").string() + std::to_string(::getpid());
  const pid_t pid = testing::spawn_program(args, stem + "-stdout", stem + "-stderr");
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      read_and_remove(stem + "-stdout");
      read_and_remove(stem + "-stderr");
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  const std::string err = read_and_remove(stem + "-stderr");
  return CommandResult{code, err, read_and_remove(stem + "-stdout")};
}

// `args` is refused promptly: exit code 2, one line on stderr holding `fragment`.
void expect_refused(const std::vector<std::string>& args, const std::string& fragment) {
  SCOPED_TRACE(::testing::PrintToString(args));
  const std::optional<CommandResult> r = run_tool_within(args);
  ASSERT_TRUE(r.has_value()) << "still running after " << kPatience.count() << " s: it waited";
  EXPECT_EQ(r->exit_code, 2) << r->stderr_text;
  EXPECT_EQ(std::count(r->stderr_text.begin(), r->stderr_text.end(), '\n'), 1) << r->stderr_text;
  EXPECT_NE(r->stderr_text.find(fragment), std::string::npos) << r->stderr_text;
  EXPECT_EQ(r->stderr_text.find("has no results.json"), std::string::npos) << r->stderr_text;
  EXPECT_EQ(r->stderr_text.find("json.exception"), std::string::npos) << r->stderr_text;
}

std::string text_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(StrictInputs, WhatIsNoRegularFileIsNamedWithoutOpeningIt) {
  const fs::path dir = scratch("strict-kinds");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  std::ofstream(dir / "file.json") << "{}";
  EXPECT_EQ(why_not_an_input_file(dir / "file.json"), std::nullopt);
  EXPECT_EQ(why_not_an_input_file(dir / "fifo"), "it is a FIFO (named pipe), not a regular file");
  EXPECT_EQ(why_not_an_input_file(dir), "it is a folder, not a file");
  EXPECT_EQ(why_not_an_input_file("/dev/null"), "it is a device, not a regular file");
  EXPECT_EQ(why_not_an_input_file(dir / "absent.json"), "no such file");
  EXPECT_EQ(why_not_an_input_file(dir / "file.json" / "below"), "no such file");
  EXPECT_EQ(why_not_an_input_folder(dir), std::nullopt);
  EXPECT_EQ(why_not_an_input_folder(dir / "file.json"), "it is not a folder");
  fs::remove_all(dir);
}

// A FIFO blocks its reader until a writer comes: every command that reads an input refuses one.
TEST(StrictInputs, AFifoIsRefusedAtOnceByEveryCommandThatReadsInputs) {
  const fs::path dir = scratch("strict-fifo");
  const std::string fifo = (dir / "results.fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_directories(dir / "run");
  ASSERT_EQ(::mkfifo((dir / "run" / "results.json").c_str(), 0600), 0);
  const std::string out = (dir / "out").string();
  const std::string kFifo = "it is a FIFO (named pipe), not a regular file";
  expect_refused({"report", "--in", fifo}, "--in " + fifo + ": cannot read it: " + kFifo);
  expect_refused({"report", "--in", (dir / "run").string()},
                 "cannot read its results.json: " + kFifo);
  expect_refused({"report", "--cpu-from", fifo, "--gpu-from", fifo, "--out", out}, kFifo);
  expect_refused({"compare", fifo, fifo}, "BASE " + fifo + ": cannot read it: " + kFifo);
  expect_refused({"compare", dir.string(), dir.string()}, kFifo);  // a folder of run folders
  expect_refused({"scaling", "--out", out, fifo}, kFifo);
  if (const auto reason = snapshot_io_unavailable_reason()) {
    expect_refused({"simulate", "--ic-file", fifo, "--out", out}, *reason);
  } else {
    expect_refused({"simulate", "--ic-file", fifo, "--out", out},
                   "cannot read '" + fifo + "': " + kFifo);
  }
  EXPECT_FALSE(fs::exists(out));
  fs::remove_all(dir);
}

// Root reads whatever the permissions say, so only another user sees these refusals.
TEST(StrictInputs, WhatTheUserMayNotReadIsSaidToBeSo) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "running as root, whom file permissions do not stop: run the tests as "
                    "another user to check the refusals of unreadable files and folders";
  }
  const fs::path dir = scratch("strict-permissions");
  const fs::path sample = fs::path(NBODY_SOURCE_DIR) / "docs/samples/cpu-only-run/results.json";
  fs::create_directories(dir / "locked-run");
  fs::copy_file(sample, dir / "locked-run" / "results.json");
  fs::copy_file(sample, dir / "locked.json");
  fs::permissions(dir / "locked-run", fs::perms::none);
  fs::permissions(dir / "locked.json", fs::perms::none);
  const std::string run = (dir / "locked-run").string(), file = (dir / "locked.json").string();
  expect_refused({"report", "--in", run},
                 "--in " + run + ": cannot read the folder: permission denied");
  expect_refused({"report", "--in", file}, "--in " + file + ": cannot read it: permission denied");
  expect_refused({"compare", run, file},
                 "BASE " + run + ": cannot read the folder: permission denied");
  expect_refused({"compare", dir.string(), dir.string()},
                 "cannot read the folder: permission denied");
  expect_refused({"simulate", "--ic-file", file}, "permission denied");
  fs::permissions(dir / "locked-run", fs::perms::owner_all);
  fs::remove_all(dir);
}

// The loader's refusals reach the user as they are: the file, the field, exit code 2.
TEST(StrictInputs, ADocumentTheSchemaRefusesEndsTheCommandNamingTheFileAndField) {
  const fs::path dir = scratch("strict-documents");
  const nlohmann::json cases = nlohmann::json::parse(
      text_of(fs::path(NBODY_SOURCE_DIR) / "tests/data/results-schema-cases.json"));
  nlohmann::json fractional = cases["document"];
  fractional["results"][0]["n"] = 1.5;
  std::ofstream(dir / "fractional.json") << fractional.dump();
  std::ofstream(dir / "trailing.json") << cases["document"].dump() << "\nmore\n";
  nlohmann::json twice = cases["document"];
  twice["results"].push_back(twice["results"][0]);
  std::ofstream(dir / "twice.json") << twice.dump();
  const std::string fractional_file = (dir / "fractional.json").string();
  expect_refused({"report", "--in", fractional_file},
                 fractional_file + ": results[0].n is 1.5; it must be a whole number");
  expect_refused({"compare", fractional_file, fractional_file}, "results[0].n is 1.5");
  expect_refused({"report", "--in", (dir / "trailing.json").string()},
                 "holds more than one JSON value");
  expect_refused({"report", "--in", (dir / "twice.json").string()},
                 "results[2] is cpu.soa at N = 64 (uniform), as results[0] is");
  EXPECT_FALSE(fs::exists(dir / "report.md"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nbody
