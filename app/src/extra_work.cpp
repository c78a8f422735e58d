#include "nbody/app/extra_work.hpp"

#include <charconv>
#include <cmath>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "nbody/errors.hpp"

namespace nbody {
namespace {

class ExtraWorkRun final : public PreparedRun {
 public:
  ExtraWorkRun(std::unique_ptr<PreparedRun> run, std::unique_ptr<PreparedRun> extra,
               std::string description)
      : run_(std::move(run)), extra_(std::move(extra)), description_(std::move(description)) {}

  Seconds evaluate(Scope scope) override {
    const Seconds own = run_->evaluate(scope);
    const Seconds again = extra_->evaluate(scope);
    return {own.total + again.total, own.kernel + again.kernel,
            own.communication + again.communication};
  }
  std::vector<Vec3<double>> accelerations() override { return run_->accelerations(); }
  std::map<std::string, std::string> details() const override {
    std::map<std::string, std::string> details = run_->details();
    details["extra_work"] = description_;
    return details;
  }
  void set_bodies(std::span<const Body<double>> bodies) override {
    run_->set_bodies(bodies);
    extra_->set_bodies(bodies);
  }

 private:
  std::unique_ptr<PreparedRun> run_, extra_;
  std::string description_;
};

// The first ceil(fraction x targets) of the run's targets, at least one.
TargetRange extra_targets(const ExecutionOptions& options, std::size_t n, double fraction) {
  const TargetRange all = resolve_targets(options.targets, n);
  const auto count =
      static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(all.size())));
  return {all.begin, all.begin + std::min(all.size(), std::max<std::size_t>(count, 1))};
}

}  // namespace

ExtraWork parse_extra_work(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return UsageError(fmt::format("--extra-work '{}': {}", text, why));
  };
  const std::size_t equals = text.rfind('=');
  if (equals == std::string_view::npos || equals == 0) {
    throw bad("expected NAME=FRACTION, e.g. cpu.simd=0.1 or cpu.simd=10%");
  }
  std::string_view number = text.substr(equals + 1);
  const bool percent = !number.empty() && number.back() == '%';
  if (percent) number.remove_suffix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (error != std::errc{} || end != number.data() + number.size()) {
    throw bad("FRACTION is not a number");
  }
  if (percent) value /= 100;
  if (!(value > 0 && value <= 1)) throw bad("FRACTION must be above 0 and at most 1 (100%)");
  return {std::string(text.substr(0, equals)), value};
}

void add_extra_work(Registry& registry, const ExtraWork& extra) {
  const Implementation* found = registry.find(extra.implementation);
  if (found == nullptr) {
    throw UsageError(fmt::format("--extra-work: no formulation is named '{}' (nbody-fair list)",
                                 extra.implementation));
  }
  // Symmetric pairs sum every body at once: such a formulation cannot compute a slice again.
  if (found->size_limit_reason) {
    ExecutionOptions slice;
    slice.targets = TargetRange{0, 1};
    if (const auto why = found->size_limit_reason(2, slice)) {
      throw UsageError(fmt::format("--extra-work: {} cannot evaluate a slice of its targets: {}",
                                   extra.implementation, *why));
    }
  }
  Implementation slowed = *found;
  const std::string description =
      fmt::format("{:g}% of the targets evaluated again in every evaluation (--extra-work)",
                  extra.fraction * 100);
  slowed.info.description += fmt::format(" [with {}]", description);
  slowed.prepare = [inner = found->prepare, fraction = extra.fraction, description](
                       std::span<const Body<double>> bodies, double softening,
                       const ExecutionOptions& options) -> std::unique_ptr<PreparedRun> {
    ExecutionOptions again = options;
    again.targets = extra_targets(options, bodies.size(), fraction);
    auto run = inner(bodies, softening, options);
    auto extra_run = inner(bodies, softening, again);
    return std::make_unique<ExtraWorkRun>(std::move(run), std::move(extra_run), description);
  };
  registry.replace(std::move(slowed));
}

}  // namespace nbody
