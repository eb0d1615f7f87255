"""Report readers for the pool tests: module-level, so worker processes import them by name."""

from __future__ import annotations

import os
import signal
import time

from analysis.reports.parse import _read_one


def crash_on_n1024(path: str, expect_launches):
    """Kill the worker (SIGSEGV) on any report of N = 1024, as a crash of the native reader would."""
    if "_n1024" in path:
        os.kill(os.getpid(), signal.SIGSEGV)
    return _read_one(path, expect_launches)


def hang_on_n1024(path: str, expect_launches):
    """Never return on any report of N = 1024, as a hang of the native reader would."""
    if "_n1024" in path:
        time.sleep(3600)
    return _read_one(path, expect_launches)


#: Reports this worker process has read so far (one process reads several in a pool).
_READS_HERE = 0


def count_reads(path: str, expect_launches):
    """Read the report, and record in its table how many reports this process had read by
    then (column ``reads_in_process``: 1 when the process read no other report before)."""
    global _READS_HERE
    _READS_HERE += 1
    metrics, *rest = _read_one(path, expect_launches)
    metrics["reads_in_process"] = _READS_HERE
    return metrics, *rest


def crash_inside_n1024(path: str, expect_launches):
    """Kill the worker (SIGSEGV) on any report of N = 1024 while it holds the report's
    decompressed copy, as a crash of the native reader reading it would."""
    if "_n1024" in path:
        from pathlib import Path

        from analysis.reports.ncu.files import _plain_report

        with _plain_report(Path(path)):
            os.kill(os.getpid(), signal.SIGSEGV)
    return _read_one(path, expect_launches)
