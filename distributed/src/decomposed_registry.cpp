// Every formulation of a registry, decomposed over the ranks.
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "nbody/distributed/decomposed.hpp"

namespace nbody::distributed {

Registry decomposed_registry(const Registry& local, Decomposition& decomposition) {
  Registry decomposed;
  decomposition.agree(AgreementPoint::registry);
  for (const Implementation& original : local.all()) {
    const std::optional<std::string> unavailable =
        decomposition.agree_on_reason(original.unavailable_reason());
    Implementation impl = original;
    impl.unavailable_reason = [unavailable] { return unavailable; };
    impl.prepare = [original, &decomposition](std::span<const Body<double>> bodies,
                                              double softening, const ExecutionOptions& options) {
      return prepare_decomposed(original, bodies, softening, options, decomposition);
    };
    impl.size_limit_reason = [original, &decomposition](std::size_t n,
                                                        const ExecutionOptions& options) {
      std::optional<std::string> reason;
      std::exception_ptr failure;
      try {
        if (original.size_limit_reason) {
          ExecutionOptions slice_options = options;
          slice_options.targets = decomposition.slice(n);
          reason = original.size_limit_reason(n, slice_options);
        }
      } catch (...) {
        failure = std::current_exception();
      }
      decomposition.agree(AgreementPoint::decision, failure);
      return decomposition.agree_on_reason(reason);
    };
    // Every formulation, GPU ones included, integrates its slice on the host around its prepared
    // run; positions travel between ranks through host memory (MPI).
    impl.simulate = [original, &decomposition](const SimulationSetup& setup) {
      return make_decomposed_simulation(original, setup, decomposition);
    };
    decomposed.add(std::move(impl));
  }
  decomposed.add_option_check(
      [&local](const ExecutionOptions& options) { local.check_options(options); });
  return decomposed;
}

}  // namespace nbody::distributed
