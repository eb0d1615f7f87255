"""Read Nsight Compute reports (``.ncu-rep`` or ``.ncu-rep.xz``) into tidy pandas tables.

Everything goes through NVIDIA's ``ncu_report`` module (PyPI ``ncu-report``), which reads
reports without a GPU. Values are kept in the report's own base units (ns, byte, cycle,
sector, %); nothing is rescaled.

The reader does not raise on broken input by itself: it loads a truncated report as
zero ranges and a corrupted one as a launch with zero metrics. :func:`load_report`
checks for both and raises :class:`~analysis.errors.ReportError`.
"""

from __future__ import annotations

import contextlib
import lzma
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import ncu_report
import pandas as pd

from .errors import ReportError
from .names import REPORT_STEM, ReportName, report_stem  # noqa: F401 (REPORT_STEM re-exported)
from .precision import PRECISIONS

#: Columns of the per-report tidy table, in order (one row per launch x metric).
TIDY_COLUMNS = ["kernel", "precision", "n", "repeat", "launch", "metric", "value", "value_str", "unit",
                "metric_type", "instances"]

#: Columns that identify a launch, after :data:`TIDY_COLUMNS`: the report's file stem; the
#: profiling range; ncu's function, demangled and mangled names; the launch's position
#: among the report's launches of the same mangled name (and N, in a report of one launch
#: per N); grid and block size ("x,y,z", NA without the launch statistics); and whether
#: profiling failed for the launch.
IDENTITY_COLUMNS = ["report", "range", "function", "demangled", "mangled", "occurrence", "grid", "block",
                    "profiling_failed"]

#: A launch counts as not profiled when more than this share of its metrics has no value
#: (no number and no string). Seen: 493 of 696 metrics (71 %) of a launch whose profiling
#: failed in an A100 report; none of the 2,243 metrics of this project's H200 launches.
FAILED_SHARE = 0.5

_METRIC_TYPE = {0: "other", 1: "counter", 2: "ratio", 3: "throughput"}


# ncu_report's value kinds (IMetric.ValueKind_*), grouped by the accessor that reads them.
_KIND_DOUBLE = frozenset((ncu_report.IMetric.ValueKind_DOUBLE, ncu_report.IMetric.ValueKind_FLOAT))
_KIND_UINT = frozenset((ncu_report.IMetric.ValueKind_UINT32, ncu_report.IMetric.ValueKind_UINT64))
_KIND_STRING = frozenset((ncu_report.IMetric.ValueKind_STRING,))


def OPCODE_INSTANCES(metric: str) -> bool:  # noqa: N802 (a constant predicate)
    """The instanced metrics the workflow keeps: those with one instance per SASS opcode
    (``sass__*per_opcode*``, e.g. ``sass__thread_inst_executed_true_per_opcode_with_modifier_all``).
    Per-PC source counters and PM-sampling series are left to :func:`load_instances`."""
    return metric.startswith("sass__") and "per_opcode" in metric


_XZ_MAGIC = b"\xfd7zXZ\x00"
#: The next step for a damaged report, wherever it came from.
REPROFILE = "profile the kernel again, or remove the file from its set"


def precision_from_kernel(kernel: str) -> str | None:
    """The precision prefix of a kernel name (``int8_wmma`` -> ``int8``), or None."""
    head = kernel.split("_", 1)[0]
    return head if head in PRECISIONS else None


