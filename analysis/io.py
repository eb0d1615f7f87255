"""Write files so that a reader never sees half of one: temporary name, then rename."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


@contextlib.contextmanager
def atomic_path(final: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``final``; rename it onto ``final`` on success.

    On an exception the temporary file is removed and ``final`` is left untouched.
    The suffix of ``final`` is kept so that writers choosing a format by suffix work.
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{final.name}.", suffix=f".tmp{''.join(final.suffixes)}",
                               dir=final.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        # mkstemp creates 0600; give the file the mode a plain open() would (0666 & ~umask)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp_path, 0o666 & ~umask)
        os.replace(tmp_path, final)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8), atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Write ``obj`` as indented JSON, atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=False) + "\n", encoding="utf-8")


#: Significant digits of every float written to a CSV table. Enough to keep what was
#: measured (event timings: 5-6 digits; counters: exact up to 10^9) while dropping the
#: last-bit differences that another CPU's BLAS or summation order leaves, so that the
#: same data give the same bytes on every machine.
SIG_DIGITS = 10


def write_csv(df: pd.DataFrame, path: str | os.PathLike[str]) -> None:
    """Write ``df`` as CSV (no index, floats to :data:`SIG_DIGITS` significant digits),
    atomically."""
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False, float_format=f"%.{SIG_DIGITS}g")
