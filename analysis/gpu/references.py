"""Reference rates measured on the GPU with the harness's event timer (:func:`time_launches`).

- Tensor-instruction ceilings: register-only mma.sync loops (``kernels/ceilings/mma_peak.cu``),
  one per shape the GEMM kernels use, in TFLOP/s (FP16) or TOP/s (INT8, INT4).
- DRAM ceiling: a device-to-device copy (cuMemcpyDtoDAsync) of ``copy_bytes``, counting
  the bytes read plus the bytes written, in TB/s.
- Vendor library GEMMs at each N, through PyTorch where it is installed: cuBLAS FP16
  (``torch.matmul`` on FP16, FP32 accumulation, C in FP16) and cuBLASLt INT8
  (``torch._int_mm``: A row-major, B column-major, C in INT32, the layout of our kernels),
  and cuBLAS FP16 writing C in FP32 as our FP16 kernels do (``torch.mm`` with
  ``out_dtype=torch.float32``, :data:`analysis.precision.SAME_OUTPUT_NAMES`) where PyTorch has it.
  There is no INT4 GEMM in cuBLAS/cuBLASLt, so INT4 has no library line.

Every library GEMM is checked on sampled rows of C against the float64 reference before
it is timed (exactly for INT8); a failing one raises CheckFailedError and writes nothing.

The workflow's ``references`` rule (:func:`measure`) also times the kernels beyond the study
in pairs with the library GEMM of their precision (paired.csv, :mod:`analysis.gpu.paired`).
Command line, without pairs:

    python -m analysis.gpu.references --cubin mma_peak.cubin --sizes 512 1024 --out references.csv
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.errors import CheckFailedError
from analysis.gpu.harness import (_check, compare, fp32_accumulation_bound, make_inputs, matmul_f64,
                      primary_context, sample_rows, time_launches)
from analysis.io import write_csv
from analysis.gpu.paired import PairedKernel, PairedRound, check_pairs, pair_rounds, write_paired
from analysis.gpu.triton_gemm import triton_available, triton_launch
from analysis.precision import LIBRARY_NAMES, SAME_OUTPUT_NAMES, TRITON_NAMES, gemm_ops, precision_of

#: Ceiling kernels of kernels/ceilings/mma_peak.cu: precision -> (function, K of the shape).
PEAK_KERNELS = {
    "fp16": ("peak_mma_m16n8k16_f16_f32", 16),
    "int8": ("peak_mma_m16n8k32_s8_s32", 32),
    "int4": ("peak_mma_m16n8k64_s4_s32", 64),
}
CHAINS = 8  # kChains in mma_peak.cu: mma.sync per warp per loop iteration

#: Ceiling kernels of kernels/ceilings/wgmma_peak.cu (sm_90a): precision -> (function, K of
#: the shape). Each warpgroup issues WGMMA_GROUP wgmma m64n256 per loop iteration.
WGMMA_PEAK_KERNELS = {
    "fp16": ("peak_wgmma_m64n256k16_f16_f32", 16),
    "int8": ("peak_wgmma_m64n256k32_s8_s32", 32),
}
WGMMA_GROUP = 4  # kGroup in wgmma_peak.cu
#: The operand fills of wgmma_peak.cu: suffix of the kernel's name -> what its shared-memory
#: tiles hold. On a GPU at its power limit the operands' bits set the tensor cores' power:
#: on the H200 the s8 loop drew 274 W with the first fill and 688 W with the second, at the
#: 700 W limit (docs/gpu-runs/2026-12-03_operand_power/).
RANDOM_FILL = "_random"
WGMMA_FILLS = {
    "": "operands FP16 1.0 pairs (near-constant bits; as s8 the bytes 0x00/0x01 and 0x3c/0x3d)",
    RANDOM_FILL: "operands random like the GEMMs' inputs (s8 uniform in [-128, 127], f16 uniform in [-1, 1])",
}
#: Warpgroups per SM the wgmma ceilings are measured with: the GEMM kernels' two consumer
#: warpgroups, and three (the most whose 128 accumulator registers a thread fit one block).
WGMMA_WARPGROUPS = (2, 3)


@dataclass(frozen=True)
class Reference:
    """One measured reference rate (a row of references.csv).

    Attributes:
        name: ``peak_mma_*``, ``peak_wgmma_*_wg{W}`` (``peak_wgmma_*_random_wg{W}``: random
            operands), ``dram_copy``, ``cublas_fp16``, ``cublaslt_int8``,
            ``cublas_fp16_f32out``, ``triton_fp16`` or ``triton_int8``.
        kind: ``ceiling`` or ``library``.
        precision: ``fp16``/``int8``/``int4``, or ``none`` for the copy.
        n: M = N = K of a library GEMM; 0 for a ceiling.
        work: operations (2*M*N*K, or 2*16*8*K per mma) or bytes moved per launch.
        work_unit: ``op`` or ``byte``.
        median_ns, p25_ns, p75_ns, min_ns, max_ns: event-timed launch durations.
        warmups, repeats: untimed and timed launches; gated: launches ran back to back.
        rate: work / median, in ``unit`` (TFLOP/s, TOP/s or TB/s).
        source: what ran (library and version, or the kernel and its launch shape).
    """

    name: str
    kind: str
    precision: str
    n: int
    work: int
    work_unit: str
    median_ns: float
    p25_ns: float
    p75_ns: float
    min_ns: float
    max_ns: float
    warmups: int
    repeats: int
    gated: bool
    rate: float
    unit: str
    source: str


def _row(name, kind, precision, n, work, work_unit, timing, unit, source) -> Reference:
    med = timing.median_ns
    return Reference(name, kind, precision, n, int(work), work_unit, med, timing.quantile_ns(0.25),
                     timing.quantile_ns(0.75), min(timing.samples_ns), max(timing.samples_ns),
                     timing.warmups, timing.repeats, timing.gated, work / med / 1e3, unit, source)


def wgmma_ceilings(cubin: Path, warmups: int, repeats: int, iters: int = 2048,
                   warpgroups: tuple[int, ...] = WGMMA_WARPGROUPS) -> list[Reference]:
    """Hopper's warpgroup-MMA ceilings: :data:`WGMMA_PEAK_KERNELS` in each operand fill of
    :data:`WGMMA_FILLS`, with one block per SM of each number of ``warpgroups``, named
    ``{function}{fill}_wg{warpgroups}``.

    Args:
        cubin: ``wgmma_peak.cu`` built for sm_90a.
        iters: loop iterations per warpgroup (each issues :data:`WGMMA_GROUP` wgmma).

    Raises:
        RuntimeError: a CUDA call failed (e.g. the GPU is not sm_90).
    """
    from cuda.bindings import driver as cu

    dev = primary_context(cu)
    sms = _check(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
                 "cuDeviceGetAttribute")
    stream = _check(cu.cuStreamCreate(0), "cuStreamCreate")
    module = _check(cu.cuModuleLoadData(Path(cubin).read_bytes()), f"cuModuleLoadData({cubin})")
    out = _check(cu.cuMemAlloc(sms * 128 * max(warpgroups) * 4), "cuMemAlloc")
    rows = []
    try:
        argv = [np.array([iters], np.int32), np.array([int(out)], np.uint64)]
        params = np.array([v.ctypes.data for v in argv], dtype=np.uint64)
        for prec, (base, k) in WGMMA_PEAK_KERNELS.items():
            for fill, operands in WGMMA_FILLS.items():
                fname = base + fill
                func = _check(cu.cuModuleGetFunction(module, fname.encode()), f"cuModuleGetFunction({fname})")
                for wg in warpgroups:
                    threads = 128 * wg

                    def launch(func=func, threads=threads):
                        _check(cu.cuLaunchKernel(func, sms, 1, 1, threads, 1, 1, 0, stream, params.ctypes.data, 0),
                               "cuLaunchKernel")

                    tim = time_launches(stream, launch, warmups, repeats)
                    work = sms * wg * iters * WGMMA_GROUP * gemm_ops(64, 256, k)
                    rows.append(_row(f"{fname}_wg{wg}", "ceiling", prec, 0, work, "op", tim,
                                     precision_of(prec).throughput_unit,
                                     f"{fname}: {sms} blocks x {threads} threads ({wg} warpgroups per SM), "
                                     f"{iters} x {WGMMA_GROUP} wgmma.mma_async m64n256k{k} per warpgroup, "
                                     f"A and B from shared-memory descriptors, {operands}"))
    finally:
        cu.cuMemFree(out)
        cu.cuModuleUnload(module)
        cu.cuStreamDestroy(stream)
    return rows


def ceilings(cubin: Path, warmups: int, repeats: int, iters: int = 4096, blocks_per_sm: int = 4,
             threads: int = 256, copy_bytes: int = 1 << 30) -> list[Reference]:
    """Tensor-instruction ceilings (one per precision) and the DRAM copy ceiling.

    Args:
        cubin: ``mma_peak.cu`` built for this GPU.
        iters: loop iterations per warp (each issues CHAINS mma.sync).
        blocks_per_sm, threads: launch shape (grid = SMs * blocks_per_sm).
        copy_bytes: size of the copied buffer (the copy moves twice this many bytes).

    Raises:
        RuntimeError: a CUDA call failed.
    """
    from cuda.bindings import driver as cu

    dev = primary_context(cu)
    sms = _check(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
                 "cuDeviceGetAttribute")
    grid = sms * blocks_per_sm
    stream = _check(cu.cuStreamCreate(0), "cuStreamCreate")
    module = _check(cu.cuModuleLoadData(Path(cubin).read_bytes()), f"cuModuleLoadData({cubin})")
    out = _check(cu.cuMemAlloc(grid * threads * 4), "cuMemAlloc")
    rows = []
    try:
        argv = [np.array([iters], np.int32), np.array([int(out)], np.uint64)]
        params = np.array([v.ctypes.data for v in argv], dtype=np.uint64)
        for prec, (fname, k) in PEAK_KERNELS.items():
            func = _check(cu.cuModuleGetFunction(module, fname.encode()), f"cuModuleGetFunction({fname})")

            def launch(func=func):
                _check(cu.cuLaunchKernel(func, grid, 1, 1, threads, 1, 1, 0, stream, params.ctypes.data, 0),
                       "cuLaunchKernel")

            tim = time_launches(stream, launch, warmups, repeats)
            work = grid * (threads // 32) * iters * CHAINS * gemm_ops(16, 8, k)
            rows.append(_row(fname, "ceiling", prec, 0, work, "op", tim, precision_of(prec).throughput_unit,
                             f"{fname}: {grid} blocks x {threads} threads ({sms} SMs), {iters} x {CHAINS} mma.sync per warp"))
        src = _check(cu.cuMemAlloc(copy_bytes), "cuMemAlloc")
        dst = _check(cu.cuMemAlloc(copy_bytes), "cuMemAlloc")
        try:
            _check(cu.cuMemsetD8(src, 0x5A, copy_bytes), "cuMemsetD8")
            tim = time_launches(stream, lambda: _check(cu.cuMemcpyDtoDAsync(dst, src, copy_bytes, stream),
                                                       "cuMemcpyDtoDAsync"), warmups, repeats)
            rows.append(_row("dram_copy", "ceiling", "none", 0, 2 * copy_bytes, "byte", tim, "TB/s",
                             f"cuMemcpyDtoDAsync of {copy_bytes} bytes (read + write counted)"))
        finally:
            cu.cuMemFree(src)
            cu.cuMemFree(dst)
    finally:
        cu.cuMemFree(out)
        cu.cuModuleUnload(module)
        cu.cuStreamDestroy(stream)
    return rows


def _check_library(name: str, n: int, prec, c: np.ndarray, a: np.ndarray, b_t: np.ndarray,
                   rows: np.ndarray) -> None:
    """Check a library's C on ``rows``: exactly for integers; for floating-point output within the
    FP32-accumulation bound (:func:`analysis.gpu.harness.fp32_accumulation_bound`) plus the final rounding
    to C's dtype (unit roundoff 2**-11 of |ref| for FP16, 2**-24 for FP32; IEEE 754 binary16, binary32)."""
    if prec.exact:
        chk = compare(c, a, b_t, prec, rows)
        ok, worst = chk.passed, chk.max_abs_error
    else:
        ref = matmul_f64(a[rows], b_t)
        roundoff = 2.0**-11 if c.dtype == np.float16 else 2.0**-24
        bound = roundoff * np.abs(ref) + fp32_accumulation_bound(a[rows], b_t)[1]
        diff = np.abs(c[rows].astype(np.float64) - ref)
        ok, worst = bool(np.all(diff <= bound)), float(np.nanmax(diff))
    if not ok:
        raise CheckFailedError(f"{name} N={n}: library result wrong on sampled rows: max |C-ref| = {worst:g}")


