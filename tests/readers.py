"""Report readers for the pool tests: module-level, so worker processes import them by name."""

from __future__ import annotations

import os
import signal
import time

from analysis.parse import _read_one


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
