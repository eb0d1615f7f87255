"""Kernels timed in pairs with their library GEMM, alternating which of the two runs first.

Why: at large N the H200 holds its clock under its power limit, and a GEMM timed right after
another runs at a lower clock than one timed first (docs/perf-notes.md, "Timed
alternately"). A ratio of a kernel's timing (timings.csv) to a library timing taken at
another moment of the run (references.csv) then measures the moments as much as the kernels.
Here each kernel and its library GEMM (cuBLAS FP16 or cuBLASLt INT8) are timed in the process
that measures the library for references.csv, right after that timing
(:func:`analysis.gpu.references.library_gemms_paired`), in ``rounds`` rounds per N: the kernel first in even rounds and
second in odd ones, each timing ``warmups`` untimed launches and the median of ``repeats``
event-timed ones (:func:`analysis.gpu.harness.time_launches`). Both run on the same random inputs
(one draw per N and precision; a kernel whose registry entry asks for other inputs draws its
own) and are checked once per N on 64 sampled rows of C.

The ratio of a pair is matched by position (:func:`paired_ratios`): the kernel's median
duration over the rounds it ran first against the library's over the rounds it ran first,
and likewise for second; ``ratio`` is the geometric mean of the two, so neither position
favours either side.

Rule references writes ``profiles/{set}/paired.csv`` next to references.csv, one row per
kernel, N and round (:class:`PairedRound`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.errors import CheckFailedError
from analysis.gpu.harness import GemmRunner, Tiling, sample_rows, time_launches
from analysis.io import write_csv
from analysis.precision import LIBRARY_NAMES, gemm_ops


@dataclass(frozen=True)
class PairedKernel:
    """A kernel to time against its library GEMM.

    Attributes:
        kernel: the registry name (also the cubin's extern "C" function).
        cubin: the cubin built for this GPU.
        precision: ``fp16`` or ``int8`` (the precisions with a library GEMM).
        tiling: the tiling the cubin was built with.
        options: the harness options of the registry entry
            (:func:`analysis.workflow.kernel_options`).
    """

    kernel: str
    cubin: Path
    precision: str
    tiling: Tiling
    options: dict


@dataclass(frozen=True)
class PairedRound:
    """One round of one kernel at one N (a row of paired.csv).

    Attributes:
        kernel, precision, n: the kernel and M = N = K.
        library: the library GEMM's name in references.csv (``cublas_fp16``, ``cublaslt_int8``).
        round: 0, 1, ...; ``first`` is ``kernel`` in even rounds and ``library`` in odd ones.
        kernel_median_ns, library_median_ns: the median event-timed duration of each, in ns.
        work: operations per GEMM, 2 * M * N * K.
        warmups, repeats: untimed and timed launches of each timing.
        seed: seed of the kernel's and the library's random inputs at this N.
    """

    kernel: str
    precision: str
    n: int
    library: str
    round: int
    first: str
    kernel_median_ns: float
    library_median_ns: float
    work: int
    warmups: int
    repeats: int
    seed: int


def check_pairs(kernels: list[PairedKernel], rounds: int) -> None:
    """Refuse a pairing before any GPU work.

    Raises:
        ValueError: ``rounds`` is under 2 while there are kernels (each position needs a
            round), or a kernel's precision has no library GEMM.
    """
    if kernels and rounds < 2:
        raise ValueError(f"rounds={rounds}: each kernel needs a round in each position, so at least 2")
    for k in kernels:
        if k.precision not in LIBRARY_NAMES:
            raise ValueError(f"{k.kernel}: precision {k.precision} has no library GEMM "
                             f"(those of {', '.join(LIBRARY_NAMES)})")


def pair_rounds(k: PairedKernel, n: int, inputs: tuple, library: str, library_launch, stream, rounds: int,
                warmups: int, repeats: int, seed: int) -> list[PairedRound]:
    """``rounds`` rounds of kernel ``k`` and a library GEMM at M = N = K = n, the kernel first
    in even rounds; each timing is ``warmups`` untimed launches then the median of
    ``repeats`` event-timed ones (:func:`analysis.gpu.harness.time_launches`).

    Args:
        inputs: what :func:`analysis.gpu.harness.make_inputs` drew for the library at this N;
            the kernel runs on them too unless its registry entry asks for other inputs
            (``accumulator`` or ``b_layout``), when it draws its own from ``seed``.
        library, library_launch: the library GEMM's references.csv name and a callable that
            enqueues one of it on ``stream`` (:func:`analysis.gpu.references.library_gemm`).
        seed: the seed the inputs were drawn from (recorded) and of the checked rows.

    Raises:
        CheckFailedError: the kernel's C is wrong on 64 sampled rows (checked before timing);
        ConfigError: the size does not tile for the kernel (:class:`analysis.gpu.harness.GemmRunner`).
    """
    same = not {"accumulator", "b_layout"} & set(k.options)
    run = GemmRunner(k.cubin, k.kernel, k.precision, k.tiling, n, n, n, seed, **k.options,
                     inputs=inputs if same else None)
    rows = []
    try:
        chk = run.check(sample_rows(n, 64, np.random.default_rng(seed)))
        if not chk.passed:
            raise CheckFailedError(f"{k.kernel} N={n}: wrong on sampled rows of C: {chk}")
        for r in range(rounds):
            order = ("kernel", "library") if r % 2 == 0 else ("library", "kernel")
            med = {}
            for who in order:
                tim = (run.time(warmups, repeats) if who == "kernel"
                       else time_launches(stream, library_launch, warmups, repeats))
                med[who] = tim.median_ns
            rows.append(PairedRound(k.kernel, k.precision, n, library, r, order[0], med["kernel"], med["library"],
                                    int(gemm_ops(n, n, n)), warmups, repeats, seed))
    finally:
        run.close()
    return rows


def paired_table(rows: list[PairedRound]) -> pd.DataFrame:
    """The rows as paired.csv's table (columns: the fields of :class:`PairedRound`)."""
    cols = list(PairedRound.__dataclass_fields__)
    return pd.DataFrame([asdict(r) for r in rows], columns=cols)


def paired_ratios(paired: pd.DataFrame) -> pd.DataFrame:
    """Position-matched ratios of kernel rate to library rate, one row per kernel and N.

    Args:
        paired: a paired.csv table (:func:`analysis.reports.setfiles.read_paired`).

    Returns:
        Columns kernel, precision, n, library, rounds, ratio_first (the library's median
        duration over the rounds it ran first / the kernel's over the rounds it ran first),
        ratio_second (the same for the rounds each ran second), ratio (their geometric mean).
        A ratio above 1 means the kernel is faster. ratio_first, ratio_second and ratio are
        NaN where a position has no round.
    """
    out = []
    for (kernel, prec, n, lib), g in paired.groupby(["kernel", "precision", "n", "library"], sort=False):
        pos = {}
        for where in ("kernel", "library"):
            k_first = g[g["first"] == where]
            kernel_pos = "first" if where == "kernel" else "second"
            pos.setdefault(kernel_pos, {})["kernel"] = k_first["kernel_median_ns"].median()
            lib_pos = "second" if where == "kernel" else "first"
            pos.setdefault(lib_pos, {})["library"] = k_first["library_median_ns"].median()
        first = pos["first"]["library"] / pos["first"]["kernel"]
        second = pos["second"]["library"] / pos["second"]["kernel"]
        both = math.sqrt(first * second) if first > 0 and second > 0 else math.nan
        out.append({"kernel": kernel, "precision": prec, "n": int(n), "library": lib, "rounds": len(g),
                    "ratio_first": first, "ratio_second": second, "ratio": both})
    return pd.DataFrame(out, columns=["kernel", "precision", "n", "library", "rounds", "ratio_first",
                                      "ratio_second", "ratio"])


def check_paired_kernels(paired: pd.DataFrame, registry: dict, set_kernels: set[str], path: str | Path) -> None:
    """Refuse a paired.csv whose kernels do not belong where it lies.

    Args:
        paired: the file's table (:func:`analysis.reports.setfiles.read_paired`).
        registry: the config's ``kernels`` mapping.
        set_kernels: the kernels the set's summary holds.
        path: the file, for the message.

    Raises:
        SetFileError: a kernel that is not in the registry, whose precision differs from the
            registry's, or that the set does not hold (a paired.csv of another set).
    """
    from analysis.errors import SetFileError

    fix = "paired.csv holds the kernels of its own set, as the references rule wrote them; remove the file"
    kernels = sorted(set(paired["kernel"]))
    unknown = [k for k in kernels if k not in registry]
    if unknown:
        raise SetFileError(path, f"kernels not in the registry (config kernels): {', '.join(unknown)}", fix)
    wrong = [f"{k} ({p} here, {registry[k]['precision']} in the registry)"
             for k, p in paired.groupby("kernel")["precision"].first().items() if p != registry[k]["precision"]]
    if wrong:
        raise SetFileError(path, f"precision differs from the registry's: {', '.join(wrong)}", fix)
    absent = [k for k in kernels if k not in set_kernels]
    if absent:
        raise SetFileError(path, f"kernels this set does not hold (its summary has no row of them): "
                                 f"{', '.join(absent)}", fix)


def write_paired(rows: list[PairedRound], out: Path) -> None:
    """Write paired.csv (via a temporary name; :func:`analysis.io.write_csv`)."""
    write_csv(paired_table(rows), out)
