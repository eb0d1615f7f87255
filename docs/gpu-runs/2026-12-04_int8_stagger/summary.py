"""The staggered-epilogue call: checks, event-timed rates per build and N (median, min and max of
the 4 rotating rounds), the sustained rate at N = 8192, and the profiled launch's SM clock and
tensor-pipe share (stg_ncu.csv; stg.py profiles the builds in BUILDS order, one launch each).
Run from the repository root: `python docs/gpu-runs/2026-12-04_int8_stagger/summary.py`."""
import json
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
checks = pd.DataFrame(json.loads((HERE / "stg_checks.json").read_text()))
print(f"checks: {int(checks['passed'].sum())} of {len(checks)} passed, max |error| {checks['max_abs_error'].max()}")
rounds = pd.DataFrame(json.loads((HERE / "stg_rounds.json").read_text()))
table = rounds.groupby(["build", "n"])["rate"].agg(["median", "min", "max"]).unstack("n")
print("TOP/s, event-timed:\n" + table.round(1).to_string())
med = rounds.groupby(["build", "n"])["rate"].median().unstack("n")
print("\nagainst STAGGER 0:\n" + (med / med.loc["st0"]).round(4).to_string())
sus = pd.DataFrame(json.loads((HERE / "stg_sustained.json").read_text()))
print("\nsustained at N = 8192, TOP/s:\n" + sus[["build", "rate"]].round(1).to_string(index=False))
raw = pd.read_csv(HERE / "stg_ncu.csv")
units, raw = raw.iloc[0], raw.iloc[1:].reset_index(drop=True)
cols = ["sm__cycles_elapsed.avg.per_second", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
        "gpu__time_duration.sum"]
prof = raw[cols].astype(float)
prof.insert(0, "build", list(med.index.sort_values(key=lambda i: i.str[2:].astype(int))))
print("\nprofiled at N = 8192 (" + ", ".join(f"{c} [{units[c]}]" for c in cols) + "):\n" + prof.round(3).to_string(index=False))
