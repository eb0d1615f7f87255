"""Both STORE64 calls (s64.py: INT8 and FP16; s64b.py: INT8 and INT4), each: checks, event-timed rates per build and N (median, min and max of the 6
rotating rounds) and as fractions of the highest ceiling of each precision measured in the same
call (s64_ceilings.json), the sustained rate at N = 8192, and the profiled launch's counters
(s64_ncu.csv; s64.py profiles the builds in BUILDS order, one launch each).
Run from the repository root: `python docs/gpu-runs/2026-12-04_int8_store64/summary.py`."""
import json
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
# each call's BUILDS (tag: precision), in its order
CALLS = {"s64": {"i8": "int8", "i8_s64": "int8", "f16": "fp16", "f16_s64": "fp16"},
         "s64b": {"i8": "int8", "i8_s64": "int8", "i4": "int4", "i4_s64": "int4"}}


def summary(call: str, BUILDS: dict[str, str]) -> None:
    """Print one call's tables."""
    checks = pd.DataFrame(json.loads((HERE / f"{call}_checks.json").read_text()))
    print(f"checks: {int(checks['passed'].sum())} of {len(checks)} passed at N = {sorted(checks['n'].unique())}; "
          f"max |error| INT8 {checks[checks['build'].str.startswith('i8')]['max_abs_error'].max()}")
    rounds = pd.DataFrame(json.loads((HERE / f"{call}_rounds.json").read_text()))
    print("TFLOP/s or TOP/s, event-timed:\n" + rounds.groupby(["build", "n"])["rate"].agg(["median", "min", "max"])
          .unstack("n").round(1).to_string())
    med = rounds.groupby(["build", "n"])["rate"].median().unstack("n")
    print("\nSTORE64 against the registered build:")
    base = [t for t in BUILDS if not t.endswith("_s64")]
    print((med.loc[[t + "_s64" for t in base]].values / med.loc[base]).round(4).to_string())
    ceil = pd.DataFrame(json.loads((HERE / f"{call}_ceilings.json").read_text()))
    top = ceil.loc[ceil.groupby("precision")["rate"].idxmax()].set_index("precision")
    print("\nhighest ceilings: " + ", ".join(f"{p} {r['name']} {r['rate']:.1f}" for p, r in top.iterrows()))
    with_ceiling = [t for t in med.index if BUILDS[t] in top.index]  # INT4 has no wgmma ceiling of its own
    frac = med.loc[with_ceiling].apply(lambda row: row / top.loc[BUILDS[row.name], "rate"], axis=1)
    print("fraction of that ceiling:\n" + frac.round(3).to_string())
    sus = pd.DataFrame(json.loads((HERE / f"{call}_sustained.json").read_text()))
    print("\nsustained at N = 8192:\n" + sus[["build", "rate"]].round(1).to_string(index=False))
    raw = pd.read_csv(HERE / f"{call}_ncu.csv", dtype=str)
    units, raw = raw.iloc[0], raw.iloc[1:].reset_index(drop=True)
    cols = [c for c in raw.columns if "__" in c]
    prof = raw[cols].apply(lambda s: pd.to_numeric(s.str.replace(",", ""), errors="raise"))
    prof.columns = [f"{c} [{units[c]}]" if isinstance(units[c], str) else c for c in cols]
    prof.insert(0, "build", list(BUILDS))
    print("\nprofiled at N = 8192:\n" + prof.T.to_string(header=False))
    if "i4" in BUILDS:
        print("\nINT4 / INT8, registered and both with STORE64:")
        ratio = pd.DataFrame(med.loc[["i4", "i4_s64"]].values / med.loc[["i8", "i8_s64"]].values,
                             index=["registered", "STORE64"], columns=med.columns)
        print(ratio.round(3).to_string())


for name, builds in CALLS.items():
    print(f"======== {name}.py")
    summary(name, builds)
    print()
