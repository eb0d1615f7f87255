"""The development call's event-timed rates (t8_variants.json: median over its 3 rounds, each the
median of 50 launches) and each as a fraction of the highest s8 wgmma ceiling measured in the same
call (t8_ceilings.json); the profiles' counters come from
`python docs/gpu-runs/2026-12-03_wide_stores/counters.py docs/gpu-runs/2026-12-03_int8_256x192/t8_profiles.tar.xz`.
Run from the repository root: `python docs/gpu-runs/2026-12-03_int8_256x192/summary.py`."""
import json
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
runs = pd.DataFrame(json.loads((HERE / "t8_variants.json").read_text()))
ceilings = pd.DataFrame(json.loads((HERE / "t8_ceilings.json").read_text()))
s8 = ceilings[(ceilings["precision"] == "int8") & ceilings["name"].str.contains("wgmma")]
top = s8.loc[s8["rate"].idxmax()]
table = runs.groupby(["tag", "n"])["rate"].agg(["median", "min", "max"]).unstack("n")
print(f"TOP/s, event-timed (median, min, max of the rounds); ceiling {top['name']} {top['rate']:.1f} TOP/s")
print(table.round(1).to_string())
med = runs.groupby(["tag", "n"])["rate"].median().unstack("n")
print("\nfraction of that ceiling:\n" + (med / top["rate"]).round(3).to_string())
print("\nagainst the registered tiling (i_cl):\n" + (med / med.loc["i_cl"]).round(3).to_string())