@contextlib.contextmanager
def _plain_report(path: Path) -> Iterator[Path]:
    """Yield a path ``ncu_report`` can open: the file itself, or an xz-decompressed copy."""
    if not path.exists():
        raise ReportError(path, "file does not exist")
    if path.stat().st_size == 0:
        raise ReportError(path, "file is empty", REPROFILE)
    if not path.name.endswith((".ncu-rep", ".ncu-rep.xz")):
        raise ReportError(path, "is not a .ncu-rep or .ncu-rep.xz file",
                          "pass an Nsight Compute report, as written by ncu --export")
    if path.suffix != ".xz":
        yield path
        return
    # decompressed into memory-backed /dev/shm where there is one: the copy is read once
    shm = Path("/dev/shm")
    tmpdir = Path(tempfile.mkdtemp(prefix="ncu-rep-", dir=shm if shm.is_dir() and os.access(shm, os.W_OK) else None))
    try:
        plain = tmpdir / path.name[: -len(".xz")]
        _xz_decompress_strict(path, plain)
        if plain.stat().st_size == 0:
            raise ReportError(path, "decompresses to an empty file")
        yield plain
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def _xz_decompress_strict(src: Path, dst: Path) -> None:
    """Decompress one .xz stream (its CRC64 checked by liblzma) from ``src`` to ``dst``.

    Unlike ``lzma.open``, which ignores bytes after the last stream, anything after the
    stream other than xz's zero padding is refused: it is not part of a report.
    """
    with open(src, "rb") as fh:
        if fh.read(len(_XZ_MAGIC)) != _XZ_MAGIC:
            raise ReportError(src, "is not an xz file (no xz header)",
                              "compress reports with xz, or drop the .xz suffix of a plain .ncu-rep")
    dec = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
    try:
        with open(src, "rb") as fin, open(dst, "wb") as fout:
            while not dec.eof:
                chunk = fin.read(1 << 20)
                if not chunk:
                    raise ReportError(src, "not a complete xz stream (it ends early)",
                                      REPROFILE)
                fout.write(dec.decompress(chunk))
            rest = dec.unused_data + fin.read()
    except lzma.LZMAError as exc:
        raise ReportError(src, f"not a complete xz stream ({exc})",
                          REPROFILE) from None
    if rest.strip(b"\0") or len(rest) % 4:
        raise ReportError(src, f"{len(rest)} bytes after the end of the xz stream",
                          REPROFILE)


def _metric_value(metric) -> tuple[float, str | None]:
    """(numeric value, string value) of one metric; NaN for a missing or non-numeric value.

    Same result as ``metric.value()`` (ncu_report's convenience wrapper, which picks the
    ``as_*`` accessor from ``kind()``), without building its lookup table per call: this
    runs once per metric, about 2,000 times per launch.
    """
    if not metric.has_value():
        return math.nan, None
    kind = metric.kind()
    if kind in _KIND_DOUBLE:
        val = metric.as_double()
    elif kind in _KIND_UINT:
        val = metric.as_uint64()
    elif kind in _KIND_STRING:
        return math.nan, metric.as_string()
    else:  # ANY or UNKNOWN: ncu_report gives None
        return math.nan, None
    if val is None:
        return math.nan, None
    return float(val), None


def _check_named(path: Path, name: ReportName | None, actions: list) -> None:
    """What a ``{kernel}_n{N...}`` name says of the launches holds: each is of that kernel;
    a name of several sizes has one launch per size; launches at one N share a grid (a
    kernel's grid at a given N is fixed), and grids do not shrink as N grows (sizes in
    launch order). Launches without launch statistics are not compared.

    Raises:
        ReportError: naming the file, the launches and the fix.
    """
    if name is None:
        return
    if len(name.sizes) > 1 and len(actions) != len(name.sizes):
        raise ReportError(path, f"holds {len(actions)} kernel launches, but its name gives "
                                f"{len(name.sizes)} sizes (N = {', '.join(map(str, name.sizes))}), one launch each",
                          "profile every N of the kernel in one ncu process (one launch per N, in the "
                          "name's order), or name the file {kernel}_n{N}; a report cut short holds fewer")
    for launch, _rng, action in actions:
        if len(action.metric_names()) == 0:  # a cut or damaged report: say so, not "another kernel"
            raise ReportError(path, f"launch {launch} ({action.name()}) has no metrics (corrupt report)")
        if action.name() != name.kernel:
            raise ReportError(path, f"launch {launch} is kernel {action.name()!r}, "
                                    f"but the file name says {name.kernel!r}",
                              "a name of the form {kernel}_n{N} names the kernel of every launch: rename the file, "
                              "e.g. without the _n{N} part (a report an import put in a set: delete it there, "
                              "rename its source file and import again)")
    sizes = launch_sizes(name, [launch for launch, _, _ in actions])
    grids = [_dims(action, "grid") for _, _, action in actions]
    known = [(n, g, launch) for n, g, (launch, _, _) in zip(sizes, grids, actions) if g is not None]
    by_n: dict[int, set[str]] = {}
    for n, g, _ in known:
        by_n.setdefault(n, set()).add(g)
    for n, gs in by_n.items():
        if len(gs) > 1:
            listed = ", ".join(f"({g})" for g in sorted(gs, key=lambda g: [int(v) for v in g.split(",")]))
            raise ReportError(path, f"its name gives N = {n} to launches of grids {listed}, "
                                    "but a kernel's grid at one N is fixed",
                              "a report of one launch per N is named {kernel}_n{N1}-{N2}-..., the N in "
                              "launch order; or drop the _n{N} part")
    blocks = sorted((n, math.prod(int(v) for v in g.split(",")), g) for n, g, _ in known)
    for (n0, b0, g0), (n1, b1, g1) in zip(blocks, blocks[1:]):
        if n1 > n0 and b1 < b0:
            raise ReportError(path, f"the launch its name puts at N = {n1} has a smaller grid ({g1}) than the "
                                    f"one at N = {n0} ({g0})",
                              "the N in the name must be in launch order")


