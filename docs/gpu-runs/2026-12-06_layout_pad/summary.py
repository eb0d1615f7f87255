"""Print every number of this folder's three development calls (dev6_*, dev7_*, dev8_*, all on an H100):
per build the median rate and the per-round ratio to its base build at N = 6144 and 8192, the
checks, the sanitizers (dev7), the ceilings of the call and the counters of one profiled launch
each at N = 8192. Bases, dev6: the padded and offset INT4 builds against i4_tma2, whose C slots
they keep; i4_tma4_epi1st against i4_tma4; i4_pad16 against the registered i4; the INT8 builds
against int8_wgmma_serpentine (i8_serp). dev7: the INT4 builds against i4 with as many C slots
(EPI_TMA=4 builds against i4_tma4), the INT8 builds against i8_serp with as many (i8_tma2).
dev8-dev12: the INT4 builds with C slots against i4_tma4, the others against i4; INT8 against i8_serp.
DEV_DIR=folder reads the files there instead (dev9: `DEV_DIR=docs/gpu-runs/2026-12-06_int4_b_global`,
dev10: `DEV_DIR=docs/gpu-runs/2026-12-07_int4_alternate`, dev11: `DEV_DIR=docs/gpu-runs/2026-12-07_int4_syncwarp`,
dev12: `DEV_DIR=docs/gpu-runs/2026-12-07_int4_cluster`).
Run: `python3 docs/gpu-runs/2026-12-06_layout_pad/summary.py`."""
import csv
import os
import json
import statistics as st
import tarfile
from pathlib import Path

HERE = Path(os.environ.get("DEV_DIR", Path(__file__).resolve().parent))
COUNTERS = ["gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second",
            "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "dram__bytes_read.sum"]


def base_of(pfx: str, build: str) -> str:
    if pfx in ("dev8", "dev9", "dev10", "dev11", "dev12"):
        return "i8_serp" if build.startswith("i8") else "i4_tma4" if "tma" in build else "i4"
    if pfx == "dev7":
        if build.startswith("i8"):
            return "i8_tma2" if build.endswith("_tma2") else "i8_serp"
        return "i4_tma4" if build.endswith("_tma4") else "i4"
    if build.startswith("i8"):
        return "i8_serp"
    if build.startswith("i4_tma2_"):
        return "i4_tma2"
    if build.startswith("i4_tma4_"):
        return "i4_tma4"
    return "i4"


for pfx in ("dev6", "dev7", "dev8", "dev9", "dev10", "dev11", "dev12"):
    if not (HERE / f"{pfx}_rounds.json").exists():  # dev9-dev12: the folders where they ran
        continue
    print(f"== {pfx}")
    rounds = json.loads((HERE / f"{pfx}_rounds.json").read_text())
    checks = json.loads((HERE / f"{pfx}_checks.json").read_text())
    print(f"checks: {sum(c['passed'] for c in checks)} of {len(checks)} passed; "
          f"max |error| {max(c['max_abs_error'] for c in checks)}")
    builds = list(dict.fromkeys(x["build"] for x in rounds))

    def rate(b: str, n: int) -> float:
        return st.median(y["rate"] for y in rounds if y["build"] == b and y["n"] == n)

    for n in (6144, 8192):
        print(f"N = {n}: build, median rate (TOP/s), x base (median of per-round ratios, min-max)")
        for b in builds:
            base, ratios = base_of(pfx, b), []
            for rd in sorted({x["round"] for x in rounds}):
                x = [y["rate"] for y in rounds if y["build"] == b and y["n"] == n and y["round"] == rd]
                z = [y["rate"] for y in rounds if y["build"] == base and y["n"] == n and y["round"] == rd]
                if x and z:
                    ratios.append(x[0] / z[0])
            print(f"  {b:16s} {rate(b, n):7.1f}  x{st.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}) "
                  f"against {base}")
    best4 = max((b for b in builds if b.startswith("i4")), key=lambda b: rate(b, 8192))
    best8 = max((b for b in builds if b.startswith("i8")), key=lambda b: rate(b, 8192))
    ceilings = json.loads((HERE / f"{pfx}_ceilings.json").read_text())
    s8 = max(c["rate"] for c in ceilings if "s8" in c["name"])
    print(f"fastest INT4 {best4} / fastest INT8 {best8} at N = 8192: {rate(best4, 8192):.1f} / "
          f"{rate(best8, 8192):.1f} = {rate(best4, 8192) / rate(best8, 8192):.3f}; i4_tma4 / i8_serp = "
          f"{rate('i4_tma4', 8192) / rate('i8_serp', 8192):.3f}; "
          f"{best8} / highest s8 wgmma ceiling {s8:.1f} = {rate(best8, 8192) / s8:.3f}")
    print("ceilings:", ", ".join(f"{c['name']} {c['rate']:.1f}" for c in ceilings))
    sanitize = []
    if (HERE / f"{pfx}_sanitize.json").exists():
        sanitize = json.loads((HERE / f"{pfx}_sanitize.json").read_text())
    elif (HERE / f"{pfx}_logs.tar.xz").exists():  # a call whose output and sanitizers came back packed
        with tarfile.open(HERE / f"{pfx}_logs.tar.xz") as tar:
            sanitize = json.loads(tar.extractfile(f"{pfx}_sanitize.json").read())
    if sanitize:
        for x in sanitize:
            print(f"  {x['tool']} {x['build']} N = {x['n']} on {x['ctas']} CTAs: rc {x['rc']}")
    rows = list(csv.reader(open(HERE / f"{pfx}_ncu.csv")))
    idx = {h: i for i, h in enumerate(rows[0])}
    print("ncu, one launch each at N = 8192 (" + "; ".join(COUNTERS) + "):")
    for row, b in zip(rows[2:], json.loads((HERE / f"{pfx}_builds.json").read_text())):
        print(f"  {b:16s}", ", ".join(row[idx[k]] for k in COUNTERS))
