"""Tidy tables of a profile set and the per-(kernel, N) summary the figures read.

The set table stacks the per-report tables of :func:`analysis.reports.ncu.load_report` and adds
the set's columns (set, gpu, cc, driver, cuda_version, ncu_version). The summary has
one row per (kernel, N): selected Nsight Compute metrics under their own names, the
event timings taken outside the profiler, and a few derived columns whose formulas are
given in :data:`DERIVED`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.errors import AnalysisError
from analysis.names import launch_source
from analysis.reports.setfiles import read_metadata  # noqa: F401 (the set tables' reader of metadata.json)
from analysis.units import UNKNOWN_UNIT, listed_units, unit_factor, unit_text

#: Set-level columns, in order, put in front of the per-report columns.
SET_COLUMNS = ["set", "gpu", "cc", "driver", "cuda_version", "ncu_version"]

#: Metrics copied into the summary, verbatim.
SUMMARY_METRICS = [
    "gpu__time_duration.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "dram__cycles_active.avg",
    "dram__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "smsp__sass_inst_executed_op_global_ld.sum",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio",
    "sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum",
    "sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access.sum",
    "sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum",
    "smsp__inst_executed.sum",
    "sm__cycles_elapsed.avg.per_second",
    "dram__cycles_elapsed.avg.per_second",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "dram__bytes.sum.peak_sustained",
    "launch__registers_per_thread",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
]

#: Unit of the rate 2 N^3 / duration per precision (operations: FLOP for FP16, integer
#: multiply-adds counted as 2 OP for INT8/INT4).
RATE_UNIT = {"fp16": "TFLOP/s", "int8": "TOP/s", "int4": "TOP/s"}

#: Instanced metric giving thread-level executions per SASS opcode with modifiers.
OPCODE_THREADS = "sass__thread_inst_executed_true_per_opcode_with_modifier_all"

#: Derived summary columns and how each is computed.
DERIVED = {
    "global_ld_sectors_per_request": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / "
                                     "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum (L1TEX global "
                                     "loads; on sm_90 with ncu 2025.3 these requests include LDGSTS)",
    "ldgsts_sectors": "sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access.sum + "
                      "..._cache_bypass.sum",
    "ldgsts_sectors_per_request": "ldgsts_sectors / sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum",
    "ldgsts_bytes_requested": f"sum over LDGSTS* opcodes of {OPCODE_THREADS} x access bytes "
                             "(SASS width modifier .128 = 16 B, .64 = 8 B, none = 4 B)",
    "ldgsts_bytes_per_sector": "ldgsts_bytes_requested / ldgsts_sectors (32 = every byte of every sector used)",
    "ldgsts_ideal_sectors_per_request": "ldgsts_bytes_requested / requests / 32 B",
    "event_over_ncu": "median_ns / gpu__time_duration.sum: the event timing over ncu's duration of the profiled "
                      "launch (0.98-1.27 on the committed H200 set; see check_timings)",
    "throughput": "2 N^3 / median_ns (event timing outside the profiler) or, without timings, "
                  "/ gpu__time_duration.sum; TFLOP/s (FP16) or TOP/s (INT8/INT4)",
}


#: Nominal ranges of summary values: a value outside is kept, and named in the row's
#: ``flags`` (:func:`range_flags`), never refused. A percentage of peak can exceed 100 in
#: a real report (ncu 2023.2 gave an achieved occupancy of 104.7 % on one foreign report);
#: a duration, a rate or a count is never negative.
NOMINAL_RANGES = {
    "gpu__time_duration.sum": (0.0, None),
    "throughput": (0.0, None),
    "sm__warps_active.avg.pct_of_peak_sustained_active": (0.0, 100.0),
    "dram__cycles_active.avg.pct_of_peak_sustained_elapsed": (0.0, 100.0),
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": (0.0, 100.0),
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": (0.0, 100.0),
}


#: Units of the summary's columns that no report gives (derived from its metrics or from
#: the set's event timings), for :func:`summary_units`.
DERIVED_UNITS = {
    "global_ld_sectors_per_request": "sector/request",
    "ldgsts_sectors": "sector",
    "ldgsts_sectors_per_request": "sector/request",
    "ldgsts_bytes_requested": "byte",
    "ldgsts_bytes_per_sector": "byte/sector",
    "ldgsts_ideal_sectors_per_request": "sector/request",
    "median_ns": "ns",
    "p25_ns": "ns",
    "p75_ns": "ns",
    "repeats": "launch",
    "event_over_ncu": "ratio",
    "throughput": "the row's throughput_unit",
}


def first_runs(table: pd.DataFrame) -> pd.Series:
    """Per row of a set table (or its instances), whether it is of its profile's first run
    in the set: the lowest ``repeat`` among the reports of its :func:`analysis.names.launch_source`
    (``{stem}`` is repeat 0, ``{stem}_r1`` repeat 1...). A set holding only ``_r2`` of a profile
    is summarised from ``_r2``; repeats beyond the first serve the noise estimate."""
    # per report (its repeat is fixed by its name), not per row: 269,160 rows of the default set
    per = table[["report", "repeat"]].drop_duplicates("report")
    per = per.assign(source=[launch_source(r) for r in per["report"]])
    first = per["repeat"] == per.groupby("source")["repeat"].transform("min")
    return table["report"].isin(set(per.loc[first, "report"]))


def _summary_metric_units(metrics: pd.DataFrame) -> dict[str, list[str]]:
    """Metric -> the sorted distinct units the rows of ``metrics``, a set's first runs
    (:func:`first_runs`), give it (as :func:`analysis.units.unit_text` writes them)."""
    sel = metrics[metrics["metric"].isin(SUMMARY_METRICS)]
    units = [unit_text(u) for u in sel["unit"]]
    out: dict[str, set[str]] = {}
    for m, u in zip(sel["metric"], units):
        out.setdefault(m, set()).add(u)
    return {m: sorted(us) for m, us in out.items()}


def summary_units(metrics: pd.DataFrame) -> pd.DataFrame:
    """The unit of each numeric column of :func:`summary` for the set table ``metrics``.

    Returns:
        Columns ``column``, ``unit`` and ``source``, one row per column of
        :data:`SUMMARY_METRICS` (in order) then of :data:`DERIVED_UNITS`. A metric's unit is
        the one its reports give (ncu's unit, e.g. ``ns``, ``byte``, ``%``; empty for
        ncu's dimensionless counts, ``(unknown)`` where a report gives none); where
        the set's reports give it in several units they are all listed, joined by ``"; "``
        (the summary's ``flags`` names those rows: :func:`unit_flags`); where no report
        gives the metric the unit is empty and the source says so. The durations behind
        ``throughput`` and ``event_over_ncu`` are in ns (:func:`summary` converts
        ``gpu__time_duration.sum`` for them where a report gives another time unit, and
        says so in ``flags``).
    """
    seen = _summary_metric_units(metrics[first_runs(metrics)])
    rows = []
    for m in SUMMARY_METRICS:
        got = seen.get(m)
        rows.append({"column": m, "unit": listed_units(got) if got else "",
                     "source": ("the reports, in several units: see the summary's flags" if got and len(got) > 1
                                else "the reports" if got else "no report of the set gives it")})
    for col, unit in DERIVED_UNITS.items():
        rows.append({"column": col, "unit": unit,
                     "source": DERIVED.get(col, "the set's event timings (timings.csv)")})
    return pd.DataFrame(rows, columns=["column", "unit", "source"])


def _launch_units(metrics: pd.DataFrame, metric_names: list[str]) -> dict[tuple, str]:
    """(report, launch, metric) -> the unit of the first row of it in ``metrics``, a set's first
    runs (:func:`first_runs`; the row :func:`summary`'s pivot takes the value of), as
    :func:`analysis.units.unit_text` writes it."""
    sel = metrics[metrics["metric"].isin(metric_names)]
    out: dict[tuple, str] = {}
    for r, la, m, u in zip(sel["report"], sel["launch"], sel["metric"], sel["unit"]):
        out.setdefault((r, la, m), unit_text(u))
    return out


def unit_flags(metrics: pd.DataFrame, wide: pd.DataFrame) -> pd.Series:
    """Per row of the summary ``wide`` (keyed by report and launch), the metrics of
    :data:`SUMMARY_METRICS` that the set's reports give in more than one unit, as
    ``"metric in UNIT (the set also has OTHER)"`` joined by ``"; "`` (empty where none): the
    values are kept as their reports give them, never converted, so a column that mixes
    units is named on each of its rows."""
    return _unit_flags(metrics[first_runs(metrics)], wide)


def _unit_flags(metrics: pd.DataFrame, wide: pd.DataFrame) -> pd.Series:
    """:func:`unit_flags` of a set's first runs (:func:`first_runs`), as :func:`summary` holds them."""
    seen = _summary_metric_units(metrics)
    mixed = [m for m in SUMMARY_METRICS if len(seen.get(m, [])) > 1]
    parts: list[list[str]] = [[] for _ in range(len(wide))]
    if mixed:
        unit_of = _launch_units(metrics, mixed)
        for i, (r, la) in enumerate(zip(wide["report"], wide["launch"])):
            for m in mixed:
                u = unit_of.get((r, la, m))
                if u is not None:
                    others = ", ".join(x or "(none)" for x in seen[m] if x != u)
                    parts[i].append(f"{m} in {u or '(none)'} (the set also has {others})")
    return pd.Series(["; ".join(p) for p in parts], index=wide.index)


def range_flags(wide: pd.DataFrame, ranges: dict[str, tuple[float | None, float | None]] | None = None
                ) -> pd.Series:
    """Per row of a wide table (one row per launch, one column per metric), the values
    outside ``ranges`` (metric -> (lowest, highest), None for no bound; default
    :data:`NOMINAL_RANGES`), as ``"metric = value outside [lo, hi]"`` joined by ``"; "``
    (empty string where none). A zero duration or rate is flagged too (nothing runs in
    0 ns). Missing columns and NaN values are not flagged."""
    parts: list[list[str]] = [[] for _ in range(len(wide))]  # by position: any index, repeated too
    for metric, (lo, hi) in (NOMINAL_RANGES if ranges is None else ranges).items():
        if metric not in wide:
            continue
        v = pd.to_numeric(wide[metric], errors="coerce").astype("float64").to_numpy()
        with np.errstate(invalid="ignore"):
            low = v <= lo if lo == 0.0 and metric in ("gpu__time_duration.sum", "throughput") else \
                (v < lo if lo is not None else np.zeros(len(v), bool))
            high = v > hi if hi is not None else np.zeros(len(v), bool)
        shown = f"[{lo:g}, {'' if hi is None else f'{hi:g}'}]".replace(", ]", ", inf)")
        for i in np.flatnonzero(low | high):
            parts[i].append(f"{metric} = {v[i]:.6g} outside {shown}")
    return pd.Series(["; ".join(p) for p in parts], index=wide.index)


def _metric_str(df: pd.DataFrame, metric: str) -> str | None:
    hit = df.loc[df["metric"] == metric, "value_str"].dropna()
    return str(hit.iloc[0]) if len(hit) else None


def _metric_num(df: pd.DataFrame, metric: str) -> float | None:
    hit = df.loc[df["metric"] == metric, "value"].dropna()
    return float(hit.iloc[0]) if len(hit) else None


def report_gpu(table: pd.DataFrame) -> str | None:
    """The GPU a report's tidy table names (``device__attribute_display_name``), or None."""
    return _metric_str(table, "device__attribute_display_name")


def not_the_sets_gpu(gpu: str | None, metadata: dict) -> bool:
    """Whether a report's ``gpu`` is known and another than the one the set's metadata.json
    names (a report of elsewhere in a measured set: metadata.json's versions are not its)."""
    return bool(gpu and metadata.get("gpu") and gpu != metadata["gpu"])


#: The set columns a report's own session details can give (analysis.reports.report_info).
_REPORT_KEYS = ("gpu", "cc", "driver", "cuda_version", "ncu_version")


def set_table(reports: list[pd.DataFrame], set_name: str, metadata: dict,
              report_meta: dict[str, dict] | None = None) -> pd.DataFrame:
    """Stack per-report tables into one table for a profile set.

    Args:
        reports: per-report tables (:func:`analysis.reports.ncu.load_report`).
        set_name: the set's name (column ``set``).
        metadata: the set's metadata.json (empty for a set without one).
        report_meta: report stem -> what the report's own session details give
            (:func:`analysis.reports.report_info.report_metadata`); None where not read.

    GPU name and compute capability come from each launch's device attributes
    (``device__attribute_display_name``, ``device__attribute_compute_capability_major/minor``),
    then the report's session details, then metadata.json. Driver, CUDA and Nsight
    Compute versions come from metadata.json where it gives them (the workflow's own sets:
    ``ncu_version`` as ``ncu --version`` prints it, ``2025.3.1``), else from each report's
    own session details (four components, ``2025.3.1.0``; ``cuda_version`` is then the
    driver's CUDA version), else NA. In an imported set they are one value per report
    and can differ within the set. A report whose GPU is not metadata.json's (a report of
    elsewhere put in a measured set) takes none of metadata.json's values.
    """
    frames = []
    for df in reports:
        df = df.copy()
        stem = str(df["report"].iloc[0]) if "report" in df and len(df) else None
        own = (report_meta or {}).get(stem) or {}
        major = _metric_num(df, "device__attribute_compute_capability_major")
        minor = _metric_num(df, "device__attribute_compute_capability_minor")
        gpu = report_gpu(df) or own.get("gpu")
        meta = {} if not_the_sets_gpu(gpu, metadata) else metadata  # then the set's versions are not its own
        df.insert(0, "set", set_name)
        df.insert(1, "gpu", gpu or metadata.get("gpu"))
        df.insert(2, "cc", f"{int(major)}.{int(minor)}" if major is not None and minor is not None
                  else own.get("cc") or meta.get("cc"))
        for i, key in enumerate(("driver", "cuda_version", "ncu_version"), start=3):
            df.insert(i, key, meta.get(key) or own.get(key))
        frames.append(df)
    out = pd.concat(frames, ignore_index=True)
    for col in SET_COLUMNS:
        out[col] = out[col].astype("string")
    return out.sort_values(["kernel", "n", "repeat", "launch", "metric"], kind="stable").reset_index(drop=True)


def access_bytes(opcode: str) -> int:
    """Bytes per thread of a SASS memory instruction from its width modifier
    (``LDGSTS.E.BYPASS.128`` -> 16, ``LDG.E.64`` -> 8, no width -> 4)."""
    widths = [int(t) for t in opcode.split(".")[1:] if re.fullmatch(r"(8|16|32|64|128)", t)]
    return (widths[-1] // 8) if widths else 4


def ldgsts_bytes(instances: pd.DataFrame) -> pd.Series:
    """Bytes requested by LDGSTS per (report, launch), from thread-level opcode counts."""
    sel = instances[(instances["metric"] == OPCODE_THREADS) & instances["key"].str.startswith("LDGSTS")]
    sel = sel.assign(bytes=sel["value"] * sel["key"].map(access_bytes).astype("float64"))
    return sel.groupby(["report", "launch"])["bytes"].sum()


def _refuse_duplicate_launches(metrics: pd.DataFrame) -> None:
    """No two reports of a set may hold the same launch of a kernel at a known N."""
    cols = [c for c in ("kernel", "mangled", "n", "occurrence") if c in metrics]
    ids = metrics[[*cols, "report"]].drop_duplicates()
    ids = ids[ids["n"].notna()]
    dup = ids[ids.duplicated(cols, keep=False)]
    if len(dup):
        first = dup.iloc[0]
        same = dup[(dup[cols] == first[cols]).all(axis=1)]["report"]
        where = f"set {metrics['set'].iloc[0]}: " if "set" in metrics and len(metrics) else ""
        raise AnalysisError(f"{where}kernel {first['kernel']} at N = {first['n']} is in several reports "
                            f"({', '.join(sorted(same))}); keep one (a repeat of a profile is named _r1, _r2, ...)")


def _refuse_foreign_repeats(metrics: pd.DataFrame) -> None:
    """Reports named as repeats of one profile (``{stem}_r1``, ``_r2``, ... beside ``{stem}``)
    must come from the same GPU: their values are pooled into one median and one
    run-to-run spread (:mod:`analysis.compare.diff`), which repeats of another GPU would
    turn into a GPU difference read as noise."""
    if "gpu" not in metrics or not (metrics["repeat"] > 0).any():
        return
    ids = metrics[["report", "gpu"]].drop_duplicates("report")
    ids = ids.assign(base=[launch_source(r) for r in ids["report"]])
    for base, g in ids.groupby("base", sort=True):
        gpus = {str(v) for v in g["gpu"] if not pd.isna(v)}  # a GPU a report does not give is not compared
        if len(gpus) > 1:
            listed = ", ".join(f"{r} ({'unknown' if pd.isna(v) else v})" for r, v in zip(g["report"], g["gpu"]))
            where = f"set {metrics['set'].iloc[0]}: " if "set" in metrics and len(metrics) else ""
            raise AnalysisError(f"{where}reports named as repeats of one profile come from other GPUs: {listed}; "
                                "a repeat (_r1, _r2, ...) is the same profile run again on the same GPU: rename "
                                "the others without the _r part, or put them in a set of their own")


def _duration_ns(metrics: pd.DataFrame, wide: pd.DataFrame) -> tuple[pd.Series, list[str]]:
    """``gpu__time_duration.sum`` of each row of ``wide`` in ns, for the columns derived from
    it (throughput without timings, event_over_ncu), and per row a note where that took a
    conversion (another time unit: ``analysis.units.unit_factor``) or was impossible (not a
    time: NaN). The column itself keeps the value its report gives. ``metrics``: a set's first
    runs (:func:`first_runs`), as :func:`summary` holds them."""
    metric = "gpu__time_duration.sum"
    unit_of = _launch_units(metrics, [metric])
    values, notes = [], []
    for r, la, v in zip(wide["report"], wide["launch"], wide[metric]):
        u = unit_of.get((r, la, metric))
        f = 1.0 if u is None else unit_factor(None if u == UNKNOWN_UNIT else u, "ns")
        if f is None:
            values.append(np.nan)
            notes.append(f"{metric} in {u or '(none)'}, not a time unit: throughput and event_over_ncu "
                         "left NA where they need it")
        else:
            values.append(v * f)
            notes.append("" if f == 1.0 else f"{metric} in {u}: throughput and event_over_ncu use it "
                                             f"converted to ns (x {f:g})")
    return pd.Series(values, index=wide.index, dtype="float64"), notes


def summary(metrics: pd.DataFrame, instances: pd.DataFrame | None,
            timings: pd.DataFrame | None) -> pd.DataFrame:
    """One row per launch (per kernel and N for this workflow's reports) with the
    figures' inputs.

    Args:
        metrics: a set table (:func:`set_table`); only each profile's first run in the set
            is summarised (:func:`first_runs`: repeat 0, or the lowest repeat the set holds;
            repeats serve the noise estimate); every launch of a report with several gets a
            row of its own, keyed by report and launch.
        instances: per-instance values (:func:`analysis.reports.ncu.load_instances`) or None.
        timings: the set's event timings (kernel, n, median_ns, p25_ns, p75_ns, repeats, ...)
            or None; without them throughput falls back to ncu's gpu__time_duration.sum.

    Returns:
        DataFrame keyed by set, report and launch, with gpu, kernel, precision, n and the
        launch's identity (mangled and demangled name, occurrence, profiling_failed),
        the columns of :data:`SUMMARY_METRICS` (NaN where a report lacks one) and
        :data:`DERIVED`; throughput and its unit are NA where N or the precision is
        unknown; ``flags`` names the values outside :data:`NOMINAL_RANGES` (kept as they
        are; :func:`range_flags`) and the metrics its reports give in several units
        (:func:`unit_flags`), empty where none. The columns' units: :func:`summary_units`.

    Raises:
        AnalysisError: reports named as repeats of one profile come from other GPUs
            (:func:`_refuse_foreign_repeats`); two reports of the set give the same launch
            (kernel, N and occurrence, first runs), e.g. a report of one N beside a report of every N of the
            same kernel; the message names the set, the kernel, N and both reports.
    """
    keys = ["set", "gpu", "kernel", "precision", "n", "report", "launch"]
    attrs = [c for c in ("mangled", "demangled", "occurrence", "profiling_failed") if c in metrics]
    _refuse_foreign_repeats(metrics)
    metrics = metrics[first_runs(metrics)]
    _refuse_duplicate_launches(metrics)
    if instances is not None and "repeat" in instances and len(instances):
        instances = instances[first_runs(instances)]
    sel = metrics[metrics["metric"].isin(SUMMARY_METRICS)]
    wide = sel.pivot_table(index=["report", "launch"], columns="metric", values="value", aggfunc="first",
                           dropna=False)
    base = metrics[keys + attrs].drop_duplicates(["report", "launch"]).set_index(["report", "launch"])
    wide = base.join(wide).reset_index()
    for m in SUMMARY_METRICS:
        if m not in wide:
            wide[m] = np.nan
    wide = wide[keys + attrs + SUMMARY_METRICS].copy()

    wide["global_ld_sectors_per_request"] = (wide["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
                                             / wide["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"])
    wide["ldgsts_sectors"] = (wide["sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access.sum"]
                              + wide["sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum"])
    req = wide["sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum"].replace(0, np.nan)
    wide["ldgsts_sectors_per_request"] = wide["ldgsts_sectors"] / req
    if instances is not None and len(instances):
        by = ldgsts_bytes(instances)
        wide["ldgsts_bytes_requested"] = [by.get((r, la), np.nan) for r, la in zip(wide["report"], wide["launch"])]
    else:
        wide["ldgsts_bytes_requested"] = np.nan
    wide["ldgsts_bytes_per_sector"] = wide["ldgsts_bytes_requested"] / wide["ldgsts_sectors"].replace(0, np.nan)
    wide["ldgsts_ideal_sectors_per_request"] = wide["ldgsts_bytes_requested"] / req / 32.0
    no_ldg = wide["smsp__sass_inst_executed_op_global_ld.sum"].fillna(0) == 0
    wide.loc[no_ldg, "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"] = np.nan

    # rates need N and a precision: NA for kernels of unknown precision or size
    ops = 2.0 * wide["n"].astype("float64") ** 3
    wide["throughput_unit"] = wide["precision"].astype(object).map(RATE_UNIT)
    ops = ops.where(wide["throughput_unit"].notna())
    if timings is not None and len(timings):
        # an event timing is of one kernel launch: it belongs to the one launch of its kernel
        # and N in a report (a report of one launch per N has one such launch per N)
        t = timings[["kernel", "n", "median_ns", "p25_ns", "p75_ns", "repeats"]].astype({"n": "Int64"})
        wide = wide.merge(t, on=["kernel", "n"], how="left")
        several = wide.groupby(["report", "n"], dropna=False)["launch"].transform("size") > 1
        wide.loc[several, ["median_ns", "p25_ns", "p75_ns", "repeats"]] = np.nan
    else:
        for col in ("median_ns", "p25_ns", "p75_ns", "repeats"):
            wide[col] = np.nan
    ncu_ns, dur_notes = _duration_ns(metrics, wide)
    wide["event_over_ncu"] = wide["median_ns"] / ncu_ns
    timed = wide["median_ns"].notna()
    dur = wide["median_ns"].where(timed, ncu_ns)
    wide["throughput"] = ops / dur / 1e3
    wide["throughput_source"] = np.where(timed, "cuda events (outside profiler)",
                                         "ncu gpu__time_duration.sum (under profiler)")
    wide["throughput_source"] = wide["throughput_source"].where(wide["throughput"].notna(),
                                                                "none (N, precision or duration unknown)")
    ranged, units = range_flags(wide), _unit_flags(metrics, wide)
    wide["flags"] = ["; ".join(x for x in parts if x) for parts in zip(ranged, units, dur_notes)]
    return wide.sort_values(["precision", "kernel", "n", "report", "launch"]).reset_index(drop=True)


#: How far an event timing may lie from ncu's duration of the same kernel and N before it
#: is flagged (a factor either way). On the committed H200 set the two agree within
#: 0.98-1.27 (clocks differ between the timed and the profiled launches); a factor of 2
#: means another kernel, another N or another unit.
TIMING_FACTOR = 2.0


def check_timings(summary_table: pd.DataFrame, timings_path: str | Path) -> list[str]:
    """One message per (kernel, N) whose event timing and ncu's gpu__time_duration.sum
    differ by more than :data:`TIMING_FACTOR`, naming ``timings_path`` and the row."""
    r = summary_table["event_over_ncu"]
    bad = summary_table[(r > TIMING_FACTOR) | (r < 1 / TIMING_FACTOR)]
    return [f"{timings_path}: {k} N={n}: event timing {m:.6g} ns is {q:.3g}x ncu's gpu__time_duration.sum "
            f"({d:.6g} ns) of the same kernel and N; is it the same kernel, N and unit?"
            for k, n, m, d, q in zip(bad["kernel"], bad["n"], bad["median_ns"], bad["gpu__time_duration.sum"],
                                     bad["event_over_ncu"])]


#: How far above every reference rate measured for its precision (ceilings and library
#: GEMMs of references.csv) a kernel's rate may lie before it is flagged.
RATE_MARGIN = 1.05

#: The references a precision's rates are held to: INT4 operands fit INT8 instructions (a
#: kernel may unpack INT4 and multiply with s8 MMAs, as int4_ptx_unpack_s8 does), so INT4
#: rates are bounded by the INT8 references too.
RATE_REFERENCES = {"fp16": ["fp16"], "int8": ["int8"], "int4": ["int4", "int8"]}


def check_rates(summary_table: pd.DataFrame, references: pd.DataFrame, timings_path: str | Path,
                references_path: str | Path, unbounded: Iterable[str] = ()) -> list[str]:
    """One message per (kernel, N) whose throughput exceeds :data:`RATE_MARGIN` times the
    highest rate ``references`` holds for its precision (:data:`RATE_REFERENCES`: the
    measured ceilings and library GEMMs, same unit), naming both files: such a rate
    cannot be right. Kernels in ``unbounded`` are not held to them: the wgmma kernels
    (:func:`unbounded_kernels`), which the mma.sync ceilings do not bound (int8_wgmma ran
    at 1522 TOP/s against the s8 mma.sync ceiling's 1270 in the `_paths` set)."""
    summary_table = summary_table[~summary_table["kernel"].isin(list(unbounded))]
    out = []
    for prec, allowed in RATE_REFERENCES.items():
        g = references[references["precision"].isin(allowed)]
        if g.empty:
            continue
        top = g.loc[g["rate"].idxmax()]
        rows = summary_table[(summary_table["precision"] == prec)
                             & (summary_table["throughput"] > RATE_MARGIN * top["rate"])]
        out += [f"{timings_path}: {k} N={n}: {r:.4g} {u} is above every rate measured for {prec} in "
                f"{references_path} (highest: {top['name']}, {top['rate']:.4g} {top['unit']})"
                for k, n, r, u in zip(rows["kernel"], rows["n"], rows["throughput"], rows["throughput_unit"])]
    return out


def unbounded_kernels(kernels: dict) -> list[str]:
    """Registry kernels (``config kernels``) whose instruction no reference of references.csv
    measures: ``mma: wgmma...`` (the ceilings there are register-only mma.sync loops)."""
    return sorted(k for k, spec in kernels.items() if str(spec.get("mma", "")).startswith("wgmma"))


def timings_table(records: list[dict]) -> pd.DataFrame:
    """The set's timings.csv from the harness's JSON records (samples left out):
    kernel, precision, n, seed, warmups, repeats, median/min/p25/p75/max in ns, throughput,
    throughput_unit, max_abs_error, rel_fro_error, tolerance."""
    rows = []
    for r in records:
        rows.append({k: r[k] for k in ("kernel", "precision", "n", "seed", "warmups", "repeats", "median_ns",
                                        "min_ns", "p25_ns", "p75_ns", "max_ns", "throughput", "throughput_unit")}
                    | {"max_abs_error": r["check"]["max_abs_error"],
                       "rel_fro_error": r["check"]["rel_fro_error"], "tolerance": r["check"]["tolerance"]})
    return pd.DataFrame(rows).sort_values(["precision", "kernel", "n"]).reset_index(drop=True)


def timing_samples_table(records: list[dict]) -> pd.DataFrame:
    """Every event-timed launch of the harness's JSON records, as a long table: kernel, n,
    sample (0-based, in launch order), ns (float64, CUDA event time of one launch). What
    an interval for a ratio of medians is bootstrapped from
    (:func:`analysis.reports.noise.duration_interval`); timings.csv keeps only quantiles.

    Raises:
        KeyError: a record without ``samples_ns`` (a harness older than this table).
    """
    rows = [(r["kernel"], int(r["n"]), i, float(ns)) for r in records for i, ns in enumerate(r["samples_ns"])]
    df = pd.DataFrame(rows, columns=["kernel", "n", "sample", "ns"])
    return df.sort_values(["kernel", "n", "sample"]).reset_index(drop=True)
