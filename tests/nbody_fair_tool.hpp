#pragma once
// nbody-fair as the command-line tests run it: the built program (NBODY_FAIR_EXE, which each such
// test defines) in a child process, with a cache of the tests' own; a fresh folder per test.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "program_run.hpp"
#include "scratch_folder.hpp"

namespace nbody::testing {

// The tests' runs of nbody-fair keep their caches (references, ceilings) in a folder of their
// own: ceilings measured while ctest runs other tests in parallel would be wrong, and must not
// land in the user's cache.
class ScratchCacheEnvironment final : public ::testing::Environment {
 public:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() /
                 ("nbody-fair-test-cache-" + std::to_string(::getpid()));
    std::filesystem::create_directories(directory_);
    ::setenv("NBODY_FAIR_CACHE_DIR", directory_.c_str(), 1);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

 private:
  std::filesystem::path directory_;
};
[[maybe_unused]] inline const ::testing::Environment* const kScratchCache =
    ::testing::AddGlobalTestEnvironment(new ScratchCacheEnvironment);

// nbody-fair with these arguments, waited for.
inline CommandResult run_tool(std::vector<std::string> args) {
  args.insert(args.begin(), NBODY_FAIR_EXE);
  return run_program(args);
}

}  // namespace nbody::testing
