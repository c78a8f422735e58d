#include "nbody/cpu_peaks/hot_loop.hpp"

#include <link.h>
#include <signal.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include <fmt/core.h>

namespace nbody::peaks {
namespace {

constexpr std::size_t kMaxSamples = std::size_t{1} << 16;
constexpr std::size_t kMinSamples = 20;
constexpr std::size_t kWantedSamples = 100;

struct SampleBuffer {
  std::array<std::uintptr_t, kMaxSamples> program_counters{};
  std::atomic<std::size_t> count{0};
};

// The one piece of static state in the suite: a signal handler can reach nothing else. Points to
// the buffer of the sampling in progress, null otherwise.
std::atomic<SampleBuffer*>& active_buffer() {
  static std::atomic<SampleBuffer*> buffer{nullptr};
  return buffer;
}

// Async-signal-safe: one relaxed atomic increment and one store into preallocated memory.
void record_program_counter(int /*signal*/, siginfo_t* /*info*/, void* context) {
  SampleBuffer* buffer = active_buffer().load(std::memory_order_relaxed);
  if (buffer == nullptr) return;
  const std::size_t slot = buffer->count.fetch_add(1, std::memory_order_relaxed);
  if (slot >= kMaxSamples) return;
  const auto* user_context = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  buffer->program_counters[slot] =
      static_cast<std::uintptr_t>(user_context->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  buffer->program_counters[slot] = static_cast<std::uintptr_t>(user_context->uc_mcontext.pc);
#else
  (void)user_context;
#endif
}

// SIGPROF every millisecond of process CPU time (all threads) while alive.
class ProgramCounterSampler {
 public:
  explicit ProgramCounterSampler(SampleBuffer& buffer) {
    struct sigaction action {};
    action.sa_sigaction = record_program_counter;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGPROF, &action, &previous_action_) != 0) return;
    active_buffer().store(&buffer);
    itimerval timer{};
    timer.it_interval.tv_usec = 1000;
    timer.it_value.tv_usec = 1000;
    running_ = setitimer(ITIMER_PROF, &timer, &previous_timer_) == 0;
  }
  ~ProgramCounterSampler() {
    itimerval off{};
    setitimer(ITIMER_PROF, &off, nullptr);
    active_buffer().store(nullptr);
    // A SIGPROF still in flight must not meet the default action (terminate): our handler, now a
    // no-op, stays unless another had been installed.
    if (previous_action_.sa_handler != SIG_DFL) sigaction(SIGPROF, &previous_action_, nullptr);
    if (previous_timer_.it_value.tv_sec != 0 || previous_timer_.it_value.tv_usec != 0) {
      setitimer(ITIMER_PROF, &previous_timer_, nullptr);
    }
  }
  ProgramCounterSampler(const ProgramCounterSampler&) = delete;
  ProgramCounterSampler& operator=(const ProgramCounterSampler&) = delete;
  bool running() const { return running_; }

 private:
  struct sigaction previous_action_ {};
  itimerval previous_timer_{};
  bool running_ = false;
};

struct LoadedObject {
  std::string path;
  std::uintptr_t bias = 0;  // run-time address = bias + link-time address
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> executable_ranges;
};

std::vector<LoadedObject> loaded_objects() {
  std::vector<LoadedObject> objects;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto& out = *static_cast<std::vector<LoadedObject>*>(data);
        LoadedObject object;
        object.path = info->dlpi_name != nullptr ? info->dlpi_name : "";
        object.bias = info->dlpi_addr;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& header = info->dlpi_phdr[i];
          if (header.p_type == PT_LOAD && (header.p_flags & PF_X) != 0) {
            const std::uintptr_t begin = info->dlpi_addr + header.p_vaddr;
            object.executable_ranges.emplace_back(begin, begin + header.p_memsz);
          }
        }
        out.push_back(std::move(object));
        return 0;
      },
      &objects);
  if (!objects.empty() && objects.front().path.empty()) {  // the main program
    std::array<char, 4096> path{};
    const ssize_t length = readlink("/proc/self/exe", path.data(), path.size() - 1);
    objects.front().path =
        length > 0 ? std::string(path.data(), static_cast<std::size_t>(length)) : "/proc/self/exe";
  }
  return objects;
}

// Output of a shell command, or empty with `ok` false.
std::string command_output(const std::string& command, bool& ok) {
  std::string out;
  ok = false;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return out;
  std::array<char, 1 << 16> chunk{};
  std::size_t read = 0;
  while ((read = std::fread(chunk.data(), 1, chunk.size(), pipe.get())) > 0)
    out.append(chunk.data(), read);
  ok = pclose(pipe.release()) == 0;
  return out;
}

