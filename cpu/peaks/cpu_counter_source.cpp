#include "nbody/cpu_peaks/cpu_counter_source.hpp"

#include <map>
#include <string>

#include <fmt/core.h>

#include "nbody/cpu_peaks/cpu_counter_figures.hpp"
#include "nbody/cpu_peaks/cpu_peaks.hpp"
#include "nbody/cpu_peaks/hot_loop.hpp"

namespace nbody::peaks {
namespace {

// Long enough for a few hundred samples at one per millisecond of CPU time.
constexpr double kSamplingSeconds = 0.3;

class CpuDisassemblyCounterSource final : public CounterSource {
 public:
  bool applies_to(const ImplementationInfo& info) const override {
    return info.device == DeviceKind::cpu;
  }

  CounterReadout read(PreparedRun& run, const ImplementationInfo& info, std::size_t n,
                      const Ceilings& ceilings) override {
    CounterReadout readout;
    readout.source = "disassembly";
    try {
      const std::map<std::string, std::string> details = run.details();
      // The compiled loop depends on the formulation and the ISA it chose, not on N: analyse it
      // once, and afterwards only time one evaluation.
      std::string key = info.name;
      for (const auto& [name, value] : details) key += "|" + name + "=" + value;
      auto cached = hot_loops_.find(key);
      double seconds = 0;
      if (cached == hot_loops_.end()) {
        HotLoop hot = find_hot_loop([&] { return run.evaluate(PreparedRun::Scope::kernel).kernel; },
                                    kSamplingSeconds);
        seconds = hot.seconds_per_evaluation;
        cached = hot_loops_.emplace(key, std::move(hot)).first;
      } else {
        seconds = run.evaluate(PreparedRun::Scope::kernel).kernel;
      }
      const HotLoop& hot = cached->second;
      if (!hot.unavailable_reason.empty()) {
        readout.unavailable_reason = hot.unavailable_reason;
        return readout;
      }
      const LoopCensus& loop = hot.loop;
      readout.source = fmt::format("disassembly of the hot loop ({} loop, {}-bit, in {})", loop.isa,
                                   loop.vector_bits, loop.function.substr(0, 160));
      auto& m = readout.metrics;
      m["loop.instructions"] = loop.instructions;
      m["loop.fma"] = loop.fma;
      m["loop.add_sub"] = loop.add_sub;
      m["loop.mul"] = loop.mul;
      m["loop.div"] = loop.div;
      m["loop.sqrt"] = loop.sqrt;
      m["loop.rsqrt"] = loop.rsqrt;
      m["loop.rcp"] = loop.rcp;
      m["loop.other_fp"] = loop.other_fp;
      m["loop.memory"] = loop.memory;
      m["loop.other"] = loop.other;
      m["loop.fp_instructions"] = loop.fp_instructions_per_iteration;
      m["loop.flops"] = loop.flops_per_iteration;
      m["loop.interactions"] = loop.interactions_per_iteration;
      m["loop.vector_bits"] = loop.vector_bits;
      m["loop.f64"] = loop.precision == "f64" ? 1.0 : 0.0;
      m["samples"] = static_cast<double>(hot.samples);
      m["samples_in_loop_fraction"] =
          static_cast<double>(hot.samples_in_loop) / static_cast<double>(hot.samples);
      m["kernel_seconds"] = seconds;
      int threads = info.multithreaded ? all_cores_threads() : 1;
      if (const auto it = details.find("threads"); it != details.end()) {
        try {
          threads = std::stoi(it->second);
        } catch (const std::exception&) {
        }
      }
      m["threads"] = threads;
      readout.derived = derive_cpu_figures(m, info, n, ceilings);
    } catch (const std::exception& error) {
      readout.unavailable_reason = std::string("disassembly counters failed: ") + error.what();
    }
    return readout;
  }

 private:
  std::map<std::string, HotLoop> hot_loops_;
};

}  // namespace

std::unique_ptr<CounterSource> make_cpu_disassembly_counter_source() {
  return std::make_unique<CpuDisassemblyCounterSource>();
}

}  // namespace nbody::peaks
