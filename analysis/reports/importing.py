"""Bring reports made elsewhere into a profile set: ``snakemake --cores 1 import_set
--config source=DIR set=NAME`` (docs/reading-reports.md).

Any file name, plain ``.ncu-rep`` or ``.ncu-rep.xz``: each report becomes
``profiles/NAME/reports/{stem}.ncu-rep.xz``, xz-compressed at :data:`PRESET` or, from an
``.xz`` source, copied as it is once checked (xz's CRC64 then guards it),
its stem kept where it is made of letters, digits, ``.``, ``_`` and ``-`` (other characters
become ``_``), so a ``{kernel}_n{N}`` name keeps its kernel and N. Launches are told apart
inside the set by their identity (``analysis.reports.ncu.IDENTITY_COLUMNS``), never by the file.
"""

from __future__ import annotations

import functools
import hashlib
import lzma
import os
import re
import shutil
import sys
from pathlib import Path

from analysis.errors import ConfigError
from analysis.io import atomic_path
from analysis.names import ReportName, as_text, launch_source, report_stem

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


#: The longest stem a report gets in a set, in bytes: its cache files (``{stem}.instances.parquet``)
#: are written under temporary names about 50 bytes longer, within the 255 bytes a file name may
#: have (a stem of 215 characters was imported, then failed its set's parse).
MAX_STEM = 150

#: A name ending in one substring repeated 20 to 100 times: Snakemake takes such a wildcard value
#: for an endless recursion and stops building its jobs (``PeriodicWildcardError``, from
#: ``snakemake.io.PeriodicityDetector``'s defaults), naming no file.
_PERIODIC = re.compile(r"(.+)\1{19,99}$")


def import_stem(path: str | Path) -> str:
    """The stem a report gets in a set: its file name without ``.ncu-rep[.xz]``, every
    character other than letters, digits, ``.``, ``_``, ``-`` replaced by ``_``, leading
    ``.`` and ``-`` and trailing ``.`` dropped (the name must start with a letter, digit or
    ``_``: :data:`analysis.workflow.SAFE_REPORT`). One longer than :data:`MAX_STEM` keeps its
    first 100 and last 40 characters (so a ``_n{N}_r{R}`` tail) around the first 8 hex digits
    of the SHA-256 of the whole file name, and one ending in a substring repeated 20 times or
    more gets those 8 digits appended (:data:`_PERIODIC`), as does one holding characters outside
    ASCII: replaced by ``_``, such names lose what tells them apart (``优化前`` and ``优化后`` both
    read ``___``); but not one whose stem reads as the workflow's ``{kernel}_n{N}``, which keeps
    that form (and its check against the launches). No stem is longer than :data:`MAX_STEM`: one
    that an appended hash made longer keeps its first ``MAX_STEM - 9`` characters and the hash.
    ``imported.csv`` keeps the original."""
    text = report_stem(path)
    stem = _UNSAFE.sub("_", text).lstrip(".-").rstrip(".") or "report"
    digest = hashlib.sha256(os.fsencode(Path(path).name)).hexdigest()[:8]  # the name's bytes, whatever their encoding
    if len(stem) > MAX_STEM:
        stem = f"{stem[:100]}_{digest}_{stem[-40:]}"
    elif not text.isascii() and ReportName.parse(f"{stem}.ncu-rep") is None:  # told apart by the hash
        stem = f"{stem}_{digest}"
    if _PERIODIC.search(stem):  # Snakemake refuses such a wildcard value before any job
        stem = f"{stem}_{digest}"
    if len(stem) > MAX_STEM:
        stem = f"{stem[:MAX_STEM - 9]}_{digest}"
    return stem


