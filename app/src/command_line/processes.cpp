#include "command_line/processes.hpp"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <ctime>

#include <fmt/format.h>

#include "command_line/exit_codes.hpp"
#include "command_line/options.hpp"
#include "nbody/app/ceilings.hpp"
#include "nbody/app/wiring.hpp"

namespace nbody::commands {

// timeout(1) delivers its signal twice at once (to the process and to its group), so only a
// signal a second or more after the first ends the program at once, keeping the results of the
// last checkpoint. Function-local static: a handler can reach nothing else.
void on_signal(std::atomic<bool>& flag) {
  static std::atomic<std::int64_t> first_signal_ns{0};
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const std::int64_t now_ns = now.tv_sec * 1'000'000'000LL + now.tv_nsec;
  std::int64_t first_ns = 0;
  if (first_signal_ns.compare_exchange_strong(first_ns, now_ns)) {
    flag = true;
  } else if (now_ns - first_ns > 1'000'000'000LL) {
    _exit(kExitInterrupted);
  }
}

void stop_on_signals(void (*handler)(int)) {
  for (const int signal : {SIGINT, SIGTERM}) std::signal(signal, handler);
}

std::function<void(const std::string&)> Processes::announcer() const {
  return [writes = writes()](const std::string& line) {
    if (writes) fmt::print(stderr, "{}\n", line);
  };
}

namespace {

void on_interrupt(int) {
  on_signal(interrupt_requested());
}

class OneProcess final : public Processes {
 public:
  bool decomposed() const override { return false; }
  bool writes() const override { return true; }

  void prepare_output(const std::filesystem::path& folder, bool replace) override {
    prepare_output_directory(folder, replace);
  }

  SuiteShare share(const Registry&, GpuExchangeRequest, SuiteOptions&) override { return {}; }

  SuiteCeilings ceilings(const ExecutionOptions& execution, bool counters) override {
    const auto started = std::chrono::steady_clock::now();
    SuiteCeilings measured;
    if (counters) {
      CeilingOptions options;
      options.gpu_devices = execution.gpu_devices;  // their all-gather
      measured.ceilings = measure_ceilings(options);
    } else {
      // Without counters, several GPUs still measure the all-gather between them (the model's).
      measured.ceilings = measure_exchange_ceilings(execution.gpu_devices);
    }
    measured.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return measured;
  }

  std::vector<std::unique_ptr<CounterSource>> counter_sources() override {
    return make_counter_sources();
  }

  EnergyMeters energy_meters(const ExecutionOptions& execution, bool with_gpu) override {
    return make_energy_meters(execution, with_gpu);
  }

  void handle_interrupts() override { stop_on_signals(on_interrupt); }
};

}  // namespace

std::unique_ptr<Processes> make_one_process() {
  return std::make_unique<OneProcess>();
}

}  // namespace nbody::commands
