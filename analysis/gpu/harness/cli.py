"""The harness command line, ``python -m analysis.gpu.harness check-time|profile ...``, as the workflow runs it."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from analysis.errors import CheckFailedError, ConfigError
from analysis.io import write_json
from analysis.precision import C_DTYPES, precision_of
from analysis.gpu.harness.inputs import ACCUMULATORS, B_LAYOUTS
from analysis.gpu.harness.runner import check_and_time, profile_target
from analysis.gpu.harness.tiling import Tiling


def command(mode: str, cubin: Path | str, kernel: str, precision: str, n: int | str | Sequence[int | str],
            tiling: Tiling, **options: object) -> list[str]:
    """The harness command line (``python -m analysis.gpu.harness ...``) for one kernel and one
    N, or several (one process runs them in turn: check-time mode writes one record per N
    to ``out`` with ``{n}`` replaced, profile mode profiles one launch per N); ``options`` become ``--name value`` with ``_`` in names as ``-`` (e.g. warmups=3,
    out=path, b_layout="row"); options whose value is None or False are left out, and one
    whose value is True is a bare flag (tma=True: ``--tma``)."""
    cmd = [sys.executable, "-m", "analysis.gpu.harness", mode, "--cubin", str(cubin), "--kernel", kernel,
           "--precision", precision, "--n", *(str(v) for v in ([n] if isinstance(n, (int, str)) else n)),
           "--tiling", tiling.cli()]
    for name, value in options.items():
        if value is True:
            cmd.append(f"--{name.replace('_', '-')}")
        elif value is not None and value is not False:
            cmd += [f"--{name.replace('_', '-')}", str(value)]
    return cmd


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m analysis.gpu.harness", description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=["check-time", "profile"])
    p.add_argument("--cubin", type=Path, required=True)
    p.add_argument("--kernel", required=True)
    p.add_argument("--precision", required=True, choices=["fp16", "int8", "int4"])
    p.add_argument("--n", type=int, nargs="+", required=True,
                   help="M = N = K; several: one record each (check-time, --out with {n}), "
                        "one profiled launch each, in this order (profile)")
    p.add_argument("--tiling", default="64,32,64,4,2,2",
                   help="block_m,block_n,block_k_bytes,warps_m,warps_n,stages[,raster,smem_bytes[,producer_warps[,cluster_m,persistent]]]")
    p.add_argument("--warmups", type=int, default=10)
    p.add_argument("--repeats", type=int, default=50)
    p.add_argument("--seed", type=int, default=None, help="default: fresh from os.urandom")
    p.add_argument("--out", help="JSON record (check-time mode); {n} in it is replaced by N")
    p.add_argument("--accumulator", choices=[a for a in ACCUMULATORS if a],
                   help="f16: the kernel accumulates in FP16 (default: the precision's own)")
    p.add_argument("--b-layout", choices=B_LAYOUTS, default="col",
                   help="B in global memory: col = N rows of K (default), row = K rows of N")
    p.add_argument("--c-dtype", choices=list(C_DTYPES),
                   help="float16: the kernel writes C in FP16 (default: FP32 for fp16, INT32 for integers)")
    p.add_argument("--tma", action="store_true",
                   help="the kernel reads A and B through tensor maps the harness writes (wgmma kernels)")
    args = p.parse_args(argv)
    try:
        tiling = Tiling.parse(args.tiling)
    except ConfigError as exc:
        p.error(str(exc))
    if len(args.n) > 1 and args.out and "{n}" not in args.out:
        p.error("with several --n, --out must contain {n} (one record per N)")
    if args.out and args.mode == "profile":
        p.error("--out is for check-time mode (ncu writes the profile mode's report)")
    if len(set(args.n)) != len(args.n):
        p.error(f"--n {' '.join(map(str, args.n))}: an N given twice")
    try:  # every N before any CUDA work, so that a bad one leaves no record of the others
        for n in args.n:
            tiling.check_shape(args.kernel, precision_of(args.precision), n, n, n)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    from analysis.gpu.device import detect_gpu

    if detect_gpu() is None:
        print("error: no NVIDIA GPU with a working driver (cuInit failed or found no device); the harness "
              "runs kernels, so it needs one", file=sys.stderr)
        return 1
    try:
        for n in args.n:
            # a fresh seed per N unless one is given (then every N uses it)
            seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
            t0 = time.perf_counter()
            if args.mode == "check-time":
                rec = check_and_time(args.cubin, args.kernel, args.precision, n, tiling,
                                     args.warmups, args.repeats, seed, accumulator=args.accumulator,
                                     b_layout=args.b_layout, tma=args.tma, c_dtype=args.c_dtype)
                rec["tiling"] = asdict(tiling)
                if args.out:
                    write_json(Path(args.out.replace("{n}", str(n))), rec)
                print(f"{args.kernel} N={n}: check passed (max |C-ref| {rec['check']['max_abs_error']:g}), "
                      f"median {rec['median_ns'] / 1e3:.2f} us over {rec['repeats']}, "
                      f"{rec['throughput']:.2f} {rec['throughput_unit']} [{time.perf_counter() - t0:.1f} s]",
                      flush=True)
            else:
                chk = profile_target(args.cubin, args.kernel, args.precision, n, tiling, args.warmups, seed,
                                     accumulator=args.accumulator, b_layout=args.b_layout, tma=args.tma,
                                     c_dtype=args.c_dtype)
                print(f"{args.kernel} N={n}: profiled launch checked, max |C-ref| {chk.max_abs_error:g}")
    except (CheckFailedError, ConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0