def import_plan(source: str | Path) -> dict[str, Path]:
    """Stem in the set -> report file, for every ``.ncu-rep`` or ``.ncu-rep.xz`` directly
    in ``source``.

    Raises:
        ConfigError: ``source`` is not a folder, holds no report, holds an entry named
            like a report that is no regular file (a folder, a pipe, a broken link), whose
            suffix is not in lower case (``A.NCU-REP``) or that is a report packed otherwise
            (``A.ncu-rep.gz``, ``A.ncu-rep.zip``: each named), or two files would get the same
            stem (both named).
    """
    src = Path(source)
    if not src.is_dir():
        hint = " (a leading ~ is not expanded here: give the whole path)" if str(source).startswith("~") else ""
        what = "does not exist" if not src.exists() else "is a file, not a folder"
        raise ConfigError(f"config source: {src} {what}: give the folder that holds the Nsight Compute reports{hint}")
    plan: dict[str, Path] = {}
    odd = []
    for p in sorted(src.iterdir()):
        if not p.name.endswith((".ncu-rep", ".ncu-rep.xz")):
            if p.name.lower().endswith((".ncu-rep", ".ncu-rep.xz")):
                odd.append(f"{p.name} (the suffix is .ncu-rep or .ncu-rep.xz, in lower case)")
            elif ".ncu-rep." in p.name.lower():  # e.g. .ncu-rep.gz, .ncu-rep.zip, .ncu-rep.bak
                odd.append(f"{p.name} (only .ncu-rep and .ncu-rep.xz files are read: unpack it to a .ncu-rep)")
            continue
        if not p.is_file():
            odd.append(f"{p.name} (not a regular file{': a broken link' if p.is_symlink() and not p.exists() else ''})")
            continue
        stem = import_stem(p)
        if stem in plan:
            raise ConfigError(f"config source: {plan[stem].name} and {p.name} would both be imported as "
                              f"{stem}.ncu-rep.xz; rename one of them")
        plan[stem] = p
    if odd:
        raise ConfigError(f"config source: nothing imported: {', '.join(odd)} in {src}; rename or remove "
                          "them, or import the other reports from a folder without them")
    if not plan:
        below = _reports_below(src)
        where = (f" (it has {below[0]} report{'s' * (below[0] != 1)} in {below[1]} of its subfolders, e.g. "
                 f"{below[2]}: only the reports directly "
                 "in the folder given are imported, so give a subfolder, one import each)") if below else ""
        raise ConfigError(f"config source: no .ncu-rep or .ncu-rep.xz file in {src}{where}")
    return plan


def _reports_below(src: Path, limit: int = 10_000) -> tuple[int, int, str] | None:
    """(reports, subfolders holding them, the first such subfolder relative to ``src``) of the
    ``.ncu-rep``/``.ncu-rep.xz`` files in ``src``'s subfolders at any depth (links not followed;
    at most ``limit`` entries looked at), or None where there is none."""
    count, folders, seen = 0, [], 0
    for root, dirs, files in os.walk(src):
        dirs.sort()
        seen += len(files) + len(dirs)
        hits = [f for f in files if f.endswith((".ncu-rep", ".ncu-rep.xz"))]
        if hits and Path(root) != src:
            count += len(hits)
            folders.append(Path(root).relative_to(src).as_posix())
        if seen > limit:
            break
    return (count, len(folders), folders[0]) if count else None


