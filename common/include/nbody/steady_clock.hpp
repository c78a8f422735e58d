#pragma once
// Wall-clock intervals of the host's own work (simulate's phases, decomposed runs' exchanges): the
// steady clock, which no clock adjustment moves.
#include <chrono>

namespace nbody {

using SteadyClock = std::chrono::steady_clock;

// Seconds from `start` to now.
inline double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace nbody
