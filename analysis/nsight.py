"""NVIDIA's ``ncu_report`` module, imported here for the whole package, and whether this process
also used it outside the package.

``ncu_report`` keeps native state between calls: after a process read a report of one GPU chip, the
metric types and units it gives for a report of another chip follow the first chip's metric
definitions (an H200 report read after an A100 one: 1,141 of its 2,243 metrics typed ``other``
instead of 390). The readers of :mod:`analysis.reports.ncu` keep track of what they read themselves,
but a user's script or notebook may call ``ncu_report.load_report`` on its own, before or between
them. So every read this package makes goes through :func:`load_report` here, and the native
function every report opening goes through, ``ncu_report._ncu_report.load_report`` (which
``ncu_report.load_report`` calls, also after ``importlib.reload(ncu_report)``), is replaced by a
function that records a call made outside :func:`load_report` and then does what the original
does (same arguments, same result). :func:`used_outside` is True once that happened, or where
``ncu_report`` was imported before this module (it may have been used then); the readers then take
every unit and metric type from a fresh process (docs/robustness.md, fault 6).
"""

from __future__ import annotations

import functools
import sys
import threading

_IMPORTED_BEFORE = "ncu_report" in sys.modules

import ncu_report  # noqa: E402 (after the check of who imported it first)
from ncu_report import _ncu_report as _native  # noqa: E402

__all__ = ["ncu_report", "load_report", "used_outside"]


class _Record:
    """Whether a report was opened outside :func:`load_report` (thread-safe), and which
    threads are inside :func:`load_report` now."""

    def __init__(self, used: bool) -> None:
        self.used = used
        self.lock = threading.Lock()
        self.inside = threading.local()

    def mark(self) -> None:
        with self.lock:
            self.used = True


_previous = getattr(_native.load_report, "_analysis_record", None)
if _previous is not None:  # this module imported again (importlib.reload): keep the first one's record
    _RECORD: _Record = _previous
else:
    _RECORD = _Record(_IMPORTED_BEFORE)
    _native_load_report = _native.load_report

    @functools.wraps(_native_load_report)
    def _recorded_load_report(*args, **kwargs):
        if not getattr(_RECORD.inside, "active", False):
            _RECORD.mark()
        return _native_load_report(*args, **kwargs)

    _recorded_load_report._analysis_record = _RECORD  # type: ignore[attr-defined]
    _native.load_report = _recorded_load_report


def load_report(path: str):
    """``ncu_report.load_report(path)`` (an ``IContext``), not counted as a use outside the package.

    Args:
        path: a plain (not compressed) ``.ncu-rep`` file.

    Raises:
        whatever ``ncu_report.load_report`` raises on a file it cannot read
        (``FileNotFoundError`` for a missing one, the native reader's error otherwise).
    """
    _RECORD.inside.active = True
    try:
        return ncu_report.load_report(path)
    finally:
        _RECORD.inside.active = False


def used_outside() -> bool:
    """True where this process opened a report with ``ncu_report`` other than through
    :func:`load_report`, imported ``ncu_report`` before this module (so may have), or holds
    a native module without the recording function (``ncu_report`` removed from
    ``sys.modules`` and imported again, as autoreload tools do: the new copy may have been
    used unseen)."""
    native = sys.modules.get("ncu_report._ncu_report")
    if native is not None and getattr(native.load_report, "_analysis_record", None) is not _RECORD:
        _RECORD.mark()
    with _RECORD.lock:
        return _RECORD.used