def check_sources(plan: dict[str, Path], set_folder: str | Path | None = None) -> list[str]:
    """Refuse an import before any file is written if a source is not a whole Nsight
    Compute report: empty, not xz though named ``.xz``, cut short, not a report, or one of
    no profiled launch (its block headers are read, about 10 ms a report:
    :func:`analysis.reports.report_info.report_metadata`, :func:`~analysis.reports.report_info.report_launches`),
    or a launch without a function name or metrics (ncu's reader in a child process:
    :func:`analysis.reports.ncu.launch_problems`);
    or if the stem it would get reads ``{kernel}_n{N...}`` and its launches contradict that
    name (another kernel, another count of launches: :func:`analysis.reports.ncu.check_report_name`,
    which opens such reports with ``ncu_report``); or if it is a repeat (``{stem}_r{R}``) of
    a profile whose other repeats, here or already in ``set_folder``'s reports, were
    profiled on another GPU (both GPUs known); or if two sources hold the same report under two
    names, or a source the same report as one ``set_folder`` holds under another name (plain
    or xz-compressed, however compressed): the set would hold each of their launches twice, and
    a comparison with a set of one copy would match none of them. What the set's parse job
    would find only once the files are stored.

    Returns:
        Warnings: one where the reports imported are of several GPUs, one where they are of
        several Nsight Compute versions (a version not recorded counts as one more), one where
        ``set_folder`` holds reports already (saying how many, and that its ``README.md``, where it
        has one, describes it before the import), one where this import adds reports of another GPU; one
        for the plain ``.ncu-rep`` sources (no checksum guards them, and ncu writes a block per launch, so a file cut between two launches reads as a whole
        report with fewer; it gives the launch count each holds to check against what was
        profiled).

    Raises:
        ConfigError: naming every such file (its original name) and the cause.
    """
    from analysis.errors import ReportError
    from analysis.reports.ncu.files import REPROFILE
    from analysis.reports.report_info import _DAMAGED, report_facts, report_metadata

    bad, plain, whole = [], [], []  # whole: the sources no check above refused
    gpus: dict[str, tuple[str, str | None]] = {}  # stem -> (file name, GPU)
    versions: dict[str, str | None] = {}  # stem -> Nsight Compute version
    for stem, src in plan.items():
        try:
            meta, launches = report_facts(src)
            gpus[stem] = (src.name, meta["gpu"])
            versions[stem] = meta["ncu_version"]
            if launches == 0:
                bad.append(f"{src}: holds no profiled launch (cut short before its first, or a session of no "
                           "kernel)")
                continue
            if not src.name.endswith(".xz"):
                plain.append(f"{src.name} ({launches} launch{'' if launches == 1 else 'es'})")
            if ReportName.parse(f"{stem}.ncu-rep") is not None:
                from analysis.reports.ncu import check_report_name

                try:
                    check_report_name(src, stem)
                except ReportError as exc:
                    if stem != report_stem(src):  # the name checked is the one it would get, not the user's
                        raise ReportError(src, f"{exc.cause} (checked under the name it would be stored as, "
                                               f"{stem}.ncu-rep.xz)", exc.hint) from None
                    raise
            whole.append(src)
        except ReportError as exc:
            # the readers' hint speaks of a set the file is in; this one is not in a set yet
            hint = "" if exc.hint in (REPROFILE, _DAMAGED) else f" ({exc.hint})" if exc.hint else ""
            bad.append(f"{exc.path}: {exc.cause}{hint}")
    # each launch named and with metrics: a plain report damaged inside a launch's data passes the
    # block headers above, and its set's parse would refuse it only once stored
    from analysis.reports.ncu import launch_problems

    bad += [f"{src}: {cause}" for src, cause in launch_problems(whole).items()]
    # repeats of one profile must be of one GPU: their values are pooled into one median and spread
    groups: dict[str, list[tuple[str, str | None]]] = {}
    for stem, (name, gpu) in gpus.items():
        groups.setdefault(launch_source(stem), []).append((name, gpu))
    held = _stored(Path(set_folder) / "reports" if set_folder is not None else None, plan)
    held_gpus: dict[Path, str | None] = {}  # the GPU of each report in the set
    for p in held:
        try:
            held_gpus[p] = report_metadata(p)["gpu"]
        except ReportError:
            continue  # the set's own parse job names a broken stored report
    for p, gpu in held_gpus.items():
        if launch_source(report_stem(p)) in groups:
            groups[launch_source(report_stem(p))].append((f"{p} (in the set)", gpu))
    for base, members in sorted(groups.items()):
        known = {gpu for _, gpu in members if gpu}
        if len(known) > 1:
            listed = ", ".join(f"{name} ({gpu or 'GPU unknown'})" for name, gpu in members)
            bad.append(f"repeats of {base} from other GPUs: {listed} (a repeat _r1, _r2, ... is the same profile "
                       "run again on the same GPU: rename the others without the _r part)")
    sha = functools.cache(_report_sha256)  # each report decompressed and hashed once for the three checks
    bad += _same_repeats(plan, held, sha) + _kernels_at_one_n_twice(plan, held)
    # one file under two names: refused as repeats of the same content are (_same_repeats), since the
    # set would hold each launch twice and match none of them with another set's single copy
    same = [f"{', '.join(names)} are the same report" for names in _same_reports(plan.values(), sha)]
    same += _already_held(plan, held, sha)
    if bad or same:
        parts = []
        if bad:
            parts.append("these files are not whole Nsight Compute reports or contradict their names: "
                         + "; ".join(bad) + " (leave them out of the source folder, or profile them again)")
        if same:
            parts.append("; ".join(same) + ": the set would hold each of their launches twice, under two report "
                         "names (leave all but one of each out of the source folder)")
        raise ConfigError("config source: nothing imported, " + "; and ".join(parts))
    warnings: list[str] = []
    # several GPUs or Nsight Compute versions in one import: allowed, but said, as for an import into a
    # set of another GPU (below): the set's figures and tables take launches of one function name together
    for what, per_stem in (("GPUs", {stem: gpu for stem, (_, gpu) in gpus.items()}),
                           ("Nsight Compute versions", versions)):
        counts = _counted(per_stem.values())
        if len(counts) > 1:
            listed = ", ".join(f"{k} ({n})" for k, n in counts.items())
            warnings.append(f"config source: these reports are of {len(counts)} {what} ({listed}), so the set will "
                            f"mix them: its figures and tables take the launches of one function name together and "
                            f"its comparisons judge it as one set (import each into a set of its own to keep them "
                            f"apart)")
    # another GPU into a set that holds reports already: allowed (a set may mix GPUs), but said
    in_set = {gpu for gpu in held_gpus.values() if gpu}
    new_gpus = {gpu for _, gpu in gpus.values() if gpu} - in_set
    if held:  # adding to a set is allowed, but said: the set's figures and its own notes change with it
        readme = Path(set_folder) / "README.md"
        warnings.append(f"config set: {Path(set_folder).name} holds {len(held)} report{'s' * (len(held) != 1)} "
                        f"already; this import adds {len(plan)} report{'s' * (len(plan) != 1)} beside "
                        f"{'it' if len(held) == 1 else 'them'}, and its tables, figures and comparisons will be remade "
                        f"with all of them"
                        + (f" ({readme} describes the set before this import: update it)" if readme.is_file() else "")
                        + " (import into a new set name to keep them apart)")
    if in_set and new_gpus:
        warnings.append(f"config set: {Path(set_folder).name} holds reports of {', '.join(sorted(in_set))}; this import "
                        f"adds reports of {', '.join(sorted(new_gpus))}, so the set will mix GPUs (import into a "
                        "new set name to keep them apart)")
    if not plain:
        return warnings
    return [f"config source: {len(plain)} plain report(s), which no checksum guards: {', '.join(plain)}; a plain "
            "report cut between two launches reads as a whole one with fewer launches, so check these counts "
            "against what was profiled (xz-compress reports where they are made: xz's checksum then guards them)",
            *warnings]


