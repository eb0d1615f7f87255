"""The launches of a report as ``ncu_report`` gives them: their columns, identity (names, sizes, NVTX
ranges, grid and block) and metric values, and the checks a ``{kernel}_n{N}`` name implies."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from pathlib import Path

import pandas as pd

from analysis.errors import ReportError
from analysis.names import ReportName
from analysis.nsight import load_report as _native_load, ncu_report
from analysis.precision import PRECISIONS
from analysis.reports.ncu.files import REPROFILE


#: Columns of the per-report tidy table, in order (one row per launch x metric).
TIDY_COLUMNS = ["kernel", "precision", "n", "repeat", "launch", "metric", "value", "value_str", "unit",
                "metric_type", "instances"]

#: Columns that identify a launch, after :data:`TIDY_COLUMNS`: the report's file stem; the
#: profiling range; ncu's function, demangled and mangled names; the launch's position
#: among the report's launches of the same NVTX range name and mangled name (and N, in a
#: report of one launch per N); grid and block size ("x,y,z", NA without the launch
#: statistics); whether profiling failed for the launch; the NVTX name of a range-replay
#: range; the NVTX push/pop ranges around the launch (:func:`_nvtx_names`).
IDENTITY_COLUMNS = ["report", "range", "function", "demangled", "mangled", "occurrence", "grid", "block",
                    "profiling_failed", "range_name", "nvtx"]

#: A launch counts as not profiled when more than this share of its measured metrics (those
#: not named by :data:`NOT_MEASURED_PREFIXES`) has no value (no number and no string), or when it
#: has no measured metric at all. Seen: 493
#: of 696 metrics (71 %) of a launch whose profiling failed in an A100 report; none of the 2,243
#: metrics of this project's H200 launches.
FAILED_SHARE = 0.5

#: Metric prefixes a report records for a launch whether or not it was measured: the device's
#: attributes, its NVLink and NUMA topology, and the profiler's session. Two launches of foreign
#: reports (ESMM-Research ``8fce6633`` launch 3, ``be34af6f`` launch 5: no duration and none of
#: their 59 counters) held 185 such values beside 52 empty metrics, so counting them made the
#: launches look profiled.
NOT_MEASURED_PREFIXES = ("device__", "nvlink__", "numa__", "profiler__")

_METRIC_TYPE = {0: "other", 1: "counter", 2: "ratio", 3: "throughput"}


# ncu_report's value kinds (IMetric.ValueKind_*), grouped by the accessor that reads them.
_KIND_DOUBLE = frozenset((ncu_report.IMetric.ValueKind_DOUBLE, ncu_report.IMetric.ValueKind_FLOAT))
_KIND_UINT = frozenset((ncu_report.IMetric.ValueKind_UINT32, ncu_report.IMetric.ValueKind_UINT64))
_KIND_STRING = frozenset((ncu_report.IMetric.ValueKind_STRING,))


def OPCODE_INSTANCES(metric: str) -> bool:  # noqa: N802 (a constant predicate)
    """The instanced metrics the workflow keeps: those with one instance per SASS opcode
    (``sass__*per_opcode*``, e.g. ``sass__thread_inst_executed_true_per_opcode_with_modifier_all``).
    Per-PC source counters and PM-sampling series are left to :func:`load_instances`."""
    return metric.startswith("sass__") and "per_opcode" in metric


def precision_from_kernel(kernel: str) -> str | None:
    """The precision prefix of a kernel name (``int8_wmma`` -> ``int8``), or None."""
    head = kernel.split("_", 1)[0]
    return head if head in PRECISIONS else None


def _metric_value(metric) -> tuple[float, str | None]:
    """(numeric value, string value) of one metric; NaN for a missing or non-numeric value.

    Same result as ``metric.value()`` (ncu_report's convenience wrapper, which picks the
    ``as_*`` accessor from ``kind()``), without building its lookup table per call: this
    runs once per metric, about 2,000 times per launch.
    """
    if not metric.has_value():
        return math.nan, None
    kind = metric.kind()
    if kind in _KIND_DOUBLE:
        val = metric.as_double()
    elif kind in _KIND_UINT:
        val = metric.as_uint64()
    elif kind in _KIND_STRING:
        return math.nan, metric.as_string()
    else:  # ANY or UNKNOWN: ncu_report gives None
        return math.nan, None
    if val is None:
        return math.nan, None
    return float(val), None


def _check_named(path: Path, name: ReportName | None, actions: list) -> None:
    """What a ``{kernel}_n{N...}`` name says of the launches holds: each is of that kernel;
    a name of several sizes has one launch per size; launches at one N share a grid (a
    kernel's grid at a given N is fixed), and grids do not shrink as N grows (sizes in
    launch order). Launches without launch statistics are not compared.

    Raises:
        ReportError: naming the file, the launches and the fix.
    """
    if name is None:
        return
    if len(name.sizes) > 1 and len(actions) != len(name.sizes):
        raise ReportError(path, f"holds {len(actions)} kernel launches, but its name gives "
                                f"{len(name.sizes)} sizes (N = {', '.join(map(str, name.sizes))}), one launch each",
                          "profile every N of the kernel in one ncu process (one launch per N, in the "
                          "name's order), or name the file {kernel}_n{N}; a report cut short holds fewer")
    for launch, _rng, action in actions:
        if len(action.metric_names()) == 0:  # a cut or damaged report: say so, not "another kernel"
            raise ReportError(path, f"launch {launch} ({action.name()}) has no metrics (corrupt report)")
        if action.name() != name.kernel:
            raise ReportError(path, f"launch {launch} is kernel {action.name()!r}, "
                                    f"but the file name says {name.kernel!r}",
                              "a name of the form {kernel}_n{N} names the kernel of every launch: rename the file, "
                              "e.g. without the _n{N} part (a report an import put in a set: delete it there, "
                              "rename its source file and import again)")
    sizes = launch_sizes(name, [launch for launch, _, _ in actions])
    grids = [_dims(action, "grid") for _, _, action in actions]
    known = [(n, g, launch) for n, g, (launch, _, _) in zip(sizes, grids, actions) if g is not None]
    by_n: dict[int, set[str]] = {}
    for n, g, _ in known:
        by_n.setdefault(n, set()).add(g)
    for n, gs in by_n.items():
        if len(gs) > 1:
            listed = ", ".join(f"({g})" for g in sorted(gs, key=lambda g: [int(v) for v in g.split(",")]))
            raise ReportError(path, f"its name gives N = {n} to launches of grids {listed}, "
                                    "but a kernel's grid at one N is fixed",
                              "a report of one launch per N is named {kernel}_n{N1}-{N2}-..., the N in "
                              "launch order; or drop the _n{N} part")
    blocks = sorted((n, math.prod(int(v) for v in g.split(",")), g) for n, g, _ in known)
    for (n0, b0, g0), (n1, b1, g1) in zip(blocks, blocks[1:]):
        if n1 > n0 and b1 < b0:
            raise ReportError(path, f"the launch its name puts at N = {n1} has a smaller grid ({g1}) than the "
                                    f"one at N = {n0} ({g0})",
                              "the N in the name must be in launch order")


def launch_sizes(name: ReportName | None, launches: Iterable[int]) -> list:
    """N of each launch index (0-based, across ranges): the file name's N for a one-size
    report, the name's i-th N for launch i of a report of several sizes (one launch each,
    in launch order, as the name says), NA for a report whose name gives none."""
    if name is None:
        return [pd.NA for _ in launches]
    if len(name.sizes) == 1:
        return [name.sizes[0] for _ in launches]
    return [name.sizes[i] for i in launches]


def _actions(ctx) -> Iterator[tuple[int, int, object]]:
    """(launch index across ranges, range index, action) of every launch in the report."""
    idx = 0
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for a in range(rng.num_actions()):
            yield idx, r, rng.action_by_idx(a)
            idx += 1


def _dims(action, prefix: str) -> str | None:
    """``"x,y,z"`` from launch__{prefix}_dim_{x,y,z} (float up to ncu 2024.2, int after), or None."""
    vals = []
    for axis in "xyz":
        m = action.metric_by_name(f"launch__{prefix}_dim_{axis}")
        v = _metric_value(m)[0] if m is not None else math.nan
        if math.isnan(v):
            return None
        vals.append(str(int(v)))
    return ",".join(vals)


def _nvtx_names(action) -> tuple[str | None, str | None]:
    """(range_name, nvtx) of one launch, from ``IAction.nvtx_state()``.

    ``nvtx``: the push/pop ranges open around the launch, per NVTX domain outermost first
    and joined by ``/``, prefixed ``{domain}:`` except in the default domain (id 0),
    domains joined by ``;`` in id order (``step/forward``, ``loader:read``,
    ``step/forward;loader:read``); None where no push/pop range is open.

    ``range_name``, for an action of range replay (``WorkloadType_RANGE``; ncu
    ``--replay-mode range`` or ``app-range``) only: the NVTX ranges that name the range,
    i.e. the push/pop ranges as in ``nvtx`` and the open start/end ranges (each its own
    part, after the push/pop ones of its domain), joined by ``;`` (``alpha`` for a range
    replayed with ``--nvtx-include alpha/`` or ``--nvtx-include alpha``); None for kernel
    launches and for a range without NVTX state.
    """
    state = action.nvtx_state()
    push_pop: list[str] = []
    named: list[str] = []
    if state is not None:
        for dom_id in sorted(state.domains()):
            dom = state.domain_by_id(dom_id)
            prefix = "" if dom_id == 0 else f"{dom.name()}:"
            stack = [dom.push_pop_range(i).name() for i in range(len(dom.push_pop_ranges()))]
            if stack:
                push_pop.append(prefix + "/".join(stack))
                named.append(push_pop[-1])
            named += [prefix + r for r in dom.start_end_ranges()]
    nvtx = ";".join(push_pop) or None
    is_range = action.workload_type() == ncu_report.IAction.WorkloadType_RANGE
    return (";".join(named) or None) if is_range else None, nvtx


def _packed_inside(path: Path, plain: Path) -> None:
    """Raise ReportError where the xz stream of ``path`` (decompressed to ``plain``) holds a
    compressed file or an archive (xz of an xz or of a gzip), or no report at all
    (:func:`analysis.reports.report_info.check_stream_head`)."""
    from analysis.reports.report_info import HEAD_BYTES, check_stream_head

    if plain != path:
        with open(plain, "rb") as fh:
            check_stream_head(path, fh.read(HEAD_BYTES))


def _open(path: Path, plain: Path):
    try:
        ctx = _native_load(str(plain))
    except Exception as exc:  # the native reader's own failure
        _packed_inside(path, plain)
        raise ReportError(path, f"ncu_report cannot read it ({type(exc).__name__}: {exc})",
                          "is it an Nsight Compute report?") from None
    if ctx.num_ranges() == 0:
        _packed_inside(path, plain)
        raise ReportError(path, "holds no profiling range (truncated, or not a report)",
                          REPROFILE)
    return ctx