def library_gemm(torch, prec_name: str, n: int, rng: np.random.Generator, inputs: tuple | None = None):
    """The library GEMM of ``prec_name`` at M = N = K = n on random inputs, checked once.

    Args:
        torch: the imported ``torch`` module, its CUDA initialised.
        prec_name: ``fp16`` (cuBLAS through ``torch.matmul``) or ``int8`` (cuBLASLt through
            ``torch._int_mm``: A row-major, B column-major, C in INT32).
        rng: source of the random inputs (:func:`analysis.gpu.harness.make_inputs`) and of the
            checked rows.
        inputs: what ``make_inputs(precision, n, n, n, ...)`` returned, to run on instead of
            drawing new ones from ``rng``.

    Returns:
        (name, launch, what): the reference's name (:data:`LIBRARY_NAMES`), a callable that
        enqueues one GEMM on PyTorch's current stream (it holds the device inputs), and a
        description of what runs.

    Raises:
        CheckFailedError: the library's C is wrong on 64 sampled rows (:func:`_check_library`).
    """
    prec = precision_of(prec_name)
    name = LIBRARY_NAMES[prec_name]
    a_host, b_host, a_ref, b_ref = make_inputs(prec, n, n, n, rng) if inputs is None else inputs
    a = torch.from_numpy(a_host).cuda()
    b_t = torch.from_numpy(b_host).cuda()  # (N, K) row-major = B (K, N) column-major
    if prec_name == "fp16":
        def launch(a=a, b_t=b_t):
            torch.matmul(a, b_t.t())
        c = torch.matmul(a, b_t.t())
        what = "torch.matmul (cuBLAS), FP16 in, FP32 accumulate, FP16 out"
    else:
        def launch(a=a, b_t=b_t):
            torch._int_mm(a, b_t.t())
        c = torch._int_mm(a, b_t.t())
        what = "torch._int_mm (cuBLASLt), INT8 in, B column-major, INT32 out"
    _check_library(name, n, prec, c.cpu().numpy(), a_ref, b_ref, sample_rows(n, 64, rng))
    return name, launch, what


