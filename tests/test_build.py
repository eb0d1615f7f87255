"""Kernels compile for sm_89 and sm_90 with the PyPI compiler, and the SASS shows
the instructions each kernel is meant to issue (CPU only)."""

from __future__ import annotations

import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from analysis.gpu.build import build_kernel, compile_cubin, parse_ptxas
from analysis.errors import AnalysisError
from analysis.gpu.harness import Tiling
from analysis.workflow import tiling_from_config

REPO = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
CONFIG_KERNELS = CONFIG["kernels"]
KERNELS = sorted(CONFIG_KERNELS)
# Kernels with a tiling of their own (dynamic shared memory; tests/test_tuned.py) are built
# here with it too, but their shared memory is not the study tiling's.
STUDY_TILING = [k for k in KERNELS if "tiling" not in CONFIG_KERNELS[k]]

# What each kernel must issue per architecture: (pattern that must appear, pattern that must not).
EXPECT = {
    ("fp16_wmma", "sm_89"): (r"HMMA\.16816\.F32", None),
    ("fp16_wmma", "sm_90"): (r"HMMA\.16816\.F32", None),
    ("int8_wmma", "sm_89"): (r"IMMA\.16816\.S8\.S8", None),
    ("int8_wmma", "sm_90"): (r"IMMA\.16816\.S8\.S8", None),
    ("int8_ptx_mma_k32", "sm_89"): (r"IMMA\.16832\.S8\.S8", r"IMMA\.16816"),
    ("int8_ptx_mma_k32", "sm_90"): (r"IMMA\.16832\.S8\.S8", r"IMMA\.16816"),
    # sm_89 runs WMMA s4 natively; sm_90 has no S4 tensor instruction and emulates it with S8.
    ("int4_wmma", "sm_89"): (r"IMMA\.8832\.S4\.S4", None),
    ("int4_wmma", "sm_90"): (r"IMMA\.\d+\.S8\.S8", r"IMMA[.\w]*\.S4"),
    ("int8_ptx_mma_k16", "sm_89"): (r"IMMA\.16816\.S8\.S8", r"IMMA\.16832"),
    ("int8_ptx_mma_k16", "sm_90"): (r"IMMA\.16816\.S8\.S8", r"IMMA\.16832"),
    ("fp16_ptx_mma_k16", "sm_89"): (r"HMMA\.16816\.F32", r"HMMA\.1688"),
    ("fp16_ptx_mma_k16", "sm_90"): (r"HMMA\.16816\.F32", r"HMMA\.1688"),
    # FP16 accumulators: the F16 form of the instruction, never the F32 one
    ("fp16_ptx_fp16acc", "sm_89"): (r"HMMA\.16816\.F16", r"HMMA\.\d+\.F32"),
    ("fp16_ptx_fp16acc", "sm_90"): (r"HMMA\.16816\.F16", r"HMMA\.\d+\.F32"),
    ("fp16_ptx_k8", "sm_89"): (r"HMMA\.1688\.F32", r"HMMA\.16816"),
    ("fp16_ptx_k8", "sm_90"): (r"HMMA\.1688\.F32", r"HMMA\.16816"),
    # the study's facts: native IMMA.16864.S4 on sm_89, no S4 tensor instruction on sm_90
    ("int4_ptx_mma_k64", "sm_89"): (r"IMMA\.16864\.S4\.S4", None),
    ("int4_ptx_mma_k64", "sm_90"): (r"IMMA\.16832\.S8\.S8", r"IMMA[.\w]*\.S4"),
    ("int4_ptx_mma_k32", "sm_89"): (r"IMMA\.16832\.S4\.S4", None),
    ("int4_ptx_mma_k32", "sm_90"): (r"IMMA\.\d+\.S8\.S8", r"IMMA[.\w]*\.S4"),
    # unpacks INT4 to INT8 itself: s8 tensor instructions on both, no S4 on either
    ("int4_ptx_unpack_s8", "sm_89"): (r"IMMA\.16832\.S8\.S8", r"IMMA[.\w]*\.S4"),
    ("int4_ptx_unpack_s8", "sm_90"): (r"IMMA\.16832\.S8\.S8", r"IMMA[.\w]*\.S4"),
    ("int8_dp4a", "sm_89"): (r"IDP\.4A\.S8\.S8", r"[HI]MMA"),
    ("int8_dp4a", "sm_90"): (r"IDP\.4A\.S8\.S8", r"[HI]MMA"),
}
# The other variants issue their base kernel's tensor instructions; the knob shows in
# the loads: no LDSM for manual_pack, LDSM widths for the ablations, LDGSTS without
# BYPASS for .ca.
VARIANT_OF = {"fp16_ptx_3stage": "fp16_ptx_mma_k16", "fp16_ptx_manual_pack": "fp16_ptx_mma_k16",
              "int8_ptx_3stage": "int8_ptx_mma_k32", "int8_ptx_manual_pack": "int8_ptx_mma_k32",
              "int4_ptx_3stage": "int4_ptx_mma_k64", "int4_ptx_manual_pack": "int4_ptx_mma_k64",
              "int4_ptx_mma_k64_a_x2": "int4_ptx_mma_k64", "int4_ptx_mma_k64_a_x1": "int4_ptx_mma_k64",
              "int4_ptx_mma_k64_b_x2": "int4_ptx_mma_k64", "int4_ptx_mma_k64_b_x1": "int4_ptx_mma_k64",
              "int4_ptx_mma_k64_ca": "int4_ptx_mma_k64", "int4_ptx_mma_k64_b_trans": "int4_ptx_mma_k64"}
