#pragma once
// `run --extra-work NAME=FRACTION`: a real, known slowdown of one formulation, to test a gate built
// on `compare`. The formulation evaluates the first FRACTION of its targets a second time in every
// evaluation, with its own kernel, and that time counts; its accelerations are the ordinary ones.
#include <string>
#include <string_view>

#include "nbody/registry.hpp"

namespace nbody {

struct ExtraWork {
  std::string implementation;
  double fraction = 0;  // of the targets, evaluated again: (0, 1]
};

// Parses "NAME=FRACTION" (FRACTION in (0, 1], or a percentage such as 10%); throws UsageError
// naming --extra-work.
ExtraWork parse_extra_work(std::string_view text);

// Replaces the formulation in `registry` by itself with the extra work. Throws UsageError where the
// registry has no such formulation or it cannot compute a slice of its targets.
void add_extra_work(Registry& registry, const ExtraWork& extra);

}  // namespace nbody
