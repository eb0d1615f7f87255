"""Run a workflow step with its output in the rule's log file and its error on the console."""

from __future__ import annotations

import contextlib
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def logged(log: str | Path) -> Iterator[None]:
    """Send stdout and stderr to ``log``; on an exception write the traceback there, print
    the one-line message to the console (so the workflow shows the cause) and exit with
    status 1, so the console shows the cause once and the log keeps the traceback."""
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    console = sys.__stderr__
    with open(log, "w", encoding="utf-8") as fh, contextlib.redirect_stdout(fh), contextlib.redirect_stderr(fh):
        try:
            yield
        except Exception as exc:
            traceback.print_exc(file=fh)
            print(f"error: {exc} (details: {log})", file=console)
            raise SystemExit(1) from None


def warn(message: str) -> None:
    """Inside :func:`logged`: print ``warning: message`` on the console and in the log."""
    print(f"warning: {message}", file=sys.__stderr__)
    print(f"warning: {message}")