def launch_sizes(name: ReportName | None, launches: Iterable[int]) -> list:
    """N of each launch index (0-based, across ranges): the file name's N for a one-size
    report, the name's i-th N for launch i of a report of several sizes (one launch each,
    in launch order, as the name says), NA for a report whose name gives none."""
    if name is None:
        return [pd.NA for _ in launches]
    if len(name.sizes) == 1:
        return [name.sizes[0] for _ in launches]
    return [name.sizes[i] for i in launches]


def _actions(ctx) -> Iterator[tuple[int, int, object]]:
    """(launch index across ranges, range index, action) of every launch in the report."""
    idx = 0
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for a in range(rng.num_actions()):
            yield idx, r, rng.action_by_idx(a)
            idx += 1


def _dims(action, prefix: str) -> str | None:
    """``"x,y,z"`` from launch__{prefix}_dim_{x,y,z} (float up to ncu 2024.2, int after), or None."""
    vals = []
    for axis in "xyz":
        m = action.metric_by_name(f"launch__{prefix}_dim_{axis}")
        v = _metric_value(m)[0] if m is not None else math.nan
        if math.isnan(v):
            return None
        vals.append(str(int(v)))
    return ",".join(vals)


def _open(path: Path, plain: Path):
    try:
        ctx = ncu_report.load_report(str(plain))
    except Exception as exc:  # the native reader's own failure
        raise ReportError(path, f"ncu_report cannot read it ({type(exc).__name__}: {exc})",
                          "is it an Nsight Compute report?") from None
    if ctx.num_ranges() == 0:
        raise ReportError(path, "holds no profiling range (truncated, or not a report)",
                          REPROFILE)
    return ctx


def _metric_table(path: Path, name: ReportName | None, actions: list, expect_launches: int | None
                  ) -> pd.DataFrame:
    if not actions:
        raise ReportError(path, "holds no kernel launch")
    per_n = len(name.sizes) if name else 1
    if expect_launches is not None and len(actions) != expect_launches * per_n:
        raise ReportError(path, f"holds {len(actions)} kernel launches, expected {expect_launches}"
                                + (f" per N ({expect_launches * per_n} for the {per_n} sizes of its name)"
                                   if per_n > 1 else ""),
                          "profile with --launch-count 1 and a --kernel-name filter")
    from ncu_report import IAction

    rows: list[tuple] = []
    ident: list[tuple] = []
    seen: dict[tuple, int] = {}
    sizes = launch_sizes(name, [launch for launch, _, _ in actions])
    for (launch, rng, action), size in zip(actions, sizes):
        names = action.metric_names()
        if len(names) == 0:
            raise ReportError(path, f"launch {launch} ({action.name()}) has no metrics (corrupt report)")
        kernel = name.kernel if name else action.name()
        mangled = action.name(IAction.NameBase_MANGLED) or action.name()
        # the launch's place among those of its kernel at its N (one launch per N: 0)
        occurrence = seen.get((mangled, size), 0)
        seen[(mangled, size)] = occurrence + 1
        first = len(rows)
        for metric_name in sorted(names):
            m = action.metric_by_name(metric_name)
            value, value_str = _metric_value(m)
            rows.append((kernel, metric_name, launch, value, value_str, m.unit(),
                         _METRIC_TYPE.get(m.metric_type(), "other"), m.num_instances()))
        empty = sum(1 for r in rows[first:] if math.isnan(r[3]) and r[4] is None)
        ident.append((launch, rng, action.name(), action.name(IAction.NameBase_DEMANGLED), mangled, occurrence,
                      _dims(action, "grid"), _dims(action, "block"), empty > FAILED_SHARE * len(names)))
    df = pd.DataFrame(rows, columns=["kernel", "metric", "launch", "value", "value_str", "unit",
                                     "metric_type", "instances"])
    df["precision"] = df["kernel"].map(precision_from_kernel).astype("string")
    df["n"] = pd.array(launch_sizes(name, df["launch"]), dtype="Int64")
    df["repeat"] = name.repeat if name else 0
    for col in ("kernel", "metric", "value_str", "unit", "metric_type"):
        df[col] = df[col].astype("string")
    df["value"] = df["value"].astype("float64")
    ids = pd.DataFrame(ident, columns=["launch", *IDENTITY_COLUMNS[1:]])
    df = df.merge(ids, on="launch", how="left", validate="many_to_one")
    df["report"] = report_stem(path)
    for col in ("report", "function", "demangled", "mangled", "grid", "block"):
        df[col] = df[col].astype("string")
    df["profiling_failed"] = df["profiling_failed"].astype(bool)
    return df[TIDY_COLUMNS + IDENTITY_COLUMNS]


