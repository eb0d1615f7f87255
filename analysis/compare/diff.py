"""Compare two profile sets metric by metric, and flag only changes beyond the noise.

Identity: a launch of a set is its report (the file stem without ``_r{R}``: repeats of one
profile share it), its NVTX range name (range replay), ncu's function and mangled names,
precision, N and its occurrence among the report's launches of that kernel
(:data:`LAUNCH_KEYS`). Launches of two reports are never pooled: only files named as
repeats (``{kernel}_n{N}_r{R}``) are repeats.

Matching two sets, launch to launch (:func:`match_launches`), in this order:

1. the same report stem and the same launch identity (``same report``);
2. else, where the launches of a kernel identity (range name, function, mangled name,
   precision, N) not matched by 1 are in one report in each set, those launches in order of
   occurrence, first with first (``kernel and N`` where N is known, ``launch order`` where it
   is not);
3. what is left cannot be matched (the kernel is in several reports of a set under other
   names): those rows are one-sided, their ``match`` column says why, never pooled.

Metrics renamed between Nsight Compute versions are mapped to one name through
``analysis/data/metric_aliases.csv`` (each entry with its source).

Noise: where a set holds repeats of a profile ({kernel}_n{N}_r{R}), each metric gets a
run-to-run relative spread, (max - min) / |median| over the repeats. Two or three repeats
can show no spread by chance, so a cell's noise is the larger of its own spread and the
median spread of the same metric over all (kernel, N) of the set. A change is flagged
when |candidate - baseline| / |baseline| exceeds ``noise_factor`` times the larger noise
of the two sets (and at least ``min_rel``). Where neither set has repeats of that
(kernel, N), the noise is the noise model's (:mod:`analysis.reports.noise`: measured on
repeated profiles, per metric and N) where one is given and holds the metric, else the
stated ``default_rel`` is the threshold; column ``noise_source`` names which.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.reports.metric_table import (  # noqa: F401 (the comparison's inputs, named here too)
    KERNEL_KEYS, KEYS, LAUNCH_KEYS, METRIC_TABLE_COLUMNS, SESSION_PREFIXES, _with_identity, aliases,
    canonical_names, launch_source, metric_table, per_metric, read_metric_table)
from analysis.units import UNITS, device_attribute_units, unit_factor  # noqa: F401 (named here too)
from analysis.versions import version_numbers

#: Statuses of a comparison row, in the order the summary counts them.
STATUSES = ["changed", "within noise", "unchanged", "unit changed", "no value in baseline",
            "no value in candidate", "no value in either", "only in baseline", "only in candidate", "identifier",
            "device", "setting"]

#: Metrics whose values name where or when a launch ran, not what it did: the kernel's code
#: address, the context, stream and device it ran on, the GPU's PCI location, and the profiler's
#: timestamps. Two sets differ in them whenever they are two runs, so a comparison gives them
#: the status ``identifier`` and never flags them (:func:`is_identifier`).
IDENTIFIER_METRICS = frozenset({"launch__function_pcs", "launch__context_id", "launch__stream_id", "launch__device_id",
                                "device__attribute_pci_bus_id", "device__attribute_pci_device_id",
                                "device__attribute_pci_domain_id"})
IDENTIFIER_PREFIXES = ("profiler__timestamp_",)


def is_identifier(metric: str) -> bool:
    """Whether ``metric`` is one of :data:`IDENTIFIER_METRICS` or starts with one of
    :data:`IDENTIFIER_PREFIXES`."""
    return metric in IDENTIFIER_METRICS or metric.startswith(IDENTIFIER_PREFIXES)


#: Metrics that describe the GPU a launch ran on, not the launch: its clocks, memory sizes,
#: limits and SM count (``device__attribute_*``, save the PCI location, an identifier). Every
#: launch of a report repeats them, so a comparison of two GPUs listed each difference once per
#: launch: 72 of the 182 rows flagged ``changed`` between the A100 and A10G sets. A comparison
#: gives them the status ``device`` and never flags them; the metadata lists each attribute
#: whose values differ between the sets once (:func:`device_attributes`,
#: :func:`metadata_side_by_side`). The system the GPU sits in is described the same way by the
#: NVLink, chip-to-chip link and NUMA topology metrics (``nvlink__*``, ``c2clink__*``,
#: ``numa__*``: link counts, enabled-link masks, CPU affinity), which are not traffic counters
#: (those are ``nvlrx__*`` / ``nvltx__*``). ncu 2026.2.1 on a GPU without NVLink wrote
#: ``nvlink__enabled_mask`` values such as 0x55d72397e258, which differed by 0.5 % between two
#: runs and were flagged ``changed`` before these names were counted here.
DEVICE_PREFIX = "device__attribute_"
DEVICE_PREFIXES = (DEVICE_PREFIX, "nvlink__", "c2clink__", "numa__")


def is_device_attribute(metric: str) -> bool:
    """Whether ``metric`` describes the GPU or its system rather than the launch: a
    ``device__attribute_*`` metric other than an identifier (:func:`is_identifier`), or an
    ``nvlink__*``, ``c2clink__*`` or ``numa__*`` topology metric (:data:`DEVICE_PREFIXES`)."""
    return metric.startswith(DEVICE_PREFIXES) and not is_identifier(metric)


def device_attributes(table: pd.DataFrame) -> dict[str, str]:
    """Each numeric device metric (:func:`is_device_attribute`) of a set (``table``: a per-metric table,
    :func:`metric_table`, or a set table with columns metric and value) with its values in the
    set: one value where every launch agrees, else the distinct values ascending and
    ``", "``-joined (a set of several GPUs). Integral values are written without a fraction;
    launches without a number are left out. Empty where the set has none."""
    names = [m for m in table["metric"].unique() if is_device_attribute(m)]  # each name looked at once
    dev = table[table["metric"].isin(names) & table["value"].notna()]
    out = {}
    for metric, values in dev.groupby("metric", sort=True)["value"]:
        out[str(metric)] = ", ".join(f"{v:.0f}" if float(v).is_integer() else f"{v:g}" for v in sorted(set(values)))
    return out


#: Metrics that give a setting of the measurement, not a measurement of the launch: the warp
#: state sampler's interval (``smsp__pcsamp_interval``, the value v of ncu's
#: ``--sampling-interval``, a sample every 2^(5 + v) cycles, and ``smsp__pcsamp_interval_cycles``,
#: those cycles), the size of its sample buffer (``smsp__pcsamp_buffer_size_bytes``, ncu's
#: ``--sampling-buffer-size``, 32 MiB by default) and the number of replay passes its samples were
#: gathered over (``smsp__pcsamp_aggregated_passes``, at most ncu's ``--sampling-max-passes``);
#: Nsight Compute CLI documentation, "Profile" options. ``--sampling-interval auto`` (the default)
#: lets ncu choose the interval per run: the committed H200 reports hold 6 (2048 cycles), most of
#: other people's 5 (1024), iamcoleman's RTX 3080 report 6. A comparison gives them the status
#: ``setting`` and never flags them (:func:`is_setting`). What the sampler measured stays a counter:
#: ``smsp__pcsamp_sample_count``, the samples per stall reason
#: (``smsp__pcsamp_warps_issue_stalled_*``), and ``smsp__pcsamp_dropped_bytes`` (samples lost to a
#: full buffer: a side that lost some has fewer samples to compare). The profiler's own
#: configuration (``profiler__replayer_passes``, ``profiler__pmsampler_interval_time`` ...) never
#: reaches a comparison: :data:`SESSION_PREFIXES` leaves every ``profiler__*`` metric out of the
#: per-metric table.
SETTING_METRICS = frozenset({"smsp__pcsamp_interval", "smsp__pcsamp_interval_cycles", "smsp__pcsamp_buffer_size_bytes",
                             "smsp__pcsamp_aggregated_passes"})


def is_setting(metric: str) -> bool:
    """Whether ``metric`` is a setting of the measurement rather than a measurement of the
    launch: one of :data:`SETTING_METRICS`."""
    return metric in SETTING_METRICS


from analysis.compare.figures import HEADLINE, headline_figure  # noqa: E402,F401 (drawn there, named here too)


@dataclass(frozen=True)
class Thresholds:
    """When a change counts as real (see the module docstring).

    Raises:
        ValueError: a field that is not a finite number >= 0 (NaN would flag nothing, a
            negative threshold everything).
    """

    noise_factor: float = 3.0
    min_rel: float = 0.005
    default_rel: float = 0.05

    def __post_init__(self) -> None:
        import math

        for name in ("noise_factor", "min_rel", "default_rel"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise ValueError(f"Thresholds.{name} must be a finite number >= 0, not {v!r}")


def compare_sets(baseline: pd.DataFrame, candidate: pd.DataFrame,
                 thresholds: Thresholds = Thresholds()) -> pd.DataFrame:
    """Diff two set tables (:func:`analysis.reports.tables.set_table`): :func:`compare_metric_tables`
    of their :func:`metric_table`. Returns what that returns.

    Raises:
        ValueError: a table without a row (no launch to compare)."""
    for side, t in (("baseline", baseline), ("candidate", candidate)):
        if len(t) == 0:
            raise ValueError(f"compare_sets: the {side} table has no row (no launch to compare)")
    return compare_metric_tables(metric_table(baseline), metric_table(candidate), thresholds)


def _launches(t: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """(one row per launch of a per-metric table, columns :data:`LAUNCH_KEYS`; the launch
    index of each row of ``t``)."""
    lid = t.groupby(LAUNCH_KEYS, dropna=False, sort=False).ngroup().to_numpy()
    first = np.unique(lid, return_index=True)[1]
    return t.iloc[first][LAUNCH_KEYS + ["demangled"]].reset_index(drop=True), lid


#: How two launches were matched (:func:`match_launches`), and what an unmatched one says.
MATCHED_BY = ("same report", "kernel and N", "launch order")


def match_launches(b: pd.DataFrame, c: pd.DataFrame) -> pd.DataFrame:
    """Match the launches of two sets one to one, by the rule of the module docstring.

    Args:
        b, c: one row per launch of the baseline and the candidate, columns
            :data:`LAUNCH_KEYS` (row order is the launch index).

    Returns:
        One row per launch of either set: ``b`` and ``c`` (the launch's row in each table,
        Int64, NA on the side without it) and ``match``: one of :data:`MATCHED_BY`, or for a
        launch without a partner ``only in baseline``/``only in candidate`` or ``not matched:
        ...`` saying why (its kernel is in several reports of a set under other names, or
        the other set has that function name under other mangled names: another signature).
    """
    lb = b.assign(_b=np.arange(len(b)))
    lc = c.assign(_c=np.arange(len(c)))
    same = lb.merge(lc, on=LAUNCH_KEYS)[["_b", "_c"]].assign(match="same report")
    # what is left, each launch ranked among the left launches of its kernel (rule 2 pairs by rank)
    rb = lb[~lb["_b"].isin(same["_b"])].sort_values(["source", "occurrence", "_b"])
    rc = lc[~lc["_c"].isin(same["_c"])].sort_values(["source", "occurrence", "_c"])
    rb = rb.assign(_rank=rb.groupby(KERNEL_KEYS, dropna=False).cumcount())
    rc = rc.assign(_rank=rc.groupby(KERNEL_KEYS, dropna=False).cumcount())
    nb = rb.groupby(KERNEL_KEYS, dropna=False)["source"].nunique().rename("_nb").reset_index()
    nc = rc.groupby(KERNEL_KEYS, dropna=False)["source"].nunique().rename("_nc").reset_index()
    counts = nb.merge(nc, on=KERNEL_KEYS, how="outer")
    single = counts[(counts["_nb"] == 1) & (counts["_nc"] == 1)][KERNEL_KEYS]
    order = (rb.merge(single, on=KERNEL_KEYS)
             .merge(rc.merge(single, on=KERNEL_KEYS).drop(columns="occurrence"), on=KERNEL_KEYS + ["_rank"]))
    order = order[["_b", "_c", "n"]].assign(match=np.where(order["n"].notna(), "kernel and N", "launch order"))
    pairs = pd.concat([same, order.drop(columns="n")], ignore_index=True)
    several = counts[(counts["_nb"].fillna(0) > 1) | (counts["_nc"].fillna(0) > 1)]
    several = several[several["_nb"].notna() & several["_nc"].notna()]
    why = several.assign(why=[f"not matched: {k} is in {int(x)} report(s) of the baseline and {int(y)} of the "
                              "candidate under other names (name the reports alike to match them)"
                              for k, x, y in zip(several["kernel"], several["_nb"], several["_nc"])])

    def alone(side: pd.DataFrame, other: pd.DataFrame, other_left: pd.DataFrame, col: str,
              label: str) -> pd.DataFrame:
        left = side[~side[col].isin(pairs[col])]
        left = left.merge(why[KERNEL_KEYS + ["why"]], on=KERNEL_KEYS, how="left")
        # ncu's function name in the other set under another mangled name: another signature
        names = other.groupby(["kernel", "precision", "n"], dropna=False)["mangled"].agg(
            lambda m: sorted(set(m))).rename("_others").reset_index()
        counts = other.groupby(KERNEL_KEYS, dropna=False).size().rename("_count").reset_index()
        free = other_left.groupby(KERNEL_KEYS, dropna=False).size().rename("_free").reset_index()
        left = (left.merge(names, on=["kernel", "precision", "n"], how="left")
                .merge(counts, on=KERNEL_KEYS, how="left").merge(free, on=KERNEL_KEYS, how="left"))
        # the same kernel (function and mangled name) at other N only, e.g. N known on one side
        sizes: dict[tuple, set[str]] = {}
        for k, m, p, n in zip(other["kernel"], other["mangled"], other["precision"], other["n"]):
            sizes.setdefault((k, m, None if pd.isna(p) else p), set()).add("unknown" if pd.isna(n) else str(int(n)))
        otherwise = []
        for k, m, p, n, o, c, f, r in zip(left["kernel"], left["mangled"], left["precision"], left["n"],
                                          left["_others"], left["_count"], left["_free"], left["_rank"]):
            at = sorted(sizes.get((k, m, None if pd.isna(p) else p), ()), key=lambda v: (len(v), v))
            here = "unknown" if pd.isna(n) else str(int(n))
            if isinstance(o, list) and m not in o:
                otherwise.append(f"not matched: {k} has other mangled names in the other set ({', '.join(o)})")
            elif not pd.isna(c) and pd.isna(f):
                otherwise.append(f"not matched: the other set's {int(c)} launch(es) of {k} are each matched with a "
                                 "launch of their own report name")
            elif not pd.isna(c):
                by_name = f" (its other {int(c - f)} are matched by report name)" if c > f else ""
                otherwise.append(f"not matched: the other set holds {int(f)} launch(es) of {k} not matched by report "
                                 f"name{by_name}, fewer than this one's place among this set's such launches "
                                 f"({int(r) + 1})")
            elif at and here not in at:
                # N unknown on a side: the names differ; else the other set has no launch at this N
                hint = (" (N is unknown where a file name gives none: name both reports alike, {kernel}_n{N}, "
                        "to match them)" if here == "unknown" or "unknown" in at else
                        " (it has no launch of it at this N: a set profiles a kernel at the N its run chose, e.g. "
                        "the kernels beyond the study at config profile.sizes_beyond_study only)")
                otherwise.append(f"not matched: the other set holds {k} at N = {', '.join(at)}, this one at N = "
                                 f"{here}{hint}")
            else:
                otherwise.append(pd.NA)
        reason = left["why"].astype("string").fillna(pd.Series(otherwise, index=left.index, dtype="string"))
        return left[[col]].assign(match=reason.fillna(label).to_numpy())

    out = pd.concat([pairs, alone(rb, lc, rc, "_b", "only in baseline"), alone(rc, lb, rb, "_c", "only in candidate")],
                    ignore_index=True)
    return out.rename(columns={"_b": "b", "_c": "c"}).astype({"b": "Int64", "c": "Int64", "match": "string"})


#: Launch statistics that give a launch's shape: matched launches differing in any ran
#: another problem size or configuration (a comparison row's ``match`` then says so, in
#: this order; the dimensions tell 63 x 32 from 32 x 63 blocks).
#: What :func:`_with_shape_notes` adds to ``match`` (the explanations page finds such pairs by it).
SHAPE_NOTE = "launch shape differs"
SHAPE_METRICS = ("launch__grid_size", "launch__block_size", "launch__grid_dim_x", "launch__grid_dim_y",
                 "launch__grid_dim_z", "launch__block_dim_x", "launch__block_dim_y", "launch__block_dim_z")


def _with_shape_notes(m: pd.DataFrame) -> pd.Series:
    """The ``match`` column of the merged comparison rows, with ``; launch shape differs
    (launch__grid_size 2560 against 640)`` appended on every row of a matched pair whose
    :data:`SHAPE_METRICS` differ (both values known): the pair was matched by name, but its
    launches are not the same work, so its changes are not those of one kernel across
    versions."""
    shape = m[m["metric"].isin(SHAPE_METRICS) & (m["_merge"] == "both") & m["value_baseline"].notna()
              & m["value_candidate"].notna() & (m["value_baseline"] != m["value_candidate"])]
    notes: dict[int, list[str]] = {}
    for pair, metric, vb, vc in zip(shape["_pair"], shape["metric"], shape["value_baseline"],
                                    shape["value_candidate"]):
        notes.setdefault(int(pair), []).append(f"{metric} {vb:g} against {vc:g}")
    if not notes:
        return m["match"]
    order = {metric: i for i, metric in enumerate(SHAPE_METRICS)}
    extra = m["_pair"].map({p: f"; {SHAPE_NOTE} (" + ", ".join(sorted(v, key=lambda t: order[t.split()[0]]))
                               + ")" for p, v in notes.items()})
    return (m["match"] + extra.astype("string")).where(extra.notna(), m["match"]).astype("string")


def compare_metric_tables(b: pd.DataFrame, c: pd.DataFrame, thresholds: Thresholds = Thresholds(),
                          model: pd.DataFrame | None = None, model_name: str = "noise model") -> pd.DataFrame:
    """Diff two sets given as per-metric tables (:func:`metric_table`; the baseline ``b``,
    the candidate ``c``), their launches matched by :func:`match_launches`.

    Returns:
        One row per matched launch pair (or unmatched launch) and metric: the identity
        columns :data:`KEYS` (the baseline's, the candidate's where the baseline has no
        such launch), report_baseline and report_candidate (:func:`launch_source` of each
        side, NA on a side without the launch), match (how the launches were matched, with
        a note where their launch shapes differ, :func:`_with_shape_notes`; or why not),
        value_baseline, value_candidate (medians over repeats, in each set's own
        unit), unit_baseline, unit_candidate, unit_factor (what takes the candidate's unit
        to the baseline's; NaN where they do not convert), abs_change and rel_change
        (candidate in the baseline's unit / baseline - 1; NaN where a value is missing or
        the units do not convert), noise_rel, noise_source (``repeats``, ``{model_name}``
        for the noise model ``model`` (:func:`analysis.reports.noise.noise_model`), or
        ``none: default_rel``), threshold_rel, status (one of
        :data:`STATUSES`; ``identifier`` for the :func:`is_identifier` metrics, ``device``
        for the :func:`is_device_attribute` metrics and ``setting`` for the :func:`is_setting`
        metrics both launches hold, whatever their values) and flagged. flagged is True for
        ``changed``, ``unit changed``, ``no value in baseline``, ``no value in candidate`` and
        the one-sided rows of kernels and N present in both sets (a metric one launch lacks,
        or a launch that could not be matched), save those of identifier, device and setting
        metrics.
    """
    b = _with_identity(b) if "source" not in b else b
    c = _with_identity(c) if "source" not in c else c
    lb, bid = _launches(b)
    lc, cid = _launches(c)
    pairs = match_launches(lb, lc)
    pairs["_pair"] = np.arange(len(pairs))
    pair_of_b = np.full(len(lb), -1)
    pair_of_c = np.full(len(lc), -1)
    hb, hc = pairs["b"].notna().to_numpy(), pairs["c"].notna().to_numpy()
    pair_of_b[pairs["b"][hb].astype(int).to_numpy()] = pairs["_pair"][hb]
    pair_of_c[pairs["c"][hc].astype(int).to_numpy()] = pairs["_pair"][hc]
    vals = ["value", "repeats", "unit", "renamed_from", "spread_rel", "noise_rel"]
    bb = b[["metric", *vals]].assign(_pair=pair_of_b[bid])
    cc = c[["metric", *vals]].assign(_pair=pair_of_c[cid])
    m = bb.merge(cc, on=["_pair", "metric"], how="outer", suffixes=("_baseline", "_candidate"), indicator=True)
    # the launch's identity: the baseline's where it has the launch, else the candidate's
    ident = pd.DataFrame({"_pair": pairs["_pair"], "match": pairs["match"]})
    side_b = lb.iloc[pairs["b"].fillna(0).astype(int)].reset_index(drop=True)
    side_c = lc.iloc[pairs["c"].fillna(0).astype(int)].reset_index(drop=True)
    for col in LAUNCH_KEYS + ["demangled"]:
        ident[col] = side_b[col].where(pd.Series(hb), side_c[col])
    ident["report_baseline"] = side_b["source"].where(pd.Series(hb))
    ident["report_candidate"] = side_c["source"].where(pd.Series(hc))
    m = m.merge(ident, on="_pair", how="left")
    m["match"] = _with_shape_notes(m)
    # unit_factor once per pair of units, not per row (a merge matches NA units to NA)
    units = ["unit_candidate", "unit_baseline"]
    upairs = m[units].drop_duplicates()
    upairs["factor"] = pd.array([unit_factor(u, v) for u, v in zip(upairs[units[0]], upairs[units[1]])],
                                dtype="float64")
    factor = pd.Series(m[units].merge(upairs, on=units, how="left")["factor"].to_numpy(), index=m.index)
    m["unit_factor"] = factor.where(m["_merge"] == "both")
    m["abs_change"] = m["value_candidate"] * m["unit_factor"] - m["value_baseline"]
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = m["abs_change"] / m["value_baseline"].abs()
    rel[(m["abs_change"] == 0)] = 0.0
    m["rel_change"] = rel
    noise = m[["noise_rel_baseline", "noise_rel_candidate"]].max(axis=1, skipna=True)
    source = pd.Series(np.where(noise.notna(), "repeats", "none: default_rel"), index=m.index, dtype="string")
    if model is not None:
        from analysis.reports.noise import model_noise

        modelled = model_noise(m["metric"], m["n"], model)
        use = noise.isna() & modelled.notna()
        noise = noise.where(~use, modelled)
        source = source.where(~use, model_name)
    m["noise_rel"] = noise
    m["noise_source"] = source
    thr = np.maximum(thresholds.noise_factor * noise, thresholds.min_rel)
    m["threshold_rel"] = thr.where(noise.notna(), thresholds.default_rel)

    kn = ["kernel", "n"]
    shared = lb[kn].drop_duplicates().merge(lc[kn].drop_duplicates(), on=kn).assign(_shared=True)
    in_shared = pd.Series(m[kn].merge(shared, on=kn, how="left")["_shared"].notna().to_numpy(), index=m.index)
    both = m["_merge"] == "both"
    has_b, has_c = m["value_baseline"].notna(), m["value_candidate"].notna()
    valued = both & has_b & has_c
    unit_changed = valued & m["unit_factor"].isna()
    comparable = valued & ~unit_changed
    beyond = comparable & (m["rel_change"].abs() > m["threshold_rel"])
    names = m["metric"].unique()  # each name looked at once
    ident_rows = m["metric"].isin([x for x in names if is_identifier(x)])
    device_rows = m["metric"].isin([x for x in names if is_device_attribute(x)])
    setting_rows = m["metric"].isin([x for x in names if is_setting(x)])
    conditions = [ident_rows & both, device_rows & both, setting_rows & both, m["_merge"] == "left_only",
                  m["_merge"] == "right_only", both & ~has_b & ~has_c, both & ~has_b, both & ~has_c, unit_changed,
                  beyond, comparable & (m["rel_change"] != 0), comparable]
    choices = ["identifier", "device", "setting", "only in baseline", "only in candidate", "no value in either",
               "no value in baseline", "no value in candidate", "unit changed", "changed", "within noise", "unchanged"]
    m["status"] = np.select(conditions, choices, default="")
    # a one-sided row is flagged where the other set has the kernel at that N, unless it is an
    # identifier, describes the device or is a setting of the measurement: those are never
    # flagged, on one side or both
    m["flagged"] = (m["status"].isin(["changed", "unit changed", "no value in baseline", "no value in candidate"])
                    | (m["status"].str.startswith("only in") & in_shared & ~(ident_rows | device_rows | setting_rows)))
    cols = KEYS + ["demangled", "report_baseline", "report_candidate", "match", "value_baseline", "value_candidate",
                   "unit_baseline", "unit_candidate", "unit_factor", "abs_change", "rel_change", "noise_rel",
                   "noise_source", "threshold_rel", "repeats_baseline", "repeats_candidate", "renamed_from_baseline",
                   "renamed_from_candidate", "status", "flagged"]
    return m[cols].sort_values(KEYS).reset_index(drop=True)


def status_counts(diff: pd.DataFrame, reasons: pd.DataFrame | None = None) -> pd.DataFrame:
    """Rows and flagged rows of a comparison (:func:`compare_sets`) per status, every
    status of :data:`STATUSES` listed (0 where none).

    Args:
        diff: the comparison.
        reasons: :func:`analysis.compare.renames.reason_counts` of it, or None. Where given, each
            one-sided status with rows is split into one row per reason (``renamed
            (alias)``, ``not in ncu V``, ``real gap``, ``launch not in the other set``, ...),
            so that rows a version difference explains are counted apart from real gaps;
            column ``reason`` is empty on the other statuses.

    Returns:
        Columns status, rows, flagged (and reason, with ``reasons``), in :data:`STATUSES` order.
    """
    g = diff.groupby("status")["flagged"].agg(rows="size", flagged="sum")
    out = g.reindex(STATUSES, fill_value=0).rename_axis("status").reset_index()
    if reasons is None:
        return out
    out.insert(1, "reason", "")
    parts = []
    for _, row in out.iterrows():
        split = reasons[reasons["status"] == row["status"]]
        parts.append(split[["status", "reason", "rows", "flagged"]] if len(split) else row.to_frame().T)
    out = pd.concat(parts, ignore_index=True)
    return out.astype({"rows": "int64", "flagged": "int64"})


#: The fields a report's own session details give, first in a comparison's metadata.
REPORT_FIELDS = ("gpu", "cc", "driver", "cuda_version", "ncu_version")


def versions_from_table(table: pd.DataFrame) -> dict[str, str]:
    """What a set table (:func:`analysis.reports.tables.set_table`) says of
    :data:`REPORT_FIELDS`. Where its reports agree, that value; where they differ (a set of
    several GPUs or versions), the value of each distinct combination, in the same order for
    every field and joined by ", ", ``?`` for a report that does not give the field (``gpu``:
    ``GeForce RTX 3080, Tesla T4``; ``cc``: ``8.6, 7.5``; ``driver``: ``?, 550.54.15``); empty
    where no report gives the field."""
    cols = [c for c in REPORT_FIELDS if c in table]
    rows = table[cols].astype("string").fillna("?").drop_duplicates().sort_values(cols)
    out = {}
    for key in REPORT_FIELDS:
        vals = list(rows[key]) if key in rows else []
        if all(v == "?" for v in vals):
            out[key] = ""
        elif len(set(vals)) == 1:
            out[key] = vals[0]
        else:
            out[key] = ", ".join(vals)
    return out


def _same_version(a: str, b: str) -> bool:
    """Equal values, or the same dotted version but for trailing ``.0`` parts
    (``2025.3.1`` and ``2025.3.1.0``: :func:`analysis.versions.version_numbers`)."""
    return a == b or (version_numbers(a, whole=True) is not None
                      and version_numbers(a, whole=True) == version_numbers(b, whole=True))


# The source of a metadata field a set does not record (neither its metadata.json nor its reports):
# the value's cell is left empty, and this says why.
NOT_RECORDED = "not recorded"


def metadata_side_by_side(baseline: dict, candidate: dict, names: tuple[str, str],
                          from_reports: tuple[dict, dict] = ({}, {}),
                          devices: tuple[dict, dict] = ({}, {})) -> pd.DataFrame:
    """The two sets' metadata as a table: field, unit, baseline, candidate, source of each
    side (``metadata.json``, ``reports``, ``device attribute``, or :data:`NOT_RECORDED` beside
    an empty value: the set records none) and differs. The columns are
    named after the sets (a set compared with itself gets "(baseline)" and "(candidate)" after
    its name).

    Args:
        baseline, candidate: each set's metadata.json (empty dict for a set without one).
        names: the two sets' names.
        from_reports: each set's :func:`versions_from_table`: what its reports' own
            session details give; a field metadata.json lacks (or leaves empty) takes it.
            The fields of :data:`REPORT_FIELDS` come first, each listed even where neither
            side records it (both sources :data:`NOT_RECORDED`: a driver the reports of ncu
            2020.2 do not give), so that every comparison's table has them.
        devices: each set's :func:`device_attributes`. An attribute both sets give, with other
            values, is a row of its own after the metadata (its unit from
            :func:`analysis.units.device_attribute_units`, empty where the attribute has none
            or is not listed there); the attributes they agree on are not listed.

    ``differs`` compares version fields numerically without trailing ``.0`` parts, so
    ``2025.3.1`` (``ncu --version``) and ``2025.3.1.0`` (a report) do not differ; it is
    empty (NA) where a side records no value: not known to differ, nor to agree.
    """
    if names[0] == names[1]:
        names = (f"{names[0]} (baseline)", f"{names[1]} (candidate)")
    keys = list(dict.fromkeys([*REPORT_FIELDS, *baseline, *candidate]))

    def side(meta: dict, reports: dict, key: str) -> tuple[str, str]:
        if meta.get(key) not in (None, ""):
            return str(meta[key]), "metadata.json"
        if reports.get(key):
            return str(reports[key]), "reports"
        return "", NOT_RECORDED

    rows = []
    for k in keys:
        (vb, sb), (vc, sc) = side(baseline, from_reports[0], k), side(candidate, from_reports[1], k)
        rows.append((k, vb, vc, sb, sc))
    df = pd.DataFrame(rows, columns=["field", names[0], names[1], f"source {names[0]}", f"source {names[1]}"])
    df["differs"] = pd.array([pd.NA if not (a and b) else not _same_version(a, b)
                              for a, b in zip(df[names[0]], df[names[1]])], dtype="boolean")
    df.insert(1, "unit", "")
    units = device_attribute_units()
    dev = [(k, units.get(k, ""), devices[0][k], devices[1][k], "device attribute", "device attribute", True)
           for k in sorted(set(devices[0]) & set(devices[1])) if devices[0][k] != devices[1][k]]
    if dev:
        extra = pd.DataFrame(dev, columns=list(df.columns))
        extra["differs"] = extra["differs"].astype("boolean")
        df = pd.concat([df, extra], ignore_index=True)
    return df
