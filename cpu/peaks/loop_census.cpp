#include "nbody/cpu_peaks/loop_census.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstddef>

namespace nbody::peaks {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool parse_hex(std::string_view s, std::uint64_t& value) {
  if (s.empty()) return false;
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value, 16);
  return error == std::errc{} && end == s.data() + s.size();
}

bool starts_with_any(std::string_view s, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](std::string_view p) { return s.starts_with(p); });
}

// Prefixes objdump prints before the mnemonic that say nothing about the operation.
bool is_prefix(std::string_view word) {
  static constexpr std::array<std::string_view, 16> kPrefixes = {
      "{vex}", "{vex3}", "{evex}", "notrack", "bnd", "lock", "rep", "repz",
      "repnz", "repe",   "repne",  "data16",  "cs",  "ds",   "rex", "addr32"};
  return std::find(kPrefixes.begin(), kPrefixes.end(), word) != kPrefixes.end() ||
         word.starts_with("rex.");
}

int widest_register_bits(std::string_view operands) {
  if (operands.find("%zmm") != std::string_view::npos) return 512;
  if (operands.find("%ymm") != std::string_view::npos) return 256;
  if (operands.find("%xmm") != std::string_view::npos) return 128;
  return 0;
}

bool is_conditional_branch(const Instruction& instruction) {
  const std::string_view mnemonic = instruction.mnemonic;
  if (instruction.a64) {
    return mnemonic.starts_with("b.") || mnemonic == "cbz" || mnemonic == "cbnz" ||
           mnemonic == "tbz" || mnemonic == "tbnz";
  }
  return mnemonic.size() > 1 && mnemonic[0] == 'j' && !mnemonic.starts_with("jmp");
}

// A branch's target address: the hex number before " <symbol+offset>" (A64's cbz and tbz name a
// register first), else the first word.
std::string_view branch_target(std::string_view operands) {
  const std::size_t symbol = operands.find(" <");
  if (symbol == std::string_view::npos) return operands.substr(0, operands.find(' '));
  const std::string_view before = operands.substr(0, symbol);
  const std::size_t start = before.find_last_of(" ,");
  return start == std::string_view::npos ? before : before.substr(start + 1);
}

// A64 vector operands: "v3.4s", "v1.2d", "v0.s[1]"; 128-bit q registers; scalar s and d
// registers (one lane).
int a64_vector_bits(std::string_view operands) {
  for (const std::string_view arrangement : {".4s", ".2d", ".8h", ".16b", "q"}) {
    if (arrangement == "q") {
      for (std::size_t at = operands.find('q'); at != std::string_view::npos;
           at = operands.find('q', at + 1)) {
        const bool starts = at == 0 || operands[at - 1] == ' ' || operands[at - 1] == ',';
        if (starts && at + 1 < operands.size() &&
            std::isdigit(static_cast<unsigned char>(operands[at + 1]))) {
          return 128;
        }
      }
    } else if (operands.find(arrangement) != std::string_view::npos) {
      return 128;
    }
  }
  for (const std::string_view arrangement : {".2s", ".4h", ".8b", ".1d"}) {
    if (operands.find(arrangement) != std::string_view::npos) return 64;
  }
  return 0;
}

// The lanes of an A64 floating-point instruction: its arrangement, or 1 for scalar registers.
int a64_lanes(std::string_view operands, bool& f64) {
  f64 = operands.find(".2d") != std::string_view::npos || (!operands.empty() && operands[0] == 'd');
  if (operands.find(".4s") != std::string_view::npos) return 4;
  if (operands.find(".2d") != std::string_view::npos) return 2;
  if (operands.find(".2s") != std::string_view::npos) return 2;
  return 1;
}

ClassifiedInstruction classify_a64(const Instruction& instruction) {
  const std::string_view m = instruction.mnemonic;
  const std::string_view operands = instruction.operands;
  ClassifiedInstruction c;
  const auto arithmetic = [&](InstructionClass kind) {
    c.kind = kind;
    c.lanes = a64_lanes(operands, c.f64);
    return c;
  };
  // FRSQRTS and FRECPS are the fused Newton-Raphson steps of the estimates.
  if (m == "fmla" || m == "fmls" || m == "fmadd" || m == "fmsub" || m == "fnmadd" ||
      m == "fnmsub" || m == "frsqrts" || m == "frecps") {
    return arithmetic(InstructionClass::fma);
  }
  if (m == "fadd" || m == "fsub" || m == "faddp" || m == "fabd" || m == "fneg") {
    return arithmetic(InstructionClass::add_sub);
  }
  if (m == "fmul" || m == "fmulx" || m == "fnmul") return arithmetic(InstructionClass::mul);
  if (m == "fdiv") return arithmetic(InstructionClass::div);
  if (m == "fsqrt") return arithmetic(InstructionClass::sqrt);
  if (m == "frsqrte") return arithmetic(InstructionClass::rsqrt);
  if (m == "frecpe") return arithmetic(InstructionClass::rcp);
  if (starts_with_any(m, {"ld", "st", "prfm", "mov", "fmov", "dup", "ins", "umov", "smov"})) {
    c.kind = InstructionClass::memory;
  } else if (a64_vector_bits(operands) > 0 || (!m.empty() && m[0] == 'f')) {
    c.kind = InstructionClass::other_fp;
  } else {
    c.kind = InstructionClass::other;
  }
  return c;
}

}  // namespace

