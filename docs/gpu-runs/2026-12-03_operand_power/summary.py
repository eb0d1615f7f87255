"""Tables of this folder's README from power_loads.json, power_smi.csv, power_ncu.csv and
operands_loads.json, operands_smi.csv.

For each load: the short timings' median rate (three rounds of 50 launches), the sustained rate,
and the nvidia-smi samples inside the sustained window (the first 300 ms left out): median SM
clock and power, and how many samples had the software power cap flagged. Then each ncu launch's
SM clock, tensor-pipe activity and operations per cycle per SM.
Usage: python summary.py (in this folder)
"""
import json
from pathlib import Path

import pandas as pd

HERE = Path(__file__).parent
CAP = "clocks_event_reasons.sw_power_cap"


def windows(loads, smi):
    """One row per load: rates, and the nvidia-smi medians of its sustained window."""
    rows = []
    for ld in loads["loads"]:
        t0 = pd.Timestamp(ld["sustained_start_utc"]) + pd.Timedelta(milliseconds=300)
        t1 = pd.Timestamp(ld["sustained_end_utc"])
        w = smi[(smi["t"] >= t0) & (smi["t"] <= t1)]
        rows.append({"load": ld["load"], "operands": ld["operands"], "unit": ld["unit"],
                     "short": round(pd.Series(ld["short_rate"]).median(), 1),
                     "sustained": round(ld["sustained_rate"], 1),
                     "clock_MHz": w["clocks.current.sm"].median(), "power_W": round(w["power.draw"].median(), 0),
                     "power_cap": f"{(w[CAP].str.strip() == 'Active').sum()} of {len(w)}"})
    return pd.DataFrame(rows)


def read_smi(path):
    smi = pd.read_csv(path, skipinitialspace=True)
    smi.columns = [c.split(" [")[0].strip() for c in smi.columns]
    smi["t"] = pd.to_datetime(smi["timestamp"], format="%Y/%m/%d %H:%M:%S.%f").dt.tz_localize("UTC")
    return smi


print(windows(json.loads((HERE / "power_loads.json").read_text()), read_smi(HERE / "power_smi.csv"))
      .to_markdown(index=False))
print()
print(windows(json.loads((HERE / "operands_loads.json").read_text()), read_smi(HERE / "operands_smi.csv"))
      .to_markdown(index=False))
raw = pd.read_csv(HERE / "power_ncu.csv", skiprows=[1], thousands=",")
ops = {"s8": 2 * 64 * 256 * 32, "f16": 2 * 64 * 256 * 16}
out = []
for i, r in raw.iterrows():
    name = r["Kernel Name"]
    if not name.startswith(("peak_wgmma", "int8_wgmma", "fp16_wgmma")):
        continue  # the check's CuPy and cuBLAS kernels
    if name.startswith("peak_wgmma"):
        work = 132 * 3 * 2048 * 4 * ops["s8" if "_s8_" in name else "f16"]
    else:
        work = 2 * 8192 ** 3
    cyc = r["sm__cycles_elapsed.avg"]
    out.append({"ID": r["ID"], "kernel": name, "duration_ms": r["gpu__time_duration.sum"],
                "clock_GHz": round(r["sm__cycles_elapsed.avg.per_second"], 3),
                "tensor_pct_elapsed": round(r["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"], 2),
                "tensor_pct_active": round(r["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"], 2),
                "op_per_cycle_per_SM": round(work / cyc / 132, 0)})
print()
print(pd.DataFrame(out).to_markdown(index=False))
