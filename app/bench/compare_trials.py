#!/usr/bin/env python3
"""Compares the runs app/bench/compare_trials.sh made with `nbody-fair compare`, as a CI gate would.

  app/bench/compare_trials.py DIR [--changed cpu.simd] [--runs-per-side K] [--draws M]
                              [--program P] [-- COMPARE_OPTIONS...]

Unchanged runs are the folders U* (or D*); slowed ones S* (10%) and F* (5%). With one run a side,
every ordered pair of unchanged runs is a trial of a false alarm (compare exits 1), and every
slowed run against every unchanged run a trial of detection ("caught": exit 1 naming the changed
formulation and no other; "said": it is at least listed as a possible change). With K runs a
side, each trial draws K runs for BASE and K others for NEW (a fixed seed; M draws), links them
into folders of run folders and compares those.
"""
import argparse
import itertools
import json
import os
import random
import re
import subprocess
import sys
import tempfile


def complete_runs(directory, prefixes):
    runs = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name, "results.json")
        if name[:1] in prefixes and os.path.exists(path):
            with open(path) as f:
                if json.load(f).get("complete"):
                    runs.append(os.path.join(directory, name))
    return runs


def side(runs, scratch):
    """A folder of links to `runs` (or the one run itself)."""
    if len(runs) == 1:
        return runs[0]
    folder = tempfile.mkdtemp(dir=scratch)
    for k, run in enumerate(runs):
        os.symlink(os.path.abspath(run), os.path.join(folder, f"run{k}"))
    return folder


def compare(program, base, new, options):
    result = subprocess.run([program, "compare", base, new, *options], capture_output=True,
                            text=True)
    text = result.stdout
    if result.returncode == 2:
        raise SystemExit(f"compare refused {base} {new}: {result.stderr.strip()}")
    # "Slower formulations: a (...); b (...). Faster formulations: c (...)." on one line.
    slower = re.search(r"^Slower formulations: (.*?)\.(?: Faster formulations|$)", text, re.M)
    named = set(re.findall(r"(\S+) \(\d+ of \d+ measurements", slower.group(1))) if slower else set()
    possible = text.split("Possible changes (not failed):", 1)[1].split("\n\n", 2)[1] \
        if "Possible changes (not failed):" in text else ""
    maybe = {m.group(1) for m in re.finditer(r"^- (\S+) at N.*possibly slower", possible, re.M)}
    return result.returncode, named, maybe


def others_named(named_sets):
    """How often each formulation was named, most often first."""
    counts = {}
    for named in named_sets:
        for name in named:
            counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def trials(first, second, k, draws, rng, disjoint):
    """Pairs (BASE runs, NEW runs)."""
    if k == 1:
        if disjoint:
            return [([a], [b]) for a, b in itertools.permutations(first, 2)]
        return [([a], [b]) for b in second for a in first]
    out = []
    for _ in range(draws):
        if disjoint:
            chosen = rng.sample(first, 2 * k)
            out.append((chosen[:k], chosen[k:]))
        else:
            out.append((rng.sample(first, k), rng.sample(second, k)))
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    parser.add_argument("--changed", default="cpu.simd")
    parser.add_argument("--runs-per-side", type=int, default=1)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--program", default=os.path.join("build", "release", "nbody-fair"))
    args, options = parser.parse_known_args()
    options = [o for o in options if o != "--"]
    k = args.runs_per_side
    rng = random.Random(20261126)
    unchanged = complete_runs(args.directory, "UD")
    slowed = {kind: complete_runs(args.directory, kind) for kind in "SF"}
    print(f"unchanged runs: {len(unchanged)}; slowed 10%: {len(slowed['S'])}; slowed 5%: "
          f"{len(slowed['F'])}; runs a side: {k}; compare options: {' '.join(options) or '(none)'}")
    with tempfile.TemporaryDirectory() as scratch:
        alarms = []
        pairs = trials(unchanged, unchanged, k, args.draws, rng, disjoint=True)
        for base, new in pairs:
            code, named, _ = compare(args.program, side(base, scratch), side(new, scratch), options)
            if code != 0:
                alarms.append((named, [os.path.basename(r) for r in base + new]))
        print(f"false alarms: {len(alarms)} of {len(pairs)} comparisons of unchanged runs exit 1")
        print("    named:", others_named(named for named, _ in alarms))
        for named, runs in alarms[:8]:
            print("   ", sorted(named), *runs)
        for kind, label in (("S", "10%"), ("F", "5%")):
            if len(slowed[kind]) < k:
                continue
            caught = said = 0
            misses = []
            pairs = trials(unchanged, slowed[kind], k, args.draws, rng, disjoint=False)
            for base, new in pairs:
                code, named, maybe = compare(args.program, side(base, scratch), side(new, scratch),
                                             options)
                caught += code == 1 and named == {args.changed}
                said += args.changed in named or args.changed in maybe
                if code != 1 or named != {args.changed}:
                    misses.append((code, sorted(named), [os.path.basename(r) for r in base + new]))
            print(f"{args.changed} {label} slower: {caught} of {len(pairs)} exit 1 naming it alone; "
                  f"{said} of {len(pairs)} name it at least as a possible change")
            kinds = {}
            for code, named, _ in misses:
                key = ("nothing named" if not named
                       else "with others" if args.changed in named else "others only")
                kinds[key] = kinds.get(key, 0) + 1
            print("    misses:", kinds)
            print("    others named:",
                  others_named(set(named) - {args.changed} for _, named, _ in misses))
            for miss in misses[:8]:
                print("   ", *miss)
    return 0


if __name__ == "__main__":
    sys.exit(main())
