"""Time the main job, its stages, the parser and the tests in fresh clones, and write
``docs/benchmarks.md``: ``python -m analysis.benchmark`` (docs/usage.md, "Speed").

What is measured, each in a fresh ``git clone`` of this repository's HEAD (the install is
excluded: the clones use the current environment, with ``PYTHONPATH`` set to the clone so
that its own code runs):

1. ``snakemake --cores 1`` (the main job, compile included) and ``--cores 2`` (another
   clone), wall time; per stage, the sum of the wall times Snakemake's ``benchmark:``
   files give for the stage's rules.
2. ``snakemake --cores 1`` again with nothing to do: wall time to "Nothing to be done".
3. One report added to the default set (a copy of one of its reports as a repeat,
   ``{kernel}_n{N}_r1``) and ``snakemake --cores 1`` again: wall time, and how many
   reports the parse job read (the others come from its cache).
4. Report parsing: :func:`analysis.reports.parse.parse_reports` on every report of the default
   set with one worker process and no cache, reports per second.
5. The README's test command, ``pytest``, wall time and its summary line.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from analysis.io import atomic_path
from analysis.names import ReportName

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SET = "h200_580.159.04_ncu2025.3.1"

#: Rules of each stage, for the per-stage times.
STAGES = {
    "build (nvcc + cuobjdump, 2 architectures)": ["build"],
    "parse (reports -> set tables and summary)": ["parse_set"],
    "tables (static SASS, quantization error)": ["sass_table", "quantization_error"],
    "set figures": ["set_figures"],
    "study (tables and figures of each set)": ["study"],
    "compare": ["compare_sets"],
}


def _clone(dest: Path) -> Path:
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(dest)], check=True)
    return dest


def _env(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root)
    env.pop("CI", None)
    return env


def _timed(cmd: list[str], root: Path, timeout: float = 3600) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, env=_env(root), capture_output=True, text=True, timeout=timeout)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed in {root} (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return elapsed, proc


def _snakemake(*args: str) -> list[str]:
    return [str(Path(sys.executable).with_name("snakemake")), *args]


def _stage_times(root: Path) -> dict[str, tuple[int, float]]:
    """(jobs, summed wall seconds) per stage from the benchmark files of ``root``."""
    out = {}
    for stage, rules in STAGES.items():
        jobs, total = 0, 0.0
        for rule in rules:
            for tsv in (root / "benchmarks" / rule).rglob("*.tsv"):
                with open(tsv, encoding="utf-8") as fh:
                    rows = list(csv.DictReader(fh, delimiter="\t"))
                jobs += 1
                total += float(rows[-1]["s"])
        out[stage] = (jobs, total)
    return out


def _parse_rate(root: Path) -> tuple[int, float]:
    code = ("import glob, time\nfrom analysis.reports.parse import parse_reports\n"
            "if __name__ == '__main__':\n"
            f"    ps = sorted(glob.glob('profiles/{DEFAULT_SET}/reports/*.ncu-rep.xz'))\n"
            "    t = time.perf_counter(); got = parse_reports(ps, None, workers=1)\n"
            "    dt = time.perf_counter() - t; got.raise_errors('benchmark')\n"
            "    print(len(ps), dt)\n")
    script = root / ".parse_rate.py"
    script.write_text(code, encoding="utf-8")
    _, proc = _timed([sys.executable, str(script)], root)
    n, dt = proc.stdout.split()
    return int(n), float(dt)


def measure(work: Path, pytest: bool = True) -> dict:
    """Run every measurement of the module docstring under ``work``; returns the numbers."""
    res: dict = {}
    one = _clone(work / "cores1")
    res["main_1"], _ = _timed(_snakemake("--cores", "1"), one)
    res["stages_1"] = _stage_times(one)
    res["noop"], proc = _timed(_snakemake("--cores", "1"), one)
    if "Nothing to be done" not in proc.stdout + proc.stderr:
        raise RuntimeError("the second run of the main job had work to do")
    status = subprocess.run(["git", "status", "--porcelain"], cwd=one, capture_output=True, text=True, check=True)
    res["git_status"] = status.stdout.strip()
    reports = one / "profiles" / DEFAULT_SET / "reports"
    shutil.copy(reports / "int8_wmma_n512.ncu-rep.xz", reports / "int8_wmma_n512_r1.ncu-rep.xz")
    res["one_new"], _ = _timed(_snakemake("--cores", "1"), one)
    log = (one / "logs" / "parse_set" / f"{DEFAULT_SET}.log").read_text(encoding="utf-8")
    res["one_new_parse"] = re.search(r"\d+ reports read, \d+ from the cache", log).group(0)
    res["parse"] = _parse_rate(one)
    two = _clone(work / "cores2")
    res["main_2"], _ = _timed(_snakemake("--cores", "2"), two)
    res["stages_2"] = _stage_times(two)
    if pytest:
        res["pytest"], proc = _timed([str(Path(sys.executable).with_name("pytest")), "-q", "-p", "no:cacheprovider"],
                                     two)
        res["pytest_summary"] = proc.stdout.strip().splitlines()[-1]
    return res


def _machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, {platform.system()} {platform.machine()}"


def kept_sections(page: str) -> str:
    """The hand-written part of docs/benchmarks.md that a new measurement keeps: everything
    from its first second-level heading (``\n## ``) on; the part :func:`render` writes
    has none. Empty when the page has no such heading."""
    at = page.find("\n## ")
    return page[at:] if at >= 0 else ""


def render(res: dict, commit: str, before: str) -> str:
    """The Markdown of docs/benchmarks.md from :func:`measure`'s numbers."""
    n, dt = res["parse"]
    lines = [
        "# Benchmarks",
        "",
        "Written by `python -m analysis.benchmark` (install excluded; each run in a fresh clone of",
        f"commit `{commit}`; machine: {_machine()}). Targets are those of the speed issue.",
        "",
        "| what | measured | target |",
        "| --- | --- | --- |",
        f"| `snakemake --cores 1`, the whole main job (compile included) | {res['main_1']:.1f} s | 60 s |",
        f"| `snakemake --cores 2` | {res['main_2']:.1f} s | 40 s |",
        f"| `snakemake --cores 1` with nothing to do | {res['noop']:.1f} s | 3 s |",
        f"| one report added to the default set, `snakemake --cores 1` | {res['one_new']:.1f} s "
        f"({res['one_new_parse']}) | 10 s |",
        f"| report parsing, one worker process, default set, no cache | {n / dt:.1f} reports/s "
        f"({n} reports in {dt:.1f} s) | 8 reports/s per core |",
    ]
    if "pytest" in res:
        lines.append(f"| `pytest` (README's test command) | {res['pytest']:.0f} s ({res['pytest_summary']}) | 300 s |")
    lines += ["", "`git status` after the main job in the fresh clone: "
              + ("clean." if not res["git_status"] else f"\n\n```\n{res['git_status']}\n```"), ""]
    for cores in (1, 2):
        lines += [f"Stages of `snakemake --cores {cores}` (sum of the wall times in the rules' `benchmark:` files"
                  + ("; jobs overlap, so the sums exceed the wall time):" if cores > 1 else "):"), "",
                  "| stage | jobs | seconds |", "| --- | --- | --- |"]
        lines += [f"| {stage} | {jobs} | {total:.1f} |" for stage, (jobs, total) in res[f"stages_{cores}"].items()]
        lines.append("")
    return "\n".join(lines) + before


#: Rules whose jobs hold the GPU (``resources: gpu=1``, one at a time): their summed
#: benchmark seconds are the time the GPU suite keeps the GPU busy.
GPU_RULES = ["check_time", "profile", "profile_repeat", "references", "set_metadata"]
#: CPU rules of a GPU run shown beside them (they overlap the GPU jobs under --cores N).
GPU_RUN_CPU_RULES = ["build", "build_ceilings", "compress_report"]
GPU_RUNS = REPO / "docs" / "gpu-runs"


def collect_gpu_run(run: Path, name: str, wall_s: float, command: str, note: str) -> Path:
    """Keep what a GPU run's ``benchmarks/`` folder says of its GPU and build jobs as
    ``docs/gpu-runs/{name}.csv`` (rule, job, seconds: the ``s`` column of each job's
    benchmark file, i.e. its wall time) and ``{name}.json`` (wall time of the whole run in
    seconds, its command, a note, and ``timings_ns``: for each set its check/time and profile
    jobs name, the ``[kernel, n, median_ns]`` rows of ``profiles/{set}/timings.csv`` as they are
    when the run is collected, so that :func:`job_time_fit` keeps using the run's own timings
    after a later run replaces the set). Returns the CSV's path.

    Raises:
        ValueError: ``name`` is no file name (letters, digits, ``.``, ``_``, ``-``, not
            starting with ``.`` or ``-``), ``wall_s`` is negative, a benchmark file has no
            number in its ``s`` column (the file is named), or ``run`` has no benchmark file
            of a GPU rule, or no ``benchmarks/`` folder (the folder is named).
    """
    import json

    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]*", name):
        raise ValueError(f"--name {name!r}: ASCII letters, digits, '.', '_' and '-' only, starting with a letter, "
                         "digit or '_' (it names docs/gpu-runs/NAME.csv)")
    if not wall_s >= 0:
        raise ValueError(f"--wall {wall_s}: a wall time in seconds, not negative")
    if not (run / "benchmarks").is_dir():
        raise ValueError(f"{run / 'benchmarks'}: no such folder (give the root of a GPU run, which holds "
                         "Snakemake's benchmarks/)")
    rows = []
    for rule in GPU_RULES + GPU_RUN_CPU_RULES:
        for tsv in sorted((run / "benchmarks" / rule).rglob("*.tsv")):
            try:
                with open(tsv, encoding="utf-8") as fh:
                    seconds = float(list(csv.DictReader(fh, delimiter="\t"))[-1]["s"])
            except (IndexError, KeyError, TypeError, ValueError, UnicodeDecodeError):
                raise ValueError(f"{tsv}: not a Snakemake benchmark file (no number in an 's' column)") from None
            job = tsv.relative_to(run / "benchmarks" / rule).with_suffix("").as_posix()
            # profile_repeat writes its benchmarks beside profile's, as {kernel}_n{N...}_r{R}
            kind = "profile_repeat" if rule == "profile" and re.search(r"_r\d+$", job) else rule
            rows.append((kind, job, seconds))
    if not any(r[0] in GPU_RULES for r in rows):
        raise ValueError(f"{run}/benchmarks: no benchmark file of a GPU rule ({', '.join(GPU_RULES)})")
    kept = {}
    for set_name in sorted({job.split("/", 1)[0] for rule, job, _ in rows
                            if rule in ("check_time", "profile") and "/" in job}):
        path = REPO / "profiles" / set_name / "timings.csv"
        if path.is_file():
            kept[set_name] = _timing_rows(path)
    GPU_RUNS.mkdir(parents=True, exist_ok=True)
    out = GPU_RUNS / f"{name}.csv"
    with atomic_path(out) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["rule", "job", "seconds"])
        w.writerows(rows)
    with atomic_path(GPU_RUNS / f"{name}.json") as tmp:
        tmp.write_text(json.dumps({"wall_s": wall_s, "command": command, "note": note, "timings_ns": kept},
                                  indent=1) + "\n", encoding="utf-8")
    return out


