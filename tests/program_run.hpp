#pragma once
// A program run as a child process, its standard output and error captured: how the command-line
// tests (compare, scaling, the runner's) run nbody-fair and mpirun.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace nbody::testing {

struct CommandResult {
  int exit_code;
  std::string stderr_text;
  std::string stdout_text;
};

// The text of `file`, which is then removed.
inline std::string read_and_remove(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  std::filesystem::remove(file);
  return text;
}

// Starts argv_words (the program found on PATH unless a path) with its standard output and error
// in these files; returns its process id.
inline pid_t spawn_program(const std::vector<std::string>& argv_words,
                           const std::string& stdout_file, const std::string& stderr_file) {
  std::vector<char*> argv;
  for (const std::string& a : argv_words) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// Its exit code; an exit by signal reads as 128 + the signal.
inline int wait_exit_code(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Runs argv_words and waits for it.
inline CommandResult run_program(const std::vector<std::string>& argv_words) {
  const std::string stem =
      (std::filesystem::temp_directory_path() / "nbody-fair-program-").string() +
      std::to_string(::getpid());
  const std::string out_file = stem + "-stdout", err_file = stem + "-stderr";
  const int code = wait_exit_code(spawn_program(argv_words, out_file, err_file));
  const std::string err = read_and_remove(err_file);
  return {code, err, read_and_remove(out_file)};
}

}  // namespace nbody::testing
