"""Why a row of a comparison is one-sided: a metric renamed or missing in one Nsight Compute
version, or a metric that report simply lacks.

A comparison across Nsight Compute versions leaves rows "only in baseline" / "only in
candidate" (:func:`analysis.compare.diff.compare_metric_tables`) for two kinds of reasons:

* the version: the metric is named otherwise in the other version (an entry of
  ``analysis/data/metric_aliases.csv``), or that version has no such metric;
* the report: the version has the metric, but this report lacks it (another section set,
  a GPU that has no such counter, a launch whose profiling failed).

:func:`one_sided_reasons` tells them apart from a table of the metric names each Nsight
Compute version was seen to record (``analysis/data/metric_versions.parquet``, made by
:func:`build_version_table`; ``analysis/data/metric_versions.md`` says from which reports).
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import multiprocessing
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.errors import AnalysisError, ReportError

#: Columns of the version table (:func:`build_version_table`, :func:`version_table`), in order.
VERSION_TABLE_COLUMNS = ["ncu_version", "cc", "sections", "metric", "reports"]

#: Reasons :func:`one_sided_reasons` gives, besides ``"not in ncu {V}"`` and ``"unknown for ncu {V}"``.
RENAMED = "renamed (alias)"
REAL_GAP = "real gap"
NO_LAUNCH = "launch not in the other set"
NO_VERSION = "unknown (ncu version not given)"

#: The two one-sided statuses of :data:`analysis.compare.diff.STATUSES`.
ONE_SIDED = ("only in baseline", "only in candidate")

def normalize_version(version: object) -> str | None:
    """An Nsight Compute version as ``YEAR.MINOR.PATCH`` (``"2024.3.1.0"`` -> ``"2024.3.1"``,
    ``"2025.3.1"`` unchanged), or None for None, NA or an empty string.

    Raises:
        ValueError: a string that does not start with three dot-separated integers.
    """
    if version is None or (not isinstance(version, str) and pd.isna(version)):
        return None
    text = str(version).strip()
    if not text:
        return None
    m = re.match(r"^(\d+)\.(\d+)\.(\d+)(?:\.\d+)*$", text)
    if not m:
        raise ValueError(f"{version!r} is not an Nsight Compute version (YEAR.MINOR.PATCH[.BUILD])")
    return ".".join(str(int(g)) for g in m.groups())


def _vkey(version: str) -> tuple[int, int, int]:
    y, mi, p = (int(x) for x in version.split("."))
    return y, mi, p


def recorded_ncu_version(path: str | Path) -> str | None:
    """The Nsight Compute version a report records in its session details
    (:func:`analysis.reports.report_info.report_metadata`), normalised (:func:`normalize_version`);
    None where it records none (one of the 56 reports of ``foreign-reports``).

    Raises:
        ReportError: as :func:`analysis.reports.report_info.report_metadata`, or the report's sessions
            name several versions.
    """
    from analysis.reports.report_info import report_metadata

    version = report_metadata(path)["ncu_version"]
    if version is not None and ", " in version:
        raise ReportError(path, f"records several Nsight Compute versions ({version})")
    return normalize_version(version)


@dataclass(frozen=True)
class ReportInventory:
    """What a report records, for the version table: per compute capability of its launches,
    the sections collected and the metric names held (any launch)."""

    path: str
    ncu_version: str
    #: (cc ``"MAJOR.MINOR"``, ``"+"``-joined sorted section identifiers) -> metric names
    groups: dict[tuple[str, str], frozenset[str]]


def _inventory(path: str, version: str) -> ReportInventory:
    """Worker side of :func:`build_version_table`: one report, read in a process of its own."""
    from analysis.reports.ncu import _actions, _metric_value, _open, _plain_report

    groups: dict[tuple[str, str], set[str]] = {}
    with _plain_report(Path(path)) as plain:
        for _launch, _rng, action in _actions(_open(Path(path), plain)):
            cc = []
            for part in ("major", "minor"):
                m = action.metric_by_name(f"device__attribute_compute_capability_{part}")
                v = _metric_value(m)[0] if m is not None else float("nan")
                cc.append("?" if v != v else str(int(v)))
            sections = "+".join(sorted(s.identifier() for s in action.sections()))
            groups.setdefault((".".join(cc), sections), set()).update(action.metric_names())
    return ReportInventory(path, version, {k: frozenset(v) for k, v in groups.items()})


def build_version_table(reports: Iterable[tuple[str | Path, str | None]], *, workers: int = 1) -> pd.DataFrame:
    """The metric names each Nsight Compute version records, from real reports.

    Each report is read in a process of its own that read no other report (the native reader
    keeps metric definitions between reports of several versions: docs/robustness.md, fault 6).

    Args:
        reports: (report file, its Nsight Compute version) pairs; a version None is read from
            the report (:func:`recorded_ncu_version`), and a given version is checked
            against the one the report records.
        workers: reader processes at a time.

    Returns:
        One row per (ncu_version, cc, sections, metric) seen, columns
        :data:`VERSION_TABLE_COLUMNS`: ``ncu_version`` (str ``YEAR.MINOR.PATCH``), ``cc``
        (str, compute capability of the launches, ``"9.0"``), ``sections`` (str, the section
        identifiers the launches collected, sorted, joined by ``+``), ``metric`` (str, the
        name as stored), ``reports`` (int64: how many of the reports with that version, cc and
        sections hold the metric). Sorted by version, cc, sections, metric.

    Raises:
        ReportError: a report cannot be read, holds no version string while none is given,
            or holds another version than the one given.
    """
    todo: list[tuple[str, str]] = []
    for path, version in reports:
        given = normalize_version(version)
        found = recorded_ncu_version(path)
        if given and found and given != found:
            raise ReportError(path, f"is said to be of Nsight Compute {given} but records version {found}")
        if not (given or found):
            raise ReportError(path, "records no Nsight Compute version, and none was given")
        todo.append((str(path), given or found))
    inventories: list[ReportInventory] = []
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["analysis.reports.ncu"])  # the server imports the reader, never reads a report
    with cf.ProcessPoolExecutor(max_workers=max(1, workers), mp_context=ctx, max_tasks_per_child=1) as pool:
        for inv in pool.map(_inventory, *zip(*todo)) if todo else ():
            inventories.append(inv)
    counts: collections.Counter[tuple[str, str, str, str]] = collections.Counter()
    for inv in inventories:
        for (cc, sections), names in inv.groups.items():
            for name in names:
                counts[(inv.ncu_version, cc, sections, name)] += 1
    rows = [(*k, n) for k, n in counts.items()]
    out = pd.DataFrame(rows, columns=VERSION_TABLE_COLUMNS)
    for col in VERSION_TABLE_COLUMNS[:-1]:
        out[col] = out[col].astype("string")
    out["reports"] = out["reports"].astype("int64")
    keys = pd.DataFrame([_vkey(v) for v in out["ncu_version"]], columns=["_y", "_m", "_p"], index=out.index)
    return (pd.concat([out, keys], axis=1).sort_values(["_y", "_m", "_p", "cc", "sections", "metric"])
            .drop(columns=["_y", "_m", "_p"]).reset_index(drop=True))


def version_table() -> pd.DataFrame:
    """The version table that ships with the package (``analysis/data/metric_versions.parquet``;
    how it was made: ``analysis/data/metric_versions.md``), columns :data:`VERSION_TABLE_COLUMNS`."""
    with resources.files("analysis").joinpath("data/metric_versions.parquet").open("rb") as fh:
        return pd.read_parquet(fh)


def _cc_key(cc: str) -> tuple[int, int] | None:
    """``"8.9"`` -> (8, 9); None where the compute capability is unknown (``"?"``)."""
    m = re.match(r"^(\d+)\.(\d+)$", str(cc))
    return (int(m.group(1)), int(m.group(2))) if m else None


def _equivalents(alias: pd.DataFrame) -> dict[str, frozenset[str]]:
    """Each name of the alias table -> every name linked to it by alias entries (itself included)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for old, new in zip(alias["old"], alias["new"]):
        parent[find(old)] = find(new)
    classes: dict[str, set[str]] = {}
    for name in parent:
        classes.setdefault(find(name), set()).add(name)
    return {name: frozenset(classes[find(name)]) for name in parent}


