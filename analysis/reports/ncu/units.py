"""Units and metric types read where no earlier read can change them: in this process while it has asked
``ncu_report`` for none and read no other chip's values, else in a child forked per report from a server
process of that chip, in a fixed order (module docstring of :mod:`analysis.reports.ncu`)."""

from __future__ import annotations

import atexit
import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from analysis.errors import ReportError
from analysis.nsight import load_report as _native_load, ncu_report, used_outside
from analysis.reports.ncu.files import REPROFILE, private_tmpdir
from analysis.reports.ncu.launches import _actions, _metric_value


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
    ``"child"`` (all in a child: this process holds another chip's definitions, or may,
    having used ``ncu_report`` outside this package: :func:`analysis.nsight.used_outside`)."""
    outside = used_outside()
    with _PROCESS_LOCK:
        first = _PROCESS["chip"] is _UNSET
        same = first or (chip is not None and _PROCESS["chip"] == chip)
        if first:
            _PROCESS["chip"] = chip if chip is not None else object()
        if outside:
            return "child"
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
        acts = [a for _, _, a in _actions(_native_load(req["report"]))]
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
            _read_values(a for _, _, a in _actions(_native_load(req["report"])))
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
        try:
            with open(out, encoding="utf-8") as fh:
                return json.load(fh)
        except (OSError, ValueError) as exc:
            raise ReportError(path, f"the answer of the process reading units and metric types is unreadable "
                                    f"({exc})", "read the report again; if it recurs, use load_report_isolated") from None

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
            shutil.rmtree(Path(self.out).parent, ignore_errors=True)

    def get_own(self, path: Path) -> list:
        """:meth:`get` of a report of the server's chip: the server is warm after it."""
        got = self.get(path)
        self.srv.warmed = True
        return got

    def drop(self) -> None:
        if not self.done:
            with contextlib.suppress(ReportError, OSError, ValueError):
                self.get(Path(self.out))


def _answer_path(kind: str) -> Path:
    """A path for one child's answer in a new folder private to this process
    (:func:`analysis.reports.ncu.files.private_tmpdir`), which :meth:`_Pending.get` removes
    once the answer is read: never beside the report, whose folder may be read-only, or read
    by another process at the same moment."""
    return private_tmpdir("ncu-attributes-") / f"attributes-{kind}.json"


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
    out = _answer_path("early" if early else "other" if other_only else "all")
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
    if used_outside():
        return None
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
