// Built only when common/ is configured on its own (tests/common_alone.sh): uses the shared parts
// so that the link proves nbody_common needs nothing from cpu/, gpu/, reports/ or app/.
#include <cstdio>
#include <filesystem>

#include "nbody/ceilings.hpp"
#include "nbody/counters.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/machine_info.hpp"
#include "nbody/reference.hpp"
#include "nbody/registry.hpp"
#include "nbody/results.hpp"

int main() {
  using namespace nbody;
  const Snapshot snapshot = make_initial_condition(InitialCondition::plummer, 64, 1);
  const std::vector<std::uint32_t> targets = validation_targets(64, 64);
  const auto reference = reference_accelerations(snapshot.bodies, 0.01, targets);
  const AccuracyMetrics metrics =
      compare_with_reference(reference, reference, targets, snapshot.bodies);
  Registry registry;
  ResultsDocument doc;
  doc.machine = describe_machine();
  doc.ceilings = Ceilings{};
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "nbody-links.json";
  save_results(doc, file);
  const ResultsDocument loaded = load_results(file);
  std::filesystem::remove(file);
  std::printf("common alone: %zu bodies, rel L2 %g, %zu implementations, CPU %s\n",
              snapshot.bodies.size(), metrics.relative_l2, registry.all().size(),
              loaded.machine.cpu_model.c_str());
  return metrics.relative_l2 == 0 && loaded.ceilings.has_value() ? 0 : 1;
}
