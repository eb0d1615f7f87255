"""Run-to-run noise: of Nsight Compute's metrics, from repeated profiles, and of the
event-timed duration, from the timed launches.

**Metric noise model** (:func:`noise_model`). A set of repeated profiles (reports
``{kernel}_n{N...}_r{R}``: several ncu processes profiling the same build on the same
GPU; ``config/noise.yaml`` makes one) gives, for each metric and each (kernel, N), the
relative standard deviation over the repeats, ``cv = std / |mean|`` (sample standard
deviation, ddof = 1). Noise depends on the launch's length (at N = 1024 the H200's
launches last 15-50 us, and a metric's cv there is up to 30 times that at N = 8192), so
the model keeps per metric and N the largest cv over the kernels measured at that N
(``cv_max``, conservative with few repeats), their median, and
``noise_rel = sqrt(2) * cv_max``: the relative standard deviation of the difference of two
single profiles, which is what a comparison of two sets without repeats holds. A metric
equal in every repeat (launch configuration; the instruction counts of the mma.sync
kernels, while fp16_wgmma's vary by a few in 10^5 as its warps spin on mbarriers) has
``noise_rel`` 0.

**Duration interval** (:func:`duration_interval`): the ratio of the medians of two
kernels' event-timed launches with a percentile-bootstrap interval (resampling each
side's launches with replacement; Efron and Tibshirani, *An Introduction to the
Bootstrap*, 1993, ch. 13). Where a set kept only quantiles (timings.csv of runs before
``timing_samples.csv``), :func:`duration_interval_from_quantiles` gives a normal
approximation: the standard error of a median of n values is about
``1.2533 * sigma / sqrt(n)`` (the asymptotic variance of the sample median of a normal
distribution, ``pi * sigma^2 / (2 n)``), with ``sigma = IQR / 1.349`` (the interquartile
range of a normal distribution is 1.349 sigma), propagated to the ratio to first order.
Both are within-run intervals: they say whether two kernels timed in one run differ, not
how far a later run would move both.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.errors import AnalysisError

#: Columns of a noise model, in order.
NOISE_COLUMNS = ["metric", "n", "unit", "groups", "repeats", "cv_median", "cv_max", "noise_rel"]


def noise_model(table: pd.DataFrame, min_repeats: int = 3) -> pd.DataFrame:
    """The per-metric noise model of a set of repeated profiles.

    Args:
        table: a set's long table (:func:`analysis.reports.tables.set_table`, as
            ``metrics.parquet``) holding repeats (column ``repeat``).
        min_repeats: repeats with a value a (kernel, N, launch, metric) needs to count.

    Returns:
        DataFrame with columns :data:`NOISE_COLUMNS`, one row per metric and N with a
        number in at least ``min_repeats`` repeats of some kernel at that N: ``n`` (Int64;
        NA for launches without N), ``unit`` (the report's), ``groups`` (the kernels'
        launches at that N it was measured on), ``repeats`` (the smallest
        number of repeats among them), ``cv_median`` and ``cv_max`` (relative standard
        deviation over repeats, median and largest over the groups), ``noise_rel``
        (``sqrt(2) * cv_max``). Metrics whose mean is 0 in every group where they vary are
        left out (no relative noise). Sorted by metric and N.

    Raises:
        AnalysisError: the table holds no (kernel, N) with ``min_repeats`` repeats.
    """
    t = table[table["value_str"].isna() & table["value"].notna()]
    keys = ["kernel", "n", "occurrence", "metric"] if "occurrence" in t else ["kernel", "n", "metric"]
    g = t.groupby(keys, dropna=False)["value"]
    stats = g.agg(mean="mean", std="std", count="count").reset_index()
    stats = stats[stats["count"] >= min_repeats]
    if stats.empty:
        raise AnalysisError(f"noise model: no kernel and N with {min_repeats} or more repeats (reports "
                            "{kernel}_n{N}_r{R}); profile with config profile.repeats >= 3 (config/noise.yaml)")
    with np.errstate(divide="ignore", invalid="ignore"):
        cv = stats["std"] / stats["mean"].abs()
    cv[stats["std"] == 0] = 0.0
    stats["cv"] = cv
    stats = stats[np.isfinite(stats["cv"])]
    units = t.groupby("metric")["unit"].first()
    out = stats.groupby(["metric", "n"], dropna=False).agg(
        groups=("cv", "size"), repeats=("count", "min"), cv_median=("cv", "median"), cv_max=("cv", "max")).reset_index()
    out["n"] = out["n"].astype("Int64")
    out["unit"] = out["metric"].map(units).astype("string")
    out["noise_rel"] = math.sqrt(2.0) * out["cv_max"]
    out["metric"] = out["metric"].astype("string")
    return out[NOISE_COLUMNS].sort_values(["metric", "n"]).reset_index(drop=True)


def read_noise_model(path: str | Path) -> pd.DataFrame:
    """A noise model written by rule noise_model (:func:`noise_model`), read back.

    Raises:
        AnalysisError: the file cannot be read, or lacks columns of :data:`NOISE_COLUMNS`,
            or has a negative or non-numeric ``noise_rel`` (named, with the file).
    """
    try:
        model = pd.read_csv(path, dtype={"metric": "string", "unit": "string", "n": "Int64"})
    except (OSError, ValueError) as exc:
        raise AnalysisError(f"{path}: not a readable noise model ({type(exc).__name__}: {exc})") from None
    missing = [c for c in NOISE_COLUMNS if c not in model]
    if missing:
        raise AnalysisError(f"{path}: a noise model lacks the columns {missing}; it is rule noise_model's output")
    bad = ~(pd.to_numeric(model["noise_rel"], errors="coerce") >= 0)
    if bad.any():
        raise AnalysisError(f"{path}: noise_rel of {model.loc[bad, 'metric'].head(3).tolist()} is not a number >= 0")
    return model


def model_n(n: pd.Series, model: pd.DataFrame) -> pd.Series:
    """For each N of ``n``, the N of ``model`` whose noise it takes: the nearest on a log
    scale, the smaller of two equally near (smaller launches are noisier); NA (no N) and
    an N where the model has none take NA, which :func:`model_noise` reads as the largest
    noise over the model's N."""
    sizes = sorted(int(v) for v in model["n"].dropna().unique())
    if not sizes:
        return pd.Series(pd.NA, index=n.index, dtype="Int64")
    logs = np.log2(np.asarray(sizes, dtype="float64"))

    def nearest(v) -> object:
        if pd.isna(v) or v <= 0:
            return pd.NA
        return sizes[int(np.argmin(np.abs(logs - math.log2(float(v))) + 1e-9 * np.arange(len(sizes))))]

    return pd.Series([nearest(v) for v in n], index=n.index, dtype="Int64")


