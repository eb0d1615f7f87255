"""What kernels a set of reports holds, and the Nsight Compute and driver versions they
were made with, read cheaply enough for the Snakefile to choose the automatic comparisons
before any job runs (ncu's function names through ``ncu_report``, versions through
:func:`analysis.reports.report_info.report_metadata`), with a cache per set keyed by each
file's name, size and modification time."""

from __future__ import annotations

import json
from pathlib import Path

from analysis.io import atomic_path


def _function_names(path: Path) -> list[str]:
    """ncu's function name of every launch of every range of one report."""
    from analysis.errors import ReportError
    from analysis.reports.ncu.files import _plain_report
    from analysis.reports.ncu.launches import _actions, _open

    with _plain_report(path) as plain:
        names = [action.name() for _, _, action in _actions(_open(path, plain))]
    for launch, name in enumerate(names):
        if not isinstance(name, str) or not name:
            raise ReportError(path, f"launch {launch} has no function name (corrupt report)",
                              "profile the kernel again, or remove the file from its set")
    return names


def _stamp(path: Path) -> list:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns]


def set_kernels(reports: list[Path], cache: Path) -> dict:
    """The kernels and versions of a set's reports.

    Args:
        reports: the set's ``.ncu-rep[.xz]`` files.
        cache: a JSON file keeping what was read per report (created or updated, written
            atomically); a report whose name, size and modification time are unchanged is
            not opened again.

    Returns:
        dict with ``kernels`` (sorted list of ncu's function names over every launch),
        ``ncu_version``, ``driver`` and ``gpu`` (the one value the reports give, or None where
        they give none or several).

    Raises:
        ReportError: a report cannot be read, or a launch has no function name (naming the
            file and the cause); a cache entry of such a report is read again.
    """
    try:
        old = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = {}
    from analysis.reports.report_info import report_metadata

    entries = {}
    for path in reports:
        key = path.name
        hit = old.get(key)
        if (isinstance(hit, dict) and hit.get("stamp") == _stamp(path) and isinstance(hit.get("kernels"), list)
                and all(isinstance(k, str) and k for k in hit["kernels"]) and "gpu" in hit):
            entries[key] = hit
            continue
        meta = report_metadata(path)
        entries[key] = {"stamp": _stamp(path), "kernels": sorted(set(_function_names(path))),
                        "ncu_version": meta.get("ncu_version"), "driver": meta.get("driver"), "gpu": meta.get("gpu")}
    if entries != old:
        cache.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(cache) as tmp:
            tmp.write_text(json.dumps(entries, indent=1, sort_keys=True), encoding="utf-8")

    def one(field: str) -> str | None:
        vals = {e[field] for e in entries.values() if e.get(field)}
        return vals.pop() if len(vals) == 1 else None

    kernels = sorted({k for e in entries.values() for k in e["kernels"]})
    return {"kernels": kernels, "ncu_version": one("ncu_version"), "driver": one("driver"), "gpu": one("gpu")}