class _Versions:
    """The version table, indexed for :func:`one_sided_reasons`."""

    def __init__(self, table: pd.DataFrame) -> None:
        missing = [c for c in VERSION_TABLE_COLUMNS if c not in table]
        if missing:
            raise AnalysisError(f"a version table lacks the columns {missing} "
                                "(see analysis.compare.renames.build_version_table)")
        groups = table[["ncu_version", "cc", "sections"]].drop_duplicates().reset_index(drop=True)
        self.group_version = [normalize_version(v) for v in groups["ncu_version"]]
        self.group_cc_key = [_cc_key(c) for c in groups["cc"]]
        self.group_sections = [frozenset(s.split("+")) if s else frozenset() for s in groups["sections"]]
        gid = table.merge(groups.reset_index(names="_g"), on=["ncu_version", "cc", "sections"])
        self.holders: dict[str, set[int]] = {}
        for name, g in zip(gid["metric"], gid["_g"]):
            self.holders.setdefault(name, set()).add(int(g))

    def verdict(self, names: frozenset[str], version: str, present_in: str | None) -> str:
        """``"has"``, ``"lacks"`` or ``"unknown"``: whether ``version`` records a metric of
        ``names`` (see :func:`one_sided_reasons`). ``present_in``: the version of the side
        that holds the metric."""
        held = set().union(*(self.holders.get(n, set()) for n in names))
        versions = {self.group_version[g] for g in held}
        if present_in is not None:
            versions.add(present_in)
        v = _vkey(version)
        keys = sorted(_vkey(x) for x in versions)
        if v in keys or (keys and keys[0] < v < keys[-1]):
            return "has"
        if not held:
            return "unknown"
        required = frozenset.intersection(*(self.group_sections[g] for g in held))
        ccs = [c for c in (self.group_cc_key[g] for g in held) if c is not None]
        if not ccs:
            return "unknown"
        cc_lo, cc_hi = min(ccs), max(ccs)
        lo, hi = (v, keys[0]) if v < keys[0] else (keys[-1], v)
        for g, gv in enumerate(self.group_version):
            cc = self.group_cc_key[g]
            if g in held or cc is None or not cc_lo <= cc <= cc_hi or not required <= self.group_sections[g]:
                continue
            k = _vkey(gv)
            if (v < keys[0] and lo <= k < hi) or (v > keys[-1] and lo < k <= hi):
                return "lacks"
        return "unknown"