def _counted(values) -> dict[str, int]:
    """How many of ``values`` (str or None) are each distinct one, most first, ``not recorded``
    (None or empty) last."""
    known: dict[str, int] = {}
    for v in values:
        key = v if v else "not recorded"
        known[key] = known.get(key, 0) + 1
    return {k: known[k] for k in sorted(known, key=lambda k: (k == "not recorded", -known[k], k))}


def _stored(stored: Path | None, plan: dict[str, Path]) -> list[Path]:
    """The report files already in a set's ``reports/`` folder ``stored`` that the import does
    not replace (none where the folder is None or absent)."""
    if stored is None or not stored.is_dir():
        return []
    return [p for p in sorted(stored.iterdir())
            if p.is_file() and p.name.endswith((".ncu-rep", ".ncu-rep.xz")) and report_stem(p) not in plan]


def _same_repeats(plan: dict[str, Path], held: list[Path], sha=None) -> list[str]:
    """Repeats of one profile (``{stem}``, ``{stem}_r1``... here or in the set) of the same
    report content, plain or xz: the same report twice gives a run-to-run spread of 0, which the
    comparisons would take as no noise. ``held``: the set's reports (:func:`_stored`); ``sha``:
    :func:`_report_sha256` or a cache of it. One message per group."""
    sha = sha or _report_sha256
    members: dict[str, list[tuple[str, Path]]] = {}
    for stem, src in plan.items():
        members.setdefault(launch_source(stem), []).append((src.name, Path(src)))
    for p in held:
        if launch_source(report_stem(p)) in members:
            members[launch_source(report_stem(p))].append((f"{p} (in the set)", p))
    out = []
    for base, group in sorted(members.items()):
        if len(group) < 2:
            continue
        seen: dict[str, list[str]] = {}
        for label, path in group:
            digest = sha(path)
            if digest is not None:  # a damaged file is named by the checks above or by the set's parse
                seen.setdefault(digest, []).append(label)
        out += [f"repeats of {base} of the same content: {', '.join(labels)} (a repeat is the profile run again; "
                "one report twice gives a run-to-run spread of 0, read as no noise: leave all but one out)"
                for labels in seen.values() if len(labels) > 1]
    return out


