"""Prints the call's tables from its files: event-timed rates per build (median over rounds),
and pairs with each reference at N = 8192 (geometric mean of the rounds, per pass)."""
import collections, json, math, sys
from pathlib import Path
here = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
pre = next(here.glob("*_variants.json")).name.split("_")[0]
V = json.load(open(here / f"{pre}_variants.json"))
g = collections.defaultdict(list)
for r in V:
    g[(r["tag"], r["n"])].append(r["rate"])
print("build | N | median rate (TFLOP/s or TOP/s) | range")
for (t, n), v in sorted(g.items()):
    v = sorted(v); print(f"{t} | {n} | {v[len(v)//2]:.1f} | {v[0]:.1f}-{v[-1]:.1f}")
P = json.load(open(here / f"{pre}_pairs.json"))
g = collections.defaultdict(list)
for r in P:
    g[(r["library"], r["tag"], r["pass_"])].append(r["library_median_ns"] / r["kernel_median_ns"])
print("\nreference | build | pass | reference time / build time (geometric mean of rounds)")
for (lib, t, p), v in sorted(g.items()):
    print(f"{lib} | {t} | {p} | {math.exp(sum(map(math.log, v)) / len(v)):.4f}")
