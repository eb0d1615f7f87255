"""Parse a profile set's reports in one process: a pool of reader processes and a
per-report cache.

One interpreter per report spent most of its time starting up and importing pandas; here
one process reads a whole set. Each report is still read in a worker process of a pool,
because the native reader can crash or hang on a damaged or hostile file: a crash breaks
only the pool, and the reports that were in flight are then read once more, each in a
child process of its own (:func:`analysis.reports.ncu.load_report_isolated`), so the error names
the one file that crashed or hung the reader.

Cache: each report's tables are kept as ``{stem}.parquet``, ``{stem}.instances.parquet``,
``{stem}.findings.parquet`` and ``{stem}.hotspots.parquet`` in a cache folder, with
``{stem}.key`` holding the SHA-256 of the report file and of this parser (:data:`FINGERPRINT`),
then the SHA-256 of each table file. A report whose key matches is not read again, so adding
one report to a set re-reads only that one; editing a report or the parser re-reads it, and a
table file whose bytes changed since it was written is warned of and its report read again.
"""

from __future__ import annotations

import ast
import concurrent.futures as cf
import contextlib
import hashlib
import os
import inspect
import io
import multiprocessing
import numbers
import sys
import threading
import tokenize
import warnings
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from importlib import metadata as _metadata
from pathlib import Path

import pandas as pd

from analysis.errors import AnalysisError, ReportError
from analysis.io import atomic_path
from analysis.names import report_stem, set_name_problem
from analysis.reports.ncu import OPCODE_INSTANCES, _read, load_report_isolated
from analysis.reports.ncu.files import remove_orphans


def _fingerprint() -> str:
    """SHA-256 of the reader's source (file names, ncu_report's import, report reader,
    findings, hot spots, parse) and the ncu_report version: a change to any invalidates every
    cached table."""
    import analysis.names
    import analysis.nsight
    import analysis.reports.findings
    import analysis.reports.hotspots
    import analysis.reports.ncu

    h = hashlib.sha256()
    reader = sorted(Path(analysis.reports.ncu.__file__).parent.glob("*.py"))  # the reader's package
    for path in (analysis.names.__file__, analysis.nsight.__file__, *reader, analysis.reports.findings.__file__,
                 analysis.reports.hotspots.__file__, __file__):
        h.update(Path(path).read_bytes())
    try:
        h.update(_metadata.version("ncu-report").encode())
    except _metadata.PackageNotFoundError:
        h.update(b"ncu_report from elsewhere")
    return h.hexdigest()


#: Identity of this parser (see :func:`_fingerprint`).
FINGERPRINT = _fingerprint()

#: Seconds without any report finishing before the pool's workers are taken as hung.
DEFAULT_TIMEOUT = 300.0


@dataclass
class ParsedSet:
    """What :func:`parse_reports` read.

    Attributes:
        metrics: per-report tidy tables (:func:`analysis.reports.ncu.load_report`), in input order.
        instances: per-report tables of the per-opcode instanced metrics
            (:data:`analysis.reports.ncu.OPCODE_INSTANCES`), in input order.
        findings: per-report guided-analysis findings
            (:func:`analysis.reports.findings.findings_of`), in input order.
        hotspots: per-report source hot spots (:func:`analysis.reports.hotspots.hotspots_of`).
        parsed: reports read in this call; cached: reports taken from the cache.
        errors: report path -> ReportError for each report that could not be read.
    """

    metrics: list[pd.DataFrame] = field(default_factory=list)
    instances: list[pd.DataFrame] = field(default_factory=list)
    findings: list[pd.DataFrame] = field(default_factory=list)
    hotspots: list[pd.DataFrame] = field(default_factory=list)
    parsed: list[Path] = field(default_factory=list)
    cached: list[Path] = field(default_factory=list)
    errors: dict[Path, ReportError] = field(default_factory=dict)

    def raise_errors(self, what: str) -> None:
        """Raise one AnalysisError listing every report that could not be read (file and
        cause per line); do nothing when all were read."""
        if self.errors:
            total = len(self.errors) + len(self.metrics)
            lines = "\n".join(f"  {e}" for e in self.errors.values())
            raise AnalysisError(f"{what}: {len(self.errors)} of {total} reports could not be read:\n{lines}")


