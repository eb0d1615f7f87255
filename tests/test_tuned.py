"""Per-kernel tiling and dynamic shared memory of the kernels beyond the study
(kernels/tuned_gemm.cuh): registry, schema, config checks, the harness's launch and the
tuning sweep's variants (CPU only, except the one test marked gpu). Their SASS and
resources are checked in tests/test_build.py."""

from __future__ import annotations

import copy
from pathlib import Path

import jsonschema
import pytest
import yaml

from analysis.errors import ConfigError
from analysis.gpu.harness import GemmRunner, Tiling, command
from analysis.gpu.tune import parse_variant, smem_bytes
from analysis.workflow import SMEM_PER_BLOCK, check_config, tiling_from_config

REPO = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
SCHEMA = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
# the mma.sync kernels with a tiling of their own; the wgmma ones (tma) in tests/test_wgmma.py
TUNED = sorted(k for k, spec in CONFIG["kernels"].items() if "tiling" in spec and not spec.get("tma"))


def test_there_are_tuned_kernels_beyond_the_study():
    assert {"fp16_ptx_tuned", "int8_ptx_tuned"} <= set(TUNED)
    assert all(CONFIG["kernels"][k]["study"] is False for k in TUNED)


def test_study_tiling_builds_with_its_old_flags():
    """The study kernels' nvcc flags and harness argument are exactly what they always were
    (so their cubins stay byte-identical): RASTER and SMEM_BYTES only appear where set."""
    t = Tiling()
    assert t.defines() == ["-DBLOCK_M=64", "-DBLOCK_N=32", "-DBLOCK_K_BYTES=64", "-DWARPS_M=4", "-DWARPS_N=2",
                           "-DSTAGES=2"]
    assert t.cli() == "64,32,64,4,2,2" and t.smem_bytes == 0
    for k, spec in CONFIG["kernels"].items():
        if "tiling" not in spec:
            assert tiling_from_config(CONFIG, k) == Tiling(stages=spec.get("stages", 2)), k


@pytest.mark.parametrize("kernel", TUNED)
def test_registry_tiling_reaches_build_and_launch(kernel):
    """The registry's tiling block gives the -D flags, the grid (N / block_n, M / block_m),
    the threads (32 per warp) and the dynamic shared memory, which is what the kernel lays
    out (analysis.gpu.tune.smem_bytes; the build checks the same number)."""
    spec = CONFIG["kernels"][kernel]["tiling"]
    t = tiling_from_config(CONFIG, kernel)
    for field, value in spec.items():
        assert getattr(t, field) == value
    assert t.grid(8192, 4096) == (4096 // spec["block_n"], 8192 // spec["block_m"])
    assert t.threads == spec["warps_m"] * spec["warps_n"] * 32
    assert t.smem_bytes == smem_bytes(kernel, t) > 48 * 1024
    assert f"-DSMEM_BYTES={t.smem_bytes}" in t.defines()
    assert (f"-DRASTER={t.raster}" in t.defines()) is (t.raster != 1)  # 1 is the header's default
    for arch in CONFIG["kernels"][kernel]["archs"]:
        assert t.smem_bytes <= SMEM_PER_BLOCK[int(arch[3:])]


@pytest.mark.parametrize("kernel", [*TUNED, "int8_wmma"])
def test_harness_command_carries_the_tiling(kernel):
    t = tiling_from_config(CONFIG, kernel)
    cmd = command("check-time", "k.cubin", kernel, CONFIG["kernels"][kernel]["precision"], 512, t)
    arg = cmd[cmd.index("--tiling") + 1]
    assert Tiling.parse(arg) == t
    assert len(arg.split(",")) == (8 if t.smem_bytes else 6)


@pytest.mark.parametrize("text", ["64,32,64,4,2", "64,32,64,4,2,2,1", "a,b,c,d,e,f", ""])
def test_tiling_argument_is_six_or_eight_integers(text):
    """(or nine, with producer_warps, or eleven, with cluster_m and persistent: tests/test_wgmma.py)"""
    with pytest.raises(ConfigError, match="six, eight, nine or eleven integers"):
        Tiling.parse(text)


def test_schema_takes_a_kernel_tiling_and_nothing_else():
    jsonschema.validate(CONFIG, SCHEMA)
    bad = copy.deepcopy(CONFIG)
    bad["kernels"][TUNED[0]]["tiling"]["swizzle"] = 1
    with pytest.raises(jsonschema.ValidationError, match="swizzle"):
        jsonschema.validate(bad, SCHEMA)


def test_config_check_takes_the_registry():
    check_config(CONFIG, REPO / "kernels")


def test_config_check_refuses_more_shared_memory_than_an_arch_allows():
    cfg = copy.deepcopy(CONFIG)
    spec = cfg["kernels"][TUNED[0]]
    spec["archs"] = ["sm_89", "sm_90"]
    spec["tiling"]["smem_bytes"] = 100 * 1024  # above sm_89's 99 KiB, within sm_90's 227 KiB
    with pytest.raises(ConfigError, match="exceeds the 101376 bytes a block may use on sm_89"):
        check_config(cfg, REPO / "kernels")
    spec["archs"] = ["sm_90"]
    check_config(cfg, REPO / "kernels")


def test_config_check_refuses_stages_given_twice():
    cfg = copy.deepcopy(CONFIG)
    cfg["kernels"][TUNED[0]]["stages"] = 3
    with pytest.raises(ConfigError, match="stages given twice"):
        check_config(cfg, REPO / "kernels")


def test_config_check_tiles_each_size_with_the_kernels_own_tiling():
    """N = 64 tiles the study's 64 x 32 blocks but not a 128 x 256 one."""
    cfg = copy.deepcopy(CONFIG)
    cfg["sizes"] = [64]
    with pytest.raises(ConfigError, match=r"N=64 .*not a positive multiple"):
        check_config(cfg, REPO / "kernels")


def test_tune_variants_recompute_shared_memory():
    _, kernel, t = parse_variant("fp16_ptx_tuned:stages=3,block_k_bytes=128", CONFIG)
    assert kernel == "fp16_ptx_tuned" and (t.stages, t.block_k_bytes) == (3, 128)
    assert t.smem_bytes == 3 * (t.block_m + t.block_n) * 128
    _, _, t4 = parse_variant("int4_ptx_tuned_unpack_s8:stages=5", CONFIG)
    assert t4.smem_bytes == (5 + 4) * (t4.block_m + t4.block_n) * t4.block_k_bytes
    for bad in ("fp16_ptx_tuned:swizzle=1", "fp16_ptx_tuned:smem_bytes=1", "fp16_ptx_tuned:stages=x", "nope"):
        with pytest.raises(ConfigError):
            parse_variant(bad, CONFIG)


@pytest.mark.gpu
def test_shared_memory_beyond_the_device_is_refused(tmp_path):
    """A launch asking more dynamic shared memory than the GPU allows a block is refused
    with ConfigError before any launch (the kernel is never run)."""
    import dataclasses

    from analysis.gpu.build import compile_cubin
    from analysis.gpu.device import detect_gpu

    t = tiling_from_config(CONFIG, "int8_ptx_tuned")
    compile_cubin(REPO / "kernels" / "int8_ptx_tuned.cu", "int8_ptx_tuned", detect_gpu().arch, t.defines(),
                  tmp_path / "k.cubin", tmp_path / "k.json")
    with pytest.raises(ConfigError, match="shared memory per block, this GPU allows"):
        GemmRunner(tmp_path / "k.cubin", "int8_ptx_tuned", "int8", dataclasses.replace(t, smem_bytes=1 << 20),
                   512, 512, 512, 0)

