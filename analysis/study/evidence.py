"""A set's evidence for explanations: its per-metric table, executed instructions per
SASS opcode, guided-analysis findings, source hot spots, event timings and the noise of
each metric, with the launch of a kernel at an N picked out of them
(:meth:`SetEvidence.launch`), the stall stacks of every launch (:func:`stall_table`) and
the event-timed duration change of two launches with its interval
(:func:`duration_change`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.errors import AnalysisError
from analysis.reports.noise import duration_interval, duration_interval_from_quantiles, model_noise
from analysis.study.explain import DURATION, STALL_PREFIX, STALL_SUFFIX

#: Executed instructions per SASS opcode (summed over SMSPs): what the instruction part is
#: split by.
OPCODES = "sass__inst_executed_per_opcode"

#: What :attr:`SetEvidence.launches` holds per launch: the report, the launch's position in
#: it, and its identity in the set's tables (rule parse_set's metrics.parquet).
LAUNCH_COLUMNS = ["report", "launch", "kernel", "mangled", "range_name", "n", "occurrence"]

#: ``range_name`` not given to :meth:`SetEvidence.launch` (NA is a value: a kernel launch).
_ANY = object()


@dataclass
class Launch:
    """One launch's evidence.

    Attributes:
        label: ``kernel at N = n`` (or the report's name for a launch without N); where the
            set holds the kernel under several mangled names (template instantiations) or
            NVTX ranges, the demangled name or ``range {name}`` in place of the kernel's.
        report, mangled, range_name: the report stem (:func:`analysis.names.report_stem`)
            whose instances, findings and hot spots are the launch's, ncu's mangled name and
            the NVTX range (None for a kernel launch).
        values: metric -> value (per-metric table; median over repeats).
        noise: metric -> noise_rel; noise_source: metric -> where it comes from.
        opcodes: SASS opcode -> executed instructions (empty where the report has none).
        findings: the launch's rows of the set's findings table.
        hotspots: the launch's rows of the set's hot-spot table.
    """

    kernel: str
    n: object
    label: str
    values: pd.Series
    noise: pd.Series
    noise_source: pd.Series
    opcodes: pd.Series
    findings: pd.DataFrame
    hotspots: pd.DataFrame
    report: str = ""
    mangled: str | None = None
    range_name: str | None = None


@dataclass
class SetEvidence:
    """What a set's tables hold for explanations (:func:`load_set_evidence`).

    ``launches``: one row per launch of each report (columns :data:`LAUNCH_COLUMNS`), which
    ties a launch's identity in the per-metric table to its position in its report, the key
    of its instances, findings and hot spots."""

    name: str
    metrics: pd.DataFrame
    instances: pd.DataFrame
    findings: pd.DataFrame
    hotspots: pd.DataFrame
    launches: pd.DataFrame
    timings: pd.DataFrame | None = None
    samples: pd.DataFrame | None = None
    model: pd.DataFrame | None = None
    model_name: str = ""
    _noise_at: dict = field(default_factory=dict, repr=False)  # N -> the model's noise_rel per metric

    @cached_property
    def _launch_index(self) -> dict:
        """(kernel, N as float, occurrence) -> row positions of the per-metric table: one pass
        over the table, not one per launch asked for."""
        m = self.metrics
        return m.groupby([m["kernel"], _nkey_column(m["n"]), m["occurrence"]], sort=False).indices

    @cached_property
    def _arrays(self) -> tuple[np.ndarray, ...]:
        """Plain arrays of the columns a launch needs (source, mangled, range_name, demangled,
        metric, value, noise_rel; NA as None): taking rows of the Arrow-backed string columns
        cost most of :meth:`launch`'s time."""
        m = self.metrics
        return (m["source"].to_numpy(dtype=object), _names(m, "mangled"), _names(m, "range_name"),
                _names(m, "demangled"), m["metric"].to_numpy(dtype=object),
                m["value"].to_numpy(dtype="float64"), m["noise_rel"].to_numpy(dtype="float64", na_value=np.nan))

    @cached_property
    def _variants(self) -> dict:
        """kernel -> how many (mangled name, NVTX range) the set holds it under."""
        m = self.metrics
        ids = pd.DataFrame({"kernel": m["kernel"], "mangled": _names(m, "mangled"), "range": _names(m, "range_name")})
        return ids.drop_duplicates().groupby("kernel", sort=False).size().to_dict()

    @cached_property
    def _position(self) -> dict:
        """(report, mangled, range_name, N key, occurrence) -> the launch's position in its report."""
        t = self.launches
        return {(r, m, g, _nkey(n), int(o)): int(la) for r, m, g, n, o, la in zip(
            t["report"], _names(t, "mangled"), _names(t, "range_name"), t["n"], t["occurrence"], t["launch"])}

    @cached_property
    def _opcode_index(self) -> dict:
        return _index(self.instances, ["report", "launch"])

    @cached_property
    def _findings_index(self) -> dict:
        return _index(self.findings, ["report", "launch"])

    @cached_property
    def _hotspot_index(self) -> dict:
        return _index(self.hotspots, ["report", "launch"])

    @cached_property
    def _reports(self) -> list[str]:
        return sorted(set(self.launches["report"].dropna()))

    def launch(self, kernel: str, n, source: str | None = None, occurrence: int = 0, *,
               mangled=_ANY, range_name=_ANY) -> Launch | None:
        """The launch of ``kernel`` at ``n``, or None where the set has no such launch.

        ``source``: its report stem without ``_r{R}``, needed only where several reports hold
        the kernel (the first otherwise). ``mangled`` and ``range_name``: ncu's mangled name
        and the NVTX range (NA: a kernel launch), needed only where the report holds the
        kernel under several (not given: any).

        Raises:
            AnalysisError: the report holds several launches of ``kernel`` at ``n`` and
                ``occurrence`` (other mangled names or ranges) and ``mangled`` /
                ``range_name`` do not pick one; the message lists them.
        """
        nkey = _nkey(n)
        idx = self._launch_index.get((kernel, nkey, occurrence))
        if idx is None:
            return None
        sources, manglings, ranges, demangled, metric_names, vals, rel = (a[idx] for a in self._arrays)
        keep = np.ones(len(sources), dtype=bool)
        if mangled is not _ANY:
            keep &= manglings == (None if pd.isna(mangled) else str(mangled))
        if range_name is not _ANY:
            keep &= ranges == (None if pd.isna(range_name) else str(range_name))
        if not keep.any():
            return None
        keep &= sources == (source if source is not None else sources[keep][0])
        if not keep.any():
            return None
        src = str(sources[keep][0])
        m_keep, r_keep = manglings[keep], ranges[keep]
        one = (m_keep == m_keep[0]).all() and (r_keep == r_keep[0]).all()  # the common case, without a set
        variants = [(m_keep[0], r_keep[0])] if one else sorted(set(zip(m_keep, r_keep)), key=str)
        if len(variants) > 1:
            listed = "; ".join(f"{m_}" + (f" in range {r_}" if r_ is not None else "") for m_, r_ in variants)
            raise AnalysisError(f"set {self.name}: {kernel} at {'N = ' + str(int(n)) if pd.notna(n) else 'no N'}, "
                                f"occurrence {occurrence}, in report {src} is {len(variants)} launches ({listed}): "
                                "name one by its mangled name and range")
        the_mangled, the_range = variants[0]
        the_demangled = demangled[keep][0]
        index = pd.Index(metric_names[keep], name="metric")
        values = pd.Series(vals[keep], index=index, name="value")
        repeat_noise = pd.Series(rel[keep], index=index, name="noise_rel")
        modelled = self._model_at(n).reindex(values.index)
        noise = repeat_noise.where(repeat_noise.notna(), modelled)
        source_of = pd.Series(np.where(repeat_noise.notna(), "repeats of this set",
                                       np.where(modelled.notna(), self.model_name or "noise model", "unknown")),
                              index=values.index)
        # the report whose instances, findings and hot spots stand for the source: the source
        # itself where the set has it, else its first repeat
        got = _reports_of(self._reports, src)
        report = got[0] if got else src
        # the launch's position in that report: the key of its instances, findings and hot spots
        at = self._position.get((report, the_mangled, the_range, nkey, int(occurrence)))
        key = (report, at)
        opc = _rows(self.instances, self._opcode_index, key) if at is not None else self.instances.iloc[0:0]
        opcodes = opc.groupby("key")["value"].sum()
        findings = _rows(self.findings, self._findings_index, key) if at is not None else self.findings.iloc[0:0]
        hot = _rows(self.hotspots, self._hotspot_index, key) if at is not None else self.hotspots.iloc[0:0]
        name = launch_name(kernel, self._variants.get(kernel, 1) > 1, the_range, the_demangled, the_mangled)
        label = f"{name} at N = {int(n)}" if pd.notna(n) else f"{name} ({src})"
        if occurrence:  # a later launch of the same kernel (and N) in its report
            label += f" [occurrence {int(occurrence)}]"
        return Launch(kernel, n, label, values, noise, source_of, opcodes, findings, hot, src, the_mangled,
                      the_range)

    def _model_at(self, n) -> pd.Series:
        """The noise model's noise_rel per metric at N ``n`` (:func:`model_noise`), once per N."""
        key = _nkey(n)
        if key not in self._noise_at:
            if self.model is None or self.model.empty:
                self._noise_at[key] = pd.Series(dtype="float64")
            else:
                metrics = pd.Series(self.model["metric"].unique())
                got = model_noise(metrics, pd.Series(n, index=metrics.index, dtype="Int64") if pd.notna(n) else None,
                                  self.model)
                self._noise_at[key] = pd.Series(got.to_numpy(), index=metrics.to_numpy())
        return self._noise_at[key]


def launch_name(kernel: str, several: bool, range_name, demangled, mangled) -> str:
    """A launch as labels name it: ``kernel``, or, where the set holds that name under
    ``several`` mangled names or ranges, ``range {range_name}`` for an NVTX range, else its
    demangled name (its mangled one where that is missing; NA and None count as missing)."""
    if not several:
        return kernel
    if not pd.isna(range_name):
        return f"range {range_name}"
    return str(demangled) if not pd.isna(demangled) else (str(mangled) if not pd.isna(mangled) else kernel)


def _names(table: pd.DataFrame, column: str) -> np.ndarray:
    """A string column as an object array with None for NA (None where the table lacks it)."""
    if column not in table:
        return np.full(len(table), None, dtype=object)
    col = table[column].astype("string")
    return np.where(col.isna().to_numpy(), None, col.fillna("").to_numpy(dtype=object))


def _nkey(n) -> float:
    """N as an index key: a float, -1 for NA (launches without N)."""
    return -1.0 if pd.isna(n) else float(n)


def _nkey_column(n: pd.Series) -> pd.Series:
    return n.astype("float64").fillna(-1.0)


def _index(table: pd.DataFrame, keys: list[str]) -> dict:
    """Row positions of ``table`` by ``keys`` (``n`` as :func:`_nkey`); {} where the table is
    empty or lacks a key column."""
    if table.empty or any(k not in table for k in keys):
        return {}
    return table.groupby([_nkey_column(table[k]) if k == "n" else table[k] for k in keys], sort=False).indices


def _rows(table: pd.DataFrame, index: dict, key: tuple) -> pd.DataFrame:
    idx = index.get(key)
    return table.iloc[idx] if idx is not None else table.iloc[0:0]


def _reports_of(names: list[str], source: str) -> list[str]:
    """Report stems of ``source`` among ``names`` (sorted: the source itself, then its repeats)."""
    return [r for r in names if r == source or (r.startswith(f"{source}_r") and r[len(source) + 2:].isdigit())]


def load_set_evidence(name: str, per_metric: str | Path, instances: str | Path, findings: str | Path,
                      hotspots: str | Path, timings: str | Path | None = None, samples: str | Path | None = None,
                      model: str | Path | None = None, model_name: str = "", *, table: str | Path) -> SetEvidence:
    """Read a set's tables (rule parse_set's outputs: ``table`` is its metrics.parquet, of
    which only the launches' identity is read; the set's timings.csv and
    timing_samples.csv where it has them, the noise model where there is one).

    Raises:
        AnalysisError, SetFileError: a table cannot be read (named, with the file).
    """
    from analysis.reports.metric_table import read_metric_table
    from analysis.reports.noise import read_noise_model
    from analysis.reports.setfiles import read_timing_samples, read_timings

    inst = pd.read_parquet(instances, columns=["report", "kernel", "repeat", "n", "launch", "metric", "key", "value"])
    try:
        launches = pd.read_parquet(table, columns=LAUNCH_COLUMNS).drop_duplicates(["report", "launch"])
    except (OSError, ValueError, KeyError) as exc:  # pyarrow's missing-column error is an ArrowInvalid (ValueError)
        raise AnalysisError(f"{table}: cannot read the launches of set {name} from it ({exc}); make the set's "
                            "tables again (rule parse_set)") from None
    return SetEvidence(name, read_metric_table(per_metric), inst[inst["metric"] == OPCODES],
                       pd.read_parquet(findings), pd.read_parquet(hotspots), launches.reset_index(drop=True),
                       read_timings(timings) if timings else None,
                       read_timing_samples(samples) if samples and Path(samples).exists() else None,
                       read_noise_model(model) if model else None, model_name)


def stall_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """Every launch's warp cycles per issued instruction by stall reason (the stall
    stack): set per-metric rows of ``smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio``
    as kernel, precision, n, source, mangled, range_name, occurrence, launch, reason,
    cycles_per_issue (warp cycles per issued instruction, float64), share (of the launch's
    stack). ``launch`` names the launch as the pages do: the kernel, or, where the set holds
    the kernel name under several mangled names or ranges, its demangled name or ``range
    {name}``; ``[occurrence k]`` for a later launch of one report, and ``(source)`` where
    several reports hold the same launch. Empty where the reports hold no warp-state metrics."""
    m = metrics[metrics["metric"].str.startswith(STALL_PREFIX) & metrics["metric"].str.endswith(STALL_SUFFIX)]
    ids = ["kernel", "precision", "n", "source", "mangled", "range_name", "occurrence"]
    out = m[[c for c in ids if c in m] + ["demangled", "metric", "value"]].copy()
    for col in ("mangled", "range_name", "demangled"):
        if col not in out:
            out[col] = pd.array([pd.NA] * len(out), dtype="string")
    out["reason"] = out["metric"].str[len(STALL_PREFIX):-len(STALL_SUFFIX)].astype("string")
    out = out.rename(columns={"value": "cycles_per_issue"}).drop(columns="metric")
    keys = ["source", "kernel", "mangled", "range_name", "n", "occurrence"]
    total = out.groupby(keys, dropna=False)["cycles_per_issue"].transform("sum")
    out["share"] = out["cycles_per_issue"] / total.replace(0, np.nan)
    out.insert(out.columns.get_loc("occurrence") + 1, "launch", _stall_labels(out))
    out = out.drop(columns="demangled")
    return out.sort_values(["precision", "kernel", "launch", "n", "reason"]).reset_index(drop=True)


def _stall_labels(t: pd.DataFrame) -> pd.Series:
    """The ``launch`` column of :func:`stall_table` (see there)."""
    kinds = t[["kernel", "mangled", "range_name"]].drop_duplicates()
    several = set(kinds["kernel"][kinds.duplicated("kernel", keep=False)])
    # the same launch (identity, N and occurrence) in several reports of the set
    shared = t.groupby(["kernel", "mangled", "range_name", "n", "occurrence"], dropna=False)["source"].transform(
        "nunique") > 1
    labels = []
    for k, mg, rn, dem, occ, src, in_reports in zip(t["kernel"], t["mangled"], t["range_name"], t["demangled"],
                                                    t["occurrence"], t["source"], shared):
        name = launch_name(k, k in several, rn, dem, mg)
        if not pd.isna(occ) and int(occ) > 0:
            name += f" [occurrence {int(occ)}]"
        if in_reports:
            name += f" ({src})"
        labels.append(name)
    return pd.Series(labels, index=t.index, dtype="string")


@dataclass
class DurationChange:
    """The duration change of launch b against launch a.

    Attributes:
        ratio, low, high: b / a and its interval (dimensionless).
        method: how the interval was made (a 95 % bootstrap of event timings, a 95 % normal
            approximation from timings.csv quantiles, or ncu's duration +- factor x its noise).
        beyond_noise: whether the interval excludes 1 (NA where no interval could be made).
    """

    ratio: float
    low: float
    high: float
    method: str
    beyond_noise: object

    def text(self) -> str:
        if math.isnan(self.ratio):
            return self.method if self.method.startswith("no duration") else "no duration"
        verdict = {True: "beyond noise", False: "within noise"}.get(self.beyond_noise, "noise unknown")
        if math.isnan(self.low):
            return f"{self.ratio:.4f}x ({self.method}): {verdict}"
        return f"{self.ratio:.4f}x (interval {self.low:.4f}-{self.high:.4f}; {self.method}): {verdict}"


def _event_rows(ev: SetEvidence, kernel: str, n):
    t = ev.timings
    if t is None or pd.isna(n):
        return None, None
    row = t[(t["kernel"] == kernel) & (t["n"] == n)]
    s = ev.samples
    samp = None
    if s is not None:
        samp = s[(s["kernel"] == kernel) & (s["n"] == n)]["ns"].to_numpy()
    return (row.iloc[0].to_dict() if len(row) else None), (samp if samp is not None and len(samp) >= 2 else None)


def duration_change(ev_a: SetEvidence, a: Launch, ev_b: SetEvidence, b: Launch, factor: float = 3.0) -> DurationChange:
    """The duration change of ``b`` against ``a``, from the best timing both sides have:
    the event timings' samples (bootstrap), else timings.csv's quantiles (normal
    approximation; :mod:`analysis.reports.noise`), else Nsight Compute's own
    ``gpu__time_duration.sum`` with an interval of ``factor`` times its noise.

    An event-timed interval is a within-run one: two kernels are timed in two processes, so
    the change is beyond noise only where the interval excludes 1 and |ratio - 1| also
    exceeds ``factor`` times the run-to-run noise of the duration (``noise_rel`` of
    ``gpu__time_duration.sum``, the larger side's: repeats, else the noise model), where
    that noise is known."""
    sides = [(float(side.noise.get(DURATION, np.nan)), side.noise_source.get(DURATION, "")) for side in (a, b)]
    known = [(v, src) for v, src in sides if not pd.isna(v)]
    run, run_src = max(known, key=lambda k: k[0]) if known else (math.nan, "")  # the larger noise, and its source
    run_text = (f"; run-to-run noise of ncu's duration {run * 100:.2f} % ({run_src})" if not math.isnan(run) else
                "; run-to-run noise unknown")

    def beyond(r: float, lo: float, hi: float) -> bool:
        return bool((lo > 1 or hi < 1) and (math.isnan(run) or abs(r - 1) > factor * run))

    ra, sa = _event_rows(ev_a, a.kernel, a.n)
    rb, sb = _event_rows(ev_b, b.kernel, b.n)
    if sa is not None and sb is not None:
        r, lo, hi = duration_interval(sa, sb)
        return DurationChange(r, lo, hi, f"95 % bootstrap of {len(sa)} and {len(sb)} event-timed launches{run_text}",
                              beyond(r, lo, hi))
    if ra is not None and rb is not None:
        r, lo, hi = duration_interval_from_quantiles(ra, rb)
        return DurationChange(r, lo, hi, f"95 %, event timings' quantiles (normal approximation){run_text}",
                              beyond(r, lo, hi))
    ta, tb = float(a.values.get(DURATION, np.nan)), float(b.values.get(DURATION, np.nan))
    if not (ta > 0 and tb > 0):
        lack = [side for side, t in (("a (reference)", ta), ("b (candidate)", tb)) if not t > 0]
        return DurationChange(math.nan, math.nan, math.nan,
                              "no duration on either side" if len(lack) == 2 else f"no duration for {lack[0]}", pd.NA)
    r = tb / ta
    if math.isnan(run):
        return DurationChange(r, math.nan, math.nan, "ncu gpu__time_duration.sum, noise unknown", pd.NA)
    lo, hi = r * (1 - factor * run), r * (1 + factor * run)
    return DurationChange(r, lo, hi, f"ncu gpu__time_duration.sum +- {factor:g} x its noise_rel {run:.4f} "
                          f"({run_src})", bool(lo > 1 or hi < 1))