def _kernels_at_one_n_twice(plan: dict[str, Path], held: list[Path]) -> list[str]:
    """Reports named ``{kernel}_n{N...}`` that would give one kernel at one N from two profiles
    (not repeats of one), here or with the set's reports: the set's parse refuses that
    (:func:`analysis.reports.tables._refuse_duplicate_launches`) once the files are stored.
    ``held``: the set's reports (:func:`_stored`). One message per pair of profiles."""
    at: dict[tuple[str, int], dict[str, str]] = {}
    named = [(stem, src.name) for stem, src in plan.items()] + [(report_stem(p), f"{p} (in the set)")
                                                               for p in held]
    for stem, label in named:
        name = ReportName.parse(f"{stem}.ncu-rep")
        for n in (name.sizes if name else ()):
            at.setdefault((name.kernel, n), {}).setdefault(launch_source(stem), label)
    clashes: dict[tuple[str, ...], list[str]] = {}
    for (kernel, n), sources in sorted(at.items()):
        if len(sources) > 1:
            clashes.setdefault(tuple(sorted(sources.values())), []).append(f"{kernel} at N = {n}")
    return [f"{', '.join(what)} would be in several reports of the set: {', '.join(labels)} (a set holds one profile "
            "of a kernel at an N, and its repeats named _r1, _r2, ...: leave one out, or name it without its _n{N} "
            "part)" for labels, what in clashes.items()]


def _already_held(plan: dict[str, Path], held: list[Path], sha=None) -> list[str]:
    """Sources that hold the same report as one the set holds under another name (``held``:
    :func:`_stored`), compared as plain reports (:func:`_report_sha256`), so a plain source
    against its stored xz copy, or a copy compressed otherwise, is found: the same report
    imported again under a new name. ``sha``: :func:`_report_sha256` or a cache of it. One
    message per source."""
    sha = sha or _report_sha256
    if not held:
        return []
    stored: dict[str, str] = {}  # the plain report's SHA-256 -> its name in the set
    for p in held:
        digest = sha(p)
        if digest is not None:
            stored.setdefault(digest, p.name)
    out = []
    for src in plan.values():
        hit = stored.get(sha(Path(src)) or "")
        if hit is not None:
            out.append(f"{Path(src).name} is the same report as {hit} in the set")
    return out


