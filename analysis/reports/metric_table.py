"""The per-metric table of a profile set: what comparisons read, one row per launch and
metric, made once per set by the parse job (rule parse_set).

A launch is identified by its report (:func:`launch_source`: the stem without ``_r{R}``, so
that only files named as repeats are repeats), its NVTX range name, ncu's function and
mangled names, precision, N and occurrence (:data:`LAUNCH_KEYS`). Metric names are made
canonical through ``analysis/data/metric_aliases.csv`` (metrics renamed between Nsight
Compute versions, each entry with its source).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.names import launch_source  # noqa: F401 (named here too)
from analysis.units import listed_units, unit_text

#: What identifies one launch of a set (:func:`launch_source` of its report; ``range_name``:
#: the NVTX name of a range-replay range, NA otherwise; ncu's function and mangled names,
#: precision, N, and the launch's place among the report's launches of that kernel). Two
#: launches of a set share these only when they are repeats of one profile (reports named
#: ``{kernel}_n{N}_r{R}``), never when two reports hold one kernel.
LAUNCH_KEYS = ["source", "range_name", "kernel", "mangled", "precision", "n", "occurrence"]

#: A row of a set's per-metric table: a launch (:data:`LAUNCH_KEYS`) and a metric.
KEYS = LAUNCH_KEYS + ["metric"]

#: The part of a launch's identity that must be equal for two launches of two sets to be
#: matched by anything other than their report's name (:func:`match_launches`).
KERNEL_KEYS = ["range_name", "kernel", "mangled", "precision", "n"]

#: Metrics describing the profiling session rather than the kernel (time stamps, sampler
#: buffers); they differ between any two runs and are left out of comparisons.
SESSION_PREFIXES = ("profiler__",)

def aliases() -> pd.DataFrame:
    """The metric alias table: old, new, relation (renamed | equal), source."""
    with resources.files("analysis").joinpath("data/metric_aliases.csv").open(encoding="utf-8") as fh:
        return pd.read_csv(fh)


def canonical_names(table: pd.DataFrame, alias: pd.DataFrame | None = None) -> pd.DataFrame:
    """Give every metric its current name: an old name is replaced by the new one where
    the same report lacks the new name. Adds ``renamed_from`` (the stored name, or NA)."""
    alias = aliases() if alias is None else alias
    out = table.copy()
    out["renamed_from"] = pd.Series(pd.NA, index=out.index, dtype="string")
    group = ["report", "launch"] if "report" in out else ["kernel", "n", "repeat", "launch"]
    for old, new in zip(alias["old"], alias["new"]):
        has_new = out.loc[out["metric"] == new, group].drop_duplicates().assign(_has_new=True)
        rows = out.loc[out["metric"] == old, group].merge(has_new, on=group, how="left")
        idx = out.index[out["metric"] == old][rows["_has_new"].isna().to_numpy()]
        out.loc[idx, "renamed_from"] = old
        out.loc[idx, "metric"] = new
    return out


def _with_identity(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with the columns of :data:`LAUNCH_KEYS` it lacks (tables of older readers:
    mangled = kernel, occurrence 0, range_name NA, source from ``report`` or the kernel)."""
    t = table.copy()
    if "mangled" not in t:
        t["mangled"] = t["kernel"]
    t["mangled"] = t["mangled"].fillna(t["kernel"])
    if "occurrence" not in t:
        t["occurrence"] = 0
    if "demangled" not in t:
        t["demangled"] = pd.Series(pd.NA, index=t.index, dtype="string")
    if "range_name" not in t:
        t["range_name"] = pd.Series(pd.NA, index=t.index, dtype="string")
    if "report" in t:
        reports = t["report"].astype("string")
        sources = {r: launch_source(r) for r in reports.dropna().unique()}
        t["source"] = reports.map(sources).astype("string")
    else:
        t["source"] = t["kernel"].astype("string")
    return t