def _key(path: Path) -> str:
    h = hashlib.sha256(FINGERPRINT.encode())
    h.update(path.read_bytes())
    return h.hexdigest()


#: The tables kept per report, in the order a reader returns them.
TABLES = ("metrics", "instances", "findings", "hotspots")


def _cache_paths(cache: Path, path: Path) -> tuple[list[Path], Path]:
    stem = report_stem(path)
    tables = [cache / (f"{stem}.parquet" if t == "metrics" else f"{stem}.{t}.parquet") for t in TABLES]
    return tables, cache / f"{stem}.key"


def _complete(got: tuple) -> tuple[pd.DataFrame, ...]:
    """A reader's tables, with empty findings and hot spots where it gave only the first two
    (the readers of tests that crash or hang on purpose)."""
    return tuple(got) + tuple(pd.DataFrame() for _ in range(len(TABLES) - len(got)))


def _from_cache(cache: Path, path: Path, key: str) -> tuple[pd.DataFrame, ...] | None:
    """The cached tables of report ``path``, or None where the entry is absent, of another
    report content or parser (``key``), or damaged: a table whose SHA-256 is not the one
    its key file recorded when it was written (a flipped byte in a parquet file can read
    without error and give other values), or that does not read. A damaged entry is
    warned of, naming the file, and the report is read again."""
    tables, keyfile = _cache_paths(cache, path)
    try:
        lines = keyfile.read_text(encoding="ascii").splitlines()
    except (OSError, ValueError):  # absent, or not text: read the report again
        return None
    if not lines or lines[0] != key:
        return None
    sums = dict(reversed(line.split(" ", 1)) for line in lines[1:] if " " in line)
    got = []
    for table in tables:
        try:
            data = table.read_bytes()
            if hashlib.sha256(data).hexdigest() != sums.get(table.name):
                raise ValueError("its SHA-256 is not the one recorded when it was written")
            got.append(pd.read_parquet(io.BytesIO(data)))
        except Exception as exc:  # noqa: BLE001 (any failure of a damaged file: pyarrow's, numpy's, pandas')
            warnings.warn(f"{table}: the cached table of {path.name} is damaged ({exc}); the report is read again",
                          stacklevel=2)
            return None
    return tuple(got)


def _to_cache(cache: Path, path: Path, key: str, *got: pd.DataFrame) -> None:
    """Write ``got`` (:data:`TABLES`) as the cache entry of ``path``: each table atomically,
    then the key file: ``key``, then ``{sha256} {file name}`` of each table."""
    tables, k = _cache_paths(cache, path)
    k.unlink(missing_ok=True)  # the key goes last: a half-updated entry is never valid
    sums = []
    for target, table in zip(tables, got):
        buf = io.BytesIO()
        table.to_parquet(buf, index=False)
        data = buf.getvalue()
        with atomic_path(target) as tmp:
            tmp.write_bytes(data)
        sums.append(f"{hashlib.sha256(data).hexdigest()} {target.name}")
    with atomic_path(k) as tmp:
        tmp.write_text("\n".join([key, *sums]) + "\n", encoding="ascii")


def _read_one(path: str, expect_launches: int | None) -> tuple[pd.DataFrame, ...]:
    """Worker side: the four tables of one report (:data:`TABLES`; instances: per-opcode
    metrics only), from one opening of it."""
    return _read(path, expect_launches, instances=True, instance_filter=OPCODE_INSTANCES, evidence=True)


def _stop_workers(pool: cf.ProcessPoolExecutor) -> None:
    pool.shutdown(wait=False, cancel_futures=True)
    children = multiprocessing.active_children()
    for child in children:
        child.terminate()
    for child in children:
        child.join(timeout=5)


def _is_main_guard(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either side), alone or as a term of an ``and``."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_is_main_guard(v) for v in test.values)
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return (any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
            and any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides))


