"""Run a kernel under ``ncu --set full`` and store the report xz-compressed.

The profiled program is :mod:`analysis.gpu.harness` in ``profile`` mode: for each N in turn,
warm-up launches, then the one launch ncu keeps, between ``cuProfilerStart`` and
``cuProfilerStop`` (``--profile-from-start off``), restricted by ``--kernel-name`` to the
kernel itself. One ncu process profiles every N of a kernel: one report with one launch
per N, named ``{kernel}_n{N1}-{N2}-...`` (ncu's and the harness's start-up, about 5 s, paid
once per kernel instead of once per N; docs/gpu-benchmarks.md). Clocks are left alone
(``--clock-control none``): the report holds the clocks the GPU actually ran at.
"""

from __future__ import annotations

import json
import lzma
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path

from analysis.errors import AnalysisError
from analysis.gpu.device import GpuInfo
from analysis.gpu.harness import Tiling
from analysis.gpu.harness import command as harness_command
from analysis.io import atomic_path, write_json
from analysis.tools import find_tool, ncu_version

#: What ncu says when the driver withholds the performance counters, and the fix.
PERM_HINT = ("ERR_NVGPUCTRPERM: this user may not read GPU performance counters; run as root or "
             "set the driver option NVreg_RestrictProfilingToAdminUsers=0 "
             "(https://developer.nvidia.com/ERR_NVGPUCTRPERM)")


def ncu_failure(output: str, tail_lines: int = 15) -> str:
    """What to show of a failed ncu run: ncu's own ``==ERROR==`` lines, then its
    ``==WARNING==`` lines, wherever they were in the output (a profiled program's long
    traceback can push them out of any tail), then the last ``tail_lines`` lines that are
    not among them.

    Args:
        output: ncu's stdout and stderr, as text.
        tail_lines: lines of the end of the output to add.
    """
    lines = output.strip().splitlines()
    errors = [ln for ln in lines if ln.startswith("==ERROR==")]
    warnings = [ln for ln in lines if ln.startswith("==WARNING==")]
    rest = [ln for ln in lines if not ln.startswith(("==ERROR==", "==WARNING=="))][-tail_lines:]
    parts = errors + warnings
    if rest:
        parts += [f"... last {len(rest)} other lines of the output:"] + rest
    return "\n".join(parts)


def ncu_command(ncu: Path, section_set: str, kernel: str, launches: int, out_base: Path) -> list[str]:
    """The ncu command line (without the profiled program): ``launches`` launches of
    ``kernel``, those the program brackets with cuProfilerStart/Stop."""
    return [str(ncu), "--set", section_set, "--clock-control", "none", "--profile-from-start", "off",
            "--kernel-name", kernel, "--launch-count", str(launches), "--force-overwrite",
            "--export", str(out_base)]


