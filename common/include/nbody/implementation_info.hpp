#pragma once
// What a formulation is, as registered: the registry holds it (ImplementationInfo), and
// results.json records it with what the host said of it (ImplementationRecord derives from it).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "nbody/accuracy.hpp"
#include "nbody/properties.hpp"

namespace nbody {

struct ImplementationInfo {
  std::string name;  // e.g. "cpu.soa"; unique; the --impl regex matches it
  std::string description;
  DeviceKind device = DeviceKind::cpu;
  Layout layout = Layout::aos;
  Precision precision = Precision::f32;
  AccuracyClass accuracy_class = AccuracyClass::full;
  PairScheme pairs = PairScheme::all_pairs;
  Algorithm algorithm = Algorithm::all_pairs;
  // The opening angle of a tree formulation (bound by --theta, its name ends "[theta=...]");
  // empty for all-pairs ones.
  std::optional<double> theta;
  Role role = Role::optimized;
  bool multithreaded = false;  // uses more than one CPU thread (ExecutionOptions::threads)
  bool isa_choice = false;     // runs on the ISA of ExecutionOptions::isa: tested on every one
  std::vector<std::string> optimizations;  // listed in reports (FAIRNESS rule 3)
  Tolerance tolerance;
  // Bytes of working memory per body beyond the input (for the memory check before allocating).
  std::size_t bytes_per_body = 64;
};

}  // namespace nbody