def _instance_table(path: str | Path, name: ReportName | None, actions: list,
                    metrics: list[str] | Callable[[str], bool] | None) -> pd.DataFrame:
    rows: list[tuple] = []
    for launch, _rng, action in actions:
        kernel = name.kernel if name else action.name()
        if metrics is None or callable(metrics):
            wanted = [m for m in action.metric_names() if metrics is None or metrics(m)]
        else:
            wanted = metrics
        for metric_name in wanted:
            m = action.metric_by_name(metric_name)
            if m is None or m.num_instances() == 0:
                continue
            ids = m.correlation_ids() if m.has_correlation_ids() else None
            for i in range(m.num_instances()):
                v = m.value(i)
                key = str(ids.value(i)) if ids is not None else str(i)
                if isinstance(v, str):
                    rows.append((kernel, launch, metric_name, i, key, math.nan, v))
                else:
                    rows.append((kernel, launch, metric_name, i, key, math.nan if v is None else float(v), None))
    df = pd.DataFrame(rows, columns=["kernel", "launch", "metric", "instance", "key", "value", "value_str"])
    df.insert(0, "report", pd.array([report_stem(path)] * len(df), dtype="string"))
    df.insert(2, "n", pd.array(launch_sizes(name, df["launch"]), dtype="Int64"))
    df.insert(2, "repeat", name.repeat if name else 0)
    for col in ("kernel", "metric", "key", "value_str"):
        df[col] = df[col].astype("string")
    return df


def _read(path: str | Path, expect_launches: int | None, *, metrics: bool = True,
          instances: bool = False, instance_filter: Callable[[str], bool] | None = None
          ) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """Open a report once and build the tables asked for (instances of the metrics
    ``instance_filter`` accepts; None: every instanced metric)."""
    path = Path(path)
    name = ReportName.parse(path)
    with _plain_report(path) as plain:
        actions = list(_actions(_open(path, plain)))
        _check_named(path, name, actions)
        table = _metric_table(path, name, actions, expect_launches) if metrics else None
        inst = _instance_table(path, name, actions, instance_filter) if instances else None
    return table, inst


def load_report(path: str | Path, *, expect_launches: int | None = None) -> pd.DataFrame:
    """Read one report, from this workflow or any other program, into a tidy long table,
    one row per launch x metric.

    Args:
        path: any ``.ncu-rep`` or ``.ncu-rep.xz`` file. Kernel, N and repeat are taken
            from the file name when it reads ``{kernel}_n{N}[_r{R}]`` (every launch must
            then be of that kernel) or ``{kernel}_n{N1}-{N2}-...[_r{R}]`` (one launch per
            N, launch i at the i-th N), otherwise from the report (kernel = ncu's function
            name of each launch, N = NA, repeat 0).
        expect_launches: the number of kernel launches the report must hold per N of its
            name (the workflow asks for 1 for the reports it makes); None (default) reads
            every launch of every range.

    Returns:
        DataFrame with columns :data:`TIDY_COLUMNS` then :data:`IDENTITY_COLUMNS`:
        ``kernel`` (str), ``precision`` (str or NA), ``n`` (Int64), ``repeat`` (int: which
        profile of the same kernel and N), ``launch`` (int, 0-based across ranges),
        ``metric`` (Nsight Compute name, verbatim), ``value`` (float64; NaN where the
        metric is a string or has no value), ``value_str`` (string-valued metrics),
        ``unit`` (as the report gives it), ``metric_type`` (counter/ratio/throughput/
        other), ``instances`` (number of instance values; the row holds the total);
        ``report`` (file stem), ``range`` (int), ``function``, ``demangled``, ``mangled``
        (ncu's three names of the launch's kernel), ``occurrence`` (int: 0 for the first
        launch of that mangled name in the report, 1 for the next...), ``grid`` and
        ``block`` (``"x,y,z"`` or NA), ``profiling_failed`` (bool: more than
        :data:`FAILED_SHARE` of the launch's metrics have no value).

    Units are those ncu_report gives for this report; across Nsight Compute versions in
    one process they can depend on what was read before (the native reader keeps metric
    definitions between reports; docs/robustness.md, fault 6). To read reports of several
    versions, give each a process of its own: :func:`load_report_isolated`, or
    :func:`analysis.parse.parse_reports` with ``isolate=True`` (what the workflow does for
    a set that names no single version).

    Raises:
        ReportError: missing, empty, truncated, corrupt or non-report file; a launch with
            no metrics; a launch count other than ``expect_launches`` per N, or than the
            sizes the name gives. The message names the file and the cause.
    """
    return _read(path, expect_launches)[0]


