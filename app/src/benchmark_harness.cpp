#include "nbody/app/benchmark_harness.hpp"

#include <exception>
#include <string>
#include <utility>

#include "nbody/accuracy.hpp"

namespace nbody {

std::atomic<bool>& interrupt_requested() {
  static std::atomic<bool> requested{false};
  return requested;
}

benchmark::internal::Benchmark* register_evaluation(EvaluationBenchmark evaluation) {
  const std::string name = evaluation.name;  // `evaluation` moves into the benchmark below
  return benchmark::RegisterBenchmark(
             name.c_str(),
             [evaluation = std::move(evaluation)](benchmark::State& state) {
               PreparedRun* run = nullptr;
               try {
                 run = &evaluation.run();
               } catch (const std::exception& e) {
                 state.SkipWithError(e.what());
                 return;
               }
               for (auto _ : state) {
                 if (interrupt_requested()) {
                   state.SkipWithError("interrupted");
                   break;
                 }
                 state.SetIterationTime(run->evaluate(evaluation.scope));
               }
               const double interactions =
                   static_cast<double>(evaluation.n) * static_cast<double>(evaluation.n);
               const auto iterations = static_cast<double>(state.iterations());
               state.SetItemsProcessed(static_cast<std::int64_t>(interactions * iterations));
               state.counters["GFLOP/s@20"] = benchmark::Counter(
                   kConventionalFlopsPerInteraction * interactions * 1e-9 * iterations,
                   benchmark::Counter::kIsRate);
               if (evaluation.annotate) evaluation.annotate(state, *run);
             })
      ->UseManualTime()
      ->Unit(benchmark::kSecond);
}

}  // namespace nbody
