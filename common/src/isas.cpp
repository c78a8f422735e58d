#include "nbody/isas.hpp"

#include <stdexcept>
#include <string>

#include <xsimd/xsimd.hpp>

namespace nbody {
namespace {

#define NBODY_XSIMD_HAS(field) (xsimd::available_architectures().field != 0)

constexpr IsaInfo kIsas[] = {
#define NBODY_ISA(id, name, title, bits, fma, registers, available, flags) \
  {Isa::id, name, title, bits, fma, registers},
#include NBODY_ISAS_INC
#undef NBODY_ISA
};

// Every processor's lines, their availability and flags unused (so never compiled here).
constexpr KnownIsa kEveryProcessorsIsas[] = {
#define NBODY_ISA(id, name, title, bits, fma, registers, available, flags) {name, bits},
#include "nbody/isas_aarch64.inc"
#include "nbody/isas_x86_64.inc"
#undef NBODY_ISA
};

}  // namespace

std::span<const KnownIsa> isas_of_every_processor() {
  return kEveryProcessorsIsas;
}

std::span<const IsaInfo> compiled_isas() {
  return kIsas;
}

const IsaInfo& isa_info(Isa isa) {
  for (const IsaInfo& info : kIsas) {
    if (info.isa == isa) return info;
  }
  throw std::logic_error("isa_info: an ISA outside this build's list");
}

std::string_view isa_name(Isa isa) {
  return isa_info(isa).name;
}

std::optional<Isa> find_isa(std::string_view name) {
  for (const IsaInfo& info : kIsas) {
    if (info.name == name) return info.isa;
  }
  return std::nullopt;
}

bool isa_available(Isa isa) {
  switch (isa) {
#define NBODY_ISA(id, name, title, bits, fma, registers, available, flags) \
  case Isa::id:                                                            \
    return available;
#include NBODY_ISAS_INC
#undef NBODY_ISA
  }
  return false;
}

std::optional<Isa> widest_available_isa() {
  std::optional<Isa> widest;
  for (const IsaInfo& info : kIsas) {
    if (isa_available(info.isa)) widest = info.isa;
  }
  return widest;
}

std::string compiled_isa_names() {
  std::string joined;
  for (const IsaInfo& info : kIsas) {
    if (!joined.empty()) joined += ", ";
    joined += info.name;
  }
  return joined;
}

}  // namespace nbody