def _timing_rows(path: Path) -> list[list]:
    """``[kernel, n, median_ns]`` of each row of a set's timings.csv."""
    with open(path, encoding="utf-8") as fh:
        return [[t["kernel"], int(t["n"]), float(t["median_ns"])] for t in csv.DictReader(fh)]


def job_time_fit(rows: list[dict], day: str, profiles: Path = REPO / "profiles",
                 kept: dict[str, list] | None = None) -> list[str]:
    """Lines splitting a run's check/time and profile job times into a part per job and a
    part that grows with the kernel's own time: a least-squares line (``statistics.
    linear_regression``) of each job's seconds against the kernel's event-timed medians
    summed over the job's N, in ms. The medians of the job's set (``{set}/{kernel}`` or
    ``{set}/{kernel}_n{N...}``) are the run's own where ``kept`` holds them (the
    ``timings_ns`` of its json, :func:`collect_gpu_run`: set -> ``[kernel, n, median_ns]``
    rows); else those of ``profiles/{set}/timings.csv`` where that set's metadata.json is
    dated ``day`` (``YYYY-MM-DD``, the run's: a later run may have reused the set's name, and
    one of the same day is not told apart), for runs collected before ``timings_ns`` was kept
    (``kept`` None). Only for a rule with at least 5 such jobs (multi-N profile jobs; a
    check/time job of a kernel alone ran every N its set's timings hold) whose kernel times
    are not all equal; none otherwise."""
    import json
    import statistics

    out = []
    timings: dict[str, dict[tuple[str, int], float]] = {}
    for rule in ("check_time", "profile"):
        x, y = [], []
        for r in rows:
            if r["rule"] != rule or "/" not in r["job"]:
                continue
            set_name, stem = r["job"].split("/", 1)
            if set_name not in timings and kept is not None:
                # a run collected with its timings kept: a set it kept none of had no timings then
                timings[set_name] = {(k, n): float(ns) for k, n, ns in kept.get(set_name, [])}
            if set_name not in timings:
                timings[set_name] = {}
                path, meta = profiles / set_name / "timings.csv", profiles / set_name / "metadata.json"
                if path.is_file() and meta.is_file() and json.loads(meta.read_text(encoding="utf-8")).get(
                        "date", "").startswith(day):
                    timings[set_name] = {(k, n): ns for k, n, ns in _timing_rows(path)}
            t = timings[set_name]
            name = ReportName.parse(f"{stem}.ncu-rep")
            if rule == "profile" and (name is None or name.repeat or len(name.sizes) < 2):
                continue
            kernel = name.kernel if name else stem
            sizes = list(name.sizes) if name else sorted(n for k, n in t if k == kernel)
            if not sizes or any((kernel, n) not in t for n in sizes):
                continue
            x.append(sum(t[(kernel, n)] for n in sizes) / 1e6)
            y.append(float(r["seconds"]))
        if len(x) < 5 or len(set(x)) < 2:
            continue
        fit = statistics.linear_regression(x, y)
        out.append(f"{rule} jobs against the kernel's event-timed time at their N (least squares over {len(x)} "
                   f"jobs): {fit.intercept:.1f} s per job plus {fit.slope:.3f} s per ms; the per-job part comes "
                   f"to {fit.intercept * len(x):.0f} of their {sum(y):.0f} s.")
    return out


