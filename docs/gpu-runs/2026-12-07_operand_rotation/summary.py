"""Every number of this folder's README: per load, the short and sustained event-timed rates
(rot_loads.json), nvidia-smi's SM clock, power and power-cap share over the sustained window
(rot_smi.csv, samples every 50 ms; the first 0.5 s of the window left out), and ncu's SM clock and
tensor-pipe activity of one launch (rot_ncu.csv).
Usage: python3 docs/gpu-runs/2026-12-07_operand_rotation/summary.py"""
import csv
import json
from datetime import datetime, timedelta
from pathlib import Path
from statistics import median

HERE = Path(__file__).parent
loads = json.loads((HERE / "rot_loads.json").read_text())["loads"]
smi = []
with open(HERE / "rot_smi.csv") as fh:
    for row in csv.reader(fh):
        try:
            t = datetime.strptime(row[0].strip(), "%Y/%m/%d %H:%M:%S.%f")
            smi.append((t, float(row[1]), float(row[2]), row[3].strip() == "Active"))
        except (ValueError, IndexError):
            continue  # the header
ncu = {}
with open(HERE / "rot_ncu.csv") as fh:
    rows = [r for r in csv.reader(fh) if len(r) > 14 and r[0].isdigit()]
for r in rows:
    ncu.setdefault(int(r[0]), {"kernel": r[4]})[r[12]] = float(r[14].replace(",", ""))
ncu = [ncu[k] for k in sorted(ncu)]  # one launch per load, in the loads' order
print(f"{'load':48s} {'short':>8s} {'sust.':>8s} {'smi GHz':>8s} {'W':>6s} {'capped':>7s} {'ncu GHz':>8s} {'pipe %':>7s}")
for load, prof in zip(loads, ncu):
    t0 = datetime.fromisoformat(load["sustained_start_utc"]).replace(tzinfo=None) + timedelta(seconds=0.5)
    t1 = datetime.fromisoformat(load["sustained_end_utc"]).replace(tzinfo=None)
    win = [s for s in smi if t0 <= s[0] <= t1]
    clock = median(s[1] for s in win) / 1e3
    power = median(s[2] for s in win)
    capped = sum(s[3] for s in win) / len(win)
    print(f"{load['load']:48s} {median(load['short_rate']):8.1f} {load['sustained_rate']:8.1f} {clock:8.3f} "
          f"{power:6.0f} {capped:7.0%} {prof['sm__cycles_elapsed.avg.per_second'] / 1e9:8.3f} "
          f"{prof['sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active']:7.1f}")
