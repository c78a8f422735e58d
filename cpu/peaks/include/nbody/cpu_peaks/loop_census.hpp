#pragma once
// Instruction census of compiled x86-64 and aarch64 loops, read from objdump's disassembly (AT&T
// syntax on x86-64, A64 on aarch64, as printed by `objdump -d -C --no-show-raw-insn -w`; the file
// format line says which). Used to count, from the code that really
// runs, the instructions and flops per interaction of a CPU kernel's hot loop (FAIRNESS rule 4).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nbody::peaks {

struct Instruction {
  std::uint64_t address = 0;
  std::string mnemonic;  // prefixes ({vex}, notrack, ...) removed
  std::string operands;
  std::string function;  // demangled name of the enclosing symbol, as objdump labels it
  bool a64 = false;      // an aarch64 instruction (objdump's "file format elf64-littleaarch64")
};

// Instructions in program order; the address counter restarts per section in object files, so a
// loop is only ever formed within one function.
std::vector<Instruction> parse_objdump(std::string_view text);

enum class InstructionClass {
  fma,       // fused multiply-add family: 2 flops per lane
  add_sub,   // add, sub, addsub, hadd: 1 flop per lane
  mul,       // 1 flop per lane
  div,       // counted apart: not a flop in the FADD + FMUL + 2 FFMA convention of the GPU side
  sqrt,      // exact square root
  rsqrt,     // reciprocal square root estimate (rsqrtps, vrsqrt14ps, frsqrte, ...)
  rcp,       // reciprocal estimate
  other_fp,  // min, max, logic, compare, blend, shuffle, convert on vector registers
  memory,    // moves, broadcasts, gathers, prefetches
  other,     // integer, address and loop control
};

struct ClassifiedInstruction {
  InstructionClass kind = InstructionClass::other;
  int lanes = 0;  // floating-point elements the instruction works on (0 for non-FP)
  bool f64 = false;
};

ClassifiedInstruction classify(const Instruction& instruction);

struct LoopCensus {
  std::string function;
  std::uint64_t begin = 0, end = 0;  // addresses of the first instruction and of the back-edge
  // "sse", "avx", "avx2" or "avx512f": the widest encoding seen; "neon64" on aarch64.
  std::string isa;
  std::string precision;  // "f32" or "f64": that of the square root / rsqrt
  int vector_bits = 0;    // widest vector register used: 128, 256 or 512
  int instructions = 0;
  int fma = 0, add_sub = 0, mul = 0, div = 0, sqrt = 0, rsqrt = 0, rcp = 0, other_fp = 0,
      memory = 0, other = 0;
  // Lane-weighted: one interaction needs one square root or rsqrt per lane, so the lanes of those
  // instructions are the interactions (pairs) one iteration evaluates.
  int interactions_per_iteration = 0;
  double flops_per_iteration = 0;  // add_sub + mul lanes + 2 x fma lanes (div, sqrt, rsqrt apart)
  double fp_instructions_per_iteration = 0;  // arithmetic instructions: fma..rcp
};

// Innermost loops (ranges closed by a backward conditional branch that contain no other such
// range). Those with a square root or rsqrt are the interaction loops.
std::vector<LoopCensus> innermost_loops(const std::vector<Instruction>& instructions);

}  // namespace nbody::peaks
