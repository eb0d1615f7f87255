"""Both calls of the INT8 ablation (run1/, run2/): per load, the event-timed rates (median of
each short round's 50 launches; the sustained median of 3000), each as a fraction of the
highest s8 wgmma ceiling of the same call (abl_ceilings.json), and the profiled launch's
counters (abl_ncu.csv, one launch per build, clock control none); for run2 also the SM clock and
power nvidia-smi sampled during each sustained window (abl_smi.csv.xz, 50 ms samples).
Run from the repository root: `python docs/gpu-runs/2026-12-04_int8_ablation/summary.py`."""
import io
import json
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
COUNTERS = {"sm__cycles_elapsed.avg.per_second": "SM clock",
            "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": "tensor pipe, % of active cycles",
            "gpu__time_duration.sum": "duration", "dram__bytes_read.sum": "DRAM read",
            "dram__bytes_write.sum": "DRAM write", "l1tex__m_xbar2l1tex_read_bytes.sum": "L2 to SM bytes"}

for run in ("run1", "run2"):
    loads = pd.DataFrame(json.loads((HERE / run / "abl_loads.json").read_text()))
    ceilings = pd.DataFrame(json.loads((HERE / run / "abl_ceilings.json").read_text()))
    s8 = ceilings[ceilings["precision"] == "int8"]
    top = s8.loc[s8["rate"].idxmax()]
    loads["short"] = loads["short_rate"].map(lambda r: pd.Series(r).median())
    loads["short / ceiling"] = loads["short"] / top["rate"]
    loads["sustained / ceiling"] = loads["sustained_rate"] / top["rate"]
    print(f"== {run}: TOP/s; highest s8 wgmma ceiling {top['name']} {top['rate']:.1f} TOP/s")
    cols = ["load", "short", "sustained_rate", "short / ceiling", "sustained / ceiling"]
    print(loads[cols].round(3).to_string(index=False))
    raw = pd.read_csv(HERE / run / "abl_ncu.csv")
    units, raw = raw.iloc[0], raw.iloc[1:].reset_index(drop=True)
    builds = [ld for ld in loads["load"] if not ld.startswith("peak")]
    prof = raw[list(COUNTERS)].astype(float)
    prof.columns = [f"{COUNTERS[c]} [{units[c]}]" for c in COUNTERS]
    prof.insert(0, "build", builds)  # abl.py profiles the builds in this order, one launch each
    print(prof.round(3).to_string(index=False))
    smi_path = HERE / run / "abl_smi.csv.xz"
    if smi_path.exists():
        smi = pd.read_csv(smi_path, skipinitialspace=True)
        smi["t"] = pd.to_datetime(smi["timestamp"], format="%Y/%m/%d %H:%M:%S.%f").dt.tz_localize("UTC")
        rows = []
        for _, ld in loads.iterrows():
            w = smi[(smi["t"] >= pd.Timestamp(ld["sustained_start_utc"])) & (smi["t"] <= pd.Timestamp(ld["sustained_end_utc"]))]
            rows.append({"load": ld["load"], "samples": len(w), "SM clock [MHz], median": w["clocks.current.sm [MHz]"].median(),
                         "power [W], median": w["power.draw [W]"].median(),
                         "power cap active": int((w["clocks_event_reasons.sw_power_cap"] == "Active").sum())})
        print("sustained windows (nvidia-smi):\n" + pd.DataFrame(rows).to_string(index=False))
    print()