def _report_sha256(path: Path) -> str | None:
    """SHA-256 of the plain report ``path`` holds (decompressed where it is named ``.xz``,
    streamed: 0.27 s for the 57.8 MB of the 56 foreign reports); None where it cannot be read
    (the checks above or the set's parse name a damaged file)."""
    try:
        with (lzma.open(path) if path.name.endswith(".xz") else open(path, "rb")) as fh:
            return _stream_sha256(fh)
    except (OSError, lzma.LZMAError, EOFError):
        return None


def _sha256(path: Path) -> str:
    """SHA-256 of the file's bytes as they are (the import record's)."""
    with open(path, "rb") as fh:
        return _stream_sha256(fh)


def _stream_sha256(fh) -> str:
    """SHA-256 of what the binary file object ``fh`` reads, 1 MiB at a time."""
    h = hashlib.sha256()
    for chunk in iter(lambda: fh.read(1 << 20), b""):
        h.update(chunk)
    return h.hexdigest()


def _same_reports(paths, sha=None) -> list[list[str]]:
    """Names of the files among ``paths`` that hold the same report (plain or xz-compressed,
    ``sha``: :func:`_report_sha256` or a cache of it), in groups of two or more."""
    sha = sha or _report_sha256
    groups: dict[str, list[str]] = {}
    for p in paths:
        digest = sha(Path(p))
        if digest is not None:
            groups.setdefault(digest, []).append(Path(p).name)
    return [sorted(names) for names in groups.values() if len(names) > 1]


def read_import_record(path: str | Path) -> list[list[str]]:
    """The rows of an existing import record (:data:`IMPORT_RECORD_COLUMNS`), or none. The
    import job takes them as a parameter: Snakemake removes a job's outputs before it runs,
    so the earlier record is read when the job is planned, and the job writes them back with
    the new rows.

    Raises:
        ConfigError: naming ``path``, where the record is not UTF-8 text, or its header or a row
            has other fields than :data:`IMPORT_RECORD_COLUMNS` (an edited record: the rows the
            next import could not read would be lost when it writes the record again).
    """
    import csv

    path = Path(path)
    if not path.is_file():
        return []
    fix = ("the record is the import job's own: restore it (e.g. with git checkout), or keep notes beside it, "
           "in the set's README.md")
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            rows = [r for r in csv.reader(fh) if r]
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}); {fix}") from None
    if rows and rows[0] != IMPORT_RECORD_COLUMNS:
        raise ConfigError(f"{path}: its header is {','.join(rows[0])}, not {','.join(IMPORT_RECORD_COLUMNS)}; {fix}")
    odd = [str(i) for i, r in enumerate(rows[1:], start=2) if len(r) != len(IMPORT_RECORD_COLUMNS)]
    if odd:
        raise ConfigError(f"{path}: row{'s' * (len(odd) != 1)} {', '.join(odd[:10])} "
                          f"{'has' if len(odd) == 1 else 'have'} other than the {len(IMPORT_RECORD_COLUMNS)} fields "
                          f"{','.join(IMPORT_RECORD_COLUMNS)}, and the next import would drop "
                          f"{'it' if len(odd) == 1 else 'them'}; {fix}")
    return rows[1:]