for _v, _base in VARIANT_OF.items():
    for _arch in ("sm_89", "sm_90"):
        EXPECT[(_v, _arch)] = EXPECT[(_base, _arch)]
LOADS = {  # kernel: (must appear, must not appear)
    "fp16_ptx_manual_pack": (None, r"LDSM"), "int8_ptx_manual_pack": (None, r"LDSM"),
    "int4_ptx_manual_pack": (None, r"LDSM"),
    "int4_ptx_mma_k64_a_x2": (r"LDSM\.16\.M88\.2", None), "int4_ptx_mma_k64_b_x2": (r"LDSM\.16\.M88\.2", None),
    "int4_ptx_mma_k64_a_x1": (r"LDSM\.16\.M88 ", None), "int4_ptx_mma_k64_b_x1": (r"LDSM\.16\.M88 ", None),
    "int4_ptx_mma_k64_ca": (r"LDGSTS\.E\.128", r"BYPASS"),
    "int4_ptx_unpack_s8": (r"PRMT", None),
    "int4_ptx_mma_k64_b_trans": (r"LDS\.U8", None),  # the nibble transpose reads bytes
}
# Shared memory beyond the pipeline's tiles: the unpacked INT8 copy of one K tile
# (64 + 32 rows of 2 * 64 + 16 bytes); for row-major B, two staged tiles of 128 K rows of
# 16 + 16 bytes in place of one of the two 32 x 80-byte column-major B tiles.
EXTRA_SHARED = {"int4_ptx_unpack_s8": (64 + 32) * 144, "int4_ptx_mma_k64_b_trans": 2 * 128 * 32 - 32 * 80}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Every kernel for both architectures, built as the workflow builds it; nvcc and
    cuobjdump run as child processes, one per core at a time."""
    out = tmp_path_factory.mktemp("build")

    def build(kernel: str, arch: str):
        cubin = out / f"{arch}_{kernel}.cubin"
        usage = build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, arch, tiling_from_config(CONFIG, kernel).defines(),
                             cubin, out / f"{arch}_{kernel}.json", out / f"{arch}_{kernel}.sass",
                             out / f"{arch}_{kernel}.log")
        return usage, (out / f"{arch}_{kernel}.sass").read_text(), json.loads((out / f"{arch}_{kernel}.json").read_text())

    jobs = [(kernel, arch) for kernel in KERNELS for arch in ("sm_89", "sm_90") if arch in CONFIG_KERNELS[kernel]["archs"]]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return dict(zip(jobs, pool.map(lambda job: build(*job), jobs)))


@pytest.mark.parametrize("kernel,arch", sorted(EXPECT))
def test_sass_has_the_intended_tensor_instruction(built, kernel, arch):
    _, sass, _ = built[(kernel, arch)]
    must, must_not = EXPECT[(kernel, arch)]
    assert re.search(must, sass), f"{kernel} {arch}: no {must}"
    if must_not:
        assert not re.search(must_not, sass), f"{kernel} {arch}: unexpected {must_not}"
    # every kernel loads tiles with cp.async, 16 bytes per lane (.cg: bypassing L1), no LDG
    assert re.search(r"LDGSTS\.E\.(BYPASS\.)?128", sass)
    assert not re.search(r"\bLDG\.", sass)
    must, must_not = LOADS.get(kernel, (r"LDGSTS\.E\.BYPASS\.128", None))
    if must:
        assert re.search(must, sass), f"{kernel} {arch}: no {must}"
    if must_not:
        assert not re.search(must_not, sass), f"{kernel} {arch}: unexpected {must_not}"


@pytest.mark.parametrize("kernel", STUDY_TILING)
def test_resource_usage(built, kernel):
    for arch in ("sm_89", "sm_90"):
        usage, _, record = built[(kernel, arch)]
        assert 0 < usage.registers <= 255
        # a 64 x 80 B A tile and a 32 x 80 B B tile per pipeline stage
        assert usage.shared_bytes == (CONFIG_KERNELS[kernel].get("stages", 2) * (64 + 32) * 80
                                      + EXTRA_SHARED.get(kernel, 0))
        assert usage.spill_store_bytes == 0 and usage.spill_load_bytes == 0
        assert record["registers"] == usage.registers and record["nvcc"]


def test_tile_sizes_are_build_parameters(tmp_path):
    """A 3-stage, 128-byte K tile build changes the shared memory the kernel declares."""
    t = Tiling(block_k_bytes=128, stages=3)
    usage = compile_cubin(REPO / "kernels" / "int8_ptx_mma_k32.cu", "int8_ptx_mma_k32", "sm_90",
                          t.defines(), tmp_path / "k.cubin", tmp_path / "k.json")
    assert usage.shared_bytes == 3 * (64 + 32) * (128 + 16)


def test_compile_error_is_reported_and_leaves_no_cubin(tmp_path):
    bad = tmp_path / "int8_broken.cu"
    bad.write_text('#include "gemm_common.cuh"\nGEMM_KERNEL(int8_broken) { this is not C++; }\n')
    (tmp_path / "gemm_common.cuh").write_text((REPO / "kernels" / "gemm_common.cuh").read_text())
    (tmp_path / "ptx.cuh").write_text((REPO / "kernels" / "ptx.cuh").read_text())
    with pytest.raises(AnalysisError, match="nvcc failed"):
        compile_cubin(bad, "int8_broken", "sm_90", [], tmp_path / "b.cubin", tmp_path / "b.json")
    assert not (tmp_path / "b.cubin").exists()
    assert not list(tmp_path.glob(".b.cubin*"))


def test_parse_ptxas_needs_the_kernel():
    with pytest.raises(AnalysisError, match="no ptxas resource report"):
        parse_ptxas("ptxas info    : 0 bytes gmem\n", "int8_wmma", "sm_90")


PRECISION = {k: spec["precision"] for k, spec in CONFIG_KERNELS.items()}


def test_static_summary_says_where_ptxas_serialized_the_wgmma(built, tmp_path):
    """The build records ptxas's performance advisories per kernel; the static summary's
    ``wgmma_serialized`` is False for every registered kernel (none has an advisory), True for a
    development build whose consumers have too few registers (int4_wgmma_epi_tma with
    B_GLOBAL=2: C7512 in its log, a `WARPGROUP.DEPBAR.LE gsb0, 0x0` after each of its 16 IGMMA)
    and for a debug build (-G: C7519, naming the lambda that issues the wgmma, beside C7505,
    which names no function), and None for a resource report written before the advisories
    were recorded. Another kernel of the same log does not get the advisories."""
    from analysis.gpu.build import ptxas_advisories
    from analysis.study.sass import instruction_mix, tensor_summary

    for (kernel, arch), (_, sass, record) in built.items():
        assert record["ptxas_advisories"] == [], (kernel, arch)
        row = tensor_summary(instruction_mix(sass, kernel, arch, PRECISION[kernel]), record)
        assert row["wgmma_serialized"] is False, (kernel, arch)
    kernel = "int4_wgmma_epi_tma"
    build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90",
                 tiling_from_config(CONFIG, kernel).defines() + ["-DB_GLOBAL=2"], tmp_path / "k.cubin",
                 tmp_path / "k.json", tmp_path / "k.sass", tmp_path / "k.log")
    record, sass = json.loads((tmp_path / "k.json").read_text()), (tmp_path / "k.sass").read_text()
    [advisory] = record["ptxas_advisories"]
    assert (advisory["code"], advisory["function"]) == ("C7512", kernel)
    assert "wgmma.mma_async instructions are serialized" in advisory["message"]
    assert ptxas_advisories((tmp_path / "k.log").read_text(), "another_kernel") == []
    assert sass.count("WARPGROUP.DEPBAR.LE gsb0, 0x0") == sass.count("IGMMA.") == 16
    mix = instruction_mix(sass, kernel, "sm_90", "int4")
    assert tensor_summary(mix, record)["wgmma_serialized"] is True
    older = {k: v for k, v in record.items() if k != "ptxas_advisories"}
    assert tensor_summary(mix, older)["wgmma_serialized"] is None
    build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90",
                 tiling_from_config(CONFIG, kernel).defines() + ["-G"], tmp_path / "g.cubin",
                 tmp_path / "g.json", tmp_path / "g.sass", tmp_path / "g.log")
    debug = json.loads((tmp_path / "g.json").read_text())
    codes = {a["code"]: a["function"] for a in debug["ptxas_advisories"]}
    assert codes.keys() >= {"C7519", "C7505"} and codes["C7505"] is None
    assert codes["C7519"] != kernel  # the lambda, not inlined in a debug build
    debug_mix = instruction_mix((tmp_path / "g.sass").read_text(), kernel, "sm_90", "int4")
    assert tensor_summary(debug_mix, debug)["wgmma_serialized"] is True


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_static_mix_flags_emulated_int4(built, arch):
    """sm_89 has IMMA.8832.S4; sm_90 has no S4 tensor instruction, so int4_wmma is emulated
    there, with more integer ALU instructions than on sm_89."""
    from analysis.study.sass import instruction_mix, operand_type, tensor_summary

    rows = {}
    for kernel in KERNELS:
        if (kernel, arch) not in built:
            continue
        usage, sass, record = built[(kernel, arch)]
        mix = instruction_mix(sass, kernel, arch, PRECISION[kernel])
        tensor = CONFIG_KERNELS[kernel]["mma"].startswith(("mma", "wmma"))
        assert mix["count"].sum() > 100 and set(mix["class"]) >= {"cp.async", "integer ALU"}
        assert ("tensor" in set(mix["class"])) is tensor
        rows[kernel] = tensor_summary(mix, record, operand_type(CONFIG_KERNELS[kernel]["mma"]))
    # s4 mma is emulated on sm_90 only; the kernel that unpacks to s8 itself never is
    int4 = [k for k in rows if PRECISION[k] == "int4" and not CONFIG_KERNELS[k]["mma"].endswith(".s8")]
    assert rows["int4_ptx_unpack_s8"]["emulated"] is False
    assert all(rows[k]["emulated"] is (arch == "sm_90") for k in int4)
    assert not any(rows[k]["emulated"] for k in rows if k not in int4)
    assert rows["int8_ptx_mma_k32"]["tensor_instructions"] == "IMMA.16832.S8.S8"
    if arch == "sm_90":
        alu89 = tensor_summary(instruction_mix(built[("int4_wmma", "sm_89")][1], "int4_wmma", "sm_89", "int4"),
                               built[("int4_wmma", "sm_89")][2])["static_integer_ALU"]
        assert rows["int4_wmma"]["static_integer_ALU"] > alu89


def test_never_executed_fillers_are_not_counted(built):
    """The LDS RZ, [RZ] guarded by @!PT that follow LDGSTS in the real sm_90 build never run:
    they are counted as dead, not as shared loads."""
    from analysis.study.sass import instruction_mix, parse_sass

    sass = built[("int8_ptx_mma_k32", "sm_90")][1]
    dead = [i for i in parse_sass(sass) if not i.live]
    assert dead and {i.mnemonic for i in dead} == {"LDS"}
    mix = instruction_mix(sass, "int8_ptx_mma_k32", "sm_90", "int8")
    lds = mix[mix["mnemonic"] == "LDS"].iloc[0]
    assert lds["count"] == 0 and lds["dead"] == len(dead)


# ---- kernels with a tiling of their own (kernels/tuned_gemm.cuh) ----------------------
TUNED = [k for k in KERNELS if "tiling" in CONFIG_KERNELS[k] and not CONFIG_KERNELS[k].get("tma")]  # wgmma: test_wgmma
TUNED_MMA = {"fp16": r"HMMA\.16816\.F32", "int8": r"IMMA\.16832\.S8\.S8", "int4": r"IMMA\.16832\.S8\.S8"}


def tensor_instructions_per_k_tile(kernel: str, tiling: Tiling) -> int:
    """One mma.sync per 16 x 8 tile of the warp tile and per 32-byte K step of the tile
    the warps read (INT4: the unpacked INT8 tile, twice the packed row bytes)."""
    row_bytes = tiling.block_k_bytes * (2 if CONFIG_KERNELS[kernel]["precision"] == "int4" else 1)
    return (tiling.block_m // tiling.warps_m // 16) * (tiling.block_n // tiling.warps_n // 8) * (row_bytes // 32)


@pytest.mark.parametrize("kernel", TUNED)
def test_tuned_kernels_sass_and_resources(built, kernel):
    """On every architecture it lists: no spills, no local memory, no static shared memory
    (all of it dynamic, tiling.smem_bytes), ldmatrix.x4, 16-byte cp.async bypassing L1, the
    precision's tensor instruction (s8 for INT4, never an S4 one), and as many of them as
    the registry's tiling makes per K tile: the -D tiling reached nvcc."""
    tiling = tiling_from_config(CONFIG, kernel)
    prec = CONFIG_KERNELS[kernel]["precision"]
    assert tiling.smem_bytes > 0
    for arch in CONFIG_KERNELS[kernel]["archs"]:
        usage, sass, record = built[(kernel, arch)]
        assert usage.spill_store_bytes == usage.spill_load_bytes == usage.stack_bytes == 0, arch
        assert usage.shared_bytes == 0 and 0 < usage.registers <= 255
        assert record["defines"] == tiling.defines() and f"-DSMEM_BYTES={tiling.smem_bytes}" in record["defines"]
        assert re.search(r"LDSM\.16\.M88\.4", sass) and re.search(r"LDGSTS\.E\.BYPASS\.(LTC128B\.)?128", sass)
        assert not re.search(r"IMMA[.\w]*\.S4|\bLDL\b|\bSTL\b", sass), arch
        assert len(re.findall(TUNED_MMA[prec], sass)) == tensor_instructions_per_k_tile(kernel, tiling), arch


