#!/usr/bin/env python3
"""Warp-state samples per SASS opcode, from Nsight Compute's source page exported as CSV.

    ncu --import r.ncu-rep --page source --csv --print-source sass | gpu/bench/stalls_by_opcode.py

Sums every sampling column (overall and per stall reason, whichever the ncu version exports) over
the instructions of each opcode, and prints the share of each opcode in each column, so that one
can see whether, say, dispatch stalls sit on the FADDs or on the MUFUs.
"""
import collections
import csv
import re
import sys


def opcode(source):
    source = re.sub(r"^@!?U?P\w+\s+", "", source.strip())
    return source.split()[0] if source else ""


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def main():
    rows = [row for row in csv.reader(sys.stdin) if row]
    header_index = next((i for i, row in enumerate(rows) if "Source" in row), None)
    if header_index is None:
        print("no 'Source' column; first lines:")
        for row in rows[:5]:
            print("  ", row[:12])
        return 1
    header = rows[header_index]
    source_column = header.index("Source")
    sampled = [i for i, name in enumerate(header)
               if re.search(r"sampl|stall", name, re.IGNORECASE) and i != source_column]
    executed = next((i for i, name in enumerate(header) if name == "Instructions Executed"), None)
    totals = collections.defaultdict(collections.Counter)
    for row in rows[header_index + 1:]:
        if len(row) != len(header):
            continue
        op = opcode(row[source_column])
        for i in sampled + ([executed] if executed is not None else []):
            value = number(row[i])
            if value is not None:
                totals[header[i]][op] += value
    for name in [header[i] for i in sampled] + ([header[executed]] if executed is not None else []):
        column = totals[name]
        total = sum(column.values())
        if total <= 0:
            continue
        shares = ", ".join(f"{op} {100 * value / total:.1f}%" for op, value in column.most_common(6))
        print(f"{name}: {total:.0f} ({shares})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
