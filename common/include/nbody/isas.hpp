#pragma once
// The SIMD ISAs this build's kernels are compiled for, from the target's one list
// (nbody/isas_<processor>.inc, which CMake names in NBODY_ISAS_INC): the enum, the --isa names,
// the titles, and whether this CPU runs each. The kernel families (the all-pairs kernels, the
// tree's interactions, the FMA-chain ceilings) index their per-ISA functions by the same list,
// so an ISA is a file per family plus its line there.
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace nbody {

#ifndef NBODY_ISAS_INC
#error "NBODY_ISAS_INC names the target's list of ISAs (set by common/CMakeLists.txt)"
#endif

enum class Isa {
#define NBODY_ISA(id, name, title, bits, fma, registers, available, flags) id,
#include NBODY_ISAS_INC
#undef NBODY_ISA
};

struct IsaInfo {
  Isa isa;
  std::string_view name;   // as --isa spells it
  std::string_view title;  // for people: "AVX-512F", "NEON"
  int vector_bits;
  bool fma;  // without it, a multiply and an add stand for each FMA
  int vector_registers;
};

// Every ISA of this build, narrowest first.
std::span<const IsaInfo> compiled_isas();
const IsaInfo& isa_info(Isa isa);
std::string_view isa_name(Isa isa);
// The ISA that --isa spells `name`, if this build has it.
std::optional<Isa> find_isa(std::string_view name);
// Whether this CPU runs the kernels compiled for `isa`.
bool isa_available(Isa isa);
// The last ISA of the list this CPU runs; none where it runs none of them.
std::optional<Isa> widest_available_isa();
// "sse4.2, avx2, avx512f": the names, for messages.
std::string compiled_isa_names();

// An ISA of any processor's list, for reading what another machine recorded (the audit's "widest
// ISA the machine has" holds for a results file written on Arm and read on x86-64).
struct KnownIsa {
  std::string_view name;
  int vector_bits;
};
// Every processor's list (x86-64's, then aarch64's), each narrowest first.
std::span<const KnownIsa> isas_of_every_processor();

}  // namespace nbody