std::vector<Instruction> parse_objdump(std::string_view text) {
  std::vector<Instruction> out;
  std::string function;
  bool a64 = false;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (line.empty()) continue;
    if (line.find("file format elf64-littleaarch64") != std::string_view::npos) a64 = true;
    // "0000000000000080 <name>:" opens a symbol.
    if (line.back() == ':' && line.find(" <") != std::string_view::npos && line[0] != ' ') {
      const std::size_t open = line.find(" <");
      function = std::string(line.substr(open + 2, line.size() - open - 4));
      continue;
    }
    // "  4c:\tmnemonic operands   # comment"
    const std::size_t colon = line.find(":\t");
    if (colon == std::string_view::npos) continue;
    std::uint64_t address = 0;
    if (!parse_hex(trim(line.substr(0, colon)), address)) continue;
    std::string_view rest = line.substr(colon + 2);
    // Comments: "# ..." in AT&T syntax; A64's '#' marks immediates and its comments are "// ...".
    if (const std::size_t comment = rest.find(a64 ? "//" : " #");
        comment != std::string_view::npos) {
      rest = rest.substr(0, comment);
    }
    rest = trim(rest);
    // Split off prefixes, then the mnemonic.
    std::string_view mnemonic;
    while (!rest.empty()) {
      const std::size_t space = rest.find_first_of(" \t");
      mnemonic = rest.substr(0, space);
      rest = space == std::string_view::npos ? std::string_view{} : trim(rest.substr(space));
      if (!is_prefix(mnemonic)) break;
      mnemonic = {};
    }
    if (mnemonic.empty()) continue;
    out.push_back({address, std::string(mnemonic), std::string(rest), function, a64});
  }
  return out;
}

ClassifiedInstruction classify(const Instruction& instruction) {
  if (instruction.a64) return classify_a64(instruction);
  const std::string_view mnemonic = instruction.mnemonic;
  const std::string_view operands = instruction.operands;
  const int bits = widest_register_bits(operands);
  const bool vector_registers = bits > 0 || operands.find("%k") != std::string_view::npos;
  // VEX / EVEX spell the SSE mnemonics with a leading 'v'.
  std::string_view base = mnemonic;
  if (base.size() > 2 && base[0] == 'v' && vector_registers) base.remove_prefix(1);

  ClassifiedInstruction c;
  std::string_view suffix = base.size() >= 2 ? base.substr(base.size() - 2) : std::string_view{};
  const bool packed = suffix == "ps" || suffix == "pd";
  const bool scalar = suffix == "ss" || suffix == "sd";
  const bool fp_suffix = packed || scalar;
  c.f64 = suffix == "pd" || suffix == "sd";
  const std::string_view stem = fp_suffix ? base.substr(0, base.size() - 2) : base;
  const auto lanes = [&] {
    if (scalar) return 1;
    return std::max(bits, 128) / (c.f64 ? 64 : 32);
  };

  if (fp_suffix && starts_with_any(stem, {"fmadd", "fmsub", "fnmadd", "fnmsub"})) {
    c.kind = InstructionClass::fma;
  } else if (fp_suffix && (stem == "add" || stem == "sub" || stem == "addsub" || stem == "hadd" ||
                           stem == "hsub")) {
    c.kind = InstructionClass::add_sub;
  } else if (fp_suffix && stem == "mul") {
    c.kind = InstructionClass::mul;
  } else if (fp_suffix && stem == "div") {
    c.kind = InstructionClass::div;
  } else if (fp_suffix && stem == "sqrt") {
    c.kind = InstructionClass::sqrt;
  } else if (fp_suffix && stem.starts_with("rsqrt")) {
    c.kind = InstructionClass::rsqrt;
  } else if (fp_suffix && stem.starts_with("rcp")) {
    c.kind = InstructionClass::rcp;
  } else if (starts_with_any(
                 base, {"mov", "broadcast", "pbroadcast", "gather", "pgather", "scatter",
                        "prefetch", "push", "pop", "lddqu", "maskmov", "expand", "compress"})) {
    c.kind = InstructionClass::memory;
    return c;
  } else if (vector_registers) {
    c.kind = InstructionClass::other_fp;
    return c;
  } else {
    c.kind = InstructionClass::other;
    return c;
  }
  c.lanes = lanes();
  return c;
}

