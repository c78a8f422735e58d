#pragma once
// nbody-fair's exit codes.
namespace nbody::commands {

constexpr int kExitFailed = 1;         // a measurement failed, a gate found a regression, an error
constexpr int kExitUsage = 2;          // bad input: one line naming it, nothing written
constexpr int kExitInterrupted = 130;  // stopped by a signal, what was measured kept

}  // namespace nbody::commands