def same_output_gemm(torch, prec_name: str, n: int, rng: np.random.Generator, inputs: tuple):
    """The vendor GEMM of ``prec_name`` that writes C in our kernels' dtype
    (:data:`analysis.precision.SAME_OUTPUT_NAMES`: cuBLAS FP16 with FP32 C, ``torch.mm`` with
    ``out_dtype=torch.float32``, which PyTorch has since 2.8) at M = N = K = n on ``inputs``
    (what :func:`library_gemm` ran on), checked like the library.

    Returns:
        (name, launch, what) as :func:`library_gemm`, or None where the precision has none
        (INT8: cuBLASLt already writes INT32) or this PyTorch's ``torch.mm`` takes no
        ``out_dtype`` (a TypeError or RuntimeError from a probe on 16 x 16 matrices; an error
        of the GEMM itself, out of memory for one, is raised).

    Raises:
        CheckFailedError: its C is wrong on 64 sampled rows (:func:`_check_library`).
    """
    if prec_name not in SAME_OUTPUT_NAMES:
        return None
    prec = precision_of(prec_name)
    a_host, b_host, a_ref, b_ref = inputs
    probe = torch.ones((16, 16), dtype=torch.float16, device="cuda")
    try:
        torch.mm(probe, probe.t(), out_dtype=torch.float32)
    except (TypeError, RuntimeError):
        return None
    a, b_t = torch.from_numpy(a_host).cuda(), torch.from_numpy(b_host).cuda()
    c = torch.mm(a, b_t.t(), out_dtype=torch.float32)

    def launch(a=a, b_t=b_t):
        torch.mm(a, b_t.t(), out_dtype=torch.float32)
    _check_library(SAME_OUTPUT_NAMES[prec_name], n, prec, c.cpu().numpy(), a_ref, b_ref, sample_rows(n, 64, rng))
    what = "torch.mm(out_dtype=torch.float32) (cuBLAS), FP16 in, FP32 accumulate, FP32 out"
    return SAME_OUTPUT_NAMES[prec_name], launch, what


