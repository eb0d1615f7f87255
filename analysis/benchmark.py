"""Time the main job, its stages, the parser and the tests in fresh clones, and write
``docs/benchmarks.md``: ``python -m analysis.benchmark`` (README, "Speed").

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
4. Report parsing: :func:`analysis.parse.parse_reports` on every report of the default
   set with one worker process and no cache, reports per second.
5. The README's test command, ``pytest``, wall time and its summary line.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .io import atomic_path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SET = "h200_580.159.04_ncu2025.3.1"

#: Rules of each stage, for the per-stage times.
STAGES = {
    "build (nvcc + cuobjdump, 2 architectures)": ["build"],
    "parse (reports -> set tables)": ["parse_set"],
    "tables (summary, study tables, static SASS, quantization error)": ["summary", "study_tables", "sass_table",
                                                                        "quantization_error"],
    "figures": ["set_figures", "study_figures"],
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
    code = ("import glob, time\nfrom analysis.parse import parse_reports\n"
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
        lines += [f"Stages of `snakemake --cores {cores}` (sum of the wall times in the rules' `benchmark:` files;",
                  "with 2 cores jobs overlap, so the sums exceed the wall time):", "",
                  "| stage | jobs | seconds |", "| --- | --- | --- |"]
        lines += [f"| {stage} | {jobs} | {total:.1f} |" for stage, (jobs, total) in res[f"stages_{cores}"].items()]
        lines.append("")
    return "\n".join(lines) + before


def main(argv: list[str] | None = None) -> int:
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
    marker = "\n## Earlier measurements"
    before = old[old.index(marker):] if marker in old else ""
    with atomic_path(args.out) as tmp:
        tmp.write_text(render(res, commit, before), encoding="utf-8")
    print(args.out.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
