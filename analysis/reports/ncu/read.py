"""One report into its tidy tables: :func:`load_report` (one row per launch x metric) and
:func:`load_instances` (per-instance values)."""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from analysis.errors import ReportError
from analysis.names import ReportName, is_text, report_stem
from analysis.nsight import ncu_report
from analysis.reports.ncu.files import REPROFILE, _plain_report
from analysis.reports.ncu.launches import FAILED_SHARE, IDENTITY_COLUMNS, NOT_MEASURED_PREFIXES, OPCODE_INSTANCES, TIDY_COLUMNS, _METRIC_TYPE, _actions, _check_named, _dims, _metric_value, _nvtx_names, _open, launch_sizes, precision_from_kernel
from analysis.reports.ncu.units import _ask, _attributes, _chip, _note_values, _plan, _typed_chip


def _not_text(path: Path, launch: int, what: str, s: str) -> ReportError:
    """The error for a launch's string that is not text (see :func:`analysis.names.is_text`)."""
    at = next(i for i, ch in enumerate(s) if not is_text(ch))
    shown = s[max(0, at - 30):at + 30].encode("utf-8", "backslashreplace").decode()
    return ReportError(path, f"launch {launch}: {what} is not text (at character {at}: ...{shown}...; corrupt report)",
                       REPROFILE)


def _check_launches(path: Path, name: ReportName | None, actions: list, expect_launches: int | None) -> None:
    """Raise ReportError where the report holds no launch, or not ``expect_launches`` per N, or
    a launch whose function names, NVTX ranges or metric names are not text (a damaged report:
    :func:`analysis.names.is_text`)."""
    if not actions:
        raise ReportError(path, "holds no kernel launch")
    per_n = len(name.sizes) if name else 1
    if expect_launches is not None and len(actions) != expect_launches * per_n:
        few = len(actions) < expect_launches * per_n
        raise ReportError(path, f"holds {len(actions)} kernel launch{'es' * (len(actions) != 1)}, expected "
                                f"{expect_launches}"
                                + (f" per N ({expect_launches * per_n} for the {per_n} sizes of its name)"
                                   if per_n > 1 else ""),
                          "profile again with --launch-count and --launch-skip covering every launch asked for"
                          if few else "profile with --launch-count 1 and a --kernel-name filter")
    for launch, _rng, action in actions:
        function = action.name()
        for what, text in (("its function name", function),
                           ("its demangled function name", action.name(ncu_report.IAction.NameBase_DEMANGLED)),
                           ("its mangled function name", action.name(ncu_report.IAction.NameBase_MANGLED)),
                           *zip(("its NVTX range", "its NVTX ranges"), _nvtx_names(action))):
            if text is not None and not is_text(text):
                raise _not_text(path, launch, what, text)
        names = action.metric_names()
        if len(names) == 0:
            raise ReportError(path, f"launch {launch} ({function or 'no function name'}) has no metrics (corrupt report)",
                              REPROFILE)
        bad = next((n for n in names if not is_text(n)), None)
        if bad is not None:
            raise _not_text(path, launch, "a metric name", bad)


