// nbody-fair: the commands of app/src/commands/, parsed and dispatched in one process or on
// every rank of mpirun. Measurement lives in the runner and the benchmark harness, printing in
// reports/.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "command_line/command.hpp"
#include "command_line/exit_codes.hpp"
#include "command_line/program.hpp"
#include "nbody/app/bench_command.hpp"
#include "nbody/app/build_description.hpp"
#include "nbody/app/launcher.hpp"
#include "nbody/app/wiring.hpp"
#include "nbody/errors.hpp"

namespace nbody::commands {
namespace {

// CLI11 would answer a mistyped command with "A subcommand is required".
void refuse_unknown_command(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return;
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands({})) names.push_back(command->get_name());
  if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
    throw UsageError(
        fmt::format("unknown command '{}' (commands: {})", argv[1], fmt::join(names, ", ")));
  }
}

Command* chosen_command(const std::vector<std::unique_ptr<Command>>& commands) {
  for (const auto& command : commands) {
    if (command->chosen()) return command.get();
  }
  return nullptr;
}

// Help and the version are printed once under mpirun, by rank 0; a command line CLI11 refuses is
// bad input, which the ranks agree on.
std::optional<int> parse(CLI::App& app, int argc, char** argv, const Processes& processes,
                         const std::vector<std::unique_ptr<Command>>& commands) {
  const auto print_once = [&](const CLI::Error& e) {
    return processes.writes() ? app.exit(e) : e.get_exit_code();
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    const int code = print_once(e);
    const Command* command = chosen_command(commands);
    if (command != nullptr && processes.writes()) command->print_more_help();
    return code;
  } catch (const CLI::CallForAllHelp& e) {
    return print_once(e);
  } catch (const CLI::CallForVersion& e) {
    return print_once(e);
  } catch (const CLI::ParseError& e) {
    if (processes.decomposed()) throw UsageError(e.what());
    fmt::print(stderr, "nbody-fair: {}\n", e.what());
    return kExitUsage;
  }
  return std::nullopt;
}

int run_program(int argc, char** argv, Processes& processes) {
  CLI::App app{"nbody-fair: a fair CPU-versus-GPU all-pairs N-body benchmark"};
  app.require_subcommand(1);
  app.set_version_flag("--version", describe_version,
                       "Print the version and this build's features (CUDA, CUPTI, SIMD ISAs)");
  Registry registry = make_default_registry();
  std::vector<std::unique_ptr<Command>> commands;
#define NBODY_COMMAND(add_function) commands.push_back(add_function(app));
#include "commands/commands.inc"
#undef NBODY_COMMAND
  refuse_unknown_command(app, argc, argv);
  // --version beside any command prints the version, as before one.
  for (CLI::App* command : app.get_subcommands({})) {
    command->set_version_flag("--version", describe_version,
                              "Print the version and this build's features (as nbody-fair "
                              "--version)");
  }
  if (const std::optional<int> code = parse(app, argc, argv, processes, commands)) return *code;
  Command& command = *chosen_command(commands);
  if (processes.decomposed() && !command.decomposable()) {
    throw UsageError(fmt::format(
        "{} runs in one process: under mpirun only run, validate and simulate are decomposed",
        command.name()));
  }
  return command.execute({registry, processes, argc, argv});
}

}  // namespace

int run_in_one_process(int argc, char** argv, Program program) {
  try {
    const std::unique_ptr<Processes> processes = make_one_process();
    return program(argc, argv, *processes);
  } catch (const UsageError& e) {
    fmt::print(stderr, "nbody-fair: {}\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "nbody-fair: error: {}\n", e.what());
    return kExitFailed;
  }
}

}  // namespace nbody::commands

int main(int argc, char** argv) {
  // MPI only under a launcher, and only for more than one rank: otherwise a plain process.
  const std::optional<nbody::LauncherWorld> launched = nbody::mpi_launcher_world();
  if (!launched || launched->size == 1) {
    return nbody::commands::run_in_one_process(argc, argv, nbody::commands::run_program);
  }
  return nbody::commands::run_under_mpirun(argc, argv, *launched, nbody::commands::run_program);
}