def _unguarded_script() -> str | None:
    """The script run as ``__main__`` where the current call comes from one of its top-level
    statements other than ``if __name__ == "__main__":`` (seen from the main thread's stack,
    also for a call from another thread); None for a guarded call, a package's ``__main__``,
    ``python -c``, an interactive session or a notebook.

    The pool's worker processes (forkserver) import such a script again, as Python's
    multiprocessing does with every main module ("safe importing of main module" in its
    documentation): its top-level code ran once more in each worker, which then failed to
    start, and the reports were read again one process each."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    spec = getattr(main, "__spec__", None)
    if path is None or (spec is not None and (spec.name == "__main__" or spec.name.endswith(".__main__"))):
        return None
    frame = inspect.currentframe()
    if threading.current_thread() is not threading.main_thread():
        frame = sys._current_frames().get(threading.main_thread().ident)
    while frame is not None and not (frame.f_code.co_name == "<module>" and frame.f_globals is vars(main)):
        frame = frame.f_back
    if frame is None:
        return None
    try:
        with tokenize.open(path) as fh:  # the script's own encoding
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return None
    line = frame.f_lineno
    for stmt in tree.body:
        if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
            return None if isinstance(stmt, ast.If) and _is_main_guard(stmt.test) else path
    return None


@contextlib.contextmanager
def _main_file_hidden():
    """Hide ``__main__.__file__`` while the pool runs where it names no file: ``python - <
    script`` sets it to ``<stdin>``. Each of multiprocessing's workers runs the main module's file
    again before its first task (``multiprocessing.spawn.prepare``, resolving a relative name
    against the directory the program started in); for ``<stdin>`` every worker failed to start,
    printing a FileNotFoundError traceback, and the reports were read again one process each.
    Without the attribute the workers start as under ``python -c``. A main module whose file
    exists is left as it is (a ``reader`` defined in it is imported from there)."""
    from multiprocessing import process

    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    start = process.ORIGINAL_DIR
    if path is None or os.path.isfile(path if os.path.isabs(path) or start is None else os.path.join(start, path)):
        yield
        return
    del main.__file__
    try:
        yield
    finally:
        main.__file__ = path


def _read_here(todo: list[Path], expect_launches: int | None, reader: Callable,
               on_result: Callable[[Path, tuple], None]) -> tuple[dict[Path, tuple], dict[Path, ReportError], list]:
    """:func:`_pool_read`'s results, errors and (no) retries, read in this process."""
    results: dict[Path, tuple] = {}
    errors: dict[Path, ReportError] = {}
    for path in todo:
        try:
            results[path] = _complete(reader(str(path), expect_launches))
            on_result(path, results[path])
        except ReportError as exc:
            errors[path] = exc
    return results, errors, []


def _pool_read(todo: list[Path], expect_launches: int | None, workers: int, timeout: float, reader: Callable,
               on_result: Callable[[Path, tuple], None] = lambda path, tables: None, isolate: bool = False,
               ) -> tuple[dict[Path, tuple], dict[Path, ReportError], list[Path]]:
    """Read ``todo`` in a pool: (results, errors, reports to read again in isolation).
    ``on_result`` runs in this process for each report as it arrives (the cache is written
    there while the workers read on); ``isolate``: a new worker process per report."""
    results: dict[Path, tuple] = {}
    errors: dict[Path, ReportError] = {}
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["analysis.reports.ncu"])
    # forked from the forkserver, which imported the reader but never read a report
    pool = cf.ProcessPoolExecutor(max_workers=max(1, min(workers, len(todo))), mp_context=ctx,
                                  max_tasks_per_child=1 if isolate else None)
    futures = {pool.submit(reader, str(p), expect_launches): p for p in todo}
    pending = set(futures)
    retry: list[Path] = []
    try:
        while pending:
            done, pending = cf.wait(pending, timeout=timeout, return_when=cf.FIRST_COMPLETED)
            if not done:  # nothing finished in `timeout` s: a worker hangs
                break
            for fut in done:
                path = futures[fut]
                try:
                    results[path] = _complete(fut.result())
                    on_result(path, results[path])
                except ReportError as exc:
                    errors[path] = exc
                except BrokenProcessPool:  # a worker died: which report killed it is found below
                    retry.append(path)
    finally:
        if pending:
            _stop_workers(pool)
        else:
            pool.shutdown(wait=True)
        if pending or retry:  # a worker was stopped or died: its decompressed copy is left behind
            remove_orphans()
    retry += [futures[f] for f in pending]
    return results, errors, sorted(retry)