def check_import_target(plan: dict[str, Path], set_folder: str | Path) -> None:
    """Refuse an import that would change what a set already holds.

    Raises:
        ConfigError: a source is in the set's own ``reports/`` folder (importing it would
            remove it: Snakemake removes a job's output before the job runs), the set was
            measured by this workflow (it has metadata.json, timings.csv or references.csv:
            its reports stay as profiled), or a report of the same name is already in the
            set with other content (both files named), or the set's ``reports/`` holds reports
            that neither its ``imported.csv`` (absent) nor this import names: what an import cut
            short leaves, which this import would silently join (each named).
    """
    folder = Path(set_folder)
    reports = (folder / "reports").resolve()
    own = sorted(str(src) for src in plan.values() if Path(src).resolve().parent == reports)
    if own:  # Snakemake removes a job's output before it runs: the source itself
        raise ConfigError(f"config source: {', '.join(own)} {'is' if len(own) == 1 else 'are'} in the set's own "
                          f"folder {folder / 'reports'}: an import copies reports from elsewhere into a set "
                          "(to import them into another set, give that set's name)")
    measured = [f for f in ("metadata.json", "timings.csv", "references.csv") if (folder / f).exists()]
    if measured:
        raise ConfigError(f"config set: {folder} holds a set measured by this workflow ({', '.join(measured)}); "
                          "import into a new set name")
    if not (folder / "imported.csv").exists():
        stray = sorted(p.name for p in _stored(folder / "reports", plan))
        if stray:
            raise ConfigError(f"config set: {folder / 'reports'} holds {', '.join(stray)}, which no import record "
                              f"({folder / 'imported.csv'}) names: an import into {folder.name} was cut short, or "
                              "the files were put there by hand. Run that import again to finish it (with "
                              "--rerun-incomplete where Snakemake says its files are incomplete), remove the "
                              "folder, or import into a new set name")
    clashes = []
    for stem, src in plan.items():
        for dst in (folder / "reports" / f"{stem}.ncu-rep.xz", folder / "reports" / f"{stem}.ncu-rep"):
            if not dst.exists():
                continue
            new = src.read_bytes() if src.name.endswith(".xz") == dst.name.endswith(".xz") else None
            if new is None:  # one plain, one xz: compare the reports themselves
                same = _plain_bytes(src) == _plain_bytes(dst)
            else:
                same = new == dst.read_bytes() or _plain_bytes(src) == _plain_bytes(dst)
            if not same:
                clashes.append(f"{dst} (from {src})")
    if clashes:
        raise ConfigError("config source: these reports are already in the set with other content: "
                          + "; ".join(clashes) + " - remove them from the set first, or import into a new set")


def _plain_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    return lzma.decompress(data) if path.name.endswith(".xz") else data


#: The xz preset a plain report is compressed with (liblzma through Python's lzma, one
#: thread). Measured on the 56 reports of other people (57.8 MB plain; docs/benchmarks.md,
#: "Importing reports"): preset 9 took 7.6-10.5 s for 2,953,500 bytes, 6 the same bytes in
#: 5.8-6.2 s (every report is smaller than preset 6's 8 MiB dictionary), 3 took 1.0 s for
#: 3,213,888 bytes (+8.8 %), and by xz's manual 32 MiB of memory to compress against 674 MiB
#: at 9. The xz binary was no faster at any preset (a process per file; with -T2 it splits a
#: file into blocks of three dictionaries, larger than these reports, and writes a few bytes
#: more).
PRESET = 3

_DAMAGED = "leave it out of the import, or import the plain .ncu-rep"


def copy_checked_xz(src: str | Path, dst: str | Path) -> None:
    """Copy the xz file ``src`` to ``dst`` byte for byte, decompressing it on the way (the
    output discarded) so that liblzma checks it whole: its header, every block's CRC64, and
    its end. The same checks as the report reader's (``analysis.reports.ncu``), without importing
    it (pandas and the native reader: 0.4-0.6 s per import job on a 2-core machine).

    Raises:
        ReportError: not an xz file, a stream that ends early or fails its check, or bytes
            other than xz's zero padding after the stream.
    """
    from analysis.errors import ReportError
    from analysis.reports.report_info import _XZ_MAGIC, not_padding

    src = Path(src)
    dec = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        chunk = fin.read(1 << 20)
        if not chunk.startswith(_XZ_MAGIC):
            raise ReportError(src, "is not an xz file (no xz header)",
                              "compress reports with xz, or drop the .xz suffix of a plain .ncu-rep")
        rest = b""
        try:
            while chunk:
                fout.write(chunk)
                if not dec.eof:
                    data = chunk
                    while not dec.eof:  # at most 16 MiB of output at a time
                        dec.decompress(data, max_length=1 << 24)
                        data = b""
                        if dec.needs_input:
                            break
                    if dec.eof:
                        rest = dec.unused_data
                else:
                    rest += chunk
                chunk = fin.read(1 << 20)
        except lzma.LZMAError as exc:
            raise ReportError(src, f"not a complete xz stream ({exc})", _DAMAGED) from None
    if not dec.eof:
        raise ReportError(src, "not a complete xz stream (it ends early)", _DAMAGED)
    if not_padding(rest):
        raise ReportError(src, f"{len(rest)} bytes after the end of the xz stream", _DAMAGED)