def _mixed_units(t: pd.DataFrame, out: pd.DataFrame) -> pd.DataFrame:
    """``out`` (one row per :data:`KEYS`, from the rows ``t``) with the rows whose repeats give
    the metric in more than one unit made NaN (value, min, max; repeats 0) and their unit the
    list of those units, each warned of with its reports: a median over values in different
    units would be no value at all. Only the values with a number are looked at, in groups of
    several of them (repeats): a repeat without a number takes no part in the median."""
    several = t["value"].notna() & (t.groupby(KEYS, dropna=False)["value"].transform("count") > 1)
    if not several.any():
        return out
    rep = t.loc[several, KEYS + ["report", "unit"]].copy()
    rep["unit"] = [unit_text(u) for u in rep["unit"]]
    # one vectorised count first (mixed units are rare), the lists only for the groups that have them
    n_units = rep.groupby(KEYS, dropna=False)["unit"].transform("nunique")
    rep = rep[n_units > 1]
    if rep.empty:
        return out
    per = rep.groupby(KEYS, dropna=False).agg(units=("unit", lambda u: tuple(sorted(set(u)))),
                                              reports=("report", lambda r: ", ".join(sorted(set(map(str, r))))))
    per = per.reset_index()
    from analysis.logged import warn

    per["listed"] = per["units"].map(listed_units)
    for _, r in per.iterrows():
        warn(f"{r['kernel']} N={r['n']} occurrence {r['occurrence']} {r['metric']}: its repeats give it in "
             f"{r['listed']} ({r['reports']}): no median taken, the value is NA")
    out = out.merge(per[KEYS + ["listed"]], on=KEYS, how="left")
    hit = out["listed"].notna()
    out.loc[hit, ["value", "vmin", "vmax"]] = np.nan
    out.loc[hit, "repeats"] = 0
    out["unit"] = out["unit"].astype(object)
    out.loc[hit, "unit"] = out.loc[hit, "listed"]
    return out.drop(columns="listed")


def per_metric(table: pd.DataFrame) -> pd.DataFrame:
    """One row per :data:`KEYS` of a set: the median over repeats of the values there are,
    the relative spread over repeats and the noise estimate (both NaN with fewer than two
    values; see the module docstring), ``repeats`` (values with a number), ``unit``,
    ``renamed_from``. Repeats are the reports of one :func:`launch_source` (files named
    ``_r{R}``); launches of other reports stay rows of their own. A metric without a number
    in any repeat keeps its row, value NaN; string-valued metrics are left out. Repeats that
    give one metric in different units are not pooled: that row's value is NaN, its unit
    lists theirs (``"; "``-joined) and a warning names the reports (:func:`_mixed_units`)."""
    t = _with_identity(table[~table["metric"].str.startswith(SESSION_PREFIXES) & table["value_str"].isna()])
    g = t.groupby(KEYS, dropna=False)
    out = g["value"].agg(value="median", vmin="min", vmax="max", repeats="count").reset_index()
    first = g[["unit", "renamed_from", "demangled"]].first().reset_index()
    out = out.merge(first, on=KEYS)
    out = _mixed_units(t, out)
    denom = out["value"].abs().replace(0, np.nan)
    spread = (out["vmax"] - out["vmin"]) / denom
    spread[(out["vmax"] == out["vmin"])] = 0.0
    out["spread_rel"] = spread.where(out["repeats"] > 1)
    pooled = out.groupby("metric")["spread_rel"].transform("median")
    out["noise_rel"] = np.fmax(out["spread_rel"], pooled).where(out["repeats"] > 1)
    return out.drop(columns=["vmin", "vmax"])


#: Columns of a set's per-metric table (:func:`metric_table`), in order.
METRIC_TABLE_COLUMNS = KEYS + ["value", "repeats", "unit", "renamed_from", "spread_rel", "noise_rel", "demangled"]


def metric_table(table: pd.DataFrame) -> pd.DataFrame:
    """What a comparison needs of one set table (:func:`analysis.reports.tables.set_table`): its
    metric names made canonical (:func:`canonical_names`), then one row per :data:`KEYS`
    (:func:`per_metric`), columns :data:`METRIC_TABLE_COLUMNS`. Rule parse_set writes it
    once per set (``per_metric.parquet``), so a set compared with several others is not
    reduced again in each comparison."""
    return per_metric(canonical_names(table))[METRIC_TABLE_COLUMNS]


_REMAKE = "delete it and run the workflow again (or run it with --forcerun parse_set)"


def read_metric_table(path: str | Path) -> pd.DataFrame:
    """A per-metric table written by rule parse_set (:func:`metric_table`), read back.

    Raises:
        AnalysisError: the file cannot be read as parquet, or lacks columns of
            :data:`METRIC_TABLE_COLUMNS` (named, with the file).
    """
    from analysis.errors import AnalysisError

    try:
        table = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several types for a broken file
        raise AnalysisError(f"{path}: not a readable per-metric table ({type(exc).__name__}: {exc}); it is "
                            f"rule parse_set's output: {_REMAKE}") from None
    missing = [c for c in METRIC_TABLE_COLUMNS if c not in table]
    if missing:
        raise AnalysisError(f"{path}: a per-metric table lacks the columns {missing}; it is rule parse_set's "
                            f"output: {_REMAKE}")
    return table