def model_noise(metrics: pd.Series, n: pd.Series | None, model: pd.DataFrame | None) -> pd.Series:
    """``noise_rel`` of each (metric, N) from ``model``: at the model's nearest N
    (:func:`model_n`); where N is NA, the largest over the model's N. NaN where the model
    does not hold the metric, or there is no model. Index: that of ``metrics``."""
    if model is None or model.empty:
        return pd.Series(np.nan, index=metrics.index, dtype="float64")
    n = pd.Series(pd.NA, index=metrics.index, dtype="Int64") if n is None else n
    at = model_n(pd.Series(pd.unique(n.astype("Int64").dropna()), dtype="Int64"), model)
    to_model = dict(zip(pd.unique(n.astype("Int64").dropna()), at))
    key_n = n.astype("Int64").map(to_model)
    by_n = model.dropna(subset=["n"]).set_index(["metric", "n"])["noise_rel"].astype("float64")
    worst = model.groupby("metric")["noise_rel"].max().astype("float64")
    keys = pd.MultiIndex.from_arrays([metrics.astype("string").to_numpy(), key_n.to_numpy()])
    got = pd.Series(by_n.reindex(keys).to_numpy(), index=metrics.index)
    fallback = pd.Series(metrics.map(worst).to_numpy(dtype="float64"), index=metrics.index)
    return got.where(key_n.notna().to_numpy(), fallback).astype("float64")


