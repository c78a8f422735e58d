#!/usr/bin/env python3
"""False alarms and detection of `nbody-fair compare` over every split of unchanged runs into
disjoint sides, as a CI gate would meet them (docs/compare.md, "The CI recipe on a GPU host").

  app/bench/compare_splits.py PROGRAM RUNS_DIR K_BASE K_NEW

RUNS_DIR holds unchanged runs of one build, U01/, U02/, ... (each with its results.json). For
every choice of K_BASE runs as BASE and K_NEW others as NEW, compare runs on NEW as measured
(a false alarm: exit 1) and on copies of NEW with known slowdowns (KINDS, space-separated; default
all but tuned5): simd10 (cpu.simd 10% slower; caught: exit 1 naming cpu.simd alone), tuned10 and
tuned5 (gpu.tuned 10% or 5% slower), cpu150 (every CPU timing 1.5x), gpu110 (every GPU timing
1.1x; both caught: exit 1 naming the whole device). COMPARE_ARGS are added to compare; KEEP, a
regular expression, keeps only the results of the implementations it finds.
"""
import itertools, json, os, subprocess, sys, tempfile, collections
prog, d, kb, kn = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
runs = sorted(x for x in os.listdir(d) if x.startswith('U') and os.path.isdir(os.path.join(d, x)))
docs = {r: json.load(open(os.path.join(d, r, 'results.json'))) for r in runs}
import re
keep = re.compile(os.environ.get('KEEP', '.'))
for doc in docs.values():
    doc['results'] = [x for x in doc['results'] if keep.search(x['implementation'])]
scratch = tempfile.mkdtemp()

def scale(rec, f):
    k = rec['kernel']
    k['samples_s'] = [x * f for x in k['samples_s']]
    for fld in ['median_s', 'mean_s', 'min_s', 'max_s', 'stddev_s', 'ci_low_s', 'ci_high_s']:
        if fld in k and k[fld] is not None: k[fld] *= f
    if rec.get('kernel_rate'):
        for fld in ['interactions_per_second', 'interactions_per_second_min', 'interactions_per_second_max', 'gflops_at_20']:
            if fld in rec['kernel_rate'] and rec['kernel_rate'][fld] is not None: rec['kernel_rate'][fld] /= f

def doctored(run, kind):
    doc = json.loads(json.dumps(docs[run]))
    dev = {i['name']: i['device'] for i in doc['implementations']}
    for rec in doc['results']:
        if rec['status'] != 'ok' or not rec.get('kernel'): continue
        if kind == 'simd10' and rec['implementation'] == 'cpu.simd': scale(rec, 1.10)
        if kind == 'tuned10' and rec['implementation'] == 'gpu.tuned': scale(rec, 1.10)
        if kind == 'tuned5' and rec['implementation'] == 'gpu.tuned': scale(rec, 1.05)
        if kind == 'cpu150' and dev[rec['implementation']] == 'cpu': scale(rec, 1.5)
        if kind == 'gpu110' and dev[rec['implementation']] == 'gpu': scale(rec, 1.10)
    return doc

def side(names, kind, tag):
    folder = tempfile.mkdtemp(dir=scratch)
    for r in names:
        os.makedirs(os.path.join(folder, r))
        doc = docs[r] if kind == 'none' else doctored(r, kind)
        json.dump(doc, open(os.path.join(folder, r, 'results.json'), 'w'))
    return folder if len(names) > 1 else os.path.join(folder, names[0])

out = collections.Counter()
for base in itertools.combinations(runs, kb):
    rest = [r for r in runs if r not in base]
    for new in itertools.combinations(rest, kn):
        b = side(base, 'none', 'b')
        for kind in os.environ.get('KINDS','none simd10 tuned10 cpu150 gpu110').split():
            n = side(new, kind, kind)
            p = subprocess.run([prog, 'compare', b, n] + os.environ.get('COMPARE_ARGS','').split(), capture_output=True, text=True)
            slower = [l for l in p.stdout.splitlines() if l.startswith('Slower formulations')]
            whole = 'the machine or the build changed' in p.stdout
            names = slower[0] if slower else ''
            if kind == 'none': out['none trials'] += 1; out['false alarms'] += p.returncode == 1
            elif kind == 'simd10':
                out['simd trials'] += 1
                out['simd caught alone'] += p.returncode == 1 and names.count('(') == 1 and 'cpu.simd (' in names
                out['simd listed'] += any(l.startswith('- cpu.simd at N') for l in p.stdout.splitlines())
            elif kind.startswith('tuned'):
                out[kind + ' trials'] += 1
                out[kind + ' caught alone'] += p.returncode == 1 and names.count('(') == 1 and 'gpu.tuned (' in names
                out[kind + ' listed'] += any(l.startswith('- gpu.tuned at N') for l in p.stdout.splitlines())
            else:
                out[kind + ' trials'] += 1; out[kind + ' failed, whole device named'] += p.returncode == 1 and whole
            if p.returncode == 2: print('ERR', p.stderr.strip(), file=sys.stderr)
            if kind == 'none' and p.returncode == 1: print('FALSE ALARM', base, new, [l for l in p.stdout.splitlines() if l.startswith('- ')][:4])
print(dict(out))