def one_sided_reasons(diff: pd.DataFrame, baseline_version: str | None, candidate_version: str | None, *,
                      versions: pd.DataFrame | None = None, alias: pd.DataFrame | None = None) -> pd.Series:
    """Why each one-sided row of a comparison has no counterpart.

    Call it on what :func:`analysis.compare.diff.compare_metric_tables` (or ``compare_sets``)
    returns, with the Nsight Compute version of each set (``metadata.json``'s
    ``ncu_version``), e.g. ``diff["reason"] = one_sided_reasons(diff, "2024.3.1", "2025.3.1")``;
    :func:`reason_counts` then counts the one-sided rows per status and reason.

    For a row "only in baseline" the candidate's version is asked about the metric, for a row
    "only in candidate" the baseline's. A metric counts together with its alias names
    (``analysis/data/metric_aliases.csv``). The reasons, first match wins:

    * ``"launch not in the other set"``: the other set has no row at all for the launch
      (kernel, mangled name, precision, N, occurrence); not a matter of metrics.
    * ``"renamed (alias)"``: an alias name of the metric is one-sided on the other side at the
      same launch: the two rows are one metric under two names (tables made before the alias
      entry was added; ``analysis.compare.diff.canonical_names`` aligns them now).
    * ``"real gap"``: that version records the metric: a report of that version in the
      version table holds it, or versions before and after it do (or the other side's
      version is that version). The report lacks it for another reason: another section
      set, a GPU without that counter, a launch whose profiling failed.
    * ``"not in ncu V"``: that version does not record it: every report holding the metric in
      the version table is of a later version (of an earlier one, for a removed metric), and
      a report of V, or of a version between V and those, lacks it though it collected every
      section all of them collected, on a GPU whose compute capability lies within theirs
      (a counter seen on compute capabilities 7.5 and 9.0 is taken to exist on 8.9; one seen
      on 9.0 alone decides nothing for an 8.9 report). This is how the corpus shows a metric
      that appears in one version: the reports of the version before, on such GPUs and
      section sets, lack it.
    * ``"unknown for ncu V"``: neither can be told from the version table: the metric is in
      no report of it, or no report of a fitting version, GPU and section set lacks it (most
      often a metric seen on one GPU only, which may be that GPU's rather than the version's).
    * ``"unknown (ncu version not given)"``: the version asked about is None.

    Args:
        diff: a comparison, with at least the columns of :data:`analysis.compare.diff.KEYS` and
            ``status``; rows in any order, any index.
        baseline_version, candidate_version: the Nsight Compute version of each set
            (``"2025.3.1"``, ``"2024.3.1.0"``), or None where unknown.
        versions: the version table (default :func:`version_table`).
        alias: the alias table (default :func:`analysis.compare.diff.aliases`).

    Returns:
        A string Series named ``reason``, aligned to ``diff.index``: the reason of each
        one-sided row, NA on every other row.

    Raises:
        ValueError: a version that is not ``YEAR.MINOR.PATCH[.BUILD]``.
        AnalysisError: ``versions`` lacks columns of :data:`VERSION_TABLE_COLUMNS`.
    """
    from analysis.compare.diff import KEYS, aliases

    alias = aliases() if alias is None else alias
    table = _Versions(version_table() if versions is None else versions)
    asked = {ONE_SIDED[0]: normalize_version(candidate_version), ONE_SIDED[1]: normalize_version(baseline_version)}
    holder = {ONE_SIDED[0]: normalize_version(baseline_version), ONE_SIDED[1]: normalize_version(candidate_version)}
    flip = {ONE_SIDED[0]: ONE_SIDED[1], ONE_SIDED[1]: ONE_SIDED[0]}
    equiv = _equivalents(alias)
    launch = [k for k in KEYS if k != "metric"]
    reasons = np.full(len(diff), None, dtype=object)
    status = diff["status"].to_numpy()
    one = np.isin(status, ONE_SIDED)
    d = diff.loc[one, launch + ["metric", "status"]].reset_index(drop=True)
    d["_pos"] = np.flatnonzero(one)
    # launches the other set has rows for: a row of any other status at that launch
    seen = diff[launch + ["status"]].drop_duplicates()
    for side in ONE_SIDED:
        other = seen.loc[seen["status"] != side, launch].drop_duplicates().assign(_other=True)
        mine = d[d["status"] == side]
        hit = mine[launch].merge(other, on=launch, how="left")["_other"].notna().to_numpy()
        reasons[mine["_pos"].to_numpy()[~hit]] = NO_LAUNCH
    # an alias name of the metric one-sided on the other side, at the same launch
    linked = d[[len(equiv.get(m, ())) > 1 for m in d["metric"]]]
    if len(linked):
        partner = linked[launch + ["metric", "status"]].assign(status=linked["status"].map(flip))
        pairs = linked[launch + ["metric", "status", "_pos"]].merge(
            partner.rename(columns={"metric": "_partner"}), on=launch + ["status"], how="inner")
        keep = [p != m and p in equiv[m] for m, p in zip(pairs["metric"], pairs["_partner"])]
        for pos in pairs.loc[np.array(keep, dtype=bool), "_pos"].unique():
            if reasons[pos] is None:
                reasons[pos] = RENAMED
    verdicts: dict[tuple[frozenset[str], str, str | None], str] = {}
    for pos, metric, side in zip(d["_pos"], d["metric"], d["status"]):
        if reasons[pos] is not None:
            continue
        version = asked[side]
        if version is None:
            reasons[pos] = NO_VERSION
            continue
        key = (equiv.get(metric, frozenset([metric])), version, holder[side])
        if key not in verdicts:
            verdicts[key] = {"has": REAL_GAP, "lacks": f"not in ncu {version}"}.get(
                table.verdict(*key), f"unknown for ncu {version}")
        reasons[pos] = verdicts[key]
    return pd.Series(pd.array(reasons, dtype="string"), index=diff.index, name="reason")