def _metric_table(path: Path, name: ReportName | None, actions: list,
                  attributes: Callable[[], list[tuple[list[str], list[int]]]]) -> pd.DataFrame:
    """The tidy table of ``actions``; ``attributes()``: per launch, the units and metric
    types of its metrics in sorted-name order (:func:`_attributes`), asked for once the
    values are read."""
    IAction = ncu_report.IAction

    rows: list[tuple] = []
    ident: list[tuple] = []
    seen: dict[tuple, int] = {}
    sizes = launch_sizes(name, [launch for launch, _, _ in actions])
    try:
        for (launch, rng, action), size in zip(actions, sizes):
            names = sorted(action.metric_names())
            kernel = name.kernel if name else action.name()
            mangled = action.name(IAction.NameBase_MANGLED) or action.name()
            range_name, nvtx = _nvtx_names(action)
            # the launch's place among those of its range and kernel at its N (one launch per N: 0)
            occurrence = seen.get((range_name, mangled, size), 0)
            seen[(range_name, mangled, size)] = occurrence + 1
            empty = measured = 0
            for metric_name in names:
                m = action.metric_by_name(metric_name)
                value, value_str = _metric_value(m)
                if value_str is not None and not is_text(value_str):
                    raise _not_text(path, launch, f"the value of {metric_name}", value_str)
                count = m.num_instances()
                if value == 0 and count == 0 and OPCODE_INSTANCES(metric_name):
                    value = math.nan  # a breakdown by opcode of no opcode: not collected (load_report)
                if not metric_name.startswith(NOT_MEASURED_PREFIXES):
                    measured += 1
                    empty += math.isnan(value) and value_str is None
                rows.append((kernel, metric_name, launch, value, value_str, count))
            ident.append((launch, rng, action.name(), action.name(IAction.NameBase_DEMANGLED), mangled,
                          occurrence, _dims(action, "grid"), _dims(action, "block"),
                          empty > FAILED_SHARE * measured or not measured, range_name, nvtx))
    except BaseException:
        with contextlib.suppress(Exception):  # the child's answer is read, so the next report gets its own
            attributes()
        raise
    got = attributes()
    units = [u for launch_units, _ in got for u in launch_units]
    types = [_METRIC_TYPE.get(t, "other") for _, launch_types in got for t in launch_types]
    if len(units) != len(rows) or len(types) != len(rows):
        raise ReportError(path, f"its units and metric types ({len(units)}) do not match its metrics ({len(rows)})",
                          REPROFILE)
    rows = [(*r[:5], u, t, r[5]) for r, u, t in zip(rows, units, types)]
    df = pd.DataFrame(rows, columns=["kernel", "metric", "launch", "value", "value_str", "unit",
                                     "metric_type", "instances"])
    df["precision"] = df["kernel"].map(precision_from_kernel).astype("string")
    df["n"] = pd.array(launch_sizes(name, df["launch"]), dtype="Int64")
    df["repeat"] = name.repeat if name else 0
    for col in ("kernel", "metric", "value_str", "unit", "metric_type"):
        df[col] = df[col].astype("string")
    df["value"] = df["value"].astype("float64")
    ids = pd.DataFrame(ident, columns=["launch", *IDENTITY_COLUMNS[1:]])
    df = df.merge(ids, on="launch", how="left", validate="many_to_one")
    df["report"] = report_stem(path)
    for col in ("report", "function", "demangled", "mangled", "grid", "block", "range_name", "nvtx"):
        df[col] = df[col].astype("string")
    df["profiling_failed"] = df["profiling_failed"].astype(bool)
    return df[TIDY_COLUMNS + IDENTITY_COLUMNS]


def _instance_table(path: str | Path, name: ReportName | None, actions: list,
                    metrics: list[str] | Callable[[str], bool] | None) -> pd.DataFrame:
    rows: list[tuple] = []
    for launch, _rng, action in actions:
        kernel = name.kernel if name else action.name()
        if metrics is None or callable(metrics):
            wanted = [m for m in action.metric_names() if metrics is None or metrics(m)]
        else:
            wanted = metrics
        for metric_name in wanted:
            m = action.metric_by_name(metric_name)
            if m is None or m.num_instances() == 0:
                continue
            ids = m.correlation_ids() if m.has_correlation_ids() else None
            for i in range(m.num_instances()):
                v = m.value(i)
                key = str(ids.value(i)) if ids is not None else str(i)
                if isinstance(v, str):
                    rows.append((kernel, launch, metric_name, i, key, math.nan, v))
                else:
                    rows.append((kernel, launch, metric_name, i, key, math.nan if v is None else float(v), None))
    df = pd.DataFrame(rows, columns=["kernel", "launch", "metric", "instance", "key", "value", "value_str"])
    df.insert(0, "report", pd.array([report_stem(path)] * len(df), dtype="string"))
    df.insert(2, "n", pd.array(launch_sizes(name, df["launch"]), dtype="Int64"))
    df.insert(2, "repeat", name.repeat if name else 0)
    for col in ("kernel", "metric", "key", "value_str"):
        df[col] = df[col].astype("string")
    return df


def _report_path(path: str | Path) -> Path:
    """``path`` as a Path, refusing what names no file: TypeError for another type (None, bytes),
    ValueError for an empty string (``Path("")`` is the working folder)."""
    if not isinstance(path, (str, os.PathLike)) or isinstance(path, bytes):
        raise TypeError(f"a report path must be a str or os.PathLike naming a .ncu-rep or .ncu-rep.xz file, "
                        f"not {type(path).__name__}")
    if isinstance(path, str) and path == "":
        raise ValueError("a report path must name a .ncu-rep or .ncu-rep.xz file, not an empty string")
    return Path(path)


