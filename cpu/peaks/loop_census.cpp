#include "nbody/cpu_peaks/loop_census.hpp"

#include <algorithm>
#include <array>
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

bool is_conditional_branch(std::string_view mnemonic) {
  return mnemonic.size() > 1 && mnemonic[0] == 'j' && !mnemonic.starts_with("jmp");
}

}  // namespace

std::vector<Instruction> parse_objdump(std::string_view text) {
  std::vector<Instruction> out;
  std::string function;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (line.empty()) continue;
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
    if (const std::size_t comment = rest.find(" #"); comment != std::string_view::npos) {
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
    out.push_back({address, std::string(mnemonic), std::string(rest), function});
  }
  return out;
}

ClassifiedInstruction classify(const Instruction& instruction) {
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

std::vector<LoopCensus> innermost_loops(const std::vector<Instruction>& instructions) {
  // Candidate loops: [target, branch] for every backward conditional branch within one function.
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  for (std::size_t i = 0; i < instructions.size(); ++i) {
    const Instruction& branch = instructions[i];
    if (!is_conditional_branch(branch.mnemonic)) continue;
    const std::string_view target_text =
        std::string_view(branch.operands).substr(0, branch.operands.find(' '));
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
    if (holds_another) continue;
    LoopCensus loop;
    loop.function = instructions[range.first].function;
    loop.begin = instructions[range.first].address;
    loop.end = instructions[range.second].address;
    bool evex = false, vex = false, f64_root = false, f32_root = false;
    for (std::size_t k = range.first; k <= range.second; ++k) {
      const Instruction& instruction = instructions[k];
      const ClassifiedInstruction c = classify(instruction);
      const int bits = widest_register_bits(instruction.operands);
      loop.vector_bits = std::max(loop.vector_bits, bits);
      if (bits == 512 || instruction.operands.find("%k") != std::string::npos ||
          instruction.operands.find("{1to") != std::string::npos ||
          instruction.mnemonic.find("14") != std::string::npos) {
        evex = true;
      }
      if (bits > 0 && instruction.mnemonic[0] == 'v') vex = true;
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
    loop.fp_instructions_per_iteration =
        loop.fma + loop.add_sub + loop.mul + loop.div + loop.sqrt + loop.rsqrt + loop.rcp;
    loop.isa = evex ? "avx512f" : loop.vector_bits == 256 ? "avx2" : vex ? "avx" : "sse";
    loop.precision = f64_root ? "f64" : f32_root ? "f32" : "";
    loops.push_back(std::move(loop));
  }
  return loops;
}

}  // namespace nbody::peaks