def profile_kernel(cubin: Path, kernel: str, precision: str, n: int | Sequence[int], tiling: Tiling,
                   report: Path, *, section_set: str = "full", warmups: int = 3,
                   ncu: str | None = None, options: dict | None = None) -> None:
    """Profile one kernel at M = N = K = n, for each n of a sequence in turn in one ncu
    process (one launch each, in that order), and write ``report``: xz-compressed (preset 9)
    when its name ends in ``.xz``, else the plain ``.ncu-rep`` (the workflow compresses
    those in a CPU job of their own, :func:`compress_report`, so that the GPU is free for
    the next profile meanwhile). ``options``: the kernel's further harness options
    (accumulator, b_layout, tma); ``warmups``: launches before each profiled one.

    The report appears only after ncu succeeded, every profiled launch passed its check
    and the file is complete (temporary name, then rename); it holds one launch per N.

    Raises:
        ToolNotFoundError: ncu is missing; AnalysisError: ncu or a check failed (the
        message carries the end of ncu's output, and the permission fix for
        ERR_NVGPUCTRPERM), or the report lacks a launch.
    """
    exe = find_tool("ncu", ncu)
    sizes = [n] if isinstance(n, int) else list(n)
    what = f"{kernel} N={','.join(map(str, sizes))}"
    tmpdir = Path(tempfile.mkdtemp(prefix="ncu-"))
    try:
        base = tmpdir / "profile"
        prog = harness_command("profile", cubin, kernel, precision, sizes, tiling, warmups=warmups,
                               **(options or {}))
        cmd = [*ncu_command(exe, section_set, kernel, len(sizes), base), *prog]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        print(f"$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
        out = proc.stdout + proc.stderr
        if "ERR_NVGPUCTRPERM" in out:
            raise AnalysisError(f"{what}: {PERM_HINT}")
        plain = base.with_suffix(".ncu-rep")
        if proc.returncode != 0 or not plain.exists():
            raise AnalysisError(f"{what}: ncu exited with {proc.returncode}:\n{ncu_failure(out)}")
        got = profiled_launches(plain)
        if got != len(sizes):
            raise AnalysisError(f"{what}: ncu kept {got} launches, one per N ({len(sizes)}) expected:\n"
                                f"{ncu_failure(out)}")
        if Path(report).suffix == ".xz":
            compress_report(plain, Path(report))
        else:
            with atomic_path(report) as tmp:
                shutil.move(plain, tmp)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def profiled_launches(plain: Path) -> int:
    """Kernel launches in a plain ``.ncu-rep`` (every range), read with ``ncu_report``."""
    from analysis.nsight import load_report

    ctx = load_report(str(plain))
    return sum(ctx.range_by_idx(r).num_actions() for r in range(ctx.num_ranges()))


def compress_report(plain: Path, report_xz: Path) -> None:
    """Write ``plain`` (a ``.ncu-rep``) xz-compressed (preset 9, CRC64) to ``report_xz``,
    atomically; ``plain`` is left in place.

    Raises:
        AnalysisError: ``plain`` is missing, a folder or empty, or is ``report_xz`` itself;
            either file cannot be read or written (each names the file and the cause).
    """
    plain, report_xz = Path(plain), Path(report_xz)
    if not plain.exists():
        raise AnalysisError(f"{plain}: no such report to compress; profile the kernel again")
    if not plain.is_file():
        raise AnalysisError(f"{plain}: a folder, not a report")
    if plain.stat().st_size == 0:
        raise AnalysisError(f"{plain}: empty, not a report; profile the kernel again")
    if report_xz.exists() and report_xz.resolve() == plain.resolve():
        raise AnalysisError(f"{plain}: the report and its compressed copy would be one file; give another output")
    try:
        with atomic_path(report_xz) as tmp, open(plain, "rb") as src, lzma.open(tmp, "wb", preset=9) as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    except OSError as exc:
        who = plain if exc.filename and Path(exc.filename) == plain else report_xz
        raise AnalysisError(f"{who}: cannot {'read' if who == plain else 'write'} it ({exc.strerror or exc})") \
            from None


def write_set_metadata(path: Path, set_name: str, gpu: GpuInfo, tiling: Tiling, *,
                       section_set: str, build_records: list[Path], ncu: str | None = None,
                       kernel_tilings: dict[str, Tiling] | None = None) -> dict:
    """Write ``metadata.json`` of a profile set: GPU, compute capability, driver, CUDA,
    Nsight Compute version, the nvcc version(s) that built the profiled cubins (read from
    the build records, not from whatever nvcc is on PATH now), clock-control mode,
    tiling (the config's), ``kernel_tilings`` (kernel -> tiling, for the set's kernels
    whose tiling differs from it: the tuned and wgmma kernels) and the UTC date."""
    nvccs = sorted({json.loads(Path(p).read_text(encoding="utf-8"))["nvcc"] for p in build_records})
    meta = {
        "set": set_name,
        "gpu": gpu.name,
        "cc": gpu.cc,
        "arch": gpu.arch,
        "driver": gpu.driver,
        "cuda_version": gpu.cuda_driver,
        "ncu_version": ncu_version(find_tool("ncu", ncu)),
        "nvcc_version": nvccs[0] if len(nvccs) == 1 else nvccs,
        "section_set": section_set,
        "clock_control": "none",
        "tiling": asdict(tiling),
        "kernel_tilings": {k: asdict(t) for k, t in sorted((kernel_tilings or {}).items()) if t != tiling},
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    write_json(path, meta)
    return meta



def main(argv: list[str] | None = None) -> int:
    """``python -m analysis.gpu.profile compress PLAIN XZ`` (the workflow's compress_report job)."""
    import argparse
    import sys

    p = argparse.ArgumentParser(prog="python -m analysis.gpu.profile", description="Compress a profiled report.")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compress", help="write PLAIN xz-compressed to XZ (atomically)")
    c.add_argument("plain", type=Path)
    c.add_argument("xz", type=Path)
    args = p.parse_args(argv)
    try:
        compress_report(args.plain, args.xz)
    except AnalysisError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
