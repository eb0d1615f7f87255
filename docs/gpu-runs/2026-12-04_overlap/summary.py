"""Print every number of this folder's README from the files the calls sent back: medians of the
rotating rounds per build and N with the change against the registered build of the same call,
the s8 wgmma ceiling of each call, the checks, the sanitizers, the profiled counters, and the
warp-state samples of the ncu --set full report of the second call (needs ncu_report)."""
import csv, json, lzma, sys, tempfile
from pathlib import Path
import numpy as np

HERE = Path(__file__).resolve().parent
for pfx in ("ov", "ov3", "ov5", "ov6", "ov7"):
    print(f"== {pfx}")
    rounds = json.loads((HERE / f"{pfx}_rounds.json").read_text())
    checks = json.loads((HERE / f"{pfx}_checks.json").read_text())
    ceil = {r["name"]: r["rate"] for r in json.loads((HERE / f"{pfx}_ceilings.json").read_text())}
    s8 = max(v for k, v in ceil.items() if "s8" in k)
    small = [c for c in checks if c["sms"] < 132]
    print(f"checks passed {sum(c['passed'] for c in checks)} of {len(checks)} ({sum(c['passed'] for c in small)} of "
          f"{len(small)} on grids of 2-14 CTAs); highest s8 ceiling {s8:.1f} TOP/s")
    med = {}
    for r in rounds:
        med.setdefault((r["build"], r["n"]), []).append(r["rate"])
    med = {k: float(np.median(v)) for k, v in med.items()}
    for (b, n), v in sorted(med.items(), key=lambda x: (x[0][1], x[0][0])):
        base = med[(b.split("_")[0], n)]
        extra = f"  {v / s8:.3f} of the s8 ceiling" if b.startswith("i8") and n == 8192 else ""
        print(f"  N={n:5d} {b:9s} {v:8.1f}  {100 * (v / base - 1):+5.1f} %{extra}")
    for n in (4096, 6144, 8192):
        if ("i4", n) in med:  # not timed in every call
            print(f"  N={n}: registered INT4 / INT8 {med[('i4', n)] / med[('i8', n)]:.3f}")
    for s in json.loads((HERE / f"{pfx}_sanitize.json").read_text()):
        print(f"  {s['build']} {s['tool']} N={s['n']} on {s['sms']} CTAs rc={s['rc']}: {s['tail'].strip().splitlines()[-1]}")
    builds = json.loads((HERE / f"{pfx}_builds.json").read_text())
    for b, d in builds.items():
        r = d["resources"]
        print(f"  build {b:9s} {r['registers']} registers, spills {r['spill_store_bytes']} bytes; "
              f"IGMMA {d['IGMMA']}, STG.E.64 {d['STG.E.64']}, STG.E.128 {d['STG.E.128']}")
    rows = list(csv.reader(open(HERE / f"{pfx}_ncu.csv")))
    units = dict(zip(rows[0], rows[1]))  # ncu --csv picks each column's unit: the second row
    for b, row in zip(builds, rows[2:]):
        d = dict(zip(rows[0], row))

        def val(name, scale):  # the value in the unit `scale` maps ncu's unit to (1 = as wanted)
            return float(d[name].replace(",", "")) * scale[units[name]]

        print(f"  ncu {b:9s} {val('gpu__time_duration.sum', {'ns': 1e-3, 'us': 1, 'ms': 1e3}):7.1f} us at "
              f"{val('sm__cycles_elapsed.avg.per_second', {'Ghz': 1, 'Mhz': 1e-3}):.3f} GHz, tensor pipe "
              f"{val('sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active', {'%': 1}):.1f} % of active "
              f"cycles, L2 write requests {val('lts__t_requests_srcunit_tex_op_write.sum', {'request': 1e-6}):.2f} M, "
              f"local loads {val('l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum', {'byte': 1e-6, 'Kbyte': 1e-3, 'Mbyte': 1, 'Gbyte': 1e3}):.1f} MB")
print("== int8_wgmma_cluster at N = 8192 on smaller persistent grids (sms.py)")
rows = list(csv.reader(open(HERE / "sms_ncu.csv")))
units = dict(zip(rows[0], rows[1]))
for r, row in zip(json.loads((HERE / "sms_rounds.json").read_text()), rows[2:]):
    d = dict(zip(rows[0], row))
    assert units["sm__cycles_elapsed.avg.per_second"] == "Ghz" and units["dram__bytes_read.sum"] == "Mbyte", units
    ghz = float(d["sm__cycles_elapsed.avg.per_second"])
    print(f"  {r['ctas']:3d} CTAs: check {'passed' if r['passed'] else 'FAILED'}, {r['rate']:7.1f} TOP/s "
          f"({r['rate'] / r['ctas'] * 132:7.1f} per 132 CTAs); profiled at {ghz:.3f} GHz, tensor pipe "
          f"{float(d['sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active']):.1f} % of active cycles, "
          f"L2 {float(d['lts__throughput.avg.pct_of_peak_sustained_elapsed']):.1f} % of peak, "
          f"DRAM read {float(d['dram__bytes_read.sum']):.0f} MB")
print("== registered TMA kernels under compute-sanitizer (the workflow's command, after the harness fix)")
for s in json.loads((HERE / "sanitize_registered.json").read_text()):
    print(f"  {s['kernel']:24s} {s['tool']:9s} rc={s['rc']} {' '.join(s['summary'])}")
try:
    import ncu_report
except ImportError:
    sys.exit("ncu_report not installed: the warp-state samples of ov2_full.ncu-rep.xz are not printed")
sys.path.insert(0, str(HERE.parents[2]))
from analysis.reports.hotspots import hotspots_of
with tempfile.TemporaryDirectory() as tmp:
    rep = Path(tmp) / "ov2_full.ncu-rep"
    rep.write_bytes(lzma.decompress((HERE / "ov2_full.ncu-rep.xz").read_bytes()))
    ctx = ncu_report.load_report(str(rep))
    rng = ctx.range_by_idx(0)
    acts = [(i, rng, rng.action_by_idx(i)) for i in range(rng.num_actions())]
    hot = hotspots_of(rep, acts, top=400)
    for (launch, _, action), tag in zip(acts, ("i8", "i8_ov8")):
        g = hot[hot.launch == launch]
        igmma = g[g.sass.str.startswith("IGMMA")].samples_share.sum()
        wait_full = g[g.sass.str.contains("BRA") & g.reasons.str.startswith("long_scoreboard")].samples_share.sum()
        reasons = {m: action.metric_by_name(m).as_double() for m in action.metric_names()
                   if m.startswith("smsp__pcsamp_warps_issue_stalled_") and not m.endswith("_not_issued")}
        arrive = reasons["smsp__pcsamp_warps_issue_stalled_warpgroup_arrive"] / sum(reasons.values())
        print(f"== ncu --set full, {tag}: {action.metric_by_name('gpu__time_duration.sum').as_double() / 1e3:.1f} us, "
              f"tensor pipe {action.metric_by_name('sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active').as_double():.1f} %; "
              f"warp samples at IGMMA {100 * igmma:.1f} %, at mbarrier-wait branches stalled on long_scoreboard "
              f"{100 * wait_full:.1f} %; all samples stalled on warpgroup_arrive {100 * arrive:.1f} %")