def triton_reference(torch, prec_name: str, n: int, rng: np.random.Generator, inputs: tuple):
    """The Triton GEMM of ``prec_name`` at M = N = K = n on ``inputs`` (what
    :func:`library_gemm` ran on), autotuned (:mod:`analysis.gpu.triton_gemm`) and checked
    like the library. Returns (name, launch, what) as :func:`library_gemm`.

    Raises:
        CheckFailedError: its C is wrong on 64 sampled rows (:func:`_check_library`).
    """
    prec = precision_of(prec_name)
    name = TRITON_NAMES[prec_name]
    a_host, b_host, a_ref, b_ref = inputs
    a, b_t = torch.from_numpy(a_host).cuda(), torch.from_numpy(b_host).cuda()
    launch, out, what = triton_launch(torch, prec_name, a, b_t)
    launch()
    torch.cuda.synchronize()
    c = out  # FP16 C stays FP16: the check's rounding term follows C's dtype
    _check_library(name, n, prec, c.cpu().numpy(), a_ref, b_ref, sample_rows(n, 64, rng))
    return name, launch, what


def cuda_torch():
    """PyTorch with CUDA initialised in the primary context the harness uses, or
    (None, why) where PyTorch or a GPU is missing."""
    try:
        import torch
    except ImportError:
        return None, "PyTorch is not installed: no library references"
    if not torch.cuda.is_available():
        return None, "PyTorch sees no GPU: no library references"
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    from cuda.bindings import driver as cu

    torch.cuda.init()
    primary_context(cu)
    return torch, ""