def _read(path: str | Path, expect_launches: int | None, *, metrics: bool = True,
          instances: bool = False, instance_filter: Callable[[str], bool] | None = None,
          evidence: bool = False) -> tuple[pd.DataFrame | None, ...]:
    """Open a report once and build the tables asked for (instances of the metrics
    ``instance_filter`` accepts; None: every instanced metric): (metrics, instances), and
    with ``evidence`` also the guided-analysis findings
    (:func:`analysis.reports.findings.findings_of`) and the source hot spots
    (:func:`analysis.reports.hotspots.hotspots_of`) of the same open report."""
    path = _report_path(path)
    if expect_launches is not None and (isinstance(expect_launches, bool) or not isinstance(expect_launches, int)
                                        or expect_launches < 1):
        raise ValueError(f"expect_launches must be None or a whole number of at least 1, not {expect_launches!r}")
    name = ReportName.parse(path)
    with _plain_report(path) as plain:
        # a process that read reports of one chip asks that chip's server at once, so its
        # child reads while this process opens the report and reads the values
        likely = _typed_chip() if metrics else None
        early = _ask(likely, plain, True, early=True) if likely is not None else None
        try:
            actions = list(_actions(_open(path, plain)))
            chip = _chip(actions)
            plan = _plan(chip) if metrics else None
            _note_values(chip)
            _check_named(path, name, actions)
            table = None
            if metrics:
                _check_launches(path, name, actions, expect_launches)
                attributes = _attributes(path, plain, chip, actions, plan, early)
                early = None
                table = _metric_table(path, name, actions, attributes)
        finally:
            if early is not None:
                early.drop()
        inst = _instance_table(path, name, actions, instance_filter) if instances else None
        if evidence:
            from analysis.reports.findings import findings_of
            from analysis.reports.hotspots import hotspots_of

            return table, inst, findings_of(path, actions), hotspots_of(path, actions)
    return table, inst


