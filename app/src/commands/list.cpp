// list: the implementations this build has and whether each can run here.
#include <algorithm>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "nbody/isas.hpp"

#include "command_line/command.hpp"
#include "command_line/options.hpp"

namespace nbody::commands {
namespace {

class ListCommand final : public Command {
 public:
  explicit ListCommand(CLI::App& program)
      : Command(*program.add_subcommand("list",
                                        "List the implementations and whether they can run here")) {
    CLI::App& command = cli();
    command.add_option("--threads", execution_.threads, "CPU threads (0 = all)")
        ->check(whole_number(0, kLargestInt));
    command.add_option("--gpu", execution_.gpu_device, "CUDA device ordinal")
        ->check(whole_number(0, kLargestInt));
    command.add_flag("--variants", variants_,
                     "Also list the tuning variants (other shapes of the optimized kernels)");
  }

  int execute(const Invocation& invocation) override {
    invocation.registry.check_options(execution_);  // --gpu 5 on a machine without it: bad input
    print(invocation.registry);
    return 0;
  }

 private:
  // The SIMD ISAs of this build (nbody/isas.hpp) and which this CPU runs, where a listed
  // formulation takes --isa.
  static void print_isas(const std::vector<const Implementation*>& listed) {
    if (std::none_of(listed.begin(), listed.end(),
                     [](const Implementation* impl) { return impl->info.isa_choice; })) {
      return;
    }
    std::vector<std::string_view> runs;
    for (const IsaInfo& isa : compiled_isas()) {
      if (isa_available(isa.isa)) runs.push_back(isa.name);
    }
    const std::optional<Isa> widest = widest_available_isa();
    fmt::print("\nCPU SIMD ISAs (--isa): {}; this CPU runs {}; the default is the widest, {}\n",
               compiled_isa_names(),
               runs.empty() ? std::string("none") : fmt::format("{}", fmt::join(runs, ", ")),
               widest ? isa_name(*widest) : "none");
  }

  // The pair scheme of an all-pairs formulation ("all_pairs", "symmetric"), or "barnes_hut".
  static std::string_view algorithm_of(const ImplementationInfo& info) {
    return info.algorithm == Algorithm::all_pairs ? to_string(info.pairs)
                                                  : to_string(info.algorithm);
  }

  void print(const Registry& registry) const {
    const std::vector<const Implementation*> listed = registry.select(".", variants_);
    bool trees = false;
    std::size_t width = 14;
    for (const Implementation* impl : listed) width = std::max(width, impl->info.name.size());
    fmt::print("{:<{}} {:<4} {:<4} {:<4} {:<12} {:<11} {:<15} {:>7}  {}\n", "implementation", width,
               "dev", "lay", "prec", "accuracy", "algorithm", "role", "threads", "status");
    for (const Implementation* impl : listed) {
      const auto reason = impl->unavailable_reason();
      fmt::print("{:<{}} {:<4} {:<4} {:<4} {:<12} {:<11} {:<15} {:>7}  {}\n", impl->info.name,
                 width, to_string(impl->info.device), to_string(impl->info.layout),
                 to_string(impl->info.precision), to_string(impl->info.accuracy_class),
                 algorithm_of(impl->info), to_string(impl->info.role),
                 impl->threads_used(execution_), reason ? "unavailable: " + *reason : "available");
      trees = trees || impl->info.algorithm == Algorithm::barnes_hut;
    }
    print_isas(listed);
    if (trees) {
      fmt::print(
          "\nbarnes_hut formulations run once per opening angle of --theta (default 0.3,0.5,0.7), "
          "each named name[theta=...]\n");
    }
  }

  ExecutionOptions execution_;
  bool variants_ = false;
};

}  // namespace

std::unique_ptr<Command> add_list_command(CLI::App& program) {
  return std::make_unique<ListCommand>(program);
}

}  // namespace nbody::commands