def parse_reports(paths: list[str | Path], cache: str | Path | None = None, *, workers: int = 1,
                  expect_launches: int | None = None, timeout: float = DEFAULT_TIMEOUT,
                  reader: Callable[[str, int | None], tuple[pd.DataFrame, pd.DataFrame]] = _read_one,
                  isolate: bool = False, retry_timeout: float | None = None) -> ParsedSet:
    """Read many reports, each at most once per content, in a pool of worker processes.

    Args:
        paths: ``.ncu-rep`` or ``.ncu-rep.xz`` files (as for :func:`analysis.reports.ncu.load_report`).
        cache: folder of cached per-report tables (created if absent); None reads every
            report and keeps nothing.
        workers: reader processes (>= 1).
        expect_launches: kernel launches each report must hold (None, the default: any
            number; every launch is kept, with its identity).
        timeout: seconds without any report finishing after which the workers are taken
            as hung and stopped; the reports not yet read are then read one per child
            process, each with ``retry_timeout``.
        retry_timeout: seconds each of those child processes may take (None: ``timeout``).
            A report taken as hung only because the machine was busy is then read whole.
        reader: what a worker runs per report, ``(path, expect_launches) -> (metrics,
            instances)``; a module-level function (workers import it by name). The
            default reads the report (:func:`analysis.reports.ncu.load_report`); tests pass one
            that crashes or hangs on purpose. A report whose worker died or hung is read again
            by the default reader in a child process of its own, whatever ``reader`` is; a
            ``reader`` defined in a script read from stdin (``python - < script``) cannot be
            imported by the workers, so every report is read that way.
        isolate: read every report in a worker process of its own, which read no other
            report. Not needed for units (the reader gives each report its own whatever was
            read before: docs/robustness.md, fault 6); it keeps each report's native reader
            state apart. On the 56 reports of other people with one worker: 9.7 s isolated,
            10.5 s shared, equal tables.

    Returns:
        :class:`ParsedSet` with the tables of every report that could be read, in the
        order of ``paths``, and a ReportError per report that could not (never raised
        here: call :meth:`ParsedSet.raise_errors`).

    Raises:
        TypeError: ``paths`` is one path (a str or os.PathLike), not a list of them.
        ValueError: ``workers`` is not a whole number of at least 1 (0, -1, 1.5, True).

    Warns:
        UserWarning: called from a script's top level outside ``if __name__ ==
        "__main__":`` (:func:`_unguarded_script`); the reports are then read in this process.
    """
    if isinstance(paths, (str, bytes, os.PathLike)):  # a str would be read character by character
        raise TypeError(f"parse_reports takes a list of report paths, not one path ({paths!r}): pass [path]")
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1:
        raise ValueError(f"workers must be a whole number of at least 1 (reader processes), not {workers!r}")
    workers = int(workers)
    paths = [Path(p) for p in paths]
    cache_dir = Path(cache) if cache is not None else None
    # what readers of earlier runs left when the run was killed whole (a timeout, a job cancelled)
    remove_orphans()
    out = ParsedSet()
    tables: dict[Path, tuple] = {}
    keys: dict[Path, str] = {}
    todo: list[Path] = []
    for p in paths:
        if cache_dir is not None and p.is_file():
            keys[p] = _key(p)
            hit = _from_cache(cache_dir, p, keys[p])
            if hit is not None:
                tables[p] = hit
                out.cached.append(p)
                continue
        todo.append(p)
    if todo:
        def keep(path: Path, got: tuple) -> None:
            if cache_dir is not None:
                _to_cache(cache_dir, path, keys[path], *got)

        script = _unguarded_script()
        if script is not None:
            why = (f"parse_reports is called from {script} outside `if __name__ == '__main__':`; reader processes "
                   "would run that script again (Python's multiprocessing imports the main module in each), so the "
                   f"{len(todo)} report(s) are read in this process, one after the other, without the pool's guard "
                   "against a reader that crashes or hangs. Put the call under that `if` to read them in parallel.")
        elif sys.is_finalizing() or not threading.main_thread().is_alive():  # no new processes then
            why = ("parse_reports is called while the interpreter ends (at exit, or from a thread after the main "
                   f"thread finished): the {len(todo)} report(s) are read in this process, one after the other")
        else:
            why = None
        if why is not None:
            warnings.warn(why, stacklevel=2)
            results, errors, retry = _read_here(todo, expect_launches, reader, keep)
        else:
            with _main_file_hidden():
                results, errors, retry = _pool_read(todo, expect_launches, workers, timeout, reader, keep, isolate)
        for p in retry:
            try:
                results[p] = load_report_isolated(
                    p, expect_launches=expect_launches, opcode_instances_only=True, evidence=True,
                    timeout=timeout if retry_timeout is None else retry_timeout)
                keep(p, results[p])
            except ReportError as exc:
                errors[p] = exc
        out.errors = {p: errors[p] for p in paths if p in errors}
        for p in todo:
            if p in results:
                tables[p] = results[p]
                out.parsed.append(p)
    for p in paths:
        if p in tables:
            out.metrics.append(tables[p][0])
            out.instances.append(tables[p][1])
            out.findings.append(tables[p][2])
            out.hotspots.append(tables[p][3])
    return out



