"""Prints every number of the development call from its files in this folder: the builds'
registers and instruction counts, the checks, the per-round ratios against each precision's
registered build (median over rounds, and the range), the ceilings and the ncu counters.
Run: `python3 docs/gpu-runs/2026-12-05_int4_unpack/summary.py`."""
import csv, json, statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent
BASE = {"i4": "i4", "i8": "i8_serp"}  # each precision's registered reference build
builds = json.loads((HERE / "dev_builds.json").read_text())
print("builds (registers, spill bytes, LDS.128, STS.128, FENCE.VIEW.ASYNC.S, BAR.ARV 0x3):")
for t, b in builds.items():
    r = b["resources"]
    print(f"  {t:12s} {r['registers']} {r['spill_store_bytes']} {b['LDS.128']} {b['STS.128']} "
          f"{b['FENCE.VIEW.ASYNC.S']} {b['BAR.ARV 0x3']}")
checks = json.loads((HERE / "dev_checks.json").read_text())
bad = [c for c in checks if not c["passed"]]
print(f"checks: {len(checks) - len(bad)} of {len(checks)} passed; max |error| {max(c['max_abs_error'] for c in checks)}")
for c in bad:
    print("  FAILED", c)
rounds = json.loads((HERE / "dev_rounds.json").read_text())
for n in sorted({r["n"] for r in rounds}):
    print(f"N = {n}: build, median rate, x registered (median of per-round ratios, min-max)")
    per = {}
    for r in rounds:
        if r["n"] == n:
            per.setdefault(r["build"], {})[r["round"]] = r["rate"]
    for t, rr in per.items():
        base = per[BASE[t[:2]]]
        ratios = [rr[k] / base[k] for k in rr if k in base]
        print(f"  {t:12s} {statistics.median(rr.values()):8.1f}  x{statistics.median(ratios):.3f} "
              f"({min(ratios):.3f}-{max(ratios):.3f})")
ceil = json.loads((HERE / "dev_ceilings.json").read_text())
print("ceilings:", ", ".join(f"{c['name']} {c['rate']:.1f}" for c in ceil))
p = HERE / "dev_ncu.csv"
if p.exists():
    rows = list(csv.DictReader(p.open()))[1:]  # the second row holds the units
    keys = [k for k in rows[0] if "__" in k]
    tags = list(builds)
    print("ncu, one launch each at N = 8192 (in build order):")
    for i, row in enumerate(rows):
        print(f"  {tags[i] if i < len(tags) else i}: " + "; ".join(f"{k} {row[k]}" for k in keys))
