"""Print every number of the two development calls (l2, l2b) and of the whole-registry run's
INT8 and INT4 wgmma kernels: event-timed medians and per-round ratios to the registered
int8_wgmma_cluster, the s8 wgmma ceilings, the ncu counters at N = 8192, the checks and the
sanitizers. Run from the repository root: python3 docs/gpu-runs/2026-12-04_l2_order/summary.py"""
import csv, json, statistics
from pathlib import Path

D = Path(__file__).resolve().parent
COLS = {"gpu__time_duration.sum": "duration", "sm__cycles_elapsed.avg.per_second": "SM clock",
        "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": "tensor pipe % active",
        "dram__bytes_read.sum": "DRAM read", "dram__bytes_write.sum": "DRAM write",
        "lts__t_sector_hit_rate.pct": "L2 hit %"}
for pfx in ("l2", "l2b"):
    print(f"== call {pfx}")
    builds = json.loads((D / f"{pfx}_builds.json").read_text())
    rounds = json.loads((D / f"{pfx}_rounds.json").read_text())
    checks = json.loads((D / f"{pfx}_checks.json").read_text())
    print("checks passed", sum(c["passed"] for c in checks), "of", len(checks))
    ceil = json.loads((D / f"{pfx}_ceilings.json").read_text())
    s8 = max(c["rate"] for c in ceil if "s8" in c["name"])
    print("highest s8 wgmma ceiling", round(s8, 1), "TOP/s")
    for n in sorted({r["n"] for r in rounds}):
        reg = {r["round"]: r["rate"] for r in rounds if r["build"] == "reg" and r["n"] == n}
        for t in builds:
            mine = [r for r in rounds if r["build"] == t and r["n"] == n]
            med = statistics.median(r["rate"] for r in mine)
            ratio = statistics.median(r["rate"] / reg[r["round"]] for r in mine)
            frac = f"  / ceiling {med / s8:.3f}" if n == 8192 else ""
            print(f"  N={n} {t:14s} {med:7.1f}  x reg {ratio:.3f}{frac}")
    rows = list(csv.reader((D / f"{pfx}_ncu.csv").open()))
    head, units, data = rows[0], rows[1], rows[2:]
    print("  ncu, N = 8192 (builds in the order above):", ", ".join(f"{COLS[c]} [{units[head.index(c)]}]" for c in COLS))
    for t, r in zip(builds, data):
        print(f"  {t:14s}", "  ".join(f"{float(r[head.index(c)]):.4g}" for c in COLS))
    san = D / f"{pfx}_sanitize.json"
    if san.exists():
        for s in json.loads(san.read_text()):
            print(f"  {s['build']} {s['tool']} rc={s['rc']}")
print("== the registry set")
sset = D.parents[2] / "profiles" / "h200_580.159.04_ncu2025.3.1_registry"
t = [r for r in csv.DictReader((sset / "timings.csv").open()) if r["n"] == "8192" and "wgmma" in r["kernel"]]
refs = [r for r in csv.DictReader((sset / "references.csv").open()) if r["kind"] == "ceiling"]
s8 = max(float(r["rate"]) for r in refs if r["precision"] == "int8" and "wgmma" in r["name"])
for r in t:
    print(f"  {r['kernel']:24s} {float(r['throughput']):7.1f}" + (f"  / s8 ceiling {float(r['throughput']) / s8:.3f}"
                                                               if "int" in r["kernel"] else ""))
