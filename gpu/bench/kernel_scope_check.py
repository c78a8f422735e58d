#!/usr/bin/env python3
"""The kernel figure of `nbody-fair run` (read inside its end-to-end timing)
beside the same formulations timed in kernel scope alone (`nbody-fair bench --scope kernel`):
the check that reading the kernel's own events inside the copies changes no figure.

    kernel_scope_check.py RUN/results.json KERNEL_ONLY.json

Prints, per (implementation, N), both medians and their ratio (run / kernel-only).
"""
import json
import sys


def main(results_path: str, bench_path: str) -> None:
    with open(results_path) as f:
        results = json.load(f)
    with open(bench_path) as f:
        bench = json.load(f)
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    alone = {}
    for b in bench["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name, scope, size = b["name"].split("/")[:3]
        if scope == "kernel":
            alone[(name, int(size.split(":")[1]))] = b["real_time"] * scale[b["time_unit"]]
    print(f"{'implementation':<18} {'N':>8} {'in end-to-end':>14} {'alone':>12} {'ratio':>7}")
    for r in results["results"]:
        key = (r["implementation"], r["n"])
        if key not in alone or not r.get("kernel"):
            continue
        inside = r["kernel"]["median_s"]
        print(f"{key[0]:<18} {key[1]:>8} {inside:>14.4g} {alone[key]:>12.4g} "
              f"{inside / alone[key]:>7.3f}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
