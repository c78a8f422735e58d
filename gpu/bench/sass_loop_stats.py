#!/usr/bin/env python3
"""Instruction mix and static schedule of a kernel's hottest loop, from cuobjdump --dump-sass.

    cuobjdump --dump-sass tuned.cu.o | gpu/bench/sass_loop_stats.py 'tuned_forces<float, 8, 128'

For every function whose name contains the pattern: the innermost loop (a backward branch that
encloses no other) holding the most MUFU instructions; its opcodes; and the scheduling control
bits ptxas wrote for it (sm_70 and later: bits 41-61 of each instruction's upper 64-bit word hold
stall cycles, yield, write/read barriers, wait mask and operand-reuse flags). The stall cycles are
the compiler's own schedule for one warp alone: if they exceed the instruction count, one warp
cannot issue every cycle and other warps must fill the gaps.

It also counts the loop's register-file reads under a model (Volta and later: two banks, bank =
register number mod 2; an operand marked .reuse is kept in a cache per operand slot and bank and is
not read again by the next instruction naming it in that slot): reads per instruction, and the
instructions that read two different registers of one bank. The model is the one reported from
microbenchmarks of Volta and Ampere; NVIDIA does not document it.
"""
import collections
import re
import sys

INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?);\s*/\* (0x[0-9a-f]{16}) \*/")
CONTROL = re.compile(r"^\s*/\* (0x[0-9a-f]{16}) \*/")
FUNCTION = re.compile(r"Function : (\S+)")


def functions(lines):
    """Yields (name, [(address, text, control_word)])."""
    name, body, pending = None, [], None
    for line in lines:
        match = FUNCTION.search(line)
        if match:
            if name:
                yield name, body
            name, body, pending = match.group(1), [], None
            continue
        match = INSTRUCTION.search(line)
        if match:
            pending = (int(match.group(1), 16), match.group(2).strip())
            continue
        match = CONTROL.search(line)
        if match and pending:
            body.append((pending[0], pending[1], int(match.group(1), 16)))
            pending = None
    if name:
        yield name, body


def opcode(text):
    text = re.sub(r"^@!?U?P\w+\s+", "", text)  # predicate
    return text.split()[0] if text else ""


def branch_target(text):
    match = re.search(r"BRA\s+(?:\S+\s+)?(0x[0-9a-f]+)", text)
    return int(match.group(1), 16) if match else None


def loops(body):
    spans = []
    for index, (address, text, _) in enumerate(body):
        if opcode(text) != "BRA":
            continue
        target = branch_target(text)
        if target is not None and target < address:
            start = next(i for i, item in enumerate(body) if item[0] >= target)
            spans.append((start, index))
    return [s for s in spans if not any(o != s and s[0] <= o[0] and o[1] <= s[1] for o in spans)]


SOURCE_REGISTER = re.compile(r"^-?\|?R(\d+)(\.reuse)?")


def register_reads(loop):
    """(bank reads, reuse hits, instructions reading two registers of one bank), for the loop in
    its steady state (the reuse cache as the back branch leaves it)."""
    cache = {}
    for lap in range(2):
        reads = hits = same_bank = 0
        for _, text, _ in loop:
            words = re.sub(r"^@!?U?P\w+\s+", "", text).split(None, 1)
            operands = [o.strip() for o in words[1].split(",")] if len(words) > 1 else []
            per_bank, seen, updates = [0, 0], set(), []
            for slot, operand in enumerate(operands[1:]):  # operand 0 is the destination
                match = SOURCE_REGISTER.match(operand)
                if not match:
                    continue
                register, reuse = int(match.group(1)), bool(match.group(2))
                key = (slot, register % 2)
                if cache.get(key) == register:
                    hits += 1
                elif register not in seen:
                    per_bank[register % 2] += 1
                    seen.add(register)
                updates.append((key, register if reuse else None))
            cache.update(updates)
            reads += sum(per_bank)
            same_bank += max(per_bank) > 1
    return reads, hits, same_bank


def main():
    pattern = sys.argv[1] if len(sys.argv) > 1 else ""
    text = sys.stdin.read().splitlines()
    found = False
    for name, body in functions(text):
        if pattern not in name:
            continue
        candidates = loops(body)
        if not candidates:
            continue
        start, end = max(candidates, key=lambda s: sum(
            opcode(t).startswith("MUFU") for _, t, _ in body[s[0]:s[1] + 1]))
        loop = body[start:end + 1]
        counts = collections.Counter(opcode(t) for _, t, _ in loop)
        stalls = sum((c >> 41) & 0xF for _, _, c in loop)
        reuse = sum(1 for _, _, c in loop if (c >> 58) & 0xF)
        waits = sum(1 for _, _, c in loop if (c >> 52) & 0x3F)
        mufu = [i for i, (_, t, _) in enumerate(loop) if opcode(t).startswith("MUFU")]
        found = True
        print(f"{name}\n  loop 0x{loop[0][0]:x}-0x{loop[-1][0]:x}: {len(loop)} instructions, "
              f"{stalls} stall cycles in the control bits, {waits} waiting on a barrier, "
              f"{reuse} with operand reuse")
        for op, count in counts.most_common():
            print(f"    {op:<12} {count}")
        reads, hits, same_bank = register_reads(loop)
        print(f"  register-file reads (two-bank model): {reads} ({reads / len(loop):.2f} per "
              f"instruction), {hits} served by the reuse cache, {same_bank} instructions read two "
              f"registers of one bank")
        gaps = [b - a for a, b in zip(mufu, mufu[1:])]
        print(f"  MUFU at loop positions {mufu}")
        if gaps:
            print(f"  gaps between MUFUs: min {min(gaps)}, max {max(gaps)}, "
                  f"runs of adjacent MUFUs: {sum(1 for g in gaps if g == 1)}")
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main())