def _run_reader(path: Path, child_args: list[str], timeout: float = 600) -> None:
    """Run ``python <child_args>`` for ``path`` and turn its failure into ReportError."""
    try:
        proc = subprocess.run([sys.executable, *child_args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ReportError(path, f"the report reader did not finish in {timeout:.0f} s") from None
    if proc.returncode < 0:
        raise ReportError(path, f"the native report reader crashed on this file (signal {-proc.returncode})",
                          "the file is corrupt or hostile; re-profile or remove it")
    if proc.returncode == 3:  # a ReportError in the child, message on the last stderr line
        raise ReportError(path, proc.stderr.strip().splitlines()[-1].split(": ", 1)[-1])
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        raise ReportError(path, f"the report reader failed (exit {proc.returncode}): {tail[0]}")


def load_report_isolated(path: str | Path, *, expect_launches: int | None = 1, timeout: float = 600,
                         opcode_instances_only: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`load_report` and :func:`load_instances` of one file, run in a child process.

    A report from elsewhere is data, not code: if the native reader crashes (or hangs
    longer than ``timeout`` seconds) on it, only the child dies, and this raises
    ReportError naming the file. ``opcode_instances_only`` keeps only the instanced
    metrics :data:`OPCODE_INSTANCES` accepts (what the workflow stores).

    Returns:
        (metrics table, instances table), as the two functions return them.

    Raises:
        ReportError: as :func:`load_report`, or the reader crashed or hung on the file.
    """
    path = Path(path)
    with tempfile.TemporaryDirectory(prefix="ncu-read-") as tmp:
        _run_reader(path, ["-m", "analysis.ncu", str(path), tmp,
                           "any" if expect_launches is None else str(expect_launches),
                           "opcode" if opcode_instances_only else "all"], timeout=timeout)
        return pd.read_parquet(Path(tmp) / "metrics.parquet"), pd.read_parquet(Path(tmp) / "instances.parquet")


def _main(argv: list[str]) -> int:
    """Child side of :func:`load_report_isolated`:
    ``python -m analysis.ncu REPORT OUTDIR N|any [all|opcode]``."""
    path, out, expect, *which = argv
    only = OPCODE_INSTANCES if which == ["opcode"] else None
    try:
        metrics, instances = _read(path, None if expect == "any" else int(expect), instances=True,
                                   instance_filter=only)
    except ReportError as exc:
        print(f"ReportError: {exc.cause}" + (f" ({exc.hint})" if exc.hint else ""), file=sys.stderr)
        return 3
    metrics.to_parquet(Path(out) / "metrics.parquet", index=False)
    instances.to_parquet(Path(out) / "instances.parquet", index=False)
    return 0


def load_instances(path: str | Path, metrics: list[str] | None = None) -> pd.DataFrame:
    """Per-instance values of instanced metrics (per opcode, per SASS PC, per sample).

    Args:
        path: as for :func:`load_report`.
        metrics: metric names to read; None reads every instanced metric.

    Returns:
        DataFrame with columns kernel, n, repeat, launch, metric, instance (int position),
        key (the correlation id as a string: an opcode such as ``LDGSTS.E.BYPASS.128``,
        a PC, or a sample index), value (float64), value_str.

    Raises:
        ReportError: as :func:`load_report`.
    """
    path = Path(path)
    name = ReportName.parse(path)
    with _plain_report(path) as plain:
        actions = list(_actions(_open(path, plain)))
        _check_named(path, name, actions)
        return _instance_table(path, name, actions, metrics)


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
