"""Print every number of this folder's development call (dev9_*): per build the median rate and the
per-round ratio to its base (INT4 builds of int4_wgmma_epi_tma against i4_tma4, the other INT4 builds
against i4, INT8 against i8_serp) at N = 6144 and 8192, the checks, the sanitizers, the ceilings of the
call and the counters of one profiled launch each at N = 8192.
Run: `python3 docs/gpu-runs/2026-12-06_int4_b_global/summary.py`."""
import csv
import json
import statistics as st
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
COUNTERS = ["gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second",
            "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
            "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed", "dram__bytes_read.sum",
            "smsp__inst_executed.sum"]

for pfx in ("dev9",):
    if not (HERE / f"{pfx}_rounds.json").exists():
        continue
    print(f"== {pfx}")
    rounds = json.loads((HERE / f"{pfx}_rounds.json").read_text())
    checks = json.loads((HERE / f"{pfx}_checks.json").read_text())
    print(f"checks: {sum(c['passed'] for c in checks)} of {len(checks)} passed; "
          f"max |error| {max(c['max_abs_error'] for c in checks)}")
    builds = list(dict.fromkeys(x["build"] for x in rounds))
    for n in (6144, 8192):
        print(f"N = {n}: build, median rate, x its base (median of per-round ratios, min-max)")
        for b in builds:
            base = ("i4_tma4" if b.endswith("_tma4") else "i4") if b.startswith("i4") else "i8_serp"
            ratios = []
            for rd in sorted({x["round"] for x in rounds}):
                x = [y["rate"] for y in rounds if y["build"] == b and y["n"] == n and y["round"] == rd]
                z = [y["rate"] for y in rounds if y["build"] == base and y["n"] == n and y["round"] == rd]
                if x and z:
                    ratios.append(x[0] / z[0])
            rate = st.median(y["rate"] for y in rounds if y["build"] == b and y["n"] == n)
            print(f"  {b:18s} {rate:7.1f}  x{st.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})")
    best4 = max((b for b in builds if b.startswith("i4")),
                key=lambda b: st.median(y["rate"] for y in rounds if y["build"] == b and y["n"] == 8192))
    best8 = max((b for b in builds if b.startswith("i8")),
                key=lambda b: st.median(y["rate"] for y in rounds if y["build"] == b and y["n"] == 8192))
    r4, r8 = (st.median(y["rate"] for y in rounds if y["build"] == b and y["n"] == 8192) for b in (best4, best8))
    ceilings = json.loads((HERE / f"{pfx}_ceilings.json").read_text())
    s8 = max(c["rate"] for c in ceilings if "s8" in c["name"])
    print(f"fastest INT4 {best4} / fastest INT8 {best8} at N = 8192: {r4:.1f} / {r8:.1f} = {r4 / r8:.3f}; "
          f"{best8} / highest s8 wgmma ceiling {s8:.1f} = {r8 / s8:.3f}")
    print("ceilings:", ", ".join(f"{c['name']} {c['rate']:.1f}" for c in ceilings))
    san = HERE / f"{pfx}_sanitize.json"  # else inside dev9_logs.tar.xz, with the call's output
    if san.exists():
        sanitize = json.loads(san.read_text())
    else:
        with tarfile.open(HERE / f"{pfx}_logs.tar.xz") as tar:
            sanitize = json.loads(tar.extractfile(f"{pfx}_sanitize.json").read())
    for s in sanitize:
        print(f"  {s['tool']} {s['build']} N = {s['n']} on {s['ctas']} CTAs: rc {s['rc']}")
    rows = list(csv.reader(open(HERE / f"{pfx}_ncu.csv")))
    idx = {h: i for i, h in enumerate(rows[0])}
    print("ncu, one launch each at N = 8192 (" + "; ".join(COUNTERS) + "):")
    for row, b in zip(rows[2:], json.loads((HERE / f"{pfx}_builds.json").read_text())):
        print(f"  {b:18s}", ", ".join(row[idx[k]] for k in COUNTERS))