#: Above this a kept kernel median (ns) is not a timing of this suite: 1000 s for one launch.
KEPT_MEDIAN_MAX_NS = 1e12
#: What a kept run's json holds (:func:`collect_gpu_run`); ``timings_ns`` is absent in runs
#: collected before it was kept.
KEPT_RUN_SCHEMA = {
    "type": "object",
    "required": ["wall_s", "command", "note"],
    "properties": {
        "wall_s": {"type": "number", "minimum": 0},
        "command": {"type": "string"},
        "note": {"type": "string"},
        "timings_ns": {"type": "object", "additionalProperties": {"type": "array", "items": {
            "type": "array", "minItems": 3, "maxItems": 3,
            "prefixItems": [{"type": "string"}, {"type": "integer", "minimum": 1},
                            {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": KEPT_MEDIAN_MAX_NS}]}}},
    },
}


def _check_kept_run(path: Path, meta) -> None:
    """Refuse a kept run's json that :data:`KEPT_RUN_SCHEMA` refuses, or whose wall time or
    medians are not finite (JSON's NaN passes a schema's bounds), or whose ``timings_ns`` holds
    one kernel and N twice.

    Raises:
        ValueError: naming ``path`` and the first bad field (``timings_ns...`` for a kept
            timing, else what wall_s, command and note must be).
    """
    import jsonschema

    if not isinstance(meta, dict):
        raise ValueError(f"{path}: a JSON {type(meta).__name__}, expected an object (wall_s, command, note)")
    err = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(KEPT_RUN_SCHEMA).iter_errors(meta))
    field = ".".join(str(p) for p in err.absolute_path) if err is not None else ""
    if err is not None and field.startswith("timings_ns"):
        raise ValueError(f"{path}: {field}: {err.message}, expected [kernel, n, median_ns] rows with n a positive "
                         f"integer and 0 < median_ns < {KEPT_MEDIAN_MAX_NS:g} ns")
    if err is not None or not math.isfinite(meta["wall_s"]):
        raise ValueError(f"{path}: expected wall_s a number of seconds >= 0 and command and note as text "
                         f"({field or 'wall_s'}: {err.message if err is not None else 'not finite'})")
    for set_name, rows in meta.get("timings_ns", {}).items():
        seen = set()
        for i, (kernel, n, ns) in enumerate(rows):
            if not math.isfinite(ns):
                raise ValueError(f"{path}: timings_ns.{set_name}.{i}: median_ns {ns} is not a finite number")
            if (kernel, n) in seen:
                raise ValueError(f"{path}: timings_ns.{set_name}: {kernel} at N={n} twice")
            seen.add((kernel, n))


def _read_kept_run(meta_path: Path) -> tuple[dict, list[dict]]:
    """A kept run's json (:func:`_check_kept_run`) and the rows of its csv (rule, job,
    seconds >= 0).

    Raises:
        ValueError: naming the json or the csv and what is wrong with it.
    """
    import json

    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{meta_path}: not a kept run's JSON ({exc})") from None
    _check_kept_run(meta_path, meta)
    csv_path = meta_path.with_suffix(".csv")
    try:
        with open(csv_path, encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{csv_path}: the job times of {meta_path.name} cannot be read ({exc})") from None
    for i, r in enumerate(rows, start=2):
        try:
            seconds = float(r["seconds"])
            ok = math.isfinite(seconds) and seconds >= 0 and bool(r["rule"]) and bool(r["job"])
        except (KeyError, TypeError, ValueError):
            ok = False
        if not ok:
            raise ValueError(f"{csv_path}, line {i}: expected rule, job and seconds >= 0, got {dict(r)!r}")
    return meta, rows


def render_gpu(runs: Path | None = None) -> str:
    """The Markdown of docs/gpu-benchmarks.md from every run kept by :func:`collect_gpu_run`:
    per run, jobs and seconds per rule, the GPU's busy time (sum over :data:`GPU_RULES`)
    and what it comes to per kernel and per profiled report.

    Raises:
        ValueError: a kept run's json or csv is unreadable or malformed (:func:`_read_kept_run`).
    """
    runs = GPU_RUNS if runs is None else runs

    lines = ["# GPU suite benchmarks", "",
             "Written by `python -m analysis.benchmark gpu` from the runs kept in `docs/gpu-runs/` (each",
             "collected from a GPU run's `benchmarks/` folder with `python -m analysis.benchmark gpu --collect`).",
             "GPU jobs hold `resources: gpu=1` and never overlap, so the sum of their wall times is the",
             "time the suite keeps the GPU busy; builds and report compression run beside them on the CPU.", ""]
    for meta_path in sorted(runs.glob("*.json")):
        meta, rows = _read_kept_run(meta_path)
        by_rule: dict[str, list[float]] = {}
        for r in rows:
            by_rule.setdefault(r["rule"], []).append(float(r["seconds"]))
        busy = sum(sum(v) for k, v in by_rule.items() if k in GPU_RULES)
        # a job is named after its report ({kernel}_n{N...}[_r{R}]; a check/time job of
        # every N after its kernel alone); a job {kernel}_n{N1}-{N2}-... profiled one
        # launch per N in one ncu process
        names = {r["job"]: ReportName.parse(f"{r['job']}.ncu-rep") for r in rows}
        kernels = {names[r["job"]].kernel if names[r["job"]] else r["job"].split("/")[-1] for r in rows
                   if r["rule"] in ("check_time", "profile")}
        profiled = [r["job"] for r in rows if r["rule"] in ("profile", "profile_repeat")]
        reports = len(profiled)
        launches = sum(len(names[j].sizes) if names[j] else 1 for j in profiled)
        lines += [f"## {meta_path.stem}", "", f"`{meta['command']}`" if meta["command"] else "(command not kept)",
                  "", meta["note"], "",
                  f"Whole run: {meta['wall_s']:.0f} s of wall time. GPU busy: {busy:.0f} s "
                  f"({busy / 60:.1f} min) for {len(kernels)} kernels and {reports} profiled reports"
                  + (f" ({launches} launches)" if launches != reports else "") + ".", "",
                  "| rule | jobs | seconds | seconds per job |", "| --- | --- | --- | --- |"]
        for rule in GPU_RULES + GPU_RUN_CPU_RULES:
            if rule in by_rule:
                v = by_rule[rule]
                lines.append(f"| {rule}{' (GPU)' if rule in GPU_RULES else ''} | {len(v)} | {sum(v):.1f} | "
                             f"{sum(v) / len(v):.2f} |")
        prof: dict[str, list[float]] = {}
        for r in rows:
            name = names[r["job"]]
            if r["rule"] == "profile" and name and not name.repeat:
                prof.setdefault("-".join(map(str, name.sizes)), []).append(float(r["seconds"]))
        single = {n: v for n, v in prof.items() if "-" not in n}
        if single:
            lines += ["", "`ncu --set full` profile jobs by N (mean seconds per job): "
                      + ", ".join(f"N = {n}: {sum(v) / len(v):.1f} s" for n, v in
                                  sorted(single.items(), key=lambda kv: int(kv[0]))) + "."]
        for n, v in sorted(prof.items()):
            if "-" in n:
                lines += ["", f"`ncu --set full` jobs of one kernel at N = {n.replace('-', ', ')} in one ncu "
                          f"process: {len(v)} jobs, mean {sum(v) / len(v):.1f} s, "
                          f"min {min(v):.1f} s, max {max(v):.1f} s."]
        fits = job_time_fit(rows, meta_path.stem[:10], kept=meta.get("timings_ns"))
        if fits:
            lines += [""] + [f"- {f}" for f in fits]
        lines.append("")
    return "\n".join(lines)


def gpu_main(argv: list[str]) -> int:
    """``python -m analysis.benchmark gpu [--collect RUN --name NAME --wall S --command C --note N]``."""
    ap = argparse.ArgumentParser(prog="python -m analysis.benchmark gpu",
                                 description="keep a GPU run's job times, and write docs/gpu-benchmarks.md")
    ap.add_argument("--collect", type=Path, help="a GPU run's root folder (with benchmarks/)")
    ap.add_argument("--name", help="name of the kept run (docs/gpu-runs/NAME.csv)")
    ap.add_argument("--wall", type=float, help="wall time of the whole run, seconds")
    ap.add_argument("--command", default="", help="the command the run was")
    ap.add_argument("--note", default="", help="what the run was and how it ended")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "gpu-benchmarks.md")
    args = ap.parse_args(argv)
    if args.collect:
        if not args.name or args.wall is None:
            ap.error("--collect needs --name and --wall")
        try:
            collect_gpu_run(args.collect, args.name, args.wall, args.command, args.note)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    try:
        page = render_gpu()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    with atomic_path(args.out) as tmp:
        tmp.write_text(page, encoding="utf-8")
    print(args.out.read_text(encoding="utf-8"))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["gpu"]:
        return gpu_main(argv[1:])
    ap = argparse.ArgumentParser(prog="python -m analysis.benchmark", description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    ap.add_argument("--no-pytest", action="store_true", help="skip the pytest timing")
    ap.add_argument("--keep", action="store_true", help="keep the clones (their path is printed)")
    args = ap.parse_args(argv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                            check=True).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="tcgemm-bench-"))
    try:
        res = measure(work, pytest=not args.no_pytest)
    finally:
        if args.keep:
            print(f"clones kept under {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    old = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
    before = kept_sections(old)
    with atomic_path(args.out) as tmp:
        tmp.write_text(render(res, commit, before), encoding="utf-8")
    print(args.out.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