def write_set_tables(reports: list[str | Path], set_name: str, metadata: str | Path | None, cache: str | Path,
                     metrics_out: str | Path, instances_out: str | Path, *, workers: int = 1,
                     metric_table_out: str | Path | None = None, summary_out: str | Path | None = None,
                     timings: str | Path | None = None, findings_out: str | Path | None = None,
                     hotspots_out: str | Path | None = None,
                     summary_units_out: str | Path | None = None) -> ParsedSet:
    """Parse a set's reports (:func:`parse_reports`, cached) and write its long metric
    table (:func:`analysis.reports.tables.set_table`, schema-checked) and its per-opcode instance
    table as parquet, atomically; with ``metric_table_out``, also the table comparisons
    read (:func:`analysis.reports.metric_table.metric_table`: one row per kernel, N, launch and metric);
    with ``summary_out``, also the set's summary (:func:`analysis.reports.tables.summary`, one row per
    kernel and N, with the event timings of ``timings``, the set's timings.csv, where it
    has one; timings far from ncu's duration are warned of) and, with ``summary_units_out``,
    the unit of each of its numeric columns (:func:`analysis.reports.tables.summary_units`,
    CSV). Every set shares its reader
    processes, whatever GPUs and Nsight Compute versions its reports come from: the reader
    gives each report its own units (:mod:`analysis.reports.ncu`; over the 56 reports of
    other people, 21 GPUs, the tables equal those of a process per report, docs/benchmarks.md).

    Raises:
        AnalysisError: ``set_name`` cannot name a set (:func:`analysis.names.set_name_problem`);
            two reports share a file stem (a set tells its reports apart by their stems);
            any report could not be read (every such file and its cause are listed; the
            others stay cached, and nothing is written);
        SchemaError: a table does not match its declared schema;
        SetFileError: ``timings`` is not a valid timings.csv (:func:`analysis.reports.setfiles.read_timings`).
    """
    from analysis.logged import warn
    from analysis.reports.schemas import validate_set
    from analysis.reports.tables import not_the_sets_gpu, read_metadata, report_gpu, set_table

    why = set_name_problem(set_name)
    if why:
        raise AnalysisError(f"profile set {set_name!r}: not a set name ({why}); choose another name")
    stems: dict[str, list[str]] = {}
    for r in reports:
        stems.setdefault(report_stem(r), []).append(str(r))
    same = {s: files for s, files in stems.items() if len(files) > 1}
    if same:
        listed = "; ".join(f"{s}: {', '.join(files)}" for s, files in sorted(same.items()))
        raise AnalysisError(f"profile set {set_name}: reports given more than once under one file stem ({listed}); "
                            "a set tells its reports apart by their stems: give each file once, renaming one of "
                            "two different reports")
    meta = read_metadata(metadata)
    times = None
    if summary_out is not None and timings is not None:
        from analysis.reports.setfiles import read_timings

        times = read_timings(timings)  # a broken timings.csv stops the job before anything is written
    with warnings.catch_warnings(record=True) as caught:  # e.g. a damaged cache entry: on the console too
        warnings.simplefilter("always")
        got = parse_reports(reports, cache, workers=workers)
    for w in caught:
        warn(str(w.message))
    print(f"{set_name}: {len(got.parsed)} reports read, {len(got.cached)} from the cache ({cache}), "
          f"{len(got.errors)} failed")
    got.raise_errors(f"profile set {set_name}")
    # one check of the whole table (the set schema holds every per-report column and
    # constraint): per report it cost 50 ms each (docs/benchmarks.md)
    # versions from each report's own session details where metadata.json lacks them
    # (about 10 ms a report: analysis.reports.report_info)
    from analysis.reports.report_info import report_metadata

    own = {}
    to_read = list(reports)
    if all(meta.get(k) for k in ("driver", "cuda_version", "ncu_version")):
        # only reports of another GPU than metadata.json's, whose versions cannot be the set's
        gpus = {str(m["report"].iloc[0]): report_gpu(m) for m in got.metrics if len(m)}
        to_read = [p for p in reports if not_the_sets_gpu(gpus.get(report_stem(p)), meta)]
        for p in to_read:
            warn(f"{p}: profiled on {gpus[report_stem(p)]}, not on the set's GPU ({meta['gpu']}, metadata.json): "
                 "its driver, CUDA and Nsight Compute versions are taken from the report itself")
    for p in to_read:
        try:
            own[report_stem(p)] = report_metadata(p)
        except ReportError as exc:  # ncu_report read it: its values stay, its versions are NA
            warn(f"{exc}: its GPU and versions are left NA")
    table = validate_set(set_table(got.metrics, set_name, meta, own), metrics_out)
    inst = pd.concat(got.instances, ignore_index=True)
    with atomic_path(metrics_out) as tmp:
        table.to_parquet(tmp, index=False)
    with atomic_path(instances_out) as tmp:
        inst.to_parquet(tmp, index=False)
    if metric_table_out is not None:
        from analysis.reports.metric_table import metric_table

        with atomic_path(metric_table_out) as tmp:
            metric_table(table).to_parquet(tmp, index=False)
    if summary_out is not None:
        _write_summary(table, inst, times, timings, summary_out)
    if summary_units_out is not None:
        from analysis.io import write_csv
        from analysis.reports.tables import summary_units

        write_csv(summary_units(table), summary_units_out)
    if findings_out is not None:
        _write_evidence(table, got.findings, reports, findings_out, "findings", set_name)
    if hotspots_out is not None:
        _write_evidence(table, got.hotspots, reports, hotspots_out, "hotspots", set_name)
    print(f"{set_name}: {len(table)} metric rows, {len(inst)} instance values from {len(reports)} reports")
    return got


