// Every formulation of a registry, decomposed over the ranks.
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "nbody/distributed/decomposed.hpp"

namespace nbody::distributed {

Registry decomposed_registry(const Registry& local, Decomposition& decomposition,
                             const std::string& why_not_nccl) {
  Registry decomposed;
  decomposition.agree(AgreementPoint::registry);
  for (const Implementation& original : local.all()) {
    const std::optional<std::string> unavailable =
        decomposition.agree_on_reason(original.unavailable_reason());
    // A GPU formulation's slices travel by NCCL where the options carry a group of ranks.
    const bool gpu = original.info.device == DeviceKind::gpu;
    const std::string note = gpu ? why_not_nccl : std::string();
    Implementation impl = original;
    impl.unavailable_reason = [unavailable] { return unavailable; };
    impl.prepare = [original, gpu, note, &decomposition](std::span<const Body<double>> bodies,
                                                         double softening,
                                                         const ExecutionOptions& options) {
      if (gpu && options.gpu_group) {
        return prepare_on_gpu_group(original, bodies, softening, options, decomposition);
      }
      return prepare_decomposed(original, bodies, softening, options, decomposition, note);
    };
    impl.size_limit_reason = [original, gpu, &decomposition](std::size_t n,
                                                             const ExecutionOptions& options) {
      std::optional<std::string> reason;
      std::exception_ptr failure;
      try {
        if (original.size_limit_reason) {
          if (gpu && options.gpu_group) {  // each rank's GPU holds every body: its own limit
            reason = original.size_limit_reason(n, options);
          } else {
            ExecutionOptions slice_options = options;
            slice_options.gpu_group.reset();
            slice_options.targets = decomposition.slice(n);
            reason = original.size_limit_reason(n, slice_options);
          }
        }
      } catch (...) {
        failure = std::current_exception();
      }
      decomposition.agree(AgreementPoint::decision, failure);
      return decomposition.agree_on_reason(reason);
    };
    // Every formulation, GPU ones included, integrates its slice on the host around its prepared
    // run, positions travelling between ranks through host memory (MPI); GPU formulations over a
    // group of ranks integrate on their GPUs, positions travelling by NCCL.
    impl.simulate = [original, gpu, note, &decomposition](const SimulationSetup& setup) {
      if (gpu && setup.execution.gpu_group) {
        return make_gpu_group_simulation(original, setup, decomposition);
      }
      return make_decomposed_simulation(original, setup, decomposition, note);
    };
    decomposed.add(std::move(impl));
  }
  decomposed.add_option_check(
      [&local](const ExecutionOptions& options) { local.check_options(options); });
  return decomposed;
}

}  // namespace nbody::distributed