def load_report(path: str | Path, *, expect_launches: int | None = None) -> pd.DataFrame:
    """Read one report, from this workflow or any other program, into a tidy long table,
    one row per launch x metric.

    Args:
        path: any ``.ncu-rep`` or ``.ncu-rep.xz`` file. Kernel, N and repeat are taken
            from the file name when it reads ``{kernel}_n{N}[_r{R}]`` (every launch must
            then be of that kernel) or ``{kernel}_n{N1}-{N2}-...[_r{R}]`` (one launch per
            N, launch i at the i-th N), otherwise from the report (kernel = ncu's function
            name of each launch, N = NA, repeat 0).
        expect_launches: the number of kernel launches the report must hold per N of its
            name (the workflow asks for 1 for the reports it makes); None (default) reads
            every launch of every range.

    Returns:
        DataFrame with columns :data:`TIDY_COLUMNS` then :data:`IDENTITY_COLUMNS`:
        ``kernel`` (str), ``precision`` (str or NA), ``n`` (Int64), ``repeat`` (int: which
        profile of the same kernel and N), ``launch`` (int, 0-based across ranges),
        ``metric`` (Nsight Compute name, verbatim), ``value`` (float64; NaN where the
        metric is a string or has no value), ``value_str`` (string-valued metrics),
        ``unit`` (as the report gives it), ``metric_type`` (counter/ratio/throughput/
        other), ``instances`` (number of instance values; the row holds the total; a
        per-opcode metric, :data:`OPCODE_INSTANCES`, of no instance and a total of 0 has no
        value, NaN: it breaks an executed-instruction count down by opcode, so 0 is no
        measurement; Nsight Compute 2020.2.1 stores ``sass__thread_inst_executed_true_per_opcode``
        so where it did not collect it, beside 2.9e8 executed warp instructions);
        ``report`` (file stem), ``range`` (int), ``function``, ``demangled``, ``mangled``
        (ncu's three names of the launch's kernel; ``range`` for all three of a
        range-replay action), ``occurrence`` (int: 0 for the first launch of that
        ``range_name`` and mangled name (and N) in the report, 1 for the next...), ``grid``
        and ``block`` (``"x,y,z"`` or NA), ``profiling_failed`` (bool: more than
        :data:`FAILED_SHARE` of the launch's measured metrics have no value, or it has none: the device's
        attributes and the profiler's session records, :data:`NOT_MEASURED_PREFIXES`, are not counted), ``range_name``
        (string or NA: for an action of range replay, ``ncu --replay-mode range`` or
        ``app-range``, the NVTX range(s) naming it, e.g. ``alpha``; NA for kernel
        launches), ``nvtx`` (string or NA: the NVTX push/pop ranges open around the launch,
        outermost first, ``outer/inner``, prefixed ``{domain}:`` outside the default
        domain, domains joined by ``;``; NA where none is open). A launch is identified
        by ``report``, ``range_name``, ``mangled`` and ``occurrence`` (and ``n``).

    ``unit`` and ``metric_type`` do not depend on what the process read before, neither
    the order of the metrics nor other reports (of any GPU or Nsight Compute version): each
    is what ncu_report gives for this report in a process that read nothing else. Unit:
    the one ncu_report gives the metric when it is the first unit the process asks for
    (checked metric by metric on the first two launches of the 56 reports of
    ``foreign-reports`` and on eight of this project's reports: so for all but
    ``sass__inst_executed_register_spilling_mem_{local,shared}`` of the H200 reports,
    ``inst`` as the other instruction counts, where alone it gets ``byte``;
    :func:`_attribute_order`). The first report a process reads is read in the process; the OTHER units
    (and, for a report of another GPU chip than the first, all units and types) of later
    ones come from a child process per report, forked from a server process per GPU chip
    that this module starts: 0.06 s a report instead of 0.04 on the default set, plus
    about 0.3 s to start a chip's server (docs/robustness.md, fault 6). A process that
    used ``ncu_report`` itself, before or between these reads, gets all units and types of
    every later report from such a child (:func:`analysis.nsight.used_outside`; 0.2 s a
    report instead of 0.11 on 20 reports of the default set). Values are read here either
    way and do not depend on any of it.

    Raises:
        ReportError: missing, empty, truncated, corrupt or non-report file; a launch with
            no metrics; a launch count other than ``expect_launches`` per N, or than the
            sizes the name gives; the process reading units and metric types crashed,
            hung (600 s) or ended. The message names the file and the cause.
        TypeError: ``path`` is neither a str nor an os.PathLike (None, bytes).
        ValueError: ``path`` is an empty string, or ``expect_launches`` is not None or a
            whole number of at least 1.
    """
    return _read(path, expect_launches)[0]


def check_report_name(path: str | Path, stem: str) -> None:
    """Check, before ``path`` is stored as ``{stem}.ncu-rep.xz``, what that stem says of its
    launches where it reads ``{kernel}_n{N...}[_r{R}]``: the checks :func:`load_report`
    makes of such a name (every launch of that kernel, one launch per N of a name of
    several sizes, grids that fit the sizes). Opens the report with ``ncu_report`` (no
    metric values are read); a stem of no such form is not opened.

    Raises:
        ReportError: the report contradicts the stem, or cannot be read; the message names
            ``path`` and the cause.
    """
    name = ReportName.parse(f"{stem}.ncu-rep")
    if name is None:
        return
    path = Path(path)
    with _plain_report(path) as plain:
        _check_named(path, name, list(_actions(_open(path, plain))))


def load_instances(path: str | Path, metrics: list[str] | None = None) -> pd.DataFrame:
    """Per-instance values of instanced metrics (per opcode, per SASS PC, per sample).

    Args:
        path: as for :func:`load_report`.
        metrics: metric names to read; None reads every instanced metric.

    Returns:
        DataFrame with columns kernel, n, repeat, launch, metric, instance (int position),
        key (the correlation id as a string: an opcode such as ``LDGSTS.E.BYPASS.128``,
        a PC, or a sample index), value (float64), value_str.

    Raises:
        ReportError, TypeError, ValueError: as :func:`load_report`.
    """
    path = _report_path(path)
    name = ReportName.parse(path)
    with _plain_report(path) as plain:
        actions = list(_actions(_open(path, plain)))
        _note_values(_chip(actions))
        _check_named(path, name, actions)
        return _instance_table(path, name, actions, metrics)