#: The launch identity findings and hot spots take from the set's metric table.
_IDENTITY = ["precision", "n", "demangled", "occurrence", "range_name"]


def with_identity(rows: pd.DataFrame, table: pd.DataFrame, set_name: str, columns: list[str]) -> pd.DataFrame:
    """Rows keyed by ``report`` and ``launch`` (findings, hot spots) with the launch's
    identity from the set's metric table ``table``: ``kernel`` (the set's kernel name, in
    place of ncu's function name where ``rows`` has one), then ``set`` and :data:`_IDENTITY`
    after ``columns`` (the rows' own columns, in order; ``kernel`` first among the added
    ones where ``columns`` lacks it)."""
    ident = table[["report", "launch", "kernel", *_IDENTITY]].drop_duplicates(["report", "launch"])
    out = rows.drop(columns="kernel", errors="ignore").merge(ident, on=["report", "launch"], how="left",
                                                             validate="many_to_one")
    out["set"] = pd.array([set_name] * len(out), dtype="string")
    out["occurrence"] = out["occurrence"].astype("int64")
    out["n"] = out["n"].astype("Int64")
    for col in ("kernel", "precision", "demangled", "range_name"):
        out[col] = out[col].astype("string")
    added = ([] if "kernel" in columns else ["kernel"]) + ["set", *_IDENTITY]
    return out[[*columns, *added]].reset_index(drop=True)


