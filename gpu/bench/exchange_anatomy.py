#!/usr/bin/env python3
"""Medians of the exchange's anatomy (NBODY_EXCHANGE_TRACE=1 lines on stdin), per N and scope.

Each evaluation on several GPUs traces, per GPU: when the host reached its kernel, its upload, its
kernel, and the time from its kernel's end until it had every slice (its own clock). The GPU whose
kernel ended last waits for no other: its "to gathered" is the all-gather itself; another's holds
its wait for the last one too.
"""
import re
import statistics
import sys
from collections import defaultdict

FIGURE = re.compile(r"gpu (\d+): host ([\d.]+) us, upload ([\d.]+) us, kernel ([\d.]+) us, "
                    r"to gathered ([\d.]+) us")
figures = defaultdict(lambda: defaultdict(list))
for line in sys.stdin:
    head = re.match(r"exchange: N=(\d+) (\w+)", line)
    if not head:
        continue
    key = (int(head.group(1)), head.group(2))
    for gpu, host, upload, kernel, gathered in FIGURE.findall(line):
        for name, value in (("host", host), ("upload", upload), ("kernel", kernel),
                            ("to gathered", gathered)):
            figures[key][f"gpu {gpu} {name}"].append(float(value))
    tail = re.search(r"communication ([\d.]+) us, total ([\d.]+) us", line)
    if tail:
        figures[key]["communication"].append(float(tail.group(1)))
        figures[key]["total"].append(float(tail.group(2)))
for (n, scope), named in sorted(figures.items()):
    medians = ", ".join(f"{name} {statistics.median(values):.1f}" for name, values in named.items())
    count = max(len(values) for values in named.values())
    print(f"anatomy N={n} {scope} ({count} evaluations, medians in us): {medians}")