def library_gemms(sizes: list[int], warmups: int, repeats: int, seed: int) -> tuple[list[Reference], str]:
    """cuBLAS FP16 and cuBLASLt INT8 GEMMs at M = N = K = n for each n, through PyTorch
    (:func:`library_gemm`); :func:`library_gemms_paired` without kernels.

    Returns:
        (rows, note): the rows, and why there are none where PyTorch or CUDA is missing.

    Raises:
        CheckFailedError: a library result is wrong on the sampled rows.
    """
    rows, _, note = library_gemms_paired(sizes, warmups, repeats, seed)
    return rows, note


def library_gemms_paired(sizes: list[int], warmups: int, repeats: int, seed: int,
                         pairs: list[PairedKernel] = (), rounds: int = 2
                         ) -> tuple[list[Reference], list[PairedRound], str]:
    """The library GEMMs of :func:`library_gemms`, the vendor GEMM writing C in the kernels'
    dtype where the precision has one (:func:`same_output_gemm`; a note printed where PyTorch
    lacks it) and, where Triton is installed, the Triton GEMM of each precision on the same
    inputs (:func:`triton_reference`; a note printed once where it is not), and each kernel of
    ``pairs`` timed in ``rounds`` rounds with each of those GEMMs of its precision on the library's inputs
    (:func:`analysis.gpu.paired.pair_rounds`), at each N right after that GEMM's own timing.
    The inputs at N are drawn from ``numpy.random.default_rng(seed + n)``: FP16 first, then INT8.

    Returns:
        (rows, paired, note): references.csv rows, paired.csv rows (kernel, N, round), and
        why there are none where PyTorch or CUDA is missing.

    Raises:
        ValueError: as :func:`analysis.gpu.paired.check_pairs` (before any GPU work);
        CheckFailedError: a library's or a kernel's result is wrong on the sampled rows.
    """
    check_pairs(pairs, rounds)
    torch, note = cuda_torch()
    if torch is None:
        return [], [], note
    stream = torch.cuda.current_stream().cuda_stream
    lib = f"torch {torch.__version__} built with CUDA {torch.version.cuda}"
    triton, why_not = triton_available()
    rows, paired, missing = [], [], set()

    def time_and_pair(prec_name, n, inputs, name, launch, what):
        """Time one reference GEMM of ``prec_name`` at N = ``n``, then each kernel of that
        precision in pairs with it on ``inputs`` (the launch, holding its tensors, is freed on
        return)."""
        tim = time_launches(stream, launch, warmups, repeats)
        rows.append(_row(name, "library", prec_name, n, gemm_ops(n, n, n), "op", tim,
                         precision_of(prec_name).throughput_unit, f"{what}; {lib}"))
        for k in pairs:
            if k.precision == prec_name:
                paired.extend(pair_rounds(k, n, inputs, name, launch, stream, rounds, warmups, repeats, seed + n))

    for n in sizes:
        rng = np.random.default_rng(seed + n)
        for prec_name in LIBRARY_NAMES:
            inputs = make_inputs(precision_of(prec_name), n, n, n, rng)
            time_and_pair(prec_name, n, inputs, *library_gemm(torch, prec_name, n, rng, inputs))
            same = same_output_gemm(torch, prec_name, n, rng, inputs)
            if same is not None:  # the vendor GEMM writing C as the kernels do, timed and paired the same way
                time_and_pair(prec_name, n, inputs, *same)
            elif prec_name in SAME_OUTPUT_NAMES:
                missing.add(SAME_OUTPUT_NAMES[prec_name])
            if triton is not None:  # the Triton GEMM on the same inputs, timed and paired the same way
                time_and_pair(prec_name, n, inputs, *triton_reference(torch, prec_name, n, rng, inputs))
            del inputs
        torch.cuda.empty_cache()
    if triton is None:
        print(f"note: {why_not}")
    for name in sorted(missing):
        print(f"note: {lib}: torch.mm takes no out_dtype, so no {name}")
    return rows, paired, ""


