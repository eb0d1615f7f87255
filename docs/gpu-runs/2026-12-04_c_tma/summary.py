"""Print every number of this folder's README from the files the two calls sent back:
medians of the rotating rounds per build and N, ratios to the registered build of the same call,
the s8 wgmma ceiling of each call, the checks, the sanitizers, and the profiled counters."""
import csv, json
from pathlib import Path
import numpy as np

HERE = Path(__file__).resolve().parent
BASE = {"i8": "i8", "i4": "i4", "f16": "f16"}
for pfx in ("ctma", "ctma2"):
    print(f"== {pfx}")
    rounds = json.loads((HERE / f"{pfx}_rounds.json").read_text())
    checks = json.loads((HERE / f"{pfx}_checks.json").read_text())
    ceil = {r["name"]: r["rate"] for r in json.loads((HERE / f"{pfx}_ceilings.json").read_text())}
    s8 = max(v for k, v in ceil.items() if "s8" in k)
    print(f"checks passed {sum(c['passed'] for c in checks)} of {len(checks)}; highest s8 ceiling {s8:.1f} TOP/s")
    med = {}
    for r in rounds:
        med.setdefault((r["build"], r["n"]), []).append(r["rate"])
    med = {k: float(np.median(v)) for k, v in med.items()}
    for (b, n), v in sorted(med.items(), key=lambda x: (x[0][1], x[0][0])):
        base = med[(b.split("_")[0], n)]
        extra = f"  {v / s8:.3f} of the s8 ceiling" if b.startswith("i8") and n == 8192 else ""
        print(f"  N={n:5d} {b:12s} {v:8.1f}  {100 * (v / base - 1):+5.1f} %{extra}")
    for n in (4096, 6144, 8192):
        i4 = max(v for (b, m), v in med.items() if m == n and b.startswith("i4"))
        i8 = max(v for (b, m), v in med.items() if m == n and b.startswith("i8"))
        print(f"  N={n}: best INT4 / best INT8 {i4 / i8:.3f}; registered {med[('i4', n)] / med[('i8', n)]:.3f}")
    for s in json.loads((HERE / f"{pfx}_sanitize.json").read_text()):
        print(f"  {s['build']} {s['tool']} N={s['n']} rc={s['rc']}: {s['tail'].strip().splitlines()[-1]}")
    rows = list(csv.reader(open(HERE / f"{pfx}_ncu.csv")))
    builds = [b for b in json.loads((HERE / f"{pfx}_builds.json").read_text())]
    for b, row in zip(builds, rows[2:]):
        d = dict(zip(rows[0], row))
        print(f"  ncu {b:12s} {float(d['gpu__time_duration.sum']) * 1e3:7.1f} us at "
              f"{float(d['sm__cycles_elapsed.avg.per_second']):.3f} GHz, tensor pipe "
              f"{float(d['sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active']):.1f} %, "
              f"L2 write requests {float(d['lts__t_requests_srcunit_tex_op_write.sum']) / 1e6:.2f} M, "
              f"shared store wavefronts {float(d['l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum'].replace(',', '')) / 1e6:.2f} M "
              f"(conflicts {float(d['l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum'].replace(',', '')) / 1e6:.2f} M)")