def test_tuned_tile_shape_changes_the_code(tmp_path):
    """Another K tile (twice the bytes per row, one stage fewer) gives twice the tensor
    instructions per K tile: the tiling is a build parameter, not a constant of the file."""
    import dataclasses

    from analysis.gpu.tune import smem_bytes

    base = tiling_from_config(CONFIG, "int8_ptx_tuned")
    other = dataclasses.replace(base, block_k_bytes=2 * base.block_k_bytes, stages=3)
    other = dataclasses.replace(other, smem_bytes=smem_bytes("int8_ptx_tuned", other))
    counts = []
    for i, t in enumerate((base, other)):
        build_kernel(REPO / "kernels" / "int8_ptx_tuned.cu", "int8_ptx_tuned", "sm_90", t.defines(),
                     tmp_path / f"{i}.cubin", tmp_path / f"{i}.json", tmp_path / f"{i}.sass", tmp_path / f"{i}.log")
        counts.append(len(re.findall(TUNED_MMA["int8"], (tmp_path / f"{i}.sass").read_text())))
    assert counts == [tensor_instructions_per_k_tile("int8_ptx_tuned", t) for t in (base, other)]
    assert counts[1] == 2 * counts[0]


def test_tuned_kernel_refuses_a_wrong_smem_bytes(tmp_path):
    """SMEM_BYTES (the registry's tiling.smem_bytes) that differs from the layout fails the build."""
    t = tiling_from_config(CONFIG, "fp16_ptx_tuned")
    bad = [d for d in t.defines() if not d.startswith("-DSMEM_BYTES=")] + [f"-DSMEM_BYTES={t.smem_bytes + 16}"]
    with pytest.raises(AnalysisError, match="tiling.smem_bytes in the registry differs"):
        compile_cubin(REPO / "kernels" / "fp16_ptx_tuned.cu", "fp16_ptx_tuned", "sm_90", bad, tmp_path / "k.cubin",
                      tmp_path / "k.json")