def reason_counts(diff: pd.DataFrame, reasons: pd.Series) -> pd.DataFrame:
    """One-sided rows of a comparison per status and reason, beside what
    :func:`analysis.compare.diff.status_counts` counts per status.

    Args:
        diff: the comparison (columns ``status`` and ``flagged`` at least).
        reasons: what :func:`one_sided_reasons` returned for it (same index).

    Returns:
        Columns status, reason, rows (int64), flagged (int64: of them, flagged rows); the
        statuses in the order of :data:`ONE_SIDED`, within one the reasons by rows, most first.
    """
    one = diff["status"].isin(ONE_SIDED)
    d = pd.DataFrame({"status": diff.loc[one, "status"], "reason": reasons.loc[one],
                      "flagged": diff.loc[one, "flagged"].astype(bool)})
    g = d.groupby(["status", "reason"])["flagged"].agg(rows="size", flagged="sum").reset_index()
    g["rows"] = g["rows"].astype("int64")
    g["flagged"] = g["flagged"].astype("int64")
    g["_s"] = g["status"].map({s: i for i, s in enumerate(ONE_SIDED)})
    g = g.sort_values(["_s", "rows", "reason"], ascending=[True, False, True])
    return g.drop(columns="_s").reset_index(drop=True)


def _corpus(foreign: Path | None, profiles: Path | None, extra: Sequence[Path]) -> list[tuple[Path, str | None]]:
    """(report, version) pairs: foreign reports with INDEX.tsv's version, profile sets with
    their metadata.json's, other reports with none (read from the report)."""
    import json

    out: list[tuple[Path, str | None]] = []
    if foreign is not None:
        index = pd.read_csv(foreign / "INDEX.tsv", sep="\t", dtype={"ncu_version": "string"})
        for f, v in zip(index["file"], index["ncu_version"]):
            if pd.isna(v) or not str(v).strip():
                continue  # no version in the report (nor in INDEX.tsv): nothing to file it under
            out.append((foreign / f, str(v)))
    if profiles is not None:
        for meta in sorted(profiles.glob("*/metadata.json")):
            version = json.loads(meta.read_text()).get("ncu_version")
            out += [(p, version) for p in sorted((meta.parent / "reports").glob("*.ncu-rep*"))]
    out += [(p, None) for p in extra]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m analysis.compare.renames OUT [--foreign DIR] [--profiles DIR] [REPORT ...]``:
    write the version table (:func:`build_version_table`) of those reports to OUT (parquet)."""
    import argparse

    from analysis.io import atomic_path

    ap = argparse.ArgumentParser(prog="python -m analysis.compare.renames", description=main.__doc__)
    ap.add_argument("out", type=Path, help="the version table to write (parquet)")
    ap.add_argument("--foreign", type=Path, help="a folder of reports with an INDEX.tsv (file, ncu_version)")
    ap.add_argument("--profiles", type=Path, help="a folder of profile sets ({set}/metadata.json, {set}/reports/)")
    ap.add_argument("reports", nargs="*", type=Path, help="more reports (version read from each)")
    ap.add_argument("--workers", type=int, default=1, help="reader processes at a time")
    args = ap.parse_intermixed_args(argv)
    if args.foreign is not None and not (args.foreign / "INDEX.tsv").is_file():
        ap.error(f"--foreign {args.foreign}: no INDEX.tsv there (a tab-separated file, ncu_version per report file)")
    if args.profiles is not None and not args.profiles.is_dir():
        ap.error(f"--profiles {args.profiles}: no such folder (a folder of profile sets, {{set}}/metadata.json and "
                 "{set}/reports/); nothing written")
    todo = _corpus(args.foreign, args.profiles, args.reports)
    if not todo:
        ap.error("no report given (--foreign, --profiles or REPORT ...): nothing to build the table of; nothing written")
    from analysis.errors import AnalysisError

    try:
        table = build_version_table(todo, workers=args.workers)
    except AnalysisError as exc:  # a report that cannot be read: its file and cause, nothing written
        print(f"error: {exc}", file=sys.stderr)
        return 1
    with atomic_path(args.out) as tmp:
        table.to_parquet(tmp, index=False)
    groups = table[["ncu_version", "cc", "sections"]].drop_duplicates()
    print(f"{len(todo)} reports, {groups['ncu_version'].nunique()} versions, {len(groups)} groups, "
          f"{len(table)} rows -> {args.out}")
    for version, g in table.groupby("ncu_version", sort=False):
        print(f"  ncu {version}: {g['metric'].nunique()} metric names")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