struct Symbol {
  std::uint64_t address = 0, size = 0;
  std::string name;
};

// The binutils program the build named (the target's: aarch64-linux-gnu-objdump where
// cross-compiled, for a test run under qemu), else the one on the PATH.
std::string binutil(const char* built, const char* plain) {
  return ::access(built, X_OK) == 0 ? std::string(built) : std::string(plain);
}

// Function symbols with sizes, by address (`nm -n -S`).
std::vector<Symbol> function_symbols(const std::string& path, bool& ok) {
  std::vector<Symbol> symbols;
  const std::string text = command_output(
      binutil(NBODY_NM, "nm") + " -n -S -C --defined-only '" + path + "' 2>/dev/null", ok);
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string address, size, type;
    if (!(fields >> address >> size >> type) || type.size() != 1) continue;
    if (std::string("tTwWi").find(type[0]) == std::string::npos) continue;
    Symbol symbol;
    try {
      symbol.address = std::stoull(address, nullptr, 16);
      symbol.size = std::stoull(size, nullptr, 16);
    } catch (const std::exception&) {
      continue;
    }
    std::getline(fields >> std::ws, symbol.name);
    if (symbol.size > 0) symbols.push_back(std::move(symbol));
  }
  return symbols;
}

bool is_runtime_library(const std::string& path) {
  const std::string file = path.substr(path.find_last_of('/') + 1);
  for (const char* prefix : {"libtbb", "libc.so", "libc-", "ld-linux", "libpthread", "libgomp",
                             "libstdc++", "libm.so", "linux-vdso", "libcuda", "libcudart"}) {
    if (file.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// A function the samples fell in: where it is, and the link-time addresses of its samples.
struct SampledFunction {
  std::size_t object = 0;
  Symbol symbol;
  std::vector<std::uint64_t> addresses;
};

// Every sample attributed to (object, link-time address).
std::map<std::size_t, std::vector<std::uint64_t>> addresses_by_object(
    const std::vector<LoadedObject>& objects, const SampleBuffer& buffer, std::size_t samples) {
  std::map<std::size_t, std::vector<std::uint64_t>> by_object;
  for (std::size_t s = 0; s < samples; ++s) {
    const std::uintptr_t pc = buffer.program_counters[s];
    for (std::size_t o = 0; o < objects.size(); ++o) {
      const auto& ranges = objects[o].executable_ranges;
      if (std::any_of(ranges.begin(), ranges.end(),
                      [&](const auto& r) { return r.first <= pc && pc < r.second; })) {
        by_object[o].push_back(pc - objects[o].bias);
        break;
      }
    }
  }
  return by_object;
}

// The functions outside the runtime libraries (thread pool, libc) that samples fell in, the
// hottest first; `symbol_problem` says why an object's samples could not be placed.
std::vector<SampledFunction> sampled_functions(const std::vector<LoadedObject>& objects,
                                               const SampleBuffer& buffer, std::size_t samples,
                                               std::string& symbol_problem) {
  std::vector<SampledFunction> functions;
  for (const auto& [object_index, addresses] : addresses_by_object(objects, buffer, samples)) {
    const LoadedObject& object = objects[object_index];
    if (is_runtime_library(object.path)) continue;
    if (object.path.find('\'') != std::string::npos) continue;
    bool ok = false;
    const std::vector<Symbol> symbols = function_symbols(object.path, ok);
    if (symbols.empty()) {
      symbol_problem = "no function symbols in " + object.path + " (nm missing or stripped?)";
      continue;
    }
    std::map<std::size_t, std::vector<std::uint64_t>> by_symbol;
    for (const std::uint64_t address : addresses) {
      auto it = std::upper_bound(symbols.begin(), symbols.end(), address,
                                 [](std::uint64_t a, const Symbol& s) { return a < s.address; });
      if (it == symbols.begin()) continue;
      --it;
      if (address < it->address + it->size) {
        by_symbol[static_cast<std::size_t>(it - symbols.begin())].push_back(address);
      }
    }
    for (auto& [symbol_index, symbol_addresses] : by_symbol) {
      functions.push_back({object_index, symbols[symbol_index], std::move(symbol_addresses)});
    }
  }
  std::stable_sort(functions.begin(), functions.end(), [](const auto& a, const auto& b) {
    return a.addresses.size() > b.addresses.size();
  });
  return functions;
}

// The innermost loop of `function` that holds most of its samples, counted; the reason in
// `result` where there is none.
void count_hottest_loop(const SampledFunction& function, const std::string& binary,
                        HotLoop& result) {
  bool ok = false;
  const std::string disassembly =
      command_output(fmt::format("{} -d -C --no-show-raw-insn -w --start-address=0x{:x} "
                                 "--stop-address=0x{:x} '{}' 2>/dev/null",
                                 binutil(NBODY_OBJDUMP, "objdump"), function.symbol.address,
                                 function.symbol.address + function.symbol.size, binary),
                     ok);
  if (!ok || disassembly.empty()) {
    result.unavailable_reason = "objdump failed or is not installed";
    return;
  }
  result.binary = binary;
  result.samples_in_function = function.addresses.size();
  result.samples_in_loop = 0;
  const LoopCensus* hottest = nullptr;
  const std::vector<LoopCensus> loops = innermost_loops(parse_objdump(disassembly));
  for (const LoopCensus& loop : loops) {
    const auto in_loop = static_cast<std::size_t>(
        std::count_if(function.addresses.begin(), function.addresses.end(),
                      [&](std::uint64_t a) { return loop.begin <= a && a <= loop.end; }));
    if (in_loop > result.samples_in_loop) {
      result.samples_in_loop = in_loop;
      hottest = &loop;
    }
  }
  if (hottest == nullptr) {
    result.unavailable_reason = "no loop in the hottest function " + function.symbol.name;
    return;
  }
  result.loop = *hottest;
  result.unavailable_reason.clear();
  if (result.loop.interactions_per_iteration == 0) {
    result.unavailable_reason =
        "the hot loop holds no square root or rsqrt, so its interactions per iteration are "
        "unknown (" +
        function.symbol.name + ")";
  }
}

// Functions looked at, hottest first, for the interaction loop.
constexpr std::size_t kFunctionsSearched = 8;

}  // namespace

HotLoop find_hot_loop(const std::function<double()>& evaluate, double min_seconds) {
  HotLoop result;
#if !defined(__x86_64__) && !defined(__aarch64__)
  result.unavailable_reason = "hot-loop disassembly is implemented for x86-64 and aarch64 only";
  return result;
#else
  try {
    auto buffer = std::make_unique<SampleBuffer>();
    double evaluated_seconds = 0;
    {
      ProgramCounterSampler sampler(*buffer);
      if (!sampler.running()) {
        result.unavailable_reason = "could not start SIGPROF sampling (setitimer failed)";
        return result;
      }
      // At least `min_seconds`, and longer (up to ten times) until enough samples came: on a
      // loaded machine the process gets less CPU time, hence fewer samples, per second.
      const auto start = std::chrono::steady_clock::now();
      double elapsed = 0;
      do {
        evaluated_seconds += evaluate();
        ++result.evaluations;
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      } while (elapsed < min_seconds ||
               (buffer->count.load() < kWantedSamples && elapsed < 10 * min_seconds));
    }
    result.seconds_per_evaluation = evaluated_seconds / result.evaluations;
    result.samples = std::min(buffer->count.load(), kMaxSamples);
    if (result.samples < kMinSamples) {
      result.unavailable_reason = fmt::format("only {} program-counter samples in {} evaluation(s)",
                                              result.samples, result.evaluations);
      return result;
    }
    const std::vector<LoadedObject> objects = loaded_objects();
    std::string symbol_problem;
    const std::vector<SampledFunction> functions =
        sampled_functions(objects, *buffer, result.samples, symbol_problem);
    if (functions.empty()) {
      result.unavailable_reason = symbol_problem.empty()
                                      ? "no sample fell in a function of the suite's code"
                                      : symbol_problem;
      return result;
    }
    // The interaction loop is the one counted: the hottest function that has one, which need not
    // be the hottest function (with many threads and few bodies, cpu.tbb.symmetric's sum over the
    // threads' accumulators can take more samples than its pair loop). Where none has one, what
    // the hottest function holds says why.
    HotLoop first;
    for (std::size_t f = 0; f < std::min(functions.size(), kFunctionsSearched); ++f) {
      HotLoop candidate = result;
      count_hottest_loop(functions[f], objects[functions[f].object].path, candidate);
      if (candidate.unavailable_reason.empty()) return candidate;
      if (f == 0) first = std::move(candidate);
    }
    return first;
  } catch (const std::exception& error) {
    result.unavailable_reason = std::string("hot-loop analysis failed: ") + error.what();
  }
  return result;
#endif
}

}  // namespace nbody::peaks
