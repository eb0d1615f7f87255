"""Profile-set file names, without heavy imports (the Snakefile reads them at start-up)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

#: Report file names: {kernel}_n{N}.ncu-rep[.xz], repeats of a profile as {kernel}_n{N}_r{R}.
REPORT_STEM = r"[A-Za-z0-9_]+?_n\d+(?:_r[1-9]\d*)?"
_FILE_RE = re.compile(r"^(?P<kernel>[A-Za-z0-9_]+?)_n(?P<n>\d+)(?:_r(?P<repeat>[1-9]\d*))?\.ncu-rep(?:\.xz)?$")


@dataclass(frozen=True)
class ReportName:
    """Kernel, N and repeat encoded in a report's file name:
    ``{kernel}_n{N}.ncu-rep[.xz]`` (repeat 0) or ``{kernel}_n{N}_r{R}.ncu-rep[.xz]``."""

    kernel: str
    n: int
    repeat: int = 0

    @classmethod
    def parse(cls, path: str | Path) -> ReportName | None:
        m = _FILE_RE.match(Path(path).name)
        return cls(m["kernel"], int(m["n"]), int(m["repeat"] or 0)) if m else None

    @property
    def stem(self) -> str:
        """The file name without ``.ncu-rep[.xz]``."""
        return f"{self.kernel}_n{self.n}" + (f"_r{self.repeat}" if self.repeat else "")


def report_stem(path: str | Path) -> str:
    """A report file's name without ``.ncu-rep`` or ``.ncu-rep.xz``."""
    return Path(path).name.removesuffix(".xz").removesuffix(".ncu-rep")