def duration_interval(baseline_ns, candidate_ns, *, level: float = 0.95, resamples: int = 4000,
                      seed: int = 0) -> tuple[float, float, float]:
    """Ratio of the median event time of ``candidate_ns`` to that of ``baseline_ns``, with
    a percentile-bootstrap interval (module docstring).

    Args:
        baseline_ns, candidate_ns: event times of single launches (ns), at least 2 each.
        level: coverage of the interval.
        resamples: bootstrap resamples.
        seed: of the resampling (the interval is reproducible).

    Returns:
        (ratio, low, high), dimensionless: candidate / baseline.

    Raises:
        ValueError: fewer than 2 samples on a side, or a sample that is not > 0.
    """
    a = np.asarray(baseline_ns, dtype="float64")
    b = np.asarray(candidate_ns, dtype="float64")
    if len(a) < 2 or len(b) < 2:
        raise ValueError(f"duration interval: {len(a)} and {len(b)} samples; 2 or more on each side are needed")
    if not (np.all(a > 0) and np.all(b > 0)):
        raise ValueError("duration interval: event times must be > 0 ns")
    rng = np.random.default_rng(seed)
    ma = np.median(a[rng.integers(0, len(a), (resamples, len(a)))], axis=1)
    mb = np.median(b[rng.integers(0, len(b), (resamples, len(b)))], axis=1)
    ratios = mb / ma
    q = (1.0 - level) / 2.0
    return float(np.median(b) / np.median(a)), float(np.quantile(ratios, q)), float(np.quantile(ratios, 1 - q))


#: z of a two-sided 95 % normal interval.
_Z95 = 1.959963984540054


def duration_interval_from_quantiles(baseline: dict, candidate: dict) -> tuple[float, float, float]:
    """:func:`duration_interval` where only quantiles were kept: each side a mapping with
    ``median_ns``, ``p25_ns``, ``p75_ns`` and ``repeats`` (a timings.csv row). Normal
    approximation of the module docstring; 95 %.

    Returns:
        (ratio, low, high): candidate median / baseline median and its interval.

    Raises:
        ValueError: a median that is not > 0, or fewer than 2 repeats.
    """
    def rel_se(side: dict) -> float:
        med, n = float(side["median_ns"]), int(side["repeats"])
        if not med > 0 or n < 2:
            raise ValueError(f"duration interval: median {med} ns of {n} repeats")
        sigma = (float(side["p75_ns"]) - float(side["p25_ns"])) / 1.349
        return 1.2533 * sigma / math.sqrt(n) / med

    ratio = float(candidate["median_ns"]) / float(baseline["median_ns"])
    se = ratio * math.hypot(rel_se(baseline), rel_se(candidate))
    return ratio, ratio - _Z95 * se, ratio + _Z95 * se


def noise_model_page(model: pd.DataFrame, table: pd.DataFrame, set_name: str) -> str:
    """How the noise model was made, as Markdown: the set, its kernels, N and repeats, the
    formula, and the noise of a few metrics the explanations lean on (every number a cell
    of ``model``)."""
    kernels = sorted(table["kernel"].dropna().unique())
    sizes = sorted(int(n) for n in table["n"].dropna().unique())
    repeats = int(table["repeat"].max()) + 1 if len(table) else 0
    gpu = ", ".join(sorted(table["gpu"].dropna().unique())) if "gpu" in table else ""
    ncu = ", ".join(sorted(table["ncu_version"].dropna().unique())) if "ncu_version" in table else ""
    lines = [f"# Noise model: {set_name}\n",
             f"Made by rule noise_model (`analysis.reports.noise.noise_model`) from the set {set_name}: "
             f"{len(kernels)} kernels ({', '.join(kernels)}) at N = {', '.join(map(str, sizes))}, each profiled "
             f"{repeats} times with `ncu --set full` (one ncu process per repeat; config/noise.yaml), on {gpu}, "
             f"Nsight Compute {ncu}.\n",
             "Per metric and N: cv = standard deviation / |mean| over the repeats of each kernel; `cv_max` the "
             "largest over the kernels, `noise_rel` = sqrt(2) x cv_max, the relative standard deviation of the "
             "difference of two single profiles. A comparison of sets without repeats takes `noise_rel` at the "
             "model's nearest N; its rows name the model in `noise_source`.\n",
             f"{len(model)} rows; {int((model['noise_rel'] == 0).sum())} with noise 0 (equal in every repeat of "
             "every kernel at that N: launch configuration, most instruction counts).\n",
             "| metric | N | cv_median | cv_max | noise_rel |", "| --- | --- | --- | --- | --- |"]
    shown = ["gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "smsp__inst_executed.sum",
             "dram__bytes_read.sum", "lts__t_sectors.sum", "smsp__warps_active.avg.per_cycle_active",
             "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
             "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
             "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
             "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"]
    for row in model[model["metric"].isin(shown)].itertuples():
        lines.append(f"| `{row.metric}` | {row.n} | {row.cv_median:.5f} | {row.cv_max:.5f} | {row.noise_rel:.5f} |")
    return "\n".join(lines) + "\n"
