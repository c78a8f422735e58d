#pragma once
// A command of nbody-fair: one file in app/src/commands/ defines it and the function that adds it
// to the program, and commands.inc lists that function. The command holds its options, bound to
// its own fields, and runs once the command line is parsed.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "command_line/processes.hpp"
#include "nbody/registry.hpp"

namespace nbody::commands {

// What a command runs with: the registry of everything this build has (`run --extra-work` adds
// to it), the processes it runs in, and the command line as given (recorded in results).
struct Invocation {
  Registry& registry;
  Processes& processes;
  int argc;
  char** argv;
};

class Command {
 public:
  explicit Command(CLI::App& subcommand) : subcommand_(subcommand) {}
  virtual ~Command() = default;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;

  // Named on this command line.
  bool chosen() const { return static_cast<bool>(subcommand_); }
  const std::string& name() const { return subcommand_.get_name(); }

  // Runs decomposed over the ranks of mpirun (run, validate, simulate); the rest in one process.
  virtual bool decomposable() const { return false; }
  // What --help prints beyond CLI11's (bench: Google Benchmark's flags).
  virtual void print_more_help() const {}
  // The exit code; bad input throws UsageError.
  virtual int execute(const Invocation& invocation) = 0;

 protected:
  // The command's own options are added here.
  CLI::App& cli() const { return subcommand_; }

 private:
  CLI::App& subcommand_;
};

// The functions that add each command to the program, from commands.inc.
#define NBODY_COMMAND(add_function) std::unique_ptr<Command> add_function(CLI::App& program);
#include "commands/commands.inc"
#undef NBODY_COMMAND

}  // namespace nbody::commands
