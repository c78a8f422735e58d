#!/usr/bin/env python3
"""Energy-error survey of `nbody-fair simulate`: for several seeds of one initial
condition, each formulation's |dE/E| at the end against the float64 leapfrog's own, from the same
initial condition and steps. Sets the bound docs/tolerances.md records.

  app/bench/energy_survey.py NBODY_FAIR [--impl REGEX] [--sizes N] [--seeds K] [--t-end T] [--dt DT]
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("tool")
    parser.add_argument("--impl", default=".")
    parser.add_argument("--sizes", default="4096")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--t-end", default="1")
    parser.add_argument("--dt", default="0.00390625")
    parser.add_argument("--ic", default="plummer")
    args = parser.parse_args()

    errors: dict[tuple[str, int], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for seed in range(1, args.seeds + 1):
            out = Path(scratch) / f"seed{seed}"
            command = [args.tool, "simulate", "--ic", args.ic, "--sizes", args.sizes, "--impl",
                       args.impl, "--seed", str(seed), "--dt", args.dt, "--t-end", args.t_end,
                       "--phase-steps", "0", "--divergence-up-to", "100000000",
                       "--max-seconds", "100000", "--out", str(out)]
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            doc = json.loads((out / "results.json").read_text())
            for sim in doc["simulations"]:
                if sim["status"] != "ok":
                    continue
                reference = sim["divergence"]["reference_energy_error"]
                key = (sim["implementation"], sim["n"])
                final = sim["conservation"][-1]["relative_energy_error"]
                errors.setdefault(key, []).append((final, reference))
            print(f"seed {seed} done", file=sys.stderr)
    print(f"{args.ic}, dt = {args.dt}, t = {args.t_end}, {args.seeds} seeds")
    print(f"{'implementation':<20} {'N':>7} {'max |dE/E|':>11} {'float64 max':>11} "
          f"{'ratio median':>12} {'ratio max':>9}")
    for (name, n), pairs in sorted(errors.items()):
        ratios = [e / r for e, r in pairs if r > 0]
        print(f"{name:<20} {n:>7} {max(e for e, _ in pairs):>11.3e} "
              f"{max(r for _, r in pairs):>11.3e} {statistics.median(ratios):>12.3f} "
              f"{max(ratios):>9.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
