"""Profile-set file names, without heavy imports (the Snakefile reads them at start-up)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

#: Report file names: {kernel}_n{N}.ncu-rep[.xz], repeats of a profile as {kernel}_n{N}_r{R};
#: a report holding one launch per N, in launch order, names them all: {kernel}_n512-1024-2048.
REPORT_STEM = r"[A-Za-z0-9_]+?_n[1-9]\d*(?:-[1-9]\d*)*(?:_r[1-9]\d*)?"
_FILE_RE = re.compile(r"^(?P<kernel>[A-Za-z0-9_]+?)_n(?P<n>[1-9]\d*(?:-[1-9]\d*)*)(?:_r(?P<repeat>[1-9]\d*))?"
                      r"\.ncu-rep(?:\.xz)?$")


#: The largest N or repeat number a report's name may give: the kernels' launcher takes M, N and
#: K as 32-bit ``int`` (kernels/gemm_common.cuh), and the tables keep both as 64-bit integers. A
#: name giving more does not read as the workflow's (its launches are read with N = NA, and the
#: set's listing names it as close to that form).
MAX_NAME_NUMBER = 2**31 - 1


@dataclass(frozen=True)
class ReportName:
    """Kernel, problem sizes and repeat encoded in a report's file name:
    ``{kernel}_n{N}.ncu-rep[.xz]`` (repeat 0), ``{kernel}_n{N}_r{R}.ncu-rep[.xz]``, or, for a
    report holding one launch per size in launch order (one ncu process for every N of a
    kernel), ``{kernel}_n{N1}-{N2}-...[_r{R}]``.

    Attributes:
        kernel: the kernel's name (every launch of the report is of it).
        sizes: M = N = K of each launch, in launch order (one element for a one-launch report).
        repeat: which profile of the same kernel and sizes (0: the first).
    """

    kernel: str
    sizes: tuple[int, ...]
    repeat: int = 0

    def __post_init__(self) -> None:
        if not self.sizes or len(set(self.sizes)) != len(self.sizes):
            raise ValueError(f"{self.kernel}: sizes {self.sizes} must be one or more distinct N")

    @classmethod
    def parse(cls, path: str | Path) -> ReportName | None:
        """The name of ``path``'s file, or None when it does not read as above (a report of
        another program, an N given twice, or an N or repeat beyond :data:`MAX_NAME_NUMBER`)."""
        m = _FILE_RE.match(Path(path).name)
        if not m:
            return None
        numbers = [v for v in (*m["n"].split("-"), m["repeat"]) if v]
        if any(len(v) > len(str(MAX_NAME_NUMBER)) or int(v) > MAX_NAME_NUMBER for v in numbers):
            return None
        sizes = tuple(int(v) for v in m["n"].split("-"))
        if len(set(sizes)) != len(sizes):
            return None
        return cls(m["kernel"], sizes, int(m["repeat"] or 0))

    @property
    def n(self) -> int:
        """The N of a one-launch report.

        Raises:
            ValueError: the report holds several sizes (use :attr:`sizes`)."""
        if len(self.sizes) != 1:
            raise ValueError(f"{self.stem}: a report of {len(self.sizes)} sizes has no single N")
        return self.sizes[0]

    @property
    def stem(self) -> str:
        """The file name without ``.ncu-rep[.xz]``."""
        return (f"{self.kernel}_n{'-'.join(map(str, self.sizes))}"
                + (f"_r{self.repeat}" if self.repeat else ""))


def launch_source(report: str) -> str:
    """The report part of a launch's identity: the stem of a report named
    ``{kernel}_n{N...}_r{R}`` without ``_r{R}`` (its repeats share it), else the stem itself
    (``profile`` for ``profile.ncu-rep``)."""
    name = ReportName.parse(f"{report}.ncu-rep")
    return ReportName(name.kernel, name.sizes).stem if name else report


def is_text(s: str) -> bool:
    """Whether ``s`` is text that UTF-8 can hold: bytes that are not UTF-8 reach Python as lone
    surrogates (``os.fsdecode`` of a file name; ncu_report's strings of a damaged report), which
    neither ncu_report's own lookups nor Arrow take."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def as_text(name: str) -> str:
    """``name`` with its bytes that are not UTF-8 (see :func:`is_text`) as ``\\xNN`` escapes:
    ``caf\\xe9`` for the Latin-1 file name ``café``; text as it is."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def report_stem(path: str | Path) -> str:
    """A report file's name without ``.ncu-rep`` or ``.ncu-rep.xz``, as text (:func:`as_text`), so
    that every table and message can hold it."""
    return as_text(Path(path).name.removesuffix(".xz").removesuffix(".ncu-rep"))


#: Set names that pandas reads back from a CSV as missing values (``pandas.read_csv``'s
#: default ``na_values``, those made only of the characters a set name may hold): a set so
#: named would lose its name in every table. tests/test_input_checks.py checks each against
#: pandas itself.
NA_LIKE_NAMES = frozenset({"NA", "NULL", "NaN", "None", "nan", "null"})


#: The longest set name, in bytes: a comparison's folder ``figures/compare/{a}__vs__{b}`` is one
#: path component, and file systems allow 255 bytes a component (two names of 129 bytes failed).
MAX_SET_NAME = 120


#: What a set name is made of (the config schema's pattern of ``set``, ``baseline``...): the
#: workflow's ``{set}`` wildcards match only these characters.
SET_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")


#: The folders the workflow writes beside the sets' own under ``figures/`` (and ``results/tables/sass``):
#: a set of one of these names (in any case) would write its figures among them.
WORKFLOW_FOLDERS = {"compare": "the set comparisons", "noise": "the noise model", "quant": "the quantization errors",
                    "sass": "the static SASS tables"}


def set_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a profile set, or None: ``default`` (in any case) is Snakemake's
    workflow-profile folder under ``profiles/``, :data:`WORKFLOW_FOLDERS` are the workflow's own, the :data:`NA_LIKE_NAMES` read back as
    missing values from the set's own tables, and a name longer than :data:`MAX_SET_NAME`
    bytes gives comparison folders longer than a file name may be, and a name holding ``__vs`` or
    ``vs__`` could make a comparison's folder ``figures/compare/{a}__vs__{b}`` read as another pair of
    sets (``av1__vs__x`` against ``av2`` and ``av1`` against ``x__vs__av2`` share one folder; without
    these two substrings the separator is the folder name's only ``__vs__``), a name ending in
    ``.`` (Windows and SMB shares drop a file name's trailing dots, so ``a.`` and ``a`` would be one
    folder there, and the set's log files read ``a...log``), and a name of other characters than
    :data:`SET_NAME`'s."""
    if not SET_NAME.fullmatch(name):
        folder = name.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1]
        if folder != name and SET_NAME.fullmatch(folder):  # profiles/NAME/, or a path ending in the name
            return (f"is a path: give the set's name, {folder!r}, not its folder (sets are the folders of "
                    "profiles/)")
        return ("holds other characters than letters, digits, '.', '_' and '-', or starts with '.' or '-': the "
                "workflow's file patterns match only these")
    if name.endswith("."):
        return ("ends with '.': Windows and SMB shares drop a file name's trailing dots, so the set's folder would "
                "be that of the name without them")
    if "__vs" in name or "vs__" in name:
        return ("holds '__vs' or 'vs__': a comparison's folder figures/compare/A__vs__B could then be read as "
                "another pair of sets (e.g. use '_vs_')")
    if name.lower() == "default":
        return "'default' is Snakemake's profile folder (in any case: some file systems ignore it)"
    if name.lower() in WORKFLOW_FOLDERS:
        return (f"figures/{name.lower()}/ is the workflow's own folder ({WORKFLOW_FOLDERS[name.lower()]}), which the "
                "set's figures would be written into")
    if name in NA_LIKE_NAMES:
        return f"pandas reads {name!r} in a table as a missing value, so the set's rows would lose their name"
    if len(name.encode()) > MAX_SET_NAME:
        return (f"{len(name.encode())} bytes long; a comparison's folder figures/compare/A__vs__B is one file name "
                f"of at most 255 bytes, so a set name may have at most {MAX_SET_NAME}")
    return None
