"""Nsight Compute's own guided-analysis findings of every launch of a report, as a tidy
table: what the GUI's rule results say (the rule, its section, title and message, the
estimated speedup and the focus metrics), read through ``ncu_report``'s
``IAction.rule_results_as_dicts()``; no rule of our own.

Reports of older Nsight Compute versions, or captured with ``--metrics`` only, may hold
no rule results: they give no rows and one warning naming the file. A rule result that is
not of the documented shape is kept as text (kind ``unreadable``), never dropped and never
a crash.
"""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import pandas as pd

from analysis.names import report_stem

#: Columns of the findings table, one row per launch and rule result.
FINDING_COLUMNS = ["report", "launch", "kernel", "mangled", "rule", "section", "name", "title", "message", "kind",
                   "speedup_pct", "speedup_type", "focus_metrics"]

#: ``ncu_report.MsgType_*`` of a rule's message: 0 none, 1 ok, 2 optimization, 3 warning,
#: 4 error (the values of the ncu_report module).
KINDS = {0: "none", 1: "ok", 2: "optimization", 3: "warning", 4: "error"}

#: ``ncu_report.SpeedupType_*``: an estimate of the whole kernel's duration (global) or of
#: the part of it the rule looks at (local).
SPEEDUP_TYPES = {0: "unknown", 1: "local", 2: "global"}

# The GUI's inline markup in rule messages: @section:ID:Label@, @url:Label:https://...@,
# @metric:name@ and the like.
_MARKUP = re.compile(r"@(?P<kind>[a-z_]+):(?P<body>[^@]*)@")


def plain_message(text: object) -> str:
    """A rule message without the GUI's markup: ``@section:LaunchStats:Launch Statistics@``
    becomes ``Launch Statistics``, ``@url:Name:https://x@`` becomes ``Name (https://x)``,
    any other ``@kind:...@`` its last field."""

    def repl(m: re.Match) -> str:
        body = m.group("body")
        if m.group("kind") == "url":
            label, _, url = body.partition(":")
            return f"{label} ({url})" if url else label
        return body.rsplit(":", 1)[-1]

    return _MARKUP.sub(repl, "" if text is None else str(text)).strip()


def _focus(metrics: object) -> str:
    """Focus metrics as ``name = value`` joined by ``; `` (the rule's own numbers)."""
    if not isinstance(metrics, list):
        return "" if metrics is None else str(metrics)
    parts = []
    for m in metrics:
        if isinstance(m, dict):
            value = m.get("value")
            shown = f"{value:.6g}" if isinstance(value, float) else str(value)
            parts.append(f"{m.get('name')} = {shown}")
        else:
            parts.append(str(m))
    return "; ".join(parts)


def _row(result: object) -> dict:
    """One rule result as the table's fields; a result of another shape as text."""
    if not isinstance(result, dict) or "rule_identifier" not in result:
        return {"rule": None, "section": None, "name": None, "title": None, "message": str(result),
                "kind": "unreadable", "speedup_pct": math.nan, "speedup_type": None, "focus_metrics": ""}
    msg = result.get("rule_message")
    msg = msg if isinstance(msg, dict) else {"message": msg}
    speed = result.get("speedup_estimation")
    pct, kind = math.nan, None
    if isinstance(speed, dict):
        try:
            pct = float(speed.get("speedup"))
        except (TypeError, ValueError):
            pct = math.nan
        kind = SPEEDUP_TYPES.get(speed.get("type"), str(speed.get("type")))
    return {"rule": str(result.get("rule_identifier")), "section": result.get("section_identifier"),
            "name": result.get("name"), "title": plain_message(msg.get("title")) or None,
            "message": plain_message(msg.get("message")), "kind": KINDS.get(msg.get("type"), str(msg.get("type"))),
            "speedup_pct": pct, "speedup_type": kind, "focus_metrics": _focus(result.get("focus_metrics"))}


def findings_of(path: str | Path, actions: list) -> pd.DataFrame:
    """The findings of ``actions`` (``(launch, range, IAction)`` of an open report, as
    :func:`analysis.reports.ncu.launches._actions` gives them): the table of
    :func:`load_findings`, without its warning for a report that holds none."""
    from analysis.nsight import ncu_report

    rows = []
    for launch, _rng, action in actions:
        try:
            results = action.rule_results_as_dicts()
        except Exception as exc:  # the native reader's failure on this launch's results
            results = [f"rule results unreadable ({type(exc).__name__}: {exc})"]
        mangled = action.name(ncu_report.IAction.NameBase_MANGLED) or action.name()
        for r in results or []:
            rows.append({"report": report_stem(Path(path)), "launch": launch, "kernel": action.name(),
                         "mangled": mangled, **_row(r)})
    df = pd.DataFrame(rows, columns=FINDING_COLUMNS)
    df["launch"] = df["launch"].astype("int64")
    df["speedup_pct"] = df["speedup_pct"].astype("float64")
    for col in FINDING_COLUMNS:
        if col not in ("launch", "speedup_pct"):
            df[col] = df[col].astype("string")
    return df.sort_values(["launch", "speedup_pct"], ascending=[True, False], na_position="last",
                          kind="stable").reset_index(drop=True)


def no_findings(path: str | Path) -> str:
    """What is said of a report that holds no rule results (naming it)."""
    return (f"{path}: holds no guided-analysis rule results (an older Nsight Compute, or captured with "
            "--metrics only): no findings")


def warn_if_none(path: str | Path, findings: pd.DataFrame) -> None:
    """One warning naming ``path`` where its report gave no findings (:func:`no_findings`)."""
    if findings.empty:
        warnings.warn(no_findings(path), stacklevel=3)


def load_findings(path: str | Path) -> pd.DataFrame:
    """The guided-analysis findings of every launch of a report.

    Args:
        path: a ``.ncu-rep`` or ``.ncu-rep.xz`` file.

    Returns:
        DataFrame with columns :data:`FINDING_COLUMNS`, one row per launch and rule result:
        ``launch`` (int, 0-based across ranges, as :func:`analysis.reports.ncu.load_report`
        numbers them), ``kernel`` and ``mangled`` (ncu's names), ``rule`` (the rule's
        identifier, e.g. ``UncoalescedGlobalAccess``), ``section``, ``name``, ``title``,
        ``message`` (markup removed: :func:`plain_message`), ``kind`` (:data:`KINDS`, or
        ``unreadable``), ``speedup_pct`` (float64, %, NaN where the rule estimates none),
        ``speedup_type`` (:data:`SPEEDUP_TYPES`), ``focus_metrics`` (``name = value; ...``).
        Sorted by launch, then estimated speedup (largest first). A report without rule
        results gives no rows and a warning naming the file.

    Raises:
        ReportError: as :func:`analysis.reports.ncu.load_report`, for a file that cannot be read.
    """
    from analysis.reports.ncu.files import _plain_report
    from analysis.reports.ncu.launches import _actions, _open

    path = Path(path)
    with _plain_report(path) as plain:
        df = findings_of(path, list(_actions(_open(path, plain))))
    warn_if_none(path, df)
    return df
