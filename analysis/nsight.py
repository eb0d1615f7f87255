"""NVIDIA's ``ncu_report`` module, imported here for the whole package, and whether this process
also used it outside the package.

``ncu_report`` keeps native state between calls: after a process read a report of one GPU chip, the
metric types and units it gives for a report of another chip follow the first chip's metric
definitions (an H200 report read after an A100 one: 1,141 of its 2,243 metrics typed ``other``
instead of 390). The readers of :mod:`analysis.reports.ncu` keep track of what they read themselves,
but a user's script or notebook may call ``ncu_report.load_report`` on its own, before or between
them. So every read this package makes goes through :func:`load_report` here, and
``ncu_report.load_report`` itself is replaced by a function that records the call and then does
what the original does (same arguments, same result). :func:`used_outside` is True once that
happened, or where ``ncu_report`` was imported before this module (it may have been used then);
the readers then take every unit and metric type from a fresh process
(docs/robustness.md, fault 6).
"""

from __future__ import annotations

import functools
import sys
import threading

_IMPORTED_BEFORE = "ncu_report" in sys.modules

import ncu_report  # noqa: E402 (after the check of who imported it first)

__all__ = ["ncu_report", "load_report", "used_outside"]


class _Outside:
    """Whether ``ncu_report.load_report`` was called outside this package (thread-safe)."""

    def __init__(self, used: bool) -> None:
        self.used = used
        self.lock = threading.Lock()

    def mark(self) -> None:
        with self.lock:
            self.used = True


_wrapped = getattr(ncu_report.load_report, "_analysis_outside", None)
if _wrapped is not None:  # this module imported again (importlib.reload): keep the first one's record
    _OUTSIDE: _Outside = _wrapped
    _native_load_report = ncu_report.load_report.__wrapped__
else:
    _OUTSIDE = _Outside(_IMPORTED_BEFORE)
    _native_load_report = ncu_report.load_report

    @functools.wraps(_native_load_report)
    def _recorded_load_report(*args, **kwargs):
        _OUTSIDE.mark()
        return _native_load_report(*args, **kwargs)

    _recorded_load_report._analysis_outside = _OUTSIDE  # type: ignore[attr-defined]
    ncu_report.load_report = _recorded_load_report


def load_report(path: str):
    """``ncu_report.load_report(path)`` (an ``IContext``), not counted as a use outside the package.

    Args:
        path: a plain (not compressed) ``.ncu-rep`` file.

    Raises:
        whatever the native reader raises on a file it cannot read.
    """
    return _native_load_report(path)


def used_outside() -> bool:
    """True where this process called ``ncu_report.load_report`` other than through
    :func:`load_report`, or imported ``ncu_report`` before this module (so may have)."""
    with _OUTSIDE.lock:
        return _OUTSIDE.used
