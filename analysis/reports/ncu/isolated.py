"""A report read in a child process of its own (:func:`load_report_isolated`), and the launches of
reports checked in one (:func:`launch_problems`), so that a crash or hang of the native reader on a
hostile file stops only the child."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from analysis.errors import ReportError
from analysis.names import is_text
from analysis.reports.ncu.files import _plain_report, remove_orphans
from analysis.reports.ncu.launches import OPCODE_INSTANCES, _actions, _metric_value, _open
from analysis.reports.ncu.read import _check_launches, _not_text, _read
from analysis.reports.ncu.units import _serve_attributes


def _run_reader(path: Path, child_args: list[str], timeout: float = 600) -> None:
    """Run ``python <child_args>`` for ``path`` and turn its failure into ReportError."""
    try:
        proc = subprocess.run([sys.executable, *child_args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        remove_orphans()  # the killed child's decompressed copy
        raise ReportError(path, f"the report reader did not finish in {timeout:.0f} s") from None
    if proc.returncode < 0:
        remove_orphans()
        raise ReportError(path, f"the native report reader crashed on this file (signal {-proc.returncode})",
                          "the file is corrupt or hostile; re-profile or remove it")
    if proc.returncode == 3:  # a ReportError in the child: its cause and hint as JSON, the last stderr line
        lines = proc.stderr.strip().splitlines() or ["no output"]
        try:
            said = json.loads(lines[-1])
            cause, hint = str(said["cause"]), str(said.get("hint", ""))
        except (ValueError, KeyError, TypeError):
            raise ReportError(path, f"the report reader failed: {lines[-1]}") from None
        raise ReportError(path, cause, hint)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        raise ReportError(path, f"the report reader failed (exit {proc.returncode}): {tail[0]}")


def load_report_isolated(path: str | Path, *, expect_launches: int | None = 1, timeout: float = 600,
                         opcode_instances_only: bool = False, evidence: bool = False
                         ) -> tuple[pd.DataFrame, ...]:
    """:func:`load_report` and :func:`load_instances` of one file, run in a child process.

    A report from elsewhere is data, not code: if the native reader crashes (or hangs
    longer than ``timeout`` seconds) on it, only the child dies, and this raises
    ReportError naming the file. ``opcode_instances_only`` keeps only the instanced
    metrics :data:`OPCODE_INSTANCES` accepts (what the workflow stores).

    Returns:
        (metrics table, instances table), as the two functions return them; with
        ``evidence``, also (findings, hot spots): :func:`analysis.reports.findings.findings_of`,
        :func:`analysis.reports.hotspots.hotspots_of`.

    Raises:
        ReportError: as :func:`load_report`, or the reader crashed or hung on the file.
    """
    path = Path(path)
    with tempfile.TemporaryDirectory(prefix="ncu-read-") as tmp:
        _run_reader(path, ["-m", "analysis.reports.ncu", str(path), tmp,
                           "any" if expect_launches is None else str(expect_launches),
                           "opcode" if opcode_instances_only else "all", *(["evidence"] if evidence else [])],
                    timeout=timeout)
        names = ["metrics", "instances"] + (["findings", "hotspots"] if evidence else [])
        return tuple(pd.read_parquet(Path(tmp) / f"{n}.parquet") for n in names)


def _check_string_values(path: Path, actions: list) -> None:
    """Raise ReportError where a launch's string metric value is not text (a damaged report,
    :func:`analysis.names.is_text`), as :func:`load_report` would."""
    for launch, _rng, action in actions:
        for metric_name in action.metric_names():
            _, value = _metric_value(action.metric_by_name(metric_name))
            if value is not None and not is_text(value):
                raise _not_text(path, launch, f"the value of {metric_name}", value)


def _launch_problem(path: Path) -> str | None:
    """What makes ``path``'s launches unusable, or None: a launch without a function name or
    metrics, or with a name, NVTX range or string metric value that is not text (each launch's
    names and string values, no numbers); the cause of a ReportError as it is."""
    try:
        with _plain_report(path) as plain:
            actions = list(_actions(_open(path, plain)))
            unnamed = next((launch for launch, _rng, action in actions if not action.name()), None)
            if unnamed is not None:
                return f"launch {unnamed} has no function name (corrupt report)"
            _check_launches(path, None, actions, None)  # a launch, each with metrics, as load_report asks
            _check_string_values(path, actions)
    except ReportError as exc:
        return exc.cause
    return None


def launch_problems(paths: list[Path], timeout: float = 600) -> dict[Path, str]:
    """The reports among ``paths`` whose launches cannot be used, read in a child process: a
    launch without a function name or without metrics, or with a string that is not text (a
    plain report damaged inside a launch's data; ncu's own reader opens it), or a file the reader
    refuses. One child reads every file (``python -m analysis.reports.ncu --launch-problems
    FILE...``, about 20 ms a report after the child's start, docs/benchmarks.md); if the native
    reader crashes or hangs, each file is read again in a child of its own, so the problem is put
    on the file that causes it.

    Returns:
        report -> cause, for the reports with a problem only.
    """
    paths = [Path(p) for p in paths]
    if not paths:
        return {}
    try:
        proc = subprocess.run([sys.executable, "-m", "analysis.reports.ncu", "--launch-problems",
                               *map(str, paths)], capture_output=True, text=True, timeout=timeout)
        said = json.loads(proc.stdout) if proc.returncode == 0 else None
    except (subprocess.TimeoutExpired, ValueError):
        said = None
    if isinstance(said, list) and len(said) == len(paths):
        return {p: str(c) for p, c in zip(paths, said) if c is not None}
    remove_orphans()  # a killed child's decompressed copy
    if len(paths) == 1:
        return {paths[0]: "the native report reader failed on this file (a crash, a hang or no answer)"}
    out: dict[Path, str] = {}
    for p in paths:
        out.update(launch_problems([p], timeout))
    return out


def _main(argv: list[str]) -> int:
    """Child side of :func:`load_report_isolated`:
    ``python -m analysis.reports.ncu REPORT OUTDIR N|any [all|opcode] [evidence]``; or the server of
    :func:`_serve_attributes`: ``python -m analysis.reports.ncu --attribute-server [--no-warm]``; or
    :func:`launch_problems`' child: ``python -m analysis.reports.ncu --launch-problems FILE...``."""
    if argv[:1] == ["--attribute-server"]:
        return _serve_attributes(warm="--no-warm" not in argv)
    if argv[:1] == ["--launch-problems"]:  # launch_problems' child: a JSON list, a cause or null per file
        print(json.dumps([_launch_problem(Path(p)) for p in argv[1:]]))
        return 0
    if len(argv) < 3 or argv[0] in ("-h", "--help"):
        print(f"usage: python -m analysis.reports.ncu REPORT OUTDIR N|any [all|opcode] [evidence]\n\n{_main.__doc__}\n"
              "A child process of the package's readers, not a tool: read reports with analysis.load_report.",
              file=sys.stderr)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    path, out, expect, *which = argv
    only = OPCODE_INSTANCES if "opcode" in which else None
    evidence = "evidence" in which
    try:
        tables = _read(path, None if expect == "any" else int(expect), instances=True, instance_filter=only,
                       evidence=evidence)
    except ReportError as exc:  # the whole message for a person, then cause and hint for the parent
        print(f"ReportError: {exc}", file=sys.stderr)
        print(json.dumps({"cause": exc.cause, "hint": exc.hint}), file=sys.stderr)
        return 3
    for name, table in zip(("metrics", "instances", "findings", "hotspots"), tables):
        table.to_parquet(Path(out) / f"{name}.parquet", index=False)
    return 0