def _write_evidence(table: pd.DataFrame, per_report: list[pd.DataFrame], reports: list, out: str | Path,
                    what: str, set_name: str) -> None:
    """A set's findings or hot-spot table (parquet, schema-checked, atomically); one
    warning per report that gave no findings."""
    from analysis.logged import warn
    from analysis.reports.findings import FINDING_COLUMNS, no_findings
    from analysis.reports.hotspots import HOTSPOT_COLUMNS
    from analysis.reports.schemas import validate_set_findings, validate_set_hotspots

    columns = FINDING_COLUMNS if what == "findings" else HOTSPOT_COLUMNS
    frames = [f for f in per_report if len(f)]
    if what == "findings":
        for path, f in zip(reports, per_report):
            if not len(f):
                warn(no_findings(path))
    if frames:
        rows = pd.concat(frames, ignore_index=True)
    else:  # no report gave any: the reader's own typed empty table
        from analysis.reports.findings import findings_of
        from analysis.reports.hotspots import hotspots_of

        rows = (findings_of if what == "findings" else hotspots_of)(set_name, [])
    rows = with_identity(rows, table, set_name, columns)
    rows = (validate_set_findings if what == "findings" else validate_set_hotspots)(rows, out)
    with atomic_path(out) as tmp:
        rows.to_parquet(tmp, index=False)


def _write_summary(table: pd.DataFrame, inst: pd.DataFrame, times: pd.DataFrame | None,
                   timings: str | Path | None, out: str | Path) -> None:
    """The set's summary from its checked tables and timings (``times``, read from the file
    ``timings``), written as CSV (:func:`analysis.io.write_csv`)."""
    from analysis.io import write_csv
    from analysis.logged import warn
    from analysis.reports.schemas import validate_summary
    from analysis.reports.tables import check_timings, summary

    result = validate_summary(summary(table, inst, times), out)
    for msg in check_timings(result, timings) if timings is not None else []:
        warn(msg)
    flagged = result[result["flags"].fillna("") != ""]
    for _, row in flagged.head(10).iterrows():
        warn(f"{row['report']} launch {row['launch']} ({row['kernel']}): {row['flags']}: kept as the report "
             f"gives it, and flagged in {out}")
    if len(flagged) > 10:
        warn(f"{len(flagged) - 10} more flagged launches (values outside their nominal range, or in one of "
             f"several units): see the flags column of {out}")
    write_csv(result, out)


def _at_least_one(text: str) -> int:
    """``--workers``: a whole number of at least 1 (argparse names the option where it is not)."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (reader processes), not {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    """``python -m analysis.reports.parse``: one profile set's reports -> its tables (rule parse_set)."""
    import argparse

    from analysis.logged import logged

    ap = argparse.ArgumentParser(prog="python -m analysis.reports.parse", description=main.__doc__)
    ap.add_argument("reports", nargs="+", type=Path, help="the set's .ncu-rep[.xz] files")
    ap.add_argument("--set", required=True, help="profile-set name")
    ap.add_argument("--metadata", type=Path, help="the set's metadata.json, if it has one")
    ap.add_argument("--cache", type=Path, required=True, help="folder of cached per-report tables")
    ap.add_argument("--metrics", type=Path, required=True, help="output: the set's long table (parquet)")
    ap.add_argument("--instances", type=Path, required=True, help="output: per-opcode instances (parquet)")
    ap.add_argument("--metric-table", type=Path, help="output: the per-metric table comparisons read (parquet)")
    ap.add_argument("--summary", type=Path, help="output: the set's summary, one row per kernel and N (CSV)")
    ap.add_argument("--summary-units", type=Path, help="output: the unit of each numeric column of the summary (CSV)")
    ap.add_argument("--timings", type=Path, help="the set's timings.csv, if it has one")
    ap.add_argument("--findings", type=Path, help="output: guided-analysis findings of every launch (parquet)")
    ap.add_argument("--hotspots", type=Path, help="output: source hot spots of every launch (parquet)")
    ap.add_argument("--workers", type=_at_least_one, default=1, help="reader processes (at least 1)")
    ap.add_argument("--log", type=Path, required=True, help="log file")
    args = ap.parse_args(argv)
    for flag, given in (("--metadata", args.metadata), ("--timings", args.timings)):
        if given is not None and not given.is_file():  # given, so meant: said, not read as "none"
            ap.error(f"{flag} {given}: no such file (leave the option out for a set without one)")
    with logged(args.log):
        write_set_tables(args.reports, args.set, args.metadata, args.cache, args.metrics, args.instances,
                         workers=args.workers, metric_table_out=args.metric_table, summary_out=args.summary,
                         timings=args.timings, findings_out=args.findings, hotspots_out=args.hotspots,
                         summary_units_out=args.summary_units)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
