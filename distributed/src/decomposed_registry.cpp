// Every formulation of a registry, decomposed over the ranks.
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "nbody/distributed/decomposed.hpp"

namespace nbody::distributed {
namespace {

// Each rank's local answer (empty: none), agreed: the lowest rank with an answer gives it to all,
// prefixed with its rank where that is not 0. A collective.
std::optional<std::string> agreed_reason(Decomposition& decomposition,
                                         const std::optional<std::string>& local) {
  const double lowest = decomposition.max_over_ranks(
      local ? static_cast<double>(decomposition.ranks() - decomposition.rank()) : 0.0);
  if (lowest == 0) return std::nullopt;
  const int giver = decomposition.ranks() - static_cast<int>(lowest);
  std::string reason = local.value_or("");
  decomposition.communicator().broadcast(reason, giver);
  return giver == 0 ? reason : "rank " + std::to_string(giver) + ": " + reason;
}

}  // namespace

Registry decomposed_registry(const Registry& local, Decomposition& decomposition) {
  Registry decomposed;
  decomposition.agree(AgreementPoint::registry);
  for (const Implementation& original : local.all()) {
    const std::optional<std::string> unavailable =
        agreed_reason(decomposition, original.unavailable_reason());
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
      return agreed_reason(decomposition, reason);
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
