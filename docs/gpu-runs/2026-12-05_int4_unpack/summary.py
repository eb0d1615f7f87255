"""Prints every number of the development calls from their files in this folder (`dev_*` of the
first call, `dev2_*` of the second, `dev3_*` of the fourth), then `rs_*` (the fifth: the INT4
consumer's wgmma forms as loops, `rs.py`): the builds' registers and instruction counts, the checks,
the sanitizers, the per-round ratios against each precision's registered build (median over
rounds, and the range), the ceilings and the ncu counters; then, from `full.ncu-rep.xz` (the
third call), the most-sampled SASS of int4_wgmma_persistent and of its UNPACK_GROUP=2 build.
Run: `python3 docs/gpu-runs/2026-12-05_int4_unpack/summary.py` (the last part needs ncu_report,
installed by the project's environment)."""
import csv, json, statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent
BASE = {"i4": "i4", "i8": "i8_serp"}  # each precision's registered reference build
for pfx in ("dev", "dev2", "dev3"):
    print(f"== {pfx} ==")
    builds = json.loads((HERE / f"{pfx}_builds.json").read_text())
    print("builds (registers, spill bytes, LDS.128, STS.128, FENCE.VIEW.ASYNC.S, BAR.ARV 0x3, producer warps):")
    for t, b in builds.items():
        r = b["resources"]
        print(f"  {t:12s} {r['registers']} {r['spill_store_bytes']} {b['LDS.128']} {b['STS.128']} "
              f"{b['FENCE.VIEW.ASYNC.S']} {b['BAR.ARV 0x3']} {b.get('producer_warps', 4)}")
    checks = json.loads((HERE / f"{pfx}_checks.json").read_text())
    bad = [c for c in checks if not c["passed"]]
    print(f"checks: {len(checks) - len(bad)} of {len(checks)} passed; max |error| {max(c['max_abs_error'] for c in checks)}")
    for c in bad:
        print("  FAILED", c)
    rounds = json.loads((HERE / f"{pfx}_rounds.json").read_text())
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
    ceil = json.loads((HERE / f"{pfx}_ceilings.json").read_text())
    print("ceilings:", ", ".join(f"{c['name']} {c['rate']:.1f}" for c in ceil))
    p = HERE / f"{pfx}_ncu.csv"
    if p.exists():
        rows = list(csv.DictReader(p.open()))[1:]  # the second row holds the units
        keys = [k for k in rows[0] if "__" in k]
        tags = list(builds)
        print("ncu, one launch each at N = 8192 (in build order):")
        for i, row in enumerate(rows):
            print(f"  {tags[i] if i < len(tags) else i}: " + "; ".join(f"{k} {row[k]}" for k in keys))
    san = HERE / f"{pfx}_sanitize.json"
    if san.exists():
        for r in json.loads(san.read_text()):
            print(f"  {r['tool']} {r['build']} N = {r['n']} on {r['ctas']} CTAs: rc {r['rc']}")

rs = json.loads((HERE / "rs_rates.json").read_text())
print("== rs (H100; TOP/s, median of 3 rounds; 2 warpgroups per SM) ==")
for k, v in rs["median_tops"].items():
    print(f"  {k:24s} {v:8.1f}")
rows = list(csv.DictReader((HERE / "rs_ncu.csv").open()))[1:]
for row in rows:
    print(f"  {row['Kernel Name']:24s} tensor pipe {row['sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active']} % "
          f"of active cycles at {row['sm__cycles_elapsed.avg.per_second']} GHz")

try:
    import lzma, tempfile
    import ncu_report
    from analysis.reports.hotspots import SAMPLES, _instanced
except ImportError as exc:
    raise SystemExit(f"full.ncu-rep.xz not read: {exc}")
with tempfile.NamedTemporaryFile(suffix=".ncu-rep") as tmp:
    tmp.write(lzma.decompress((HERE / "full.ncu-rep.xz").read_bytes()))
    tmp.flush()
    rng = ncu_report.load_report(tmp.name).range_by_idx(0)
    for i, tag in enumerate(("i4", "i4_g2")):
        a = rng.action_by_idx(i)
        samples = _instanced(a, SAMPLES)
        base, total = min(samples), sum(samples.values())
        print(f"== full, {tag}: {a.metric_by_name('gpu__time_duration.sum').as_double() / 1e3:.1f} us, tensor pipe "
              f"{a.metric_by_name('sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active').as_double():.1f} % "
              f"of active cycles, {total:.0f} samples ==")
        for pc, v in sorted(samples.items(), key=lambda kv: -kv[1])[:6]:
            info = a.source_info(pc)
            print(f"  {pc - base:#6x} {100 * v / total:5.1f} %  kernels/int4_wgmma.cuh:{info.line() if info else '?'}  "
                  f"{(a.sass_by_pc(pc) or '').strip()[:48]}")