def references_table(rows: list[Reference]) -> pd.DataFrame:
    """The rows as references.csv's table, one row per reference (and N for libraries)."""
    return pd.DataFrame([asdict(r) for r in rows])


def measure(cubin: Path, sizes: list[int], warmups: int, repeats: int, seed: int, out: Path,
            pairs: list[PairedKernel] = (), rounds: int = 2, paired_out: Path | None = None,
            wgmma_cubin: Path | None = None) -> None:
    """Measure the ceilings (the wgmma ones too where ``wgmma_cubin``, ``wgmma_peak.cu``
    for sm_90a, is given) and the library GEMMs (with ``pairs`` timed in pairs,
    :func:`library_gemms_paired`) and write references.csv to ``out`` and, where given,
    paired.csv to ``paired_out`` (each through a temporary name; nothing is written when a
    check fails). Prints one line per reference.

    Raises:
        CheckFailedError: a library's or a kernel's result is wrong on the sampled rows;
        ValueError: as :func:`analysis.gpu.paired.check_pairs`.
    """
    rows = ceilings(cubin, warmups, repeats)
    if wgmma_cubin is not None:
        rows += wgmma_ceilings(wgmma_cubin, warmups, repeats)
    lib, paired, note = library_gemms_paired(sizes, warmups, repeats, seed, pairs, rounds)
    if note:
        print(f"note: {note}")
    write_csv(references_table(rows + lib), out)
    if paired_out is not None:
        write_paired(paired, paired_out)
    for r in rows + lib:
        print(f"{r.name:28s} n={r.n:5d} median {r.median_ns / 1e3:10.2f} us  {r.rate:8.2f} {r.unit}")
    for r in paired:
        print(f"{r.kernel:24s} n={r.n:5d} round {r.round} {r.first:7s} first: kernel {r.kernel_median_ns / 1e3:9.2f} us, "
              f"{r.library} {r.library_median_ns / 1e3:9.2f} us")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m analysis.gpu.references", description=__doc__.split("\n\n")[0])
    p.add_argument("--cubin", type=Path, required=True, help="kernels/ceilings/mma_peak.cu built for this GPU")
    p.add_argument("--sizes", type=int, nargs="+", required=True)
    p.add_argument("--warmups", type=int, default=10)
    p.add_argument("--repeats", type=int, default=50)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--wgmma-cubin", type=Path, help="kernels/ceilings/wgmma_peak.cu built for sm_90a (Hopper)")
    args = p.parse_args(argv)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    try:
        measure(args.cubin, args.sizes, args.warmups, args.repeats, seed, args.out, wgmma_cubin=args.wgmma_cubin)
    except CheckFailedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