def import_report(src: str | Path, dst: str | Path, preset: int = PRESET) -> None:
    """Store report ``src`` as the xz file ``dst``, atomically: a plain report compressed
    at ``preset`` (:data:`PRESET`), an ``.xz`` one copied as it is once checked whole
    (:func:`copy_checked_xz`: recompressing it would cost time for a few per cent of bytes
    either way).

    Raises:
        ReportError: an empty file, or an ``.xz`` file that is not one complete xz stream.
    """
    from analysis.errors import ReportError

    src, dst = Path(src), Path(dst)
    if src.stat().st_size == 0:
        raise ReportError(src, "file is empty", "leave it out of the import")
    with atomic_path(dst) as tmp:
        if src.name.endswith(".xz"):
            copy_checked_xz(src, tmp)
        else:
            with open(src, "rb") as fin, lzma.open(tmp, "wb", preset=preset) as fout:
                shutil.copyfileobj(fin, fout, 1 << 20)


#: Columns of a set's import record (``profiles/{set}/imported.csv``).
IMPORT_RECORD_COLUMNS = ["stem", "original_name", "source", "sha256"]


def write_import_record(plan: dict[str, str | Path], out: str | Path, earlier: list[list[str]] = ()) -> None:
    """Write the import record of a set, atomically: one row per imported report, columns
    :data:`IMPORT_RECORD_COLUMNS` (the stem in the set, the file's original name, its absolute
    path when imported, with bytes that are not UTF-8 written as ``\\xNN``, and the SHA-256 of
    its bytes as imported). The rows of earlier imports
    into the same set (``earlier``: :func:`read_import_record` of the record before) are
    kept, those of a stem imported again replaced.

    Raises:
        OSError: a source file cannot be read.
    """
    import pandas as pd

    from analysis.io import write_csv

    rows = []
    for stem, src in sorted(plan.items()):
        src = Path(src)
        rows.append((stem, as_text(src.name), as_text(os.path.abspath(src)), _sha256(src)))
    new = pd.DataFrame(rows, columns=IMPORT_RECORD_COLUMNS)
    out = Path(out)
    if earlier:
        old = pd.DataFrame([list(r) for r in earlier], columns=IMPORT_RECORD_COLUMNS)
        new = pd.concat([old[~old["stem"].isin(new["stem"])], new], ignore_index=True).sort_values("stem")
    write_csv(new[IMPORT_RECORD_COLUMNS], out)


def main(argv: list[str] | None = None) -> int:
    """``python -m analysis.reports.importing SRC DST``: one report into a set (rule import_report)."""
    from analysis.errors import AnalysisError

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] in ("-h", "--help"):
        print("usage: python -m analysis.reports.importing SRC DST", file=sys.stderr)
        return 0 if args[:1] in (["-h"], ["--help"]) else 2
    if not args[1].endswith(".ncu-rep.xz") or Path(args[1]).is_dir():
        print(f"error: {args[1]}: the stored report must be a file named .ncu-rep.xz (it is written xz-compressed)",
              file=sys.stderr)
        return 2
    try:
        from analysis.reports.report_info import report_facts

        if report_facts(args[0])[1] == 0:  # a whole report of at least one launch, as check_sources asks
            raise ConfigError(f"{args[0]}: holds no profiled launch; leave it out of the import")
        import_report(*args)
    except AnalysisError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: {exc.filename or args[0]}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"{args[0]} -> {args[1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
