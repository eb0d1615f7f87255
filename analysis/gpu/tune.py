"""Tuning sweep of the kernels beyond the study with tilings of their own (kernels/tuned_gemm.cuh).

Builds each variant (a registry kernel with its registry tiling, or with some of its tiling
fields changed) for this GPU's architecture, checks it at every size the way the
workflow does (:func:`analysis.gpu.harness.check_and_time`: exact INT8/INT4, bounded FP16, C
poisoned first) and times it with CUDA events; optionally times the library GEMMs at the
same sizes in the same process (:func:`analysis.gpu.references.library_gemms`), so the ratios
come from one run. Needs a GPU and nvcc; the workflow does not call it.

    python -m analysis.gpu.tune --out DIR [--sizes 512 8192] [--variants fp16_ptx_tuned int8_ptx_tuned:stages=3]
        [--library 4096 8192] [--rounds 2]

A variant is ``KERNEL`` or ``KERNEL:field=value,...`` with fields of :class:`analysis.gpu.harness.Tiling`
(``smem_bytes`` follows from the others by :func:`smem_bytes`). Writes ``DIR/tune.json``
(one record per variant, size and round, check and timing as check_and_time returns them,
plus the variant's tiling and ptxas resources) and prints a table.
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from pathlib import Path

from analysis.errors import AnalysisError, CheckFailedError, ConfigError
from analysis.gpu.harness import Tiling, check_and_time
from analysis.io import write_json

REPO = Path(__file__).resolve().parents[2]

#: Dynamic shared memory the kernels with tilings of their own lay out, per registry kernel,
#: as a function of the tiling: kStages stages of the A and B tiles; for the INT4 mma.sync
#: kernel kStages packed stages plus two INT8 tiles of twice the row bytes; for the wgmma
#: kernels (kernels/wgmma_gemm.cuh, kernels/int4_wgmma.cuh) their stages (the INT4
#: one: packed A and B and an INT8 B of twice the row) plus 1024 bytes of alignment slack.
SMEM_LAYOUT = {
    "fp16_ptx_tuned": lambda t: t.stages * (t.block_m + t.block_n) * t.block_k_bytes,
    "int8_ptx_tuned": lambda t: t.stages * (t.block_m + t.block_n) * t.block_k_bytes,
    "int4_ptx_tuned_unpack_s8": lambda t: (t.stages + 4) * (t.block_m + t.block_n) * t.block_k_bytes,
    "fp16_wgmma": lambda t: t.stages * (t.block_m + t.block_n) * t.block_k_bytes + 1024,
    "int8_wgmma": lambda t: t.stages * (t.block_m + t.block_n) * t.block_k_bytes + 1024,
    "int4_wgmma_unpack_s8": lambda t: t.stages * (t.block_m + 3 * t.block_n) * t.block_k_bytes + 1024,
    "int4_wgmma_persistent": lambda t: t.stages * (t.block_m + 3 * t.block_n) * t.block_k_bytes + 1024,
}


def smem_bytes(kernel: str, tiling: Tiling) -> int:
    """Dynamic shared memory per block that ``kernel`` lays out with ``tiling`` (0 for a
    kernel with static shared memory only).

    The kernels check the same number at build time (SMEM_BYTES), so a wrong entry here or
    in the registry fails the build rather than the launch.
    """
    layout = SMEM_LAYOUT.get(kernel)
    return layout(tiling) if layout else 0


def parse_variant(text: str, config: dict) -> tuple[str, str, Tiling]:
    """``KERNEL`` or ``KERNEL:field=value,...`` -> (variant name, kernel, tiling): the
    kernel's registry tiling (:func:`analysis.workflow.tiling_from_config`) with the fields
    given replaced and smem_bytes recomputed.

    Raises:
        ConfigError: an unknown kernel or tiling field, or a value that is not an integer.
    """
    from analysis.gpu.config import tiling_from_config

    kernel, _, changes = text.partition(":")
    if kernel not in config["kernels"]:
        raise ConfigError(f"variant {text!r}: {kernel!r} is not a registry kernel")
    tiling = tiling_from_config(config, kernel)
    fields = {}
    for item in filter(None, changes.split(",")):
        key, _, value = item.partition("=")
        if key not in Tiling.__dataclass_fields__ or key == "smem_bytes":
            raise ConfigError(f"variant {text!r}: {key!r} is not a tiling field one can set")
        try:
            fields[key] = int(value)
        except ValueError:
            raise ConfigError(f"variant {text!r}: {key}={value!r} is not an integer") from None
    tiling = replace(tiling, **fields)
    if kernel in SMEM_LAYOUT:
        tiling = replace(tiling, smem_bytes=smem_bytes(kernel, tiling))
    return text, kernel, tiling


def build_variants(variants: list[tuple[str, str, Tiling]], arch: str, out: Path, jobs: int) -> dict[str, dict]:
    """Compile every variant for ``arch`` into ``out`` (nvcc, ``jobs`` at a time); returns
    variant name -> {cubin, resources (ptxas report), error (None or the message)}."""
    from analysis.gpu.build import compile_cubin

    out.mkdir(parents=True, exist_ok=True)

    def one(v):
        name, kernel, tiling = v
        stem = name.replace(":", "__").replace(",", "_").replace("=", "")
        cubin = out / f"{stem}.cubin"
        try:
            with open(out / f"{stem}.log", "w", encoding="utf-8") as log:
                usage = compile_cubin(REPO / "kernels" / f"{kernel}.cu", kernel, arch, tiling.defines(), cubin,
                                      out / f"{stem}.resources.json", out=log)
            return name, {"cubin": cubin, "resources": asdict(usage), "error": None}
        except AnalysisError as exc:
            return name, {"cubin": cubin, "resources": None, "error": str(exc)}

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return dict(pool.map(one, variants))


def main(argv: list[str] | None = None) -> int:
    """``python -m analysis.gpu.tune``: build, check and time variants; see the module docstring."""
    import yaml

    from analysis.gpu.device import detect_gpu
    from analysis.gpu.config import kernel_options

    ap = argparse.ArgumentParser(prog="python -m analysis.gpu.tune", description=main.__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--variants", nargs="+", default=list(SMEM_LAYOUT))
    ap.add_argument("--sizes", nargs="+", type=int, default=[512, 1024, 2048, 4096, 8192])
    ap.add_argument("--library", nargs="*", type=int, default=[], help="sizes of the library GEMMs to time too")
    ap.add_argument("--warmups", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=1,
                    help="measure every variant and size this many times, round-robin (run-to-run spread)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    gpu = detect_gpu()
    if gpu is None:
        print("error: no GPU", file=sys.stderr)
        return 1
    variants = [parse_variant(v, config) for v in args.variants]
    built = build_variants(variants, gpu.arch, args.out / "cubins", args.jobs)
    records = []
    for name, kernel, tiling in variants:
        if built[name]["error"]:
            print(f"{name}: build failed: {built[name]['error'][:2000]}")
            records.append({"variant": name, "kernel": kernel, "tiling": asdict(tiling), "error": built[name]["error"]})
    library = []
    for rnd in range(args.rounds):
        for name, kernel, tiling in variants:
            b = built[name]
            if b["error"]:
                continue
            spec = config["kernels"][kernel]
            for n in args.sizes:
                base = {"variant": name, "kernel": kernel, "round": rnd, "tiling": asdict(tiling),
                        "resources": b["resources"]}
                try:
                    rec = check_and_time(b["cubin"], kernel, spec["precision"], n, tiling, args.warmups,
                                         args.repeats, args.seed + n + 7919 * rnd, **kernel_options(spec))
                except (CheckFailedError, ConfigError, RuntimeError) as exc:
                    print(f"{name} N={n}: {exc}")
                    records.append({**base, "n": n, "error": str(exc)})
                    continue
                rec.pop("samples_ns")
                records.append({**base, **rec, "error": None})
                print(f"{name:48s} N={n:5d} {rec['median_ns'] / 1e3:10.1f} us {rec['throughput']:8.1f} "
                      f"{rec['throughput_unit']}  regs {b['resources']['registers']}", flush=True)
        if args.library:
            from analysis.gpu.references import library_gemms

            rows, _ = library_gemms(args.library, args.warmups, args.repeats, args.seed + rnd)
            library += [{**asdict(r), "round": rnd} for r in rows]
            for r in rows:
                print(f"{r.name:48s} N={r.n:5d} {r.median_ns / 1e3:10.1f} us {r.rate:8.1f} {r.unit}", flush=True)
    write_json(args.out / "tune.json", {"gpu": asdict(gpu), "records": records, "library": library})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