namespace {

// Adds one classified instruction to the loop's counts; `f64_root` and `f32_root` note the
// precision of its square roots and rsqrts.
void count_instruction(const ClassifiedInstruction& c, LoopCensus& loop, bool& f64_root,
                       bool& f32_root) {
  ++loop.instructions;
  switch (c.kind) {
    case InstructionClass::fma:
      ++loop.fma;
      loop.flops_per_iteration += 2.0 * c.lanes;
      break;
    case InstructionClass::add_sub:
      ++loop.add_sub;
      loop.flops_per_iteration += c.lanes;
      break;
    case InstructionClass::mul:
      ++loop.mul;
      loop.flops_per_iteration += c.lanes;
      break;
    case InstructionClass::div:
      ++loop.div;
      break;
    case InstructionClass::sqrt:
    case InstructionClass::rsqrt:
      (c.kind == InstructionClass::sqrt ? loop.sqrt : loop.rsqrt) += 1;
      loop.interactions_per_iteration += c.lanes;
      (c.f64 ? f64_root : f32_root) = true;
      break;
    case InstructionClass::rcp:
      ++loop.rcp;
      break;
    case InstructionClass::other_fp:
      ++loop.other_fp;
      break;
    case InstructionClass::memory:
      ++loop.memory;
      break;
    case InstructionClass::other:
      ++loop.other;
      break;
  }
}

// The census of the loop instructions[first, last].
LoopCensus census_of(const std::vector<Instruction>& instructions, std::size_t first,
                     std::size_t last) {
  LoopCensus loop;
  loop.function = instructions[first].function;
  loop.begin = instructions[first].address;
  loop.end = instructions[last].address;
  const bool a64 = instructions[first].a64;
  bool evex = false, vex = false, neon = false, f64_root = false, f32_root = false;
  for (std::size_t k = first; k <= last; ++k) {
    const Instruction& instruction = instructions[k];
    const int bits =
        a64 ? a64_vector_bits(instruction.operands) : widest_register_bits(instruction.operands);
    loop.vector_bits = std::max(loop.vector_bits, bits);
    if (a64) {
      neon = neon || bits == 128;
    } else {
      evex = evex || bits == 512 || instruction.operands.find("%k") != std::string::npos ||
             instruction.operands.find("{1to") != std::string::npos ||
             instruction.mnemonic.find("14") != std::string::npos;
      vex = vex || (bits > 0 && instruction.mnemonic[0] == 'v');
    }
    count_instruction(classify(instruction), loop, f64_root, f32_root);
  }
  loop.fp_instructions_per_iteration =
      loop.fma + loop.add_sub + loop.mul + loop.div + loop.sqrt + loop.rsqrt + loop.rcp;
  if (a64) {
    loop.isa = neon ? "neon64" : "a64";
  } else {
    loop.isa = evex ? "avx512f" : loop.vector_bits == 256 ? "avx2" : vex ? "avx" : "sse";
  }
  loop.precision = f64_root ? "f64" : f32_root ? "f32" : "";
  return loop;
}

}  // namespace

std::vector<LoopCensus> innermost_loops(const std::vector<Instruction>& instructions) {
  // Candidate loops: [target, branch] for every backward conditional branch within one function.
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  for (std::size_t i = 0; i < instructions.size(); ++i) {
    const Instruction& branch = instructions[i];
    if (!is_conditional_branch(branch)) continue;
    const std::string_view target_text = branch_target(branch.operands);
    std::uint64_t target = 0;
    if (!parse_hex(target_text, target) || target > branch.address) continue;
    for (std::size_t j = i + 1; j-- > 0;) {
      if (instructions[j].function != branch.function || instructions[j].address < target) break;
      if (instructions[j].address == target) {
        ranges.emplace_back(j, i);
        break;
      }
    }
  }
  std::sort(ranges.begin(), ranges.end());
  ranges.erase(std::unique(ranges.begin(), ranges.end()), ranges.end());

  std::vector<LoopCensus> loops;
  for (const auto& range : ranges) {
    const bool holds_another = std::any_of(ranges.begin(), ranges.end(), [&](const auto& other) {
      return other != range && range.first <= other.first && other.second <= range.second;
    });
    if (!holds_another) loops.push_back(census_of(instructions, range.first, range.second));
  }
  return loops;
}

}  // namespace nbody::peaks
