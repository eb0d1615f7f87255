"""Read Nsight Compute reports (``.ncu-rep`` or ``.ncu-rep.xz``) into tidy pandas tables.

Everything goes through NVIDIA's ``ncu_report`` module (PyPI ``ncu-report``), which reads
reports without a GPU. Values are kept in the report's own base units (ns, byte, cycle,
sector, %); nothing is rescaled.

The reader does not raise on broken input by itself: it loads a truncated report as
zero ranges and a corrupted one as a launch with zero metrics. :func:`load_report`
checks for both and raises :class:`~analysis.errors.ReportError`.

Units and metric types depend on what the process asked ``ncu_report`` before (its
native code keeps state between calls and between reports): ``IMetric.unit()`` of some
metrics (``derived__*``, ``breakdown:*``, warp-sampling and source counters) takes the
unit of metrics read earlier, and after a report of another GPU chip ``metric_type()``
and ``unit()`` follow that chip's metric definitions (values do not change). So units
and metric types are read in a process that has asked ``ncu_report`` for none and has
read values of no other chip's report: this one while that holds, else a child forked
per report from a server process of that chip (:func:`_serve_attributes`), in a fixed
order (:func:`_attribute_order`). docs/robustness.md, fault 6.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import lzma
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import ncu_report
import pandas as pd

from analysis.errors import ReportError
from analysis.names import REPORT_STEM, ReportName, report_stem  # noqa: F401 (REPORT_STEM re-exported)
from analysis.precision import PRECISIONS

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

#: A launch counts as not profiled when more than this share of its metrics has no value
#: (no number and no string). Seen: 493 of 696 metrics (71 %) of a launch whose profiling
#: failed in an A100 report; none of the 2,243 metrics of this project's H200 launches.
FAILED_SHARE = 0.5

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


_XZ_MAGIC = b"\xfd7zXZ\x00"
#: The next step for a damaged report, wherever it came from.
REPROFILE = "profile the kernel again, or remove the file from its set"


def precision_from_kernel(kernel: str) -> str | None:
    """The precision prefix of a kernel name (``int8_wmma`` -> ``int8``), or None."""
    head = kernel.split("_", 1)[0]
    return head if head in PRECISIONS else None


@contextlib.contextmanager
def _plain_report(path: Path) -> Iterator[Path]:
    """Yield a path ``ncu_report`` can open: the file itself, or an xz-decompressed copy."""
    if not path.exists():
        raise ReportError(path, "file does not exist")
    if path.stat().st_size == 0:
        raise ReportError(path, "file is empty", REPROFILE)
    if not path.name.endswith((".ncu-rep", ".ncu-rep.xz")):
        raise ReportError(path, "is not a .ncu-rep or .ncu-rep.xz file",
                          "pass an Nsight Compute report, as written by ncu --export")
    if path.suffix != ".xz":
        yield path
        return
    # decompressed into memory-backed /dev/shm where there is one: the copy is read once
    shm = Path("/dev/shm")
    tmpdir = Path(tempfile.mkdtemp(prefix="ncu-rep-", dir=shm if shm.is_dir() and os.access(shm, os.W_OK) else None))
    try:
        plain = tmpdir / path.name[: -len(".xz")]
        _xz_decompress_strict(path, plain)
        if plain.stat().st_size == 0:
            raise ReportError(path, "decompresses to an empty file")
        yield plain
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def _xz_decompress_strict(src: Path, dst: Path) -> None:
    """Decompress one .xz stream (its CRC64 checked by liblzma) from ``src`` to ``dst``.

    Unlike ``lzma.open``, which ignores bytes after the last stream, anything after the
    stream other than xz's zero padding is refused: it is not part of a report.
    """
    with open(src, "rb") as fh:
        if fh.read(len(_XZ_MAGIC)) != _XZ_MAGIC:
            raise ReportError(src, "is not an xz file (no xz header)",
                              "compress reports with xz, or drop the .xz suffix of a plain .ncu-rep")
    dec = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
    try:
        with open(src, "rb") as fin, open(dst, "wb") as fout:
            while not dec.eof:
                chunk = fin.read(1 << 20)
                if not chunk:
                    raise ReportError(src, "not a complete xz stream (it ends early)",
                                      REPROFILE)
                fout.write(dec.decompress(chunk))
            rest = dec.unused_data + fin.read()
    except lzma.LZMAError as exc:
        raise ReportError(src, f"not a complete xz stream ({exc})",
                          REPROFILE) from None
    if rest.strip(b"\0") or len(rest) % 4:
        raise ReportError(src, f"{len(rest)} bytes after the end of the xz stream",
                          REPROFILE)


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


def _open(path: Path, plain: Path):
    try:
        ctx = ncu_report.load_report(str(plain))
    except Exception as exc:  # the native reader's own failure
        raise ReportError(path, f"ncu_report cannot read it ({type(exc).__name__}: {exc})",
                          "is it an Nsight Compute report?") from None
    if ctx.num_ranges() == 0:
        raise ReportError(path, "holds no profiling range (truncated, or not a report)",
                          REPROFILE)
    return ctx


# --- units and metric types, read where no earlier read can change them ---------------------------

def _attribute_order(items: list[tuple[int, str, int]]) -> list[tuple[int, str, int]]:
    """The order in which the units of ``items`` ((launch, metric name, ncu_report metric
    type) of a whole report) are asked for: metrics of type OTHER first (their unit is
    the one ``ncu_report`` works out itself, and it takes units asked for before it),
    the warp-sampling counters (``smsp__pcsamp*``) before ``derived__*`` and
    ``breakdown:*`` before the other OTHER metrics (launch statistics and device
    attributes last of them), then the counters, ratios and throughputs of the metric
    definitions; by name from z to a within each group, launches in order.

    Read in this order in a process that asked for no unit before, the metrics of the
    56 reports of ``foreign-reports`` (launches 0 and 1) and of eight of this project's
    reports (69,226 units) got the unit each gets when it is the only unit its process
    asks for (measured per metric, each in a forked child), except 16:
    ``sass__inst_executed_register_spilling_mem_{local,shared}`` of the H200 reports get
    ``inst`` (the other instruction counts' unit, read before them), ``byte`` alone. Read
    sorted by name, as before, 269 differed (in 25 reports): e.g. ``thread`` for the
    predicated-on FMA instruction counts ``derived__*_pred_on_x2``, ``inst`` for the warp
    samples ``smsp__pcsamp_warps_issue_stalled_no_instructions``.
    """
    def group(item: tuple[int, str, int]) -> int:
        _, metric, mtype = item
        if mtype != ncu_report.IMetric.MetricType_OTHER:
            return 3
        if metric.startswith("smsp__pcsamp"):
            return 0
        if metric.startswith(("derived__", "breakdown:")):
            return 1
        return 2

    by_name = sorted(items, key=lambda it: (it[1], -it[0]), reverse=True)  # z..a, launches 0, 1, ...
    return sorted(by_name, key=group)  # stable: name order kept within each group


def _attribute_lists(actions: list, other_only: bool = False) -> list[tuple[list[str | None], list[int]]]:
    """Per launch (``actions``: the report's IAction objects in launch order): the units
    and the ncu_report metric types of its metrics, both in sorted-name order. Types are
    read first (their value does not depend on the order), then units in
    :func:`_attribute_order`; ``other_only``: the units of OTHER metrics only (None for the
    counters, ratios and throughputs, whose unit comes from the metric definitions)."""
    names = [sorted(action.metric_names()) for action in actions]
    types = [[action.metric_by_name(n).metric_type() for n in ns] for action, ns in zip(actions, names)]
    other = ncu_report.IMetric.MetricType_OTHER
    items = [(launch, n, t) for launch, (ns, ts) in enumerate(zip(names, types)) for n, t in zip(ns, ts)
             if not other_only or t == other]
    units: list[dict[str, str]] = [{} for _ in actions]
    for launch, metric, _ in _attribute_order(items):
        units[launch][metric] = actions[launch].metric_by_name(metric).unit()
    return [([u.get(n) for n in ns], ts) for u, ns, ts in zip(units, names, types)]


#: What this process has read through ncu_report: the chip of the first report whose
#: values it read (``_UNSET`` before any: ncu_report keeps that chip's metric definitions
#: for every later report), and whether it has asked for the unit of an OTHER metric
#: (after that, those are read in forked children, never here).
_UNSET = object()
_PROCESS = {"chip": _UNSET, "other_units": False}
_PROCESS_LOCK = threading.Lock()


def _chip(actions: list) -> str | None:
    """A key for the GPU chip of the report's first launch (whose metric definitions
    ncu_report loads): ``device__attribute_chip``, else the device's display name; None
    where the report gives neither. Reads values only."""
    if not actions:
        return None
    action = actions[0][2]
    for metric in ("device__attribute_chip", "device__attribute_display_name"):
        m = action.metric_by_name(metric)
        if m is None:
            continue
        value, text = _metric_value(m)
        if text:
            return f"{metric}={text}"
        if not math.isnan(value):
            return f"{metric}={int(value)}"
    return None


def _note_values(chip: str | None) -> None:
    """Record that this process read values of a report of ``chip`` (see :func:`_plan`)."""
    with _PROCESS_LOCK:
        if _PROCESS["chip"] is _UNSET:
            _PROCESS["chip"] = chip if chip is not None else object()


def _plan(chip: str | None) -> str:
    """Where the units and metric types of a report of ``chip`` are read (call before
    :func:`_note_values` for the report): ``"here"`` (all, in this process: it has read no
    other chip's report and no OTHER unit; later reports are no longer read so),
    ``"typed"`` (types and the units of counters, ratios and throughputs here, whose
    definitions this process holds; OTHER units in a child of the chip's server), or
    ``"child"`` (all in a child: this process holds another chip's definitions)."""
    with _PROCESS_LOCK:
        first = _PROCESS["chip"] is _UNSET
        same = first or (chip is not None and _PROCESS["chip"] == chip)
        if first:
            _PROCESS["chip"] = chip if chip is not None else object()
        if same and not _PROCESS["other_units"]:
            _PROCESS["other_units"] = True
            return "here"
        return "typed" if same else "child"


def _read_values(actions: Iterable) -> None:
    """Ask for every metric's value, as the tables do, and nothing else: this loads the
    metric definitions of the report's chip without touching units or metric types."""
    for action in actions:
        for metric in action.metric_names():
            m = action.metric_by_name(metric)
            _metric_value(m)
            m.num_instances()


def _attribute_child(req: dict) -> None:
    """A child of :func:`_serve_attributes`: answer one request, then exit (0: written)."""
    code = 1
    try:
        signal.alarm(max(1, math.ceil(req["timeout"])))
        acts = [a for _, _, a in _actions(ncu_report.load_report(req["report"]))]
        got = _attribute_lists(acts, other_only=req["other_only"])
        part = req["out"] + ".part"
        with open(part, "w", encoding="utf-8") as fh:
            json.dump(got, fh)
        os.replace(part, req["out"])
        code = 0
    finally:
        os._exit(code)


def _spare_child() -> tuple[int, int]:
    """Fork a child that waits for one request on a pipe (:func:`_attribute_child`):
    (its pid, the pipe's write end). Forked ahead, so a request does not wait for it."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(w)
        with os.fdopen(r, encoding="utf-8") as fh:
            line = fh.readline()
        if not line:  # the server ended
            os._exit(0)
        _attribute_child(json.loads(line))
    os.close(r)
    return pid, w


def _serve_attributes(warm: bool) -> int:
    """Server side of :class:`_AttributeServer` (``python -m analysis.reports.ncu --attribute-server
    [--no-warm]``). For each request on stdin (one JSON line: ``report``, a plain
    ``.ncu-rep``; ``out``, where to write; ``other_only`` and ``timeout`` (s)), a child
    forked from this process opens the report, writes :func:`_attribute_lists` as JSON to
    ``out`` and exits; the server answers one JSON line ``{"status": <os.waitpid status>}``.

    The server asks for no unit or metric type itself: it reads the values of its first
    report only (unless ``--no-warm``), which loads the chip's metric definitions once for
    all its children (a child that loads them itself takes 0.2-0.3 s a report)."""
    warmed = not warm
    spare = None
    for line in sys.stdin:
        req = json.loads(line)
        if not warmed:
            signal.alarm(max(1, math.ceil(req["timeout"])))  # a report the reader hangs on ends the server
            _read_values(a for _, _, a in _actions(ncu_report.load_report(req["report"])))
            signal.alarm(0)
            warmed = True
        pid, w = spare or _spare_child()
        with os.fdopen(w, "w", encoding="utf-8") as fh:
            fh.write(line)
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(json.dumps({"status": status}) + "\n")
        sys.stdout.flush()
        spare = _spare_child()  # the next one, while the caller builds its table
    if spare:
        os.close(spare[1])
        os.waitpid(spare[0], 0)
    return 0


class _AttributeServer:
    """A server process (:func:`_serve_attributes`) for the reports of one chip, started
    on first use, ended at exit or when this process's stdin pipe to it closes."""

    def __init__(self, chip: str | None) -> None:
        root = str(Path(__file__).resolve().parents[1])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
        cmd = [sys.executable, "-m", "analysis.reports.ncu", "--attribute-server"] + ([] if chip is not None else ["--no-warm"])
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.lock = threading.Lock()
        #: True once it answered a report known to be of its chip: it read (warmed with)
        #: that chip's values, so a report of unknown chip may be sent to it
        self.warmed = False

    def alive(self) -> bool:
        return self.proc.poll() is None

    def ask(self, plain: Path, out: Path, other_only: bool, timeout: float) -> None:
        self.proc.stdin.write(json.dumps({"report": str(plain), "out": str(out), "other_only": other_only,
                                          "timeout": timeout}) + "\n")
        self.proc.stdin.flush()

    def answer(self, path: Path, out: Path, timeout: float) -> list:
        line = self.proc.stdout.readline()
        if not line:
            raise ReportError(path, "the process reading units and metric types ended",
                              "read the report again; if it recurs, use load_report_isolated")
        status = json.loads(line)["status"]
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            if sig == signal.SIGALRM:
                raise ReportError(path, f"the report reader did not finish in {timeout:.0f} s")
            raise ReportError(path, f"the native report reader crashed on this file (signal {sig})",
                              "the file is corrupt or hostile; re-profile or remove it")
        if os.WEXITSTATUS(status) != 0:
            raise ReportError(path, "the native report reader could not read its units and metric types",
                              REPROFILE)
        with open(out, encoding="utf-8") as fh:
            return json.load(fh)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        if self.proc.poll() is None:
            self.proc.kill()


_SERVERS: dict[str | None, _AttributeServer] = {}
_SERVERS_PID = [os.getpid()]


def _server(chip: str | None) -> _AttributeServer:
    """The live server of ``chip`` (started if absent or dead; a forked copy of this
    process starts its own, the parent's pipes are not its to use)."""
    with _PROCESS_LOCK:
        if _SERVERS_PID[0] != os.getpid():
            _SERVERS.clear()
            _SERVERS_PID[0] = os.getpid()
        srv = _SERVERS.get(chip)
        if srv is None or not srv.alive():
            srv = _SERVERS[chip] = _AttributeServer(chip)
        return srv


@atexit.register
def _close_servers() -> None:
    if _SERVERS_PID[0] == os.getpid():
        for srv in list(_SERVERS.values()):
            srv.close()
        _SERVERS.clear()


def _check_launches(path: Path, name: ReportName | None, actions: list, expect_launches: int | None) -> None:
    """Raise ReportError where the report holds no launch, or not ``expect_launches`` per N."""
    if not actions:
        raise ReportError(path, "holds no kernel launch")
    per_n = len(name.sizes) if name else 1
    if expect_launches is not None and len(actions) != expect_launches * per_n:
        raise ReportError(path, f"holds {len(actions)} kernel launches, expected {expect_launches}"
                                + (f" per N ({expect_launches * per_n} for the {per_n} sizes of its name)"
                                   if per_n > 1 else ""),
                          "profile with --launch-count 1 and a --kernel-name filter")
    for launch, _rng, action in actions:
        if len(action.metric_names()) == 0:
            raise ReportError(path, f"launch {launch} ({action.name()}) has no metrics (corrupt report)")


def _metric_table(path: Path, name: ReportName | None, actions: list,
                  attributes: Callable[[], list[tuple[list[str], list[int]]]]) -> pd.DataFrame:
    """The tidy table of ``actions``; ``attributes()``: per launch, the units and metric
    types of its metrics in sorted-name order (:func:`_attributes`), asked for once the
    values are read."""
    from ncu_report import IAction

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
            empty = 0
            for metric_name in names:
                m = action.metric_by_name(metric_name)
                value, value_str = _metric_value(m)
                empty += math.isnan(value) and value_str is None
                rows.append((kernel, metric_name, launch, value, value_str, m.num_instances()))
            ident.append((launch, rng, action.name(), action.name(IAction.NameBase_DEMANGLED), mangled,
                          occurrence, _dims(action, "grid"), _dims(action, "block"),
                          empty > FAILED_SHARE * len(names), range_name, nvtx))
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


def _read(path: str | Path, expect_launches: int | None, *, metrics: bool = True,
          instances: bool = False, instance_filter: Callable[[str], bool] | None = None
          ) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """Open a report once and build the tables asked for (instances of the metrics
    ``instance_filter`` accepts; None: every instanced metric)."""
    path = Path(path)
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
    return table, inst


class _Pending:
    """A request sent to a chip's server: its answer is read once (:meth:`get`) or
    dropped (:meth:`drop`), so that the next request reads its own."""

    def __init__(self, chip: str | None, srv: _AttributeServer, out: Path, timeout: float) -> None:
        self.chip, self.srv, self.out, self.timeout, self.done = chip, srv, out, timeout, False

    def get(self, path: Path) -> list:
        self.done = True
        try:
            return self.srv.answer(path, self.out, self.timeout)
        finally:
            self.srv.lock.release()

    def get_own(self, path: Path) -> list:
        """:meth:`get` of a report of the server's chip: the server is warm after it."""
        got = self.get(path)
        self.srv.warmed = True
        return got

    def drop(self) -> None:
        if not self.done:
            with contextlib.suppress(ReportError, OSError, ValueError):
                self.get(Path(self.out))


def _ask(chip: str | None, plain: Path, other_only: bool, timeout: float = 600,
         early: bool = False) -> _Pending | None:
    """Send the report ``plain`` to the server of ``chip`` (:func:`_serve_attributes`).
    ``early``: the report's chip is not known yet; sent only to a live server that is
    already warm (else None), as a server warms with the first report it gets."""
    if early:
        with _PROCESS_LOCK:
            srv = _SERVERS.get(chip) if _SERVERS_PID[0] == os.getpid() else None
        if srv is None or not srv.warmed or not srv.alive():
            return None
    else:
        srv = _server(chip)
    out = plain.parent / f"attributes-{'early' if early else 'other' if other_only else 'all'}.json"
    srv.lock.acquire()
    try:
        srv.ask(plain, out, other_only, timeout)
    except BaseException:
        srv.lock.release()
        raise
    return _Pending(chip, srv, out, timeout)


def _typed_chip() -> str | None:
    """The chip whose reports this process reads with plan ``"typed"`` (:func:`_plan`),
    the likely plan of its next report: the chip of its first report once it asked for
    OTHER units; None before, or where that chip is unknown."""
    with _PROCESS_LOCK:
        chip = _PROCESS["chip"]
        return chip if _PROCESS["other_units"] and isinstance(chip, str) else None


def _attributes(path: Path, plain: Path, chip: str | None, actions: list, plan: str,
                early: _Pending | None = None) -> Callable[[], list[tuple[list[str], list[int]]]]:
    """Start reading the units and metric types of the report's launches, as ``plan``
    says (:func:`_plan`); the returned function gives them (per launch, in sorted-name
    order, as :func:`_attribute_lists`), waiting for the child where there is one (which
    reads while this process reads the values). ``early``: a request sent before the
    report was opened (used where it went to this chip's server for plan ``"typed"``,
    dropped otherwise).

    Raises (from the returned function): ReportError where the child crashed, hung
    (600 s) or ended, naming the file."""
    acts = [a for _, _, a in actions]
    if early is not None and (plan != "typed" or early.chip != chip):
        early.drop()
        early = None
    if plan == "here":
        got = _attribute_lists(acts)
        return lambda: got
    pending = early or _ask(chip, plain, plan == "typed")

    def result() -> list[tuple[list[str], list[int]]]:
        got = pending.get_own(path)
        if plan == "child":
            return [(u, t) for u, t in got]
        # counters, ratios and throughputs: their unit from this process, which holds the chip's definitions
        return [([u if u is not None else a.metric_by_name(n).unit() for u, n in zip(units, sorted(a.metric_names()))],
                 types) for a, (units, types) in zip(acts, got)]

    return result


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
        other), ``instances`` (number of instance values; the row holds the total);
        ``report`` (file stem), ``range`` (int), ``function``, ``demangled``, ``mangled``
        (ncu's three names of the launch's kernel; ``range`` for all three of a
        range-replay action), ``occurrence`` (int: 0 for the first launch of that
        ``range_name`` and mangled name (and N) in the report, 1 for the next...), ``grid``
        and ``block`` (``"x,y,z"`` or NA), ``profiling_failed`` (bool: more than
        :data:`FAILED_SHARE` of the launch's metrics have no value), ``range_name``
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
    about 0.3 s to start a chip's server (docs/robustness.md, fault 6). Values are read
    here either way and do not depend on any of it.

    Raises:
        ReportError: missing, empty, truncated, corrupt or non-report file; a launch with
            no metrics; a launch count other than ``expect_launches`` per N, or than the
            sizes the name gives; the process reading units and metric types crashed,
            hung (600 s) or ended. The message names the file and the cause.
    """
    return _read(path, expect_launches)[0]


def _run_reader(path: Path, child_args: list[str], timeout: float = 600) -> None:
    """Run ``python <child_args>`` for ``path`` and turn its failure into ReportError."""
    try:
        proc = subprocess.run([sys.executable, *child_args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ReportError(path, f"the report reader did not finish in {timeout:.0f} s") from None
    if proc.returncode < 0:
        raise ReportError(path, f"the native report reader crashed on this file (signal {-proc.returncode})",
                          "the file is corrupt or hostile; re-profile or remove it")
    if proc.returncode == 3:  # a ReportError in the child, message on the last stderr line
        raise ReportError(path, proc.stderr.strip().splitlines()[-1].split(": ", 1)[-1])
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        raise ReportError(path, f"the report reader failed (exit {proc.returncode}): {tail[0]}")


def load_report_isolated(path: str | Path, *, expect_launches: int | None = 1, timeout: float = 600,
                         opcode_instances_only: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`load_report` and :func:`load_instances` of one file, run in a child process.

    A report from elsewhere is data, not code: if the native reader crashes (or hangs
    longer than ``timeout`` seconds) on it, only the child dies, and this raises
    ReportError naming the file. ``opcode_instances_only`` keeps only the instanced
    metrics :data:`OPCODE_INSTANCES` accepts (what the workflow stores).

    Returns:
        (metrics table, instances table), as the two functions return them.

    Raises:
        ReportError: as :func:`load_report`, or the reader crashed or hung on the file.
    """
    path = Path(path)
    with tempfile.TemporaryDirectory(prefix="ncu-read-") as tmp:
        _run_reader(path, ["-m", "analysis.reports.ncu", str(path), tmp,
                           "any" if expect_launches is None else str(expect_launches),
                           "opcode" if opcode_instances_only else "all"], timeout=timeout)
        return pd.read_parquet(Path(tmp) / "metrics.parquet"), pd.read_parquet(Path(tmp) / "instances.parquet")


def _main(argv: list[str]) -> int:
    """Child side of :func:`load_report_isolated`:
    ``python -m analysis.reports.ncu REPORT OUTDIR N|any [all|opcode]``; or the server of
    :func:`_serve_attributes`: ``python -m analysis.reports.ncu --attribute-server [--no-warm]``."""
    if argv[:1] == ["--attribute-server"]:
        return _serve_attributes(warm="--no-warm" not in argv)
    path, out, expect, *which = argv
    only = OPCODE_INSTANCES if which == ["opcode"] else None
    try:
        metrics, instances = _read(path, None if expect == "any" else int(expect), instances=True,
                                   instance_filter=only)
    except ReportError as exc:
        print(f"ReportError: {exc.cause}" + (f" ({exc.hint})" if exc.hint else ""), file=sys.stderr)
        return 3
    metrics.to_parquet(Path(out) / "metrics.parquet", index=False)
    instances.to_parquet(Path(out) / "instances.parquet", index=False)
    return 0


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
        ReportError: as :func:`load_report`.
    """
    path = Path(path)
    name = ReportName.parse(path)
    with _plain_report(path) as plain:
        actions = list(_actions(_open(path, plain)))
        _note_values(_chip(actions))
        _check_named(path, name, actions)
        return _instance_table(path, name, actions, metrics)


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
