#pragma once
// What the run ran on (FAIRNESS.md rule 7).
#include <cstdint>
#include <string>
#include <vector>

#include "nbody/results.hpp"

namespace nbody {

MachineRecord describe_machine();
// Bytes of memory available for new allocations (MemAvailable), 0 if unknown.
std::uint64_t available_memory_bytes();
// The current UTC time as ISO 8601.
std::string utc_timestamp();

}  // namespace nbody
