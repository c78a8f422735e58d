// nbody-tolerance-survey: the worst error / (u sqrt(N)) of the CPU formulations over many seeds,
// per size, generator and forced ISA: the measurements behind the coefficients of
// docs/tolerances.md. Small N needs many seeds: the max-relative metric has a long tail where a
// body's forces nearly cancel.
//
//   nbody-tolerance-survey --impl cpu.simd --sizes 2,3,7,15,17,31 --seeds 20000
//
// Each formulation sees the inputs in its own precision (float32 ones: rounded to float32), and the
// reference is computed on exactly what it saw.
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "nbody/accuracy.hpp"
#include "nbody/cpu/register.hpp"
#include "nbody/errors.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/reference.hpp"
#include "nbody/registry.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> names = {"cpu.soa", "cpu.simd", "cpu.simd.approx", "cpu.tbb.symmetric"};
  std::vector<std::string> isas = {"sse4.2", "avx2", "avx512f"};
  std::vector<std::size_t> sizes = {2, 3, 7, 15, 16, 17, 31, 100, 1000};
  int seeds = 100;
  std::uint64_t first_seed = 1;
  double softening = 0.01;
  std::size_t max_targets = 2048;
  CLI::App app{"Worst error / (u sqrt(N)) of CPU formulations over many seeds"};
  app.add_option("--impl", names, "implementations")->delimiter(',');
  app.add_option("--isa", isas, "ISAs to force (ignored by formulations without one)")
      ->delimiter(',');
  app.add_option("--sizes", sizes, "body counts")->delimiter(',');
  app.add_option("--seeds", seeds, "seeds per size and generator");
  app.add_option("--first-seed", first_seed, "first seed");
  app.add_option("--softening", softening, "softening length");
  app.add_option("--targets", max_targets, "bodies compared per input, evenly spread");
  CLI11_PARSE(app, argc, argv);

  nbody::Registry registry;
  nbody::register_cpu_implementations(registry);
  fmt::print("{:<20} {:<8} {:<13} {:>6} {:>9} {:>10} {:>9}\n", "implementation", "isa", "generator",
             "N", "inputs", "worst L2", "worst max");
  try {
    for (const std::string& name : names) {
      const nbody::Implementation* impl = registry.find(name);
      if (impl == nullptr) throw nbody::UsageError("no implementation " + name);
      // Formulations without an ISA choice ignore ExecutionOptions::isa: survey them once.
      const bool has_isa = impl->info.isa_choice;
      for (const std::string& isa : has_isa ? isas : std::vector<std::string>{""}) {
        for (const nbody::InitialCondition ic :
             {nbody::InitialCondition::uniform_ball, nbody::InitialCondition::plummer}) {
          for (const std::size_t n : sizes) {
            double worst_l2 = 0, worst_max = 0;
            for (int s = 0; s < seeds; ++s) {
              const nbody::Snapshot snapshot =
                  nbody::make_initial_condition(ic, n, first_seed + static_cast<std::uint64_t>(s));
              const auto seen = impl->info.precision == nbody::Precision::f64
                                    ? snapshot.bodies
                                    : nbody::convert_precision<double, float>(
                                          nbody::convert_precision<float, double>(snapshot.bodies));
              const auto targets = nbody::validation_targets(n, max_targets);
              const auto reference = nbody::reference_accelerations(seen, softening, targets);
              const auto run = impl->prepare(seen, softening, {.threads = 0, .isa = isa});
              run->evaluate(nbody::PreparedRun::Scope::kernel);
              const nbody::AccuracyMetrics metrics =
                  nbody::compare_with_reference(run->accelerations(), reference, targets, seen);
              const double scale =
                  impl->info.tolerance.unit_roundoff * std::sqrt(static_cast<double>(n));
              worst_l2 = std::max(worst_l2, metrics.relative_l2 / scale);
              worst_max = std::max(worst_max, metrics.max_relative / scale);
            }
            fmt::print("{:<20} {:<8} {:<13} {:>6} {:>9} {:>10.2f} {:>9.2f}\n", name,
                       isa.empty() ? "-" : isa, nbody::to_string(ic), n, seeds, worst_l2,
                       worst_max);
          }
        }
      }
    }
  } catch (const nbody::UsageError& e) {
    std::cerr << "nbody-tolerance-survey: " << e.what() << '\n';
    return 2;
  }
  return 0;
}
