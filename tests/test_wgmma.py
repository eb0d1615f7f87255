"""The Hopper-native kernels fp16_wgmma and int8_wgmma (kernels/wgmma_gemm.cuh, sm_90a) and
int4_wgmma_unpack_s8 (INT4 unpacked to INT8 for the same path):
registry and config, the architecture mapping (sm_90 builds and runs the sm_90a kernels,
other GPUs skip them), the build (no spills, HGMMA/IGMMA and UTMALDG in the SASS, the
sm_90a target), the harness's tensor-map shapes and launch (384 threads, tensor maps
refused for shapes they cannot describe), and, on a GPU of compute capability 9.0, the
check at every configured N."""

from __future__ import annotations

import copy
import dataclasses
import re
import shutil
from pathlib import Path

import pytest
import yaml

from analysis.gpu.build import build_kernel, build_target, ptxas_advisories, wgmma_serialized
from analysis.errors import AnalysisError, ConfigError
from analysis.gpu.harness import (C_TMA_GLOBAL, TENSOR_MAP_BYTES, TMA_GLOBALS, Tiling, c_tensor_map_shape, command,
                                   cubin_globals, tensor_map_shapes)
from analysis.precision import precision_of
from analysis.workflow import (
    check_config,
    kernel_options,
    kernel_target,
    skipped_for_arch,
    tiling_from_config,
)

REPO = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
WGMMA = {"fp16_wgmma": r"HGMMA\.64x256x16\.F32", "int8_wgmma": r"IGMMA\.64x256x32\.S8\.S8",
         "fp16_wgmma_cluster": r"HGMMA\.64x256x16\.F32", "int8_wgmma_cluster": r"IGMMA\.64x256x32\.S8\.S8",
         "fp16_wgmma_cluster_f16c": r"HGMMA\.64x256x16\.F32", "int8_wgmma_serpentine": r"IGMMA\.64x256x32\.S8\.S8",
         "fp16_wgmma_serpentine": r"HGMMA\.64x256x16\.F32", "int8_wgmma_lag": r"IGMMA\.64x256x32\.S8\.S8",
         "fp16_wgmma_lag": r"HGMMA\.64x256x16\.F32",
         "int4_wgmma_unpack_s8": r"IGMMA\.64x128x32\.S8\.S8", "int4_wgmma_persistent": r"IGMMA\.64x128x32\.S8\.S8",
         "int4_wgmma_epi_tma": r"IGMMA\.64x128x32\.S8\.S8"}
# The persistent kernels in clusters of two CTAs sharing B (kernels/wgmma_gemm.cuh CLUSTER_M, PERSISTENT)
CLUSTER = {"fp16_wgmma_cluster", "int8_wgmma_cluster", "fp16_wgmma_cluster_f16c", "int8_wgmma_serpentine",
           "fp16_wgmma_serpentine", "int8_wgmma_lag", "fp16_wgmma_lag"}
# The serpentine kernels' changes (K_SERPENTINE, STORE64), and those with CONSUMER_LAG too
STORE64 = {"int8_wgmma_serpentine", "fp16_wgmma_serpentine", "int8_wgmma_lag", "fp16_wgmma_lag"}
LAG = {"int8_wgmma_lag", "fp16_wgmma_lag"}
# C through the copy engine (kernels/c_tma.cuh, EPI_TMA slots per consumer warpgroup) in the registry
EPI_TMA_REGISTERED = {"int4_wgmma_epi_tma": 4}
# Their build parameters, and those of the persistent INT4 kernel (kernels/int4_wgmma.cuh PERSISTENT)
BUILD_PARAMS = {**{k: ["-DCLUSTER_M=2", "-DPERSISTENT=1"] for k in CLUSTER},
                "int4_wgmma_persistent": ["-DPERSISTENT=1"], "int4_wgmma_epi_tma": ["-DPERSISTENT=1"]}
# Shared memory each lays out (the registry's smem_bytes must equal it): stages of A and B
# tiles of block_k_bytes per row; the INT4 kernel's stages hold packed A and B and an INT8 B
# of twice the row; 1024 bytes to align the stages to the swizzle's repeat.
def _smem_ab(t):
    return t.stages * (t.block_m + t.block_n) * t.block_k_bytes + 1024


def _smem_int4(t):
    return t.stages * (t.block_m + 3 * t.block_n) * t.block_k_bytes + 1024


SMEM = {**{k: _smem_ab for k in ("fp16_wgmma", "int8_wgmma", "fp16_wgmma_cluster", "int8_wgmma_cluster",
                                 "fp16_wgmma_cluster_f16c", "int8_wgmma_serpentine", "fp16_wgmma_serpentine",
                                 "int8_wgmma_lag", "fp16_wgmma_lag")},
        "int4_wgmma_unpack_s8": _smem_int4, "int4_wgmma_persistent": _smem_int4,
        "int4_wgmma_epi_tma": lambda t: _smem_int4(t) + 2 * 4 * 8192}
# wgmma and TMA copies in the SASS: 4 wgmma per K tile (its 128 INT8 or 64 FP16 of K in
# 32-byte steps) and one copy per operand; the INT4 kernel issues 8 per K tile (two m64
# halves of its 128 rows per consumer), its main loop takes two tiles per iteration (fixed A
# registers per tile) plus one for an odd count (not in the persistent build, which takes K
# tiles in pairs only), and its copies are issued before and in the loop.
SASS_COUNTS = {"fp16_wgmma": (4, 2), "int8_wgmma": (4, 2), "fp16_wgmma_cluster": (4, 2),
               "int8_wgmma_cluster": (4, 2), "int4_wgmma_unpack_s8": (24, 4), "int4_wgmma_persistent": (16, 4),
               "fp16_wgmma_cluster_f16c": (4, 2), "int8_wgmma_serpentine": (4, 2),
               "fp16_wgmma_serpentine": (4, 2), "int8_wgmma_lag": (4, 2), "fp16_wgmma_lag": (4, 2),
               "int4_wgmma_epi_tma": (16, 4)}


def test_registry_entries():
    for name in WGMMA:
        spec = CONFIG["kernels"][name]
        assert spec["archs"] == ["sm_90a"] and spec["study"] is False and spec["tma"] is True
        assert "wgmma" in spec["mma"]
    check_config(CONFIG, REPO / "kernels")


@pytest.mark.parametrize("kernel", sorted(WGMMA))
def test_tiling_gives_384_threads_and_the_sm_90a_target(kernel):
    t = tiling_from_config(CONFIG, kernel)
    assert t.threads == 384 and t.producer_warps == 4 and t.arch == "sm_90a"
    assert t.smem_bytes == SMEM[kernel](t) <= 227 * 1024
    cluster = BUILD_PARAMS.get(kernel, [])
    assert t.defines()[-2 - len(cluster):] == ["-DPRODUCER_WARPS=4", *cluster, "-arch=sm_90a"]
    assert Tiling.parse(t.cli()) == dataclasses.replace(t, arch=None)  # the launch needs no target
    cmd = command("check-time", "k.cubin", kernel, "fp16", 512, t, **kernel_options(CONFIG["kernels"][kernel]))
    assert "--tma" in cmd and len(cmd[cmd.index("--tiling") + 1].split(",")) == (11 if cluster else 9)
    assert cmd[cmd.index("--tma") + 1:] == (["--c-dtype", "float16"] if kernel.endswith("_f16c") else [])


def test_study_flags_are_unchanged():
    """No producer warps, no target: the study kernels' defines and --tiling are as before."""
    for name, spec in CONFIG["kernels"].items():
        if name not in WGMMA:
            t = tiling_from_config(CONFIG, name)
            assert t.arch is None and t.producer_warps == 0 and not any(
                d.startswith(("-arch", "-DPRODUCER", "-DCLUSTER", "-DPERSISTENT")) for d in t.defines()), name
            assert "--tma" not in command("check-time", "k", name, spec["precision"], 512, t,
                                          **kernel_options(spec))


def test_sm_90_builds_and_runs_sm_90a_kernels_others_skip_them():
    assert kernel_target("sm_90", ["sm_90a"]) == "sm_90a"
    assert kernel_target("sm_90", ["sm_89", "sm_90"]) == "sm_90"
    assert kernel_target("sm_89", ["sm_90a"]) is None
    lines = skipped_for_arch(CONFIG["kernels"], "sm_89")
    assert len(lines) == len(WGMMA) and all("\n" not in line and "skipped on this sm_89 GPU" in line for line in lines)
    assert skipped_for_arch(CONFIG["kernels"], "sm_90") == []


def test_build_target_takes_the_specific_form_of_the_configured_arch_only():
    assert build_target("sm_90", ["-DX=1", "-arch=sm_90a"]) == ("sm_90a", ["-DX=1"])
    assert build_target("sm_89", ["-DX=1"]) == ("sm_89", ["-DX=1"])
    with pytest.raises(AnalysisError, match="another architecture"):
        build_target("sm_89", ["-arch=sm_90a"])


def test_config_check_refuses_a_specific_target_beside_others_and_tma_without_its_tile():
    cfg = copy.deepcopy(CONFIG)
    cfg["kernels"]["fp16_wgmma"]["archs"] = ["sm_90", "sm_90a"]
    with pytest.raises(ConfigError, match="must be the kernel's only one"):
        check_config(cfg, REPO / "kernels")
    cfg = copy.deepcopy(CONFIG)
    cfg["kernels"]["int8_wgmma"]["tiling"]["block_k_bytes"] = 96
    with pytest.raises(ConfigError, match="tma kernels need tiling.block_k_bytes 64 or 128"):
        check_config(cfg, REPO / "kernels")


@pytest.mark.parametrize(("change", "dims", "message"), [
    ({"block_k_bytes": 32}, (512, 512, 512), "K tile must be 64 or 128 bytes"),
    ({}, (512, 384, 512), r"N=384 is not a positive multiple of its tile 256"),
    ({}, (512, 512, 96), r"K=96 is not a positive multiple"),
    ({"block_m": 512}, (512, 512, 512), "the A box has 512 rows; a TMA box has 1 to 256"),
])
def test_tensor_maps_refuse_shapes_they_cannot_describe(change, dims, message):
    t = dataclasses.replace(tiling_from_config(CONFIG, "fp16_wgmma"), **change)
    with pytest.raises(ConfigError, match=message):
        tensor_map_shapes("fp16_wgmma", precision_of("fp16"), t, *dims)


def test_tensor_maps_of_a_good_shape():
    t = tiling_from_config(CONFIG, "int8_wgmma")
    a, b = tensor_map_shapes("int8_wgmma", precision_of("int8"), t, 1024, 512, 2048)
    assert (a.rows, a.row_bytes, a.box_rows, a.box_row_bytes) == (1024, 2048, 128, 128)
    assert (b.rows, b.row_bytes, b.box_rows, b.box_row_bytes) == (512, 2048, 256, 128)
    a16, _ = tensor_map_shapes("fp16_wgmma", precision_of("fp16"), tiling_from_config(CONFIG, "fp16_wgmma"),
                               512, 512, 512)
    assert a16.row_bytes == 1024  # FP16: two bytes per element of K
    a4, b4 = tensor_map_shapes("int4_wgmma_unpack_s8", precision_of("int4"),
                               tiling_from_config(CONFIG, "int4_wgmma_unpack_s8"), 1024, 512, 2048)
    assert (a4.row_bytes, a4.box_rows, a4.box_row_bytes) == (1024, 256, 64)  # two INT4 per byte, 64-byte swizzle
    assert (b4.rows, b4.box_rows, b4.box_row_bytes) == (512, 128, 64)
    # in a cluster of two each CTA copies half of the B tile (and multicasts it)
    ac, bc = tensor_map_shapes("int8_wgmma_cluster", precision_of("int8"),
                               tiling_from_config(CONFIG, "int8_wgmma_cluster"), 1024, 512, 2048)
    assert (ac.box_rows, bc.box_rows) == (128, 128)


def test_cluster_and_persistent_tiling():
    """The cluster's CTAs tile M in pairs (an odd number of block rows is refused), a
    persistent grid is (1, SMs in whole clusters) or the blocks of C where fewer, and
    without the SM count it is refused."""
    t = tiling_from_config(CONFIG, "fp16_wgmma_cluster")
    assert (t.cluster_m, t.persistent) == (2, 1)
    assert t.grid(8192, 8192, sms=132) == (1, 132) and t.grid(8192, 8192, sms=133) == (1, 132)
    assert t.grid(512, 512, sms=132) == (1, 8)  # 4 x 2 blocks of C
    assert t.grid(8192, 8192, sms=1) == (1, 2)  # one cluster at least
    with pytest.raises(ConfigError, match="SM count"):
        t.grid(512, 512)
    t.check_shape("fp16_wgmma_cluster", precision_of("fp16"), 256, 256, 64)
    with pytest.raises(ConfigError, match=r"M=384 is not a positive multiple of its tile 256"):
        t.check_shape("fp16_wgmma_cluster", precision_of("fp16"), 384, 256, 64)
    plain = tiling_from_config(CONFIG, "fp16_wgmma")
    assert plain.grid(512, 512) == (2, 4) and (plain.cluster_m, plain.persistent) == (1, 0)
    assert len(plain.cli().split(",")) == 9 and not any("CLUSTER" in d or "PERSISTENT" in d for d in plain.defines())
    with pytest.raises(ConfigError, match="does not split"):
        tensor_map_shapes("k", precision_of("int8"), dataclasses.replace(t, block_n=255), 512, 510, 512)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The kernels built as the build rule builds them where sm_90 is configured."""
    out = {}
    tmp = tmp_path_factory.mktemp("wgmma")
    for name in WGMMA:
        t = tiling_from_config(CONFIG, name)
        usage = build_kernel(REPO / "kernels" / f"{name}.cu", name, "sm_90", t.defines(), tmp / f"{name}.cubin",
                             tmp / f"{name}.json", tmp / f"{name}.sass", tmp / f"{name}.log")
        out[name] = (usage, (tmp / f"{name}.sass").read_text(), (tmp / f"{name}.log").read_text(),
                     (tmp / f"{name}.cubin").read_bytes())
    return out


@pytest.mark.parametrize("kernel", sorted(WGMMA))
def test_builds_for_sm_90a_without_spills_and_issues_gmma_and_tma(built, kernel):
    """sm_90a, no spills or local memory, the barriers in at most 160 bytes of static shared
    memory, the warpgroup MMA of its precision and the TMA loads (UTMALDG) as SASS_COUNTS
    says, mbarrier waits, setmaxnreg both ways, and no serialised wgmma (ptxas C7511, C7512,
    C7515)."""
    usage, sass, log, _ = built[kernel]
    assert usage.arch == "sm_90a" and "-arch=sm_90a" in log
    assert usage.spill_store_bytes == usage.spill_load_bytes == usage.stack_bytes == 0
    assert 0 < usage.shared_bytes <= 160
    mmas, copies = SASS_COUNTS[kernel]
    assert len(re.findall(WGMMA[kernel], sass)) == mmas
    assert len(re.findall(r"UTMALDG\.2D", sass)) == copies
    assert re.search(r"SYNCS\.PHASECHK\.TRANS64", sass) and re.search(r"USETMAXREG\.DEALLOC", sass)
    assert re.search(r"USETMAXREG\.TRY_ALLOC", sass)
    assert not re.search(r"\b[HI]MMA\.|\bLDL\b|\bSTL\b", sass)
    assert not re.search(r"C751[125]|C7508", log)
    assert_registers_fit_the_pool(sass, usage, tiling_from_config(CONFIG, kernel))
    # in a cluster: B copied by multicast, the cluster barrier at the start and the end, and
    # the releases arrive on both CTAs' barriers (remote arrivals) without a GPU-scope fence
    # in the main loop (two MEMBAR.ALL.GPU: the release of each cluster barrier)
    assert len(re.findall(r"UTMALDG\.2D\.MULTICAST", sass)) == (kernel in CLUSTER)
    assert len(re.findall(r"UCGABAR_ARV", sass)) == 2 * (kernel in CLUSTER)
    assert len(re.findall(r"MEMBAR\.ALL\.GPU", sass)) == 2 * (kernel in CLUSTER)
    # C: FP16 rounded in pairs and stored 16 bytes a lane after two butterfly shuffles per store
    # (the FP16-C kernel); INT32 or FP32 16 bytes a lane after one shuffle pair per store (STORE64
    # of the serpentine kernels: 32 stores of 8 rows x 64 bytes per warp); else FP32/INT32 pairs
    # of 8 bytes
    stores = re.findall(r"\bSTG\.E(?:\.\d+)?\b", sass)
    if kernel == "fp16_wgmma_cluster_f16c":
        assert stores == ["STG.E.128"] * 16
        assert len(re.findall(r"F2FP\.F16\.F32\.PACK_AB", sass)) == 64
        assert len(re.findall(r"SHFL\.BFLY", sass)) == 64
    elif kernel in STORE64:
        assert stores == ["STG.E.128"] * 32 and len(re.findall(r"SHFL\.BFLY", sass)) == 64
    elif kernel in CLUSTER:
        assert stores == ["STG.E.64"] * 64 and not re.search(r"SHFL|F2FP", sass)
    # C through the copy engine (the registered EPI_TMA kernel): 8 UTMASTG per block of C from
    # 64 STS.64 a thread into the slots, no global store, and the C map's global beside A's and B's
    assert len(re.findall(r"UTMASTG\.2D", sass)) == 8 * (kernel in EPI_TMA_REGISTERED)
    if kernel in EPI_TMA_REGISTERED:
        assert stores == [] and len(re.findall(r"\bSTS\.64\b", sass)) == 64
        assert cubin_globals(built[kernel][3]) == {name: TENSOR_MAP_BYTES for name in (*TMA_GLOBALS, C_TMA_GLOBAL)}
    # CONSUMER_LAG: the second consumer warpgroup waits once on named barrier 3 (256 threads), which
    # the first arrives on after its first K tiles or, with none, at its end; no other kernel has it
    assert len(re.findall(r"BAR\.SYNC\.DEFER_BLOCKING 0x3, 0x100", sass)) == (kernel in LAG)
    assert len(re.findall(r"BAR\.ARV 0x3, 0x100", sass)) == 2 * (kernel in LAG)


def test_sm_89_build_is_refused(tmp_path):
    t = tiling_from_config(CONFIG, "fp16_wgmma")
    with pytest.raises(AnalysisError, match="another architecture"):
        build_kernel(REPO / "kernels" / "fp16_wgmma.cu", "fp16_wgmma", "sm_89", t.defines(), tmp_path / "k.cubin",
                     tmp_path / "k.json", tmp_path / "k.sass", tmp_path / "k.log")


def test_globals_hold_the_tensor_maps(built):
    """The cubins define the globals the harness writes the tensor maps into
    (cuModuleGetGlobal by these names: unmangled, in the ELF string table)."""
    for kernel in WGMMA:
        for name in TMA_GLOBALS:
            assert b"\0" + name.encode() + b"\0" in built[kernel][3], (kernel, name)


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", sorted(WGMMA))
def test_correct_at_every_size(tmp_path, kernel):
    """Exact (INT8, INT4) or bounded (FP16) at every configured N, on an sm_90 GPU."""
    from analysis.gpu.build import compile_cubin
    from analysis.gpu.device import detect_gpu
    from analysis.gpu.harness import GemmRunner

    arch = detect_gpu().arch
    if kernel_target(arch, CONFIG["kernels"][kernel]["archs"]) is None:
        pytest.skip(skipped_for_arch({kernel: CONFIG["kernels"][kernel]}, arch)[0])
    t = tiling_from_config(CONFIG, kernel)
    compile_cubin(REPO / "kernels" / f"{kernel}.cu", kernel, arch, t.defines(), tmp_path / "k.cubin",
                  tmp_path / "k.json")
    for n in CONFIG["sizes"]:
        run = GemmRunner(tmp_path / "k.cubin", kernel, CONFIG["kernels"][kernel]["precision"], t, n, n, n, seed=n,
                         **kernel_options(CONFIG["kernels"][kernel]))
        try:
            chk = run.check()
        finally:
            run.close()
        assert chk.passed, (n, chk)


@pytest.mark.parametrize(("text", "message"), [
    ("128,256,128,8,1,4,8,197632,4,0,1", "cluster_m=0 must be 1"),
    ("128,256,128,8,1,4,8,197632,4,3,1", "cluster_m=3 must be 1"),
    ("128,256,128,8,1,4,8,197632,4,2,7", "persistent=7 must be 0 or 1"),
    ("0,256,128,8,1,4", "block_m=0 must be at least 1"),
    ("128,256,0,8,1,4", "block_k_bytes=0 must be at least 1"),
])
def test_a_tiling_no_kernel_can_use_is_refused(text, message):
    with pytest.raises(ConfigError, match=message):
        Tiling.parse(text)


def test_cluster_and_persistent_only_where_a_header_reads_them():
    """A study kernel given cluster_m or persistent is refused before any build: its code would
    not match the launch. Both wgmma headers read both."""
    for kernel, change, message in (
            ("fp16_wmma", {"cluster_m": 2},
             "cluster_m is a build parameter of kernels/wgmma_gemm.cuh and kernels/int4_wgmma.cuh "),
            ("fp16_wmma", {"persistent": 1},
             "persistent is a build parameter of kernels/wgmma_gemm.cuh and kernels/int4_wgmma.cuh ")):
        cfg = copy.deepcopy(CONFIG)
        spec = cfg["kernels"][kernel]
        spec["tiling"] = {**(spec.get("tiling") or {}), **change}
        with pytest.raises(ConfigError, match=rf"kernels.{kernel}.tiling: {message}"):
            check_config(cfg, REPO / "kernels")
    for change in ({"persistent": 1}, {"cluster_m": 2}):
        cfg = copy.deepcopy(CONFIG)
        cfg["kernels"]["int4_wgmma_unpack_s8"]["tiling"].update(change)
        check_config(cfg, REPO / "kernels")


def test_only_a_sources_own_include_lines_count(tmp_path):
    """The header a kernel is built on is read from its #include lines, spaced as the
    preprocessor allows; an include named in a comment does not count."""
    kernels = tmp_path / "kernels"
    shutil.copytree(REPO / "kernels", kernels)
    src = kernels / "int4_wgmma_persistent.cu"
    text = src.read_text()
    src.write_text(text.replace('#include "int4_wgmma.cuh"', '#  include  "int4_wgmma.cuh"'))
    check_config(CONFIG, kernels)
    src.write_text(text.replace('#include "int4_wgmma.cuh"', '// was: #include "int4_wgmma.cuh"\n'
                                                             '#include "int4_wgmma_copy.cuh"'))
    (kernels / "int4_wgmma_copy.cuh").write_text((kernels / "int4_wgmma.cuh").read_text())
    with pytest.raises(ConfigError, match=r"int4_wgmma_persistent.tiling: persistent is a build parameter .* "
                                          r"does not include either"):
        check_config(CONFIG, kernels)
    cfg = copy.deepcopy(CONFIG)
    cfg["kernels"]["int8_wgmma_cluster"]["tiling"]["cluster_m"] = 3
    with pytest.raises(ConfigError, match="kernels.int8_wgmma_cluster: tiling: cluster_m=3"):
        check_config(cfg, REPO / "kernels")


def test_the_persistent_int4_kernel_takes_k_tiles_in_pairs():
    """int4_wgmma_persistent alternates its A registers between two K tiles and has no code
    for an odd count (kernels/int4_wgmma.cuh): K must be a multiple of two K tiles (256 INT4),
    which the one-block-per-CTA build does not need."""
    int4 = precision_of("int4")
    persistent = tiling_from_config(CONFIG, "int4_wgmma_persistent")
    plain = tiling_from_config(CONFIG, "int4_wgmma_unpack_s8")
    with pytest.raises(ConfigError, match=r"K=384 is not a positive multiple of its tile 256 .*K tiles in pairs"):
        persistent.check_shape("int4_wgmma_persistent", int4, 512, 512, 384)
    persistent.check_shape("int4_wgmma_persistent", int4, 512, 512, 512)
    plain.check_shape("int4_wgmma_unpack_s8", int4, 512, 512, 384)
    # the wgmma_gemm.cuh persistent kernels take any count of their 128-byte K tiles
    tiling_from_config(CONFIG, "int8_wgmma_cluster").check_shape("int8_wgmma_cluster", precision_of("int8"),
                                                                 512, 512, 384)


def test_a_tma_kernel_without_smem_bytes_or_with_non_integer_tiling_is_refused():
    """A tma kernel's stages live in dynamic shared memory: smem_bytes 0 would skip the
    build's check of it and launch the kernel with none. A tiling value of 4.0 would reach
    nvcc as -DSTAGES=4.0 (the schema's integer type admits it). Both are refused by the
    config checks, naming the kernel and the field; persistent on a kernel that is not
    tma: true names that cause, not the include."""
    cfg = copy.deepcopy(CONFIG)
    cfg["kernels"]["int4_wgmma_persistent"]["tiling"]["smem_bytes"] = 0
    with pytest.raises(ConfigError, match=r"kernels.int4_wgmma_persistent.tiling: a tma kernel .* smem_bytes"):
        check_config(cfg, REPO / "kernels")
    cfg = copy.deepcopy(CONFIG)
    cfg["kernels"]["int4_wgmma_persistent"]["tiling"]["stages"] = 4.0
    with pytest.raises(ConfigError, match=r"kernels.int4_wgmma_persistent: tiling: stages=4.0 must be an integer"):
        check_config(cfg, REPO / "kernels")
    cfg = copy.deepcopy(CONFIG)
    cfg["kernels"]["int4_wgmma_persistent"]["tma"] = False
    with pytest.raises(ConfigError, match=r"persistent is a build parameter .*; the kernel is not tma: true"):
        check_config(cfg, REPO / "kernels")
    with pytest.raises(ConfigError, match=r"tiling: persistent=True must be an integer"):
        Tiling(persistent=True)


def test_the_fp16_c_cluster_kernel_rounds_in_pairs_and_stores_16_bytes(built, tmp_path):
    """kernels/fp16_wgmma_cluster_f16c.cu (FP16 C; not yet in the registry, whose entry is
    docs/gpu-runs/2026-12-03_registry_f16c/register_f16c.patch) built with fp16_wgmma_cluster's
    tiling: no spills, the same 4 HGMMA per K tile, C rounded in pairs (64 F2FP) and stored in 16
    STG.E.128 after two butterfly shuffles per store, where the FP32-C cluster kernel stores 64
    STG.E.64 and shuffles nothing."""
    t = tiling_from_config(CONFIG, "fp16_wgmma_cluster")
    name = "fp16_wgmma_cluster_f16c"
    usage = build_kernel(REPO / "kernels" / f"{name}.cu", name, "sm_90", t.defines(), tmp_path / "k.cubin",
                         tmp_path / "k.json", tmp_path / "k.sass", tmp_path / "k.log")
    sass = (tmp_path / "k.sass").read_text()
    assert usage.spill_store_bytes == usage.spill_load_bytes == usage.stack_bytes == 0
    assert len(re.findall(WGMMA["fp16_wgmma_cluster"], sass)) == 4
    assert re.findall(r"\bSTG\.E(?:\.\d+)?\b", sass) == ["STG.E.128"] * 16
    assert len(re.findall(r"F2FP\.F16\.F32\.PACK_AB", sass)) == 64 and len(re.findall(r"SHFL\.BFLY", sass)) == 64
    fp32 = built["fp16_wgmma_cluster"][1]
    assert re.findall(r"\bSTG\.E(?:\.\d+)?\b", fp32) == ["STG.E.64"] * 64 and not re.search(r"SHFL|F2FP", fp32)


# C through the copy engine (build parameter EPI_TMA, kernels/c_tma.cuh; not registered, the
# development calls in docs/gpu-runs/2026-12-04_c_tma/): the slots per consumer warpgroup of
# each kernel as measured there, and the shared memory they add (8 KiB a slot, two warpgroups).
EPI_TMA = {"int8_wgmma_cluster": 2, "fp16_wgmma_cluster": 2, "int4_wgmma_persistent": 4}


def epi_tma_tiling(kernel: str) -> Tiling:
    t = tiling_from_config(CONFIG, kernel)
    return dataclasses.replace(t, smem_bytes=t.smem_bytes + 2 * EPI_TMA[kernel] * 8192)


@pytest.mark.parametrize("kernel", sorted(EPI_TMA))
def test_epi_tma_builds_store_c_by_the_copy_engine_only(built, kernel, tmp_path):
    """With EPI_TMA the kernel stores C only through the copy engine: 8 UTMASTG per block of C
    (two warpgroups x 8 boxes of 64 x 32, issued from one unrolled loop), 64 STS.64 per thread
    into the slots, no STG; the main loop as registered (same wgmma and TMA loads), no spills,
    the C map's global beside A's and B's, and the shared memory within the H200's 232448
    bytes per block (beside the static barriers). Without it the registered build has no
    UTMASTG and no such global."""
    t = epi_tma_tiling(kernel)
    usage = build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90", t.defines() + [f"-DEPI_TMA={EPI_TMA[kernel]}"],
                         tmp_path / "k.cubin", tmp_path / "k.json", tmp_path / "k.sass", tmp_path / "k.log")
    sass = (tmp_path / "k.sass").read_text()
    assert usage.spill_store_bytes == usage.spill_load_bytes == usage.stack_bytes == 0
    assert len(re.findall(r"UTMASTG\.2D", sass)) == 8
    assert len(re.findall(r"\bSTS\.64\b", sass)) == 64
    assert not re.search(r"\bSTG\.E", sass)
    mmas, copies = SASS_COUNTS[kernel]
    assert len(re.findall(WGMMA[kernel], sass)) == mmas and len(re.findall(r"UTMALDG\.2D", sass)) == copies
    assert t.smem_bytes + usage.shared_bytes <= 232448
    maps = {name: TENSOR_MAP_BYTES for name in (*TMA_GLOBALS, C_TMA_GLOBAL)}
    assert cubin_globals((tmp_path / "k.cubin").read_bytes()) == maps
    usage0, sass0, _, cubin0 = built[kernel]
    assert "UTMASTG" not in sass0 and b"\0" + C_TMA_GLOBAL.encode() + b"\0" not in cubin0
    # the harness asks the cubin, so that a registered build costs no failing cuModuleGetGlobal
    # (compute-sanitizer memcheck reports one as an error)
    assert cubin_globals(cubin0) == {name: TENSOR_MAP_BYTES for name in TMA_GLOBALS}


def test_cubin_globals_refuses_what_is_not_a_cubin(built, tmp_path):
    """A file that is not an ELF-64 cubin, or one cut short, is refused naming it."""
    with pytest.raises(ConfigError, match="notes.txt: not a 64-bit little-endian ELF"):
        cubin_globals(b"int8_wgmma_cluster\n", "notes.txt")
    cubin = built["int8_wgmma_cluster"][3]
    with pytest.raises(ConfigError, match="cut.cubin: a truncated or malformed ELF symbol table"):
        cubin_globals(cubin[: len(cubin) // 2], "cut.cubin")


def test_epi_tma_slots_must_fit_the_registry_smem_bytes(tmp_path):
    """The kernel lays out its slots in its shared memory: a tiling.smem_bytes that leaves them
    out is refused at build time, naming the kernel."""
    t = tiling_from_config(CONFIG, "int8_wgmma_cluster")
    with pytest.raises(AnalysisError, match="smem_bytes in the registry differs"):
        build_kernel(REPO / "kernels" / "int8_wgmma_cluster.cu", "int8_wgmma_cluster", "sm_90",
                     t.defines() + ["-DEPI_TMA=2"], tmp_path / "k.cubin", tmp_path / "k.json", tmp_path / "k.sass",
                     tmp_path / "k.log")


def test_c_tensor_map_of_4_byte_c_in_whole_boxes():
    t = tiling_from_config(CONFIG, "int8_wgmma_cluster")
    c = c_tensor_map_shape("int8_wgmma_cluster", t, 1024, 512, 4)
    assert (c.rows, c.row_bytes, c.box_rows, c.box_row_bytes) == (1024, 2048, 64, 128)
    with pytest.raises(ConfigError, match="4-byte C"):
        c_tensor_map_shape("fp16_wgmma_cluster_f16c", t, 1024, 512, 2)
    with pytest.raises(ConfigError, match="multiple of 16 bytes"):
        c_tensor_map_shape("k", t, 1024, 514, 4)
    with pytest.raises(ConfigError, match="whole 64 x 32 boxes"):
        c_tensor_map_shape("k", dataclasses.replace(t, block_m=96), 1024, 512, 4)


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", sorted(EPI_TMA))
def test_epi_tma_builds_are_correct_at_every_size(tmp_path, kernel):
    """Built with EPI_TMA, each kernel is exact (INT8, INT4) or bounded (FP16) at every configured
    N on an sm_90 GPU, all of C checked: the harness wrote C's tensor map (the module has its
    global), so every box landed where the fragment's layout says."""
    from analysis.gpu.build import compile_cubin
    from analysis.gpu.device import detect_gpu
    from analysis.gpu.harness import GemmRunner

    arch = detect_gpu().arch
    if kernel_target(arch, CONFIG["kernels"][kernel]["archs"]) is None:
        pytest.skip(skipped_for_arch({kernel: CONFIG["kernels"][kernel]}, arch)[0])
    t = epi_tma_tiling(kernel)
    compile_cubin(REPO / "kernels" / f"{kernel}.cu", kernel, arch, t.defines() + [f"-DEPI_TMA={EPI_TMA[kernel]}"],
                  tmp_path / "k.cubin", tmp_path / "k.json")
    for n in CONFIG["sizes"]:
        run = GemmRunner(tmp_path / "k.cubin", kernel, CONFIG["kernels"][kernel]["precision"], t, n, n, n, seed=n,
                         **kernel_options(CONFIG["kernels"][kernel]))
        try:
            assert run.c_tensor_map
            chk = run.check()
        finally:
            run.close()
        assert chk.passed, (n, chk)


# The INT4 producer's unpacking in groups of K tiles (build parameters UNPACK_GROUP,
# UNPACK_EARLY, UNPACK_BASE_ADDR of kernels/int4_wgmma.cuh; not registered: the development call
# in docs/gpu-runs/2026-12-05_int4_unpack/).
UNPACK = {"base": ["-DUNPACK_BASE_ADDR=1"], "g2": ["-DUNPACK_GROUP=2", "-DUNPACK_BASE_ADDR=1"],
          "g2e": ["-DUNPACK_GROUP=2", "-DUNPACK_BASE_ADDR=1", "-DUNPACK_EARLY=1"]}


def test_unpack_groups_read_both_tiles_before_writing(built, tmp_path):
    """Off, the parameters leave int4_wgmma_persistent as registered (the same SASS as the
    registry's build). In groups of two the producer's loop reads both tiles' packed B (8
    LDS.128 a thread, 4 a tile) before its 16 STS.128, fences once a group (once a tile with
    UNPACK_EARLY: one FENCE.VIEW.ASYNC.S more than the group's), and nothing spills within the
    producer's 56 registers; the consumers' wgmma are those of the registered build, and the
    loop's copies are unrolled once per tile of the group (A and B: 2 before the loop and 2 or 4
    in it)."""
    kernel = "int4_wgmma_persistent"
    t = tiling_from_config(CONFIG, kernel)
    registered = built[kernel][1]
    sass = {}
    for tag, defines in {"off": ["-DUNPACK_GROUP=1", "-DUNPACK_EARLY=0", "-DUNPACK_BASE_ADDR=0"], **UNPACK}.items():
        usage = build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90", t.defines() + defines,
                             tmp_path / f"{tag}.cubin", tmp_path / f"{tag}.json", tmp_path / f"{tag}.sass",
                             tmp_path / f"{tag}.log")
        assert usage.spill_store_bytes == usage.spill_load_bytes == usage.stack_bytes == 0, tag
        sass[tag] = (tmp_path / f"{tag}.sass").read_text()
        mmas, copies = SASS_COUNTS[kernel]
        assert len(re.findall(WGMMA[kernel], sass[tag])) == mmas, tag
        assert len(re.findall(r"UTMALDG\.2D", sass[tag])) == copies + (2 if tag.startswith("g2") else 0), tag
    assert sass["off"] == registered
    count = {tag: (len(re.findall(r"\bLDS\.128\b", s)), len(re.findall(r"\bSTS\.128\b", s)),
                   len(re.findall(r"FENCE\.VIEW\.ASYNC\.S", s))) for tag, s in sass.items()}
    assert count["off"][:2] == count["base"][:2] == (4, 8)
    assert count["g2"][:2] == count["g2e"][:2] == (8, 16)
    for tag in ("g2", "g2e"):  # every load of the group before its first store
        loads = [m.start() for m in re.finditer(r"\bLDS\.128\b", sass[tag])]
        stores = [m.start() for m in re.finditer(r"\bSTS\.128\b", sass[tag])]
        assert max(loads) < min(stores), tag
    assert count["g2e"][2] == count["g2"][2] + 1 == count["off"][2] + 1


def test_unpack_groups_need_the_persistent_build(tmp_path):
    """A group of two K tiles shares one mbarrier phase only where every tile count is even (the
    persistent build) and the stages are even: the one-block-per-CTA kernel refuses
    UNPACK_GROUP=2 at compile time, naming the parameter, and UNPACK_EARLY needs a group."""
    t = tiling_from_config(CONFIG, "int4_wgmma_unpack_s8")
    for defines, message in ((["-DUNPACK_GROUP=2"], "UNPACK_GROUP 2: persistent"),
                             (["-DUNPACK_EARLY=1"], "UNPACK_EARLY needs UNPACK_GROUP 2")):
        with pytest.raises(AnalysisError):
            build_kernel(REPO / "kernels" / "int4_wgmma_unpack_s8.cu", "int4_wgmma_unpack_s8", "sm_90",
                         t.defines() + defines, tmp_path / "k.cubin", tmp_path / "k.json", tmp_path / "k.sass",
                         tmp_path / "k.log")
        assert message in (tmp_path / "k.log").read_text()


def packed_ring_tiling(t: Tiling, packed: int, slots: int = 0, stages: int | None = None) -> Tiling:
    """``t`` with ``packed`` packed stages beside its INT8 B stages (PACKED_STAGES of
    kernels/int4_wgmma.cuh; ``stages`` INT8 B stages, default ``t``'s): the shared memory that
    layout takes, with ``slots`` C slots per consumer warpgroup (EPI_TMA, 8 KiB each)."""
    t = dataclasses.replace(t, stages=stages or t.stages)
    smem = (t.stages * t.block_n * 2 * t.block_k_bytes + packed * (t.block_m + t.block_n) * t.block_k_bytes
            + 1024 + 2 * slots * 8192)
    return dataclasses.replace(t, smem_bytes=smem)


def serialized_by_ptxas(sass: str, log: str, kernel: str) -> bool:
    """Whether ptxas serialized a build's wgmma, as its advisories in the build ``log`` say
    (:func:`analysis.gpu.build.wgmma_serialized`; C7512 for these builds, "wgmma.mma_async
    instructions are serialized due to insufficient register resources"), which the SASS shows as
    a `WARPGROUP.DEPBAR.LE gsb0, 0x0` after every wgmma and no wait that leaves one group in flight
    (``0x1``). Raises AssertionError where the log and the SASS disagree."""
    in_log = wgmma_serialized(ptxas_advisories(log, kernel))
    waits = re.findall(r"WARPGROUP\.DEPBAR\.LE gsb0, 0x(\d)", sass)
    in_sass = "1" not in waits and len(waits) >= len(re.findall(r"\b[HI]GMMA\.", sass))
    assert in_log == in_sass, (in_log, waits)
    return in_log


def assert_registers_fit_the_pool(sass: str, usage, tiling: Tiling) -> None:
    """The registers a build's warpgroups ask for after setmaxnreg (the producer threads at its
    `USETMAXREG.DEALLOC`, the others at its `USETMAXREG.TRY_ALLOC`) fit the CTA's pool at launch,
    threads x the registers ptxas gave each thread at entry: a `setmaxnreg.inc` beyond it never
    returns, and the kernel hangs (PTX ISA, "setmaxnreg")."""
    alloc = re.findall(r"USETMAXREG\.TRY_ALLOC\.CTAPOOL \w+, (0x\w+)", sass)
    dealloc = re.findall(r"USETMAXREG\.DEALLOC\.CTAPOOL (0x\w+)", sass)
    assert len(alloc) == len(dealloc) == 1, (alloc, dealloc)
    producers = tiling.producer_warps * 32
    asked = producers * int(dealloc[0], 16) + (tiling.threads - producers) * int(alloc[0], 16)
    assert asked <= tiling.threads * usage.registers, (asked, tiling.threads * usage.registers)


def build_variant(tmp_path: Path, tag: str, tiling: Tiling, defines: list[str],
                       kernel: str = "int4_wgmma_persistent", serialized: bool = False):
    """Build ``kernel`` (default int4_wgmma_persistent) with ``tiling`` and extra ``defines`` for
    sm_90 into ``tmp_path``; assert that nothing spills, that its wgmma and TMA copies are the
    registered build's (SASS_COUNTS), and that ptxas serialized its wgmma only where
    ``serialized`` says so (:func:`serialized_by_ptxas`). Returns its resource usage and SASS text."""
    usage = build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90", tiling.defines() + defines,
                         tmp_path / f"{tag}.cubin", tmp_path / f"{tag}.json", tmp_path / f"{tag}.sass",
                         tmp_path / f"{tag}.log")
    sass = (tmp_path / f"{tag}.sass").read_text()
    mmas, copies = SASS_COUNTS[kernel]
    assert usage.spill_store_bytes == usage.spill_load_bytes == usage.stack_bytes == 0, tag
    assert len(re.findall(WGMMA[kernel], sass)) == mmas and len(re.findall(r"UTMALDG\.2D", sass)) == copies, tag
    assert serialized_by_ptxas(sass, (tmp_path / f"{tag}.log").read_text(), kernel) == serialized, tag
    assert_registers_fit_the_pool(sass, usage, tiling)
    return usage, sass


def assert_refused(tmp_path: Path, kernel: str, tiling: Tiling, refused: list[str], message: str) -> None:
    """``kernel`` with ``tiling`` and the defines ``refused`` fails to build (AnalysisError) with
    ``message`` in the build log (the static_assert that refuses them)."""
    with pytest.raises(AnalysisError):
        build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90", tiling.defines() + refused,
                     tmp_path / "k.cubin", tmp_path / "k.json", tmp_path / "k.sass", tmp_path / "k.log")
    assert message in (tmp_path / "k.log").read_text()


def assert_off_is_registered(tmp_path: Path, kernel: str, tiling: Tiling, registered: str, off: str) -> None:
    """A development build parameter set to its off value (``off``, one define) gives ``kernel``'s
    registered SASS byte for byte."""
    build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90", tiling.defines() + [off],
                 tmp_path / "off.cubin", tmp_path / "off.json", tmp_path / "off.sass", tmp_path / "off.log")
    assert (tmp_path / "off.sass").read_text() == registered


def assert_off_is_registered_and_refused(tmp_path: Path, kernel: str, tiling: Tiling, registered: str, off: str,
                                         refused: list[str], message: str) -> None:
    """:func:`assert_off_is_registered`, and ``refused`` (defines the parameter cannot be combined
    with) is refused (:func:`assert_refused`)."""
    assert_off_is_registered(tmp_path, kernel, tiling, registered, off)
    assert_refused(tmp_path, kernel, tiling, refused, message)


def test_packed_ring_deeper_than_the_int8_b_ring(built, tmp_path):
    """PACKED_STAGES equal to the stages is the registered layout (the same SASS as the registry's
    build). With 5 or 6 packed stages beside the 4 INT8 B stages the kernel lays out exactly the
    shared memory computed above (the launcher's static_assert against tiling.smem_bytes), keeps
    the registered kernel's wgmma and copies, and spills nothing with UNPACK_BASE_ADDR; within the
    H200's 232448 bytes per block with C slots too (5 packed stages, EPI_TMA=2). Groups of K
    tiles are refused with a ring of its own, at compile time."""
    kernel = "int4_wgmma_persistent"
    t = tiling_from_config(CONFIG, kernel)
    cases = {"same": (t, ["-DPACKED_STAGES=4"]),
             "p5": (packed_ring_tiling(t, 5), ["-DPACKED_STAGES=5", "-DUNPACK_BASE_ADDR=1"]),
             "p6": (packed_ring_tiling(t, 6), ["-DPACKED_STAGES=6", "-DUNPACK_BASE_ADDR=1"]),
             "p5_tma2": (packed_ring_tiling(t, 5, 2), ["-DPACKED_STAGES=5", "-DUNPACK_BASE_ADDR=1", "-DEPI_TMA=2"])}
    for tag, (tiling, defines) in cases.items():
        usage, sass = build_variant(tmp_path, tag, tiling, defines)
        assert tiling.smem_bytes + usage.shared_bytes <= 232448, tag
        if tag == "same":
            assert sass == built[kernel][1]
    with pytest.raises(AnalysisError):
        build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90",
                     packed_ring_tiling(t, 6).defines() + ["-DPACKED_STAGES=6", "-DUNPACK_GROUP=2", "-DUNPACK_BASE_ADDR=1"],
                     tmp_path / "k.cubin", tmp_path / "k.json", tmp_path / "k.sass", tmp_path / "k.log")
    assert "PACKED_STAGES other than STAGES: one K tile at a time" in (tmp_path / "k.log").read_text()
    # the launcher refuses a registry smem_bytes that is not the layout's
    with pytest.raises(AnalysisError):
        build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90", t.defines() + ["-DPACKED_STAGES=6"],
                     tmp_path / "k.cubin", tmp_path / "k.json", tmp_path / "k.sass", tmp_path / "k.log")
    assert "tiling.smem_bytes in the registry differs" in (tmp_path / "k.log").read_text()


def test_a_deeper_int8_b_ring_and_loads_before_the_wait(built, tmp_path):
    """SPLIT_RINGS=1 lays the registered 4 + 4 stages out as a packed ring of its own would be
    (the same shared memory); STAGES=6 with PACKED_STAGES=4 gives the INT8 B tiles a ring of 6
    beside 4 packed stages (with C slots too, within the H200's 232448 bytes a block);
    UNPACK_LOAD_FIRST=1 moves the producer's four LDS.128 of packed B before its wait for a free
    INT8 B stage (a SYNCS try-wait between the loads and the first STS.128), where the registered
    build loads after both waits. Off, both leave the registered SASS as it is; nothing spills;
    the loads first with groups of K tiles are refused at compile time."""
    kernel = "int4_wgmma_persistent"
    t = tiling_from_config(CONFIG, kernel)
    b1 = ["-DUNPACK_BASE_ADDR=1"]
    cases = {"off": (t, ["-DSPLIT_RINGS=0", "-DUNPACK_LOAD_FIRST=0"]),
             "lf": (t, ["-DUNPACK_LOAD_FIRST=1"]),
             "split": (packed_ring_tiling(t, 4), b1 + ["-DSPLIT_RINGS=1", "-DPACKED_STAGES=4"]),
             "s6p4": (packed_ring_tiling(t, 4, stages=6), b1 + ["-DPACKED_STAGES=4"]),
             "s6p4_lf_tma2": (packed_ring_tiling(t, 4, 2, stages=6),
                              b1 + ["-DPACKED_STAGES=4", "-DEPI_TMA=2", "-DUNPACK_LOAD_FIRST=1"])}
    sass_of = {}
    for tag, (tiling, defines) in cases.items():
        usage, sass_of[tag] = build_variant(tmp_path, tag, tiling, defines)
        assert tiling.smem_bytes + usage.shared_bytes <= 232448, tag
    assert sass_of["off"] == built[kernel][1]
    assert packed_ring_tiling(t, 4).smem_bytes == t.smem_bytes

    def waits_between_loads_and_stores(sass: str) -> int:
        lines = sass.splitlines()
        first_lds = next(i for i, line in enumerate(lines) if re.search(r"\bLDS\.128\b", line))
        first_sts = next(i for i, line in enumerate(lines) if re.search(r"\bSTS\.128\b", line))
        return sum("TRYWAIT" in line for line in lines[first_lds:first_sts])

    assert waits_between_loads_and_stores(built[kernel][1]) == 0
    assert waits_between_loads_and_stores(sass_of["lf"]) == waits_between_loads_and_stores(sass_of["s6p4_lf_tma2"]) == 1
    with pytest.raises(AnalysisError):
        build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90",
                     t.defines() + ["-DUNPACK_LOAD_FIRST=1", "-DUNPACK_GROUP=2"],
                     tmp_path / "k.cubin", tmp_path / "k.json", tmp_path / "k.sass", tmp_path / "k.log")
    assert "UNPACK_LOAD_FIRST: one K tile at a time" in (tmp_path / "k.log").read_text()


def test_the_interleaved_layout_s_tiles_can_be_moved(built, tmp_path):
    """LAYOUT_ROTATE=r puts stage s's INT8 B tile in slot (s + r) % 4 and LAYOUT_B8_LAST=1 puts it
    after its slot's packed tiles: the same shared memory, wgmma and copies, no spill; at 0 both
    leave the registered SASS as it is; the split layout refuses them at compile time."""
    kernel = "int4_wgmma_persistent"
    t = tiling_from_config(CONFIG, kernel)
    sass_of = {}
    for tag, defines in {"off": ["-DLAYOUT_ROTATE=0", "-DLAYOUT_B8_LAST=0"], "r2": ["-DLAYOUT_ROTATE=2"],
                         "last": ["-DLAYOUT_B8_LAST=1"], "last_r3": ["-DLAYOUT_B8_LAST=1", "-DLAYOUT_ROTATE=3"]}.items():
        _, sass_of[tag] = build_variant(tmp_path, tag, t, defines)
    assert sass_of["off"] == built[kernel][1]
    assert len({sass_of[k] for k in ("off", "r2", "last", "last_r3")}) == 4  # each moves something
    with pytest.raises(AnalysisError):
        build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90",
                     packed_ring_tiling(t, 4).defines() + ["-DSPLIT_RINGS=1", "-DLAYOUT_ROTATE=1",
                                                           "-DUNPACK_BASE_ADDR=1"],
                     tmp_path / "k.cubin", tmp_path / "k.json", tmp_path / "k.sass", tmp_path / "k.log")
    assert "the interleaved layout only" in (tmp_path / "k.log").read_text()


# Whole layouts moved (LAYOUT_PAD, LAYOUT_OFFSET, LAYOUT_EPI_FIRST of kernels/int4_wgmma.cuh;
# STAGE_PAD, LAYOUT_OFFSET of kernels/wgmma_gemm.cuh; not registered: the development call in
# docs/gpu-runs/2026-12-06_layout_pad/): tag -> (kernel, defines, EPI_TMA slots, bytes added).
MOVED_LAYOUTS = {
    "i4_tma2_pad8": ("int4_wgmma_persistent", ["-DEPI_TMA=2", "-DLAYOUT_PAD=8192"], 2, 4 * 8192),
    "i4_tma2_off32": ("int4_wgmma_persistent", ["-DEPI_TMA=2", "-DLAYOUT_OFFSET=32768"], 2, 32768),
    "i4_tma4_epi1st": ("int4_wgmma_persistent", ["-DEPI_TMA=4", "-DLAYOUT_EPI_FIRST=1"], 4, 0),
    "i8_pad8": ("int8_wgmma_serpentine", ["-DSTAGE_PAD=8192"], 0, 4 * 8192),
    "i8_off32": ("int8_wgmma_serpentine", ["-DLAYOUT_OFFSET=32768"], 0, 32768),
}


def moved_layout_tiling(tag: str) -> Tiling:
    """The registry's tiling of MOVED_LAYOUTS[tag]'s kernel with the shared memory that layout
    takes: the registered bytes + the bytes it adds + its C slots (8 KiB each, two consumer
    warpgroups)."""
    kernel, _, slots, added = MOVED_LAYOUTS[tag]
    t = tiling_from_config(CONFIG, kernel)
    return dataclasses.replace(t, smem_bytes=t.smem_bytes + added + 2 * slots * 8192)


def test_whole_layouts_can_be_moved(built, tmp_path):
    """Empty bytes after each stage, before the first, or the C slots first: the kernel lays out
    exactly the shared memory computed above (the launcher's static_assert), within the H200's
    232448 bytes a block, with the registered build's wgmma and copies and no spill, and each
    build differs from the registered one; at 0 the parameters leave the registered SASS as it
    is. Pads that break the swizzles' 1024-byte alignment are refused at compile time."""
    for kernel, defines in {"int4_wgmma_persistent": ["-DLAYOUT_PAD=0", "-DLAYOUT_OFFSET=0", "-DLAYOUT_EPI_FIRST=0"],
                            "int8_wgmma_serpentine": ["-DSTAGE_PAD=0", "-DLAYOUT_OFFSET=0"]}.items():
        t = tiling_from_config(CONFIG, kernel)
        build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90", t.defines() + defines,
                     tmp_path / "k.cubin", tmp_path / "k.json", tmp_path / "k.sass", tmp_path / "k.log")
        assert (tmp_path / "k.sass").read_text() == built[kernel][1], kernel
    for tag, (kernel, defines, _, _) in MOVED_LAYOUTS.items():
        t = moved_layout_tiling(tag)
        usage, sass = build_variant(tmp_path, tag, t, defines, kernel)
        assert t.smem_bytes + usage.shared_bytes <= 232448, tag
        assert sass != built[kernel][1], tag
    for kernel, define in (("int4_wgmma_persistent", "-DLAYOUT_PAD=512"), ("int8_wgmma_serpentine", "-DSTAGE_PAD=512")):
        t = tiling_from_config(CONFIG, kernel)
        t = dataclasses.replace(t, smem_bytes=t.smem_bytes + 4 * 512)
        with pytest.raises(AnalysisError):
            build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90", t.defines() + [define],
                         tmp_path / "k.cubin", tmp_path / "k.json", tmp_path / "k.sass", tmp_path / "k.log")
        assert "multiples of 1024 bytes" in (tmp_path / "k.log").read_text(), kernel


def assert_exact_at_every_size(cubin: Path, kernel: str, tiling: Tiling) -> None:
    """On the sm_90 GPU: ``cubin`` (a build of registered ``kernel`` with ``tiling``) is exact at
    every configured N, all of C checked, and on 2 CTAs at N = 1024 (16 blocks each of 256 x
    128: every ring wraps several times within a CTA, and blocks change under the prefetches)."""
    from analysis.gpu.harness import GemmRunner

    for n, ctas in [(n, None) for n in CONFIG["sizes"]] + [(1024, 2)]:
        run = GemmRunner(cubin, kernel, CONFIG["kernels"][kernel]["precision"], tiling, n, n, n, seed=n,
                         **kernel_options(CONFIG["kernels"][kernel]))
        try:
            if ctas:
                run.sms = ctas  # the persistent grid's CTA count (Tiling.grid)
            chk = run.check()
        finally:
            run.close()
        assert chk.passed, (n, ctas, chk)


def assert_build_exact_at_every_size(tmp_path: Path, kernel: str, tiling: Tiling, defines: list[str]) -> None:
    """On the sm_90 GPU: ``kernel`` built with ``tiling`` and the extra ``defines`` passes
    :func:`assert_exact_at_every_size`; skipped where the GPU's architecture is not one the
    registry lists for it."""
    from analysis.gpu.build import compile_cubin
    from analysis.gpu.device import detect_gpu

    arch = detect_gpu().arch
    if kernel_target(arch, CONFIG["kernels"][kernel]["archs"]) is None:
        pytest.skip(skipped_for_arch({kernel: CONFIG["kernels"][kernel]}, arch)[0])
    compile_cubin(REPO / "kernels" / f"{kernel}.cu", kernel, arch, tiling.defines() + defines, tmp_path / "k.cubin",
                  tmp_path / "k.json")
    assert_exact_at_every_size(tmp_path / "k.cubin", kernel, tiling)


@pytest.mark.gpu
@pytest.mark.parametrize("tag", sorted(MOVED_LAYOUTS))
def test_moved_layouts_are_correct_at_every_size(tmp_path, tag):
    """With its stages moved as a whole, each kernel is exact at every configured N on an sm_90
    GPU, all of C checked, and on 2 CTAs at N = 1024 (16 blocks each: the ring wraps several
    times within a CTA)."""
    kernel, defines, _, _ = MOVED_LAYOUTS[tag]
    assert_build_exact_at_every_size(tmp_path, kernel, moved_layout_tiling(tag), defines)


def test_two_producer_warpgroups(built, tmp_path):
    """PRODUCER_WARPS=8 gives the INT4 kernel two producer warpgroups (512 threads, 128
    registers a thread at entry): each producer thread unpacks 2 packed chunks a K tile (2
    LDS.128, 4 STS.128) instead of 4, the registers move as 256 x 40 + 256 x 216, nothing spills
    (with C through the copy engine, and with a packed ring of its own, too), and the consumers'
    wgmma and the copies are the registered build's, but serialized: with 216 registers a consumer
    thread ptxas waits for every wgmma before the next (C7512), which is what the measurements of
    2026-12-05 timed; only with a packed ring of its own (w8_p6) does ptxas keep them asynchronous.
    Other producer counts are refused at compile time."""
    kernel = "int4_wgmma_persistent"
    t = dataclasses.replace(tiling_from_config(CONFIG, kernel), producer_warps=8)
    assert t.threads == 512
    cases = {"w8": (t, []), "w8_b1": (t, ["-DUNPACK_BASE_ADDR=1"]),
             "w8_tma4": (dataclasses.replace(t, smem_bytes=t.smem_bytes + 2 * 4 * 8192), ["-DEPI_TMA=4"]),
             "w8_p6": (packed_ring_tiling(t, 6), ["-DPACKED_STAGES=6", "-DUNPACK_BASE_ADDR=1"])}
    for tag, (tiling, defines) in cases.items():
        usage, sass = build_variant(tmp_path, tag, tiling, defines, serialized=tag != "w8_p6")
        assert usage.registers == 128, tag
        assert (len(re.findall(r"\bLDS\.128\b", sass)), len(re.findall(r"\bSTS\.128\b", sass))) == (2, 4), tag
        assert re.findall(r"USETMAXREG\.(\w+)\.CTAPOOL \w*,? ?(0x\w+)", sass) == [("TRY_ALLOC", "0xd8"), ("DEALLOC", "0x28")], tag
    with pytest.raises(AnalysisError):
        build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90",
                     dataclasses.replace(t, producer_warps=12).defines(), tmp_path / "k.cubin", tmp_path / "k.json",
                     tmp_path / "k.sass", tmp_path / "k.log")
    assert "one or two producer warpgroups" in (tmp_path / "k.log").read_text()


@pytest.mark.gpu
@pytest.mark.parametrize("packed, slots, producer_warps, stages, extra", [
    (6, 0, 4, 4, ""), (5, 2, 4, 4, ""), (4, 0, 8, 4, ""), (4, 4, 8, 4, ""), (6, 0, 8, 4, ""),
    (4, 0, 4, 4, "-DSPLIT_RINGS=1"), (4, 2, 4, 6, "-DUNPACK_LOAD_FIRST=1"), (4, 4, 4, 4, "-DUNPACK_LOAD_FIRST=1"),
    (4, 4, 4, 4, "-DLAYOUT_ROTATE=2"), (4, 4, 4, 4, "-DLAYOUT_B8_LAST=1")])
def test_packed_ring_builds_are_correct_at_every_size(tmp_path, packed, slots, producer_warps, stages, extra):
    """With a packed ring of its own (PACKED_STAGES; C through the copy engine for 5 stages), its
    layout alone (SPLIT_RINGS), a deeper INT8 B ring (6 stages beside 4 packed), the producer's
    loads before its wait for a free stage (UNPACK_LOAD_FIRST), the interleaved layout's tiles
    moved (LAYOUT_ROTATE, LAYOUT_B8_LAST), or two producer warpgroups
    (PRODUCER_WARPS=8), the INT4 kernel is exact at every configured N on an sm_90 GPU, all of C
    checked, and on 2 CTAs at N = 1024 (16 blocks each: both rings wrap several times within a
    CTA)."""
    kernel = "int4_wgmma_persistent"
    t = packed_ring_tiling(dataclasses.replace(tiling_from_config(CONFIG, kernel), producer_warps=producer_warps),
                           packed, slots, stages)
    assert_build_exact_at_every_size(tmp_path, kernel, t, [f"-DPACKED_STAGES={packed}", "-DUNPACK_BASE_ADDR=1",
                                                           f"-DEPI_TMA={slots}"] + ([extra] if extra else []))


def test_l2_policies_mark_only_the_chosen_operand(built, tmp_path):
    """L2_POLICY_A / L2_POLICY_B (kernels/wgmma_gemm.cuh) put an L2 cache policy on one operand's
    TMA copies: in the SASS the policy is the copy's `desc[...]` operand. No registered kernel
    carries one; with L2_POLICY_B=1 only the B copy (multicast in the cluster kernels) does, with
    L2_POLICY_A=2 only the A copy, with both each; the wgmma, registers and the absence of spills
    stay those of the registered build. A policy other than 0-2 is refused at compile time."""
    for name in WGMMA:
        if name.startswith("int4"):
            continue
        copies = re.findall(r"UTMALDG\.2D[^;]*;", built[name][1])
        assert copies and not any("desc[" in c for c in copies), name
    kernel = "int8_wgmma_serpentine"
    t = tiling_from_config(CONFIG, kernel)
    hinted = {}
    for tag, defines in {"b_first": ["-DL2_POLICY_B=1"], "a_last": ["-DL2_POLICY_A=2"],
                         "both": ["-DL2_POLICY_A=2", "-DL2_POLICY_B=1"]}.items():
        usage = build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90", t.defines() + defines,
                             tmp_path / f"{tag}.cubin", tmp_path / f"{tag}.json", tmp_path / f"{tag}.sass",
                             tmp_path / f"{tag}.log")
        sass = (tmp_path / f"{tag}.sass").read_text()
        assert usage.spill_store_bytes == usage.spill_load_bytes == 0 and usage.registers == built[kernel][0].registers
        assert len(re.findall(WGMMA[kernel], sass)) == SASS_COUNTS[kernel][0], tag
        # the serpentine kernel's copies: A unicast, its part of B multicast to the cluster
        hinted[tag] = sorted(("B" if m.group(1) else "A", "desc[" in m.group(0))
                             for m in re.finditer(r"UTMALDG\.2D(\.MULTICAST)?[^;]*;", sass))
    assert hinted == {"b_first": [("A", False), ("B", True)], "a_last": [("A", True), ("B", False)],
                      "both": [("A", True), ("B", True)]}
    with pytest.raises(AnalysisError):
        build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90", t.defines() + ["-DL2_POLICY_B=3"],
                     tmp_path / "k.cubin", tmp_path / "k.json", tmp_path / "k.sass", tmp_path / "k.log")
    assert "L2_POLICY_A, L2_POLICY_B: 0 (no hint)" in (tmp_path / "k.log").read_text()


def test_packed_b_read_from_global_memory(built, tmp_path):
    """B_GLOBAL=D makes the INT4 producer read its packed B chunks from global memory, D K tiles
    ahead, into a ring of registers (LDG.E.NA.128.CONSTANT: 4 a K tile, D x 4 before the loop
    and D x 4 in the loop, unrolled D times) instead of TMA and LDS.128: no LDS.128 is left, the
    copy engine brings packed A alone (one UTMALDG.2D per copy site: the first copies and one per
    unrolled tile), and each unrolled tile writes its 8 STS.128 of INT8 B. The consumers' 16
    wgmma stay; the registers move as 128 x 56 + 256 x 224 with D = 1 (the producer spills a few
    words), 80 + 208 with D = 2 and 96 + 200 with D = 3 (nothing spills), within the CTA's pool at
    launch. With D = 1 the wgmma stay asynchronous (one
    `WARPGROUP.DEPBAR.LE gsb0, 0x1` a K tile); with D = 2 or 3 the consumers' 208 or 200 registers
    are too few and ptxas serializes every wgmma (C7512), as in the builds measured on 2026-12-06.
    Off, the registered builds are unchanged; B_GLOBAL with groups of K tiles is refused at
    compile time."""
    kernel = "int4_wgmma_epi_tma"
    t = tiling_from_config(CONFIG, kernel)
    for d in (1, 2, 3):
        usage = build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90", t.defines() + [f"-DB_GLOBAL={d}"],
                             tmp_path / f"g{d}.cubin", tmp_path / f"g{d}.json", tmp_path / f"g{d}.sass",
                             tmp_path / f"g{d}.log")
        sass = (tmp_path / f"g{d}.sass").read_text()
        # D = 1: the producer's 56 registers hold all but a few words (16 bytes of stack)
        assert usage.stack_bytes == (16 if d == 1 else 0) and usage.spill_store_bytes <= 32 * (d == 1), d
        assert_registers_fit_the_pool(sass, usage, t)
        assert len(re.findall(r"LDG\.E\.NA\.128\.CONSTANT", sass)) == 8 * d, d
        assert not re.search(r"\bLDS\.128\b", sass), d
        assert len(re.findall(r"UTMALDG\.2D", sass)) == 1 + d, d
        assert len(re.findall(r"\bSTS\.128\b", sass)) == 8 * d, d
        assert len(re.findall(WGMMA[kernel], sass)) == SASS_COUNTS[kernel][0], d
        assert serialized_by_ptxas(sass, (tmp_path / f"g{d}.log").read_text(), kernel) == (d > 1), d
    registered = built[kernel][1]
    assert not re.search(r"\bLDG\.", registered) and len(re.findall(r"\bLDS\.128\b", registered)) == 4
    assert_off_is_registered_and_refused(tmp_path, kernel, t, registered, "-DB_GLOBAL=0", ["-DB_GLOBAL=2", "-DUNPACK_GROUP=2"],
                                         "B_GLOBAL (1 .. 3 K tiles ahead): one K tile at a time")


def test_tile_clocks_record_only_where_asked(built, tmp_path):
    """TILE_CLOCKS=1 (a development build) reads the SM clock at three points of each K tile in
    each producer warp and each consumer warpgroup: 3 reads in the producer's loop and 3 in each of
    the consumers' two unrolled K tiles (9 S2R SR_CLOCKLO), each stored to the array the host reads
    back (int4_tile_clocks, a global of the cubin); the 16 wgmma stay. Off, the registered build's
    SASS is unchanged and holds no clock read."""
    kernel = "int4_wgmma_epi_tma"
    t = tiling_from_config(CONFIG, kernel)
    usage = build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90", t.defines() + ["-DTILE_CLOCKS=1"],
                         tmp_path / "on.cubin", tmp_path / "on.json", tmp_path / "on.sass", tmp_path / "on.log")
    assert usage.stack_bytes <= 8 and usage.spill_store_bytes <= 8  # one value, the CTA's block count
    sass = (tmp_path / "on.sass").read_text()
    assert len(re.findall(r"SR_CLOCKLO", sass)) == 9
    assert len(re.findall(WGMMA[kernel], sass)) == SASS_COUNTS[kernel][0]
    assert b"int4_tile_clocks" in (tmp_path / "on.cubin").read_bytes()
    registered = built[kernel][1]
    assert "SR_CLOCK" not in registered
    # its rows are one producer and two consumer warpgroups'
    assert_off_is_registered_and_refused(tmp_path, kernel, t, registered, "-DTILE_CLOCKS=0",
                                         ["-DTILE_CLOCKS=1", "-DPRODUCER_WARPS=8"], "TILE_CLOCKS: the persistent build")


def test_the_producer_warps_can_take_turns_issuing_the_copies(built, tmp_path):
    """COPY_ROTATE=1: the packed tiles' copies are issued by lane 0 of each producer warp in turn
    (the copy of packed tile j by warp j % 4): the SASS differs from the registered one but keeps its
    16 wgmma and its TMA copies, with no spill or stack; off, the registered SASS is unchanged; with
    B_GLOBAL (no packed B copy) it is refused."""
    kernel = "int4_wgmma_epi_tma"
    t = tiling_from_config(CONFIG, kernel)
    _, sass = build_variant(tmp_path, "on", t, ["-DCOPY_ROTATE=1"], kernel)
    registered = built[kernel][1]
    assert sass != registered
    assert_off_is_registered_and_refused(tmp_path, kernel, t, registered, "-DCOPY_ROTATE=0", ["-DCOPY_ROTATE=1", "-DB_GLOBAL=2"],
                                         "COPY_ROTATE: one K tile at a time")


def test_tile_clocks_in_shared_memory_fit_beside_the_stages(built, tmp_path):
    """TILE_CLOCKS=2 keeps the same 9 clock reads in a static shared array (24 K tiles x 6 rows x 3
    events of 4 bytes beside the barriers) and copies it to int4_tile_clocks at each role's end:
    no stack, and static plus the registry's dynamic shared memory within the 227 KiB a block of
    sm_90 may use (CUDA C++ Programming Guide, compute capability 9.0 table)."""
    kernel = "int4_wgmma_epi_tma"
    t = tiling_from_config(CONFIG, kernel)
    usage = build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90", t.defines() + ["-DTILE_CLOCKS=2"],
                         tmp_path / "on.cubin", tmp_path / "on.json", tmp_path / "on.sass", tmp_path / "on.log")
    assert usage.stack_bytes == usage.spill_store_bytes == 0
    assert usage.shared_bytes - built[kernel][0].shared_bytes == 24 * 6 * 3 * 4
    assert usage.shared_bytes + t.smem_bytes <= 227 * 1024
    sass = (tmp_path / "on.sass").read_text()
    assert len(re.findall(r"SR_CLOCKLO", sass)) == 9
    assert len(re.findall(WGMMA[kernel], sass)) == SASS_COUNTS[kernel][0]
    assert_refused(tmp_path, kernel, t, ["-DTILE_CLOCKS=3"], "TILE_CLOCKS: 0 (off)")


def test_the_producer_can_wait_for_both_barriers_at_once(built, tmp_path):
    """WAIT_BOTH=1 issues the INT4 producer's two waits of a K tile (packed tile landed, INT8 B
    stage free) back to back: two adjacent SYNCS.PHASECHK.TRANS64.TRYWAIT on different barriers,
    and two fewer try_waits in all (the producer's separate waits and their retry copies go);
    nothing spills. Off, the registered SASS is unchanged; with the clock reads it is refused."""
    kernel = "int4_wgmma_epi_tma"
    t = tiling_from_config(CONFIG, kernel)
    usage = build_kernel(REPO / "kernels" / f"{kernel}.cu", kernel, "sm_90", t.defines() + ["-DWAIT_BOTH=1"],
                         tmp_path / "on.cubin", tmp_path / "on.json", tmp_path / "on.sass", tmp_path / "on.log")
    assert usage.spill_store_bytes == usage.spill_load_bytes == usage.stack_bytes == 0
    sass = (tmp_path / "on.sass").read_text()
    registered = built[kernel][1]
    insts = [ln for ln in sass.splitlines() if re.match(r"\s*/\*[0-9a-f]{4}\*/", ln)]  # one line per instruction
    pairs = [(a, b) for a, b in zip(insts, insts[1:]) if "TRYWAIT" in a and "TRYWAIT" in b
             and a.split("[")[1].split("]")[0] != b.split("[")[1].split("]")[0]]
    assert len(pairs) == 1
    assert len(re.findall(r"TRYWAIT", sass)) == len(re.findall(r"TRYWAIT", registered)) - 2
    assert_off_is_registered_and_refused(tmp_path, kernel, t, registered, "-DWAIT_BOTH=0", ["-DWAIT_BOTH=1", "-DTILE_CLOCKS=1"],
                                         "WAIT_BOTH: one K tile at a time")


@pytest.mark.gpu
@pytest.mark.parametrize("define", ["-DWAIT_BOTH=1", "-DTILE_CLOCKS=1", "-DTILE_CLOCKS=2", "-DCOPY_ROTATE=1"])
def test_two_waits_at_once_and_clock_reads_keep_c_exact(tmp_path, define):
    """With the producer's two waits issued together (WAIT_BOTH), the clock reads (TILE_CLOCKS 1
    and 2) or the copies issued by the producer warps in turn (COPY_ROTATE), int4_wgmma_epi_tma is
    exact at every configured N on an sm_90 GPU, all of C checked, and on 2
    CTAs at N = 1024 (16 blocks each)."""
    kernel = "int4_wgmma_epi_tma"
    assert_build_exact_at_every_size(tmp_path, kernel, tiling_from_config(CONFIG, kernel), [define])


def test_two_producer_warpgroups_can_take_alternate_k_tiles(built, tmp_path):
    """PRODUCER_ALTERNATE=1 with PRODUCER_WARPS=8: each producer warpgroup unpacks whole K tiles,
    every other one, so each producer thread keeps the registered build's 4 LDS.128 and 8 STS.128
    a tile; the registers move as 256 x 56 + 256 x 200 (setmaxnreg 0x38 and 0xc8, 128 at entry),
    nothing spills, and the 16 wgmma and the copies stay, serialized by ptxas (C7512, the
    consumers' 200 registers) as in the call of 2026-12-07 that timed it. Off, the registered SASS
    is unchanged; with one producer warpgroup it is refused at compile time."""
    kernel = "int4_wgmma_epi_tma"
    t = tiling_from_config(CONFIG, kernel)
    usage, sass = build_variant(tmp_path, "on", dataclasses.replace(t, producer_warps=8), ["-DPRODUCER_ALTERNATE=1"],
                                kernel, serialized=True)
    assert usage.registers == 128
    assert (len(re.findall(r"\bLDS\.128\b", sass)), len(re.findall(r"\bSTS\.128\b", sass))) == (4, 8)
    assert re.findall(r"USETMAXREG\.(\w+)\.CTAPOOL \w*,? ?(0x\w+)", sass) == [("TRY_ALLOC", "0xc8"), ("DEALLOC", "0x38")]
    assert_off_is_registered_and_refused(tmp_path, kernel, t, built[kernel][1], "-DPRODUCER_ALTERNATE=0",
                                         ["-DPRODUCER_ALTERNATE=1"], "PRODUCER_ALTERNATE: two producer warpgroups")


def test_producer_warps_can_rejoin_at_each_k_tile(built, tmp_path):
    """PRODUCER_SYNCWARP=1 rejoins each producer warp at the top of its K-tile loop: nvcc emits a
    `BRA.DIV` there (taken only by a split warp) to a `WARPSYNC.COLLECTIVE`, ahead of the tile's
    4 LDS.128 and 8 STS.128 (unchanged), alone and with the alternating producer warpgroups (whose
    wgmma ptxas serializes, as without it); nothing spills. The registered build has neither
    instruction, and off its SASS is unchanged."""
    kernel = "int4_wgmma_epi_tma"
    t = tiling_from_config(CONFIG, kernel)
    assert not re.search(r"\bBRA\.DIV\b|\bWARPSYNC\.COLLECTIVE\b", built[kernel][1])
    for tag, tiling, defines in (("on", t, ["-DPRODUCER_SYNCWARP=1"]),
                                 ("alt", dataclasses.replace(t, producer_warps=8),
                                  ["-DPRODUCER_SYNCWARP=1", "-DPRODUCER_ALTERNATE=1"])):
        usage, sass = build_variant(tmp_path, tag, tiling, defines, kernel, serialized=tag == "alt")
        assert (len(re.findall(r"\bLDS\.128\b", sass)), len(re.findall(r"\bSTS\.128\b", sass))) == (4, 8), tag
        lines = sass.splitlines()
        first_lds = next(i for i, line in enumerate(lines) if re.search(r"\bLDS\.128\b", line))
        assert any(re.search(r"\bBRA\.DIV\b", line) for line in lines[:first_lds]), tag
        assert re.search(r"\bWARPSYNC\.COLLECTIVE\b", sass), tag
    assert_off_is_registered(tmp_path, kernel, t, built[kernel][1], "-DPRODUCER_SYNCWARP=0")


@pytest.mark.gpu
@pytest.mark.parametrize("alternate", [False, True])
def test_rejoined_producer_keeps_c_exact(tmp_path, alternate):
    """With its producer warps rejoined at each K tile (PRODUCER_SYNCWARP), alone and with the
    alternating producer warpgroups, int4_wgmma_epi_tma is exact at every configured N on an sm_90
    GPU, all of C checked, and on 2 CTAs at N = 1024."""
    kernel = "int4_wgmma_epi_tma"
    t = tiling_from_config(CONFIG, kernel)
    defines = ["-DPRODUCER_SYNCWARP=1"]
    if alternate:
        t, defines = dataclasses.replace(t, producer_warps=8), defines + ["-DPRODUCER_ALTERNATE=1"]
    assert_build_exact_at_every_size(tmp_path, kernel, t, defines)


@pytest.mark.gpu
def test_alternate_k_tiles_keep_c_exact(tmp_path):
    """With its two producer warpgroups taking alternate K tiles (PRODUCER_ALTERNATE), int4_wgmma_epi_tma
    is exact at every configured N on an sm_90 GPU, all of C checked, and on 2 CTAs at N = 1024 (16
    blocks each: each warpgroup's copies run across block changes)."""
    kernel = "int4_wgmma_epi_tma"
    t = dataclasses.replace(tiling_from_config(CONFIG, kernel), producer_warps=8)
    assert_build_exact_at_every_size(tmp_path, kernel, t, ["-DPRODUCER_ALTERNATE=1"])


def test_clusters_of_two_share_the_unpacked_b(built, tmp_path):
    """CLUSTER_M=2 (tiling cluster_m 2): each CTA's producer unpacks half of the B tile's rows, 2
    LDS.128 and 4 STS.128 a thread a K tile instead of 4 and 8, and lane 0 of each producer warp
    copies its two 1 KiB pieces into the other CTA (2 UBLKCP in the SASS, one per piece, each in
    the loop nvcc wraps around an instruction whose operands live in uniform registers); the
    registers move as 128 x 40 + 256 x 232 (setmaxnreg 0x28 and 0xe8), nothing spills, the 16 wgmma
    stay asynchronous and the 4 copies stay, and the cluster barrier (UCGABAR) runs at the start and
    the end. Off, the registered SASS is unchanged; with B_GLOBAL, or in the one-block-per-CTA
    int4_wgmma_unpack_s8, it is refused at compile time."""
    kernel = "int4_wgmma_epi_tma"
    t = tiling_from_config(CONFIG, kernel)
    usage, sass = build_variant(tmp_path, "on", dataclasses.replace(t, cluster_m=2), [], kernel)
    assert (len(re.findall(r"\bLDS\.128\b", sass)), len(re.findall(r"\bSTS\.128\b", sass))) == (2, 4)
    assert len(re.findall(r"\bUBLKCP\.S\.S\b", sass)) == 2
    assert re.findall(r"USETMAXREG\.(\w+)\.CTAPOOL \w*,? ?(0x\w+)", sass) == [("TRY_ALLOC", "0xe8"), ("DEALLOC", "0x28")]
    assert (len(re.findall(r"\bUCGABAR_ARV\b", sass)), len(re.findall(r"\bUCGABAR_WAIT\b", sass))) == (2, 2)
    assert not re.search(r"\bUBLKCP\b|\bUCGABAR", built[kernel][1])
    assert_off_is_registered_and_refused(tmp_path, kernel, t, built[kernel][1], "-DCLUSTER_M=1",
                                         ["-DCLUSTER_M=2", "-DB_GLOBAL=1"], "CLUSTER_M 2: the persistent build")
    assert_refused(tmp_path, "int4_wgmma_unpack_s8", dataclasses.replace(tiling_from_config(CONFIG, "int4_wgmma_unpack_s8"),
                                                                         cluster_m=2), [],
                   "CLUSTER_M 2: the persistent build")


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", ["int4_wgmma_epi_tma", "int4_wgmma_persistent"])
def test_clusters_of_two_sharing_the_unpacked_b_keep_c_exact(tmp_path, kernel):
    """With each CTA of a cluster unpacking half of the shared B tile and copying it into the other
    (CLUSTER_M=2), the INT4 kernel is exact at every configured N on an sm_90 GPU, all of C checked,
    and on 2 CTAs (one cluster) at N = 1024 (16 blocks each: every stage's copies across block
    changes)."""
    t = dataclasses.replace(tiling_from_config(CONFIG, kernel), cluster_m=2)
    assert_build_exact_at_every_size(tmp_path, kernel, t, [])


@pytest.mark.gpu
@pytest.mark.parametrize("kernel, ahead", [("int4_wgmma_epi_tma", 1), ("int4_wgmma_epi_tma", 2),
                                           ("int4_wgmma_epi_tma", 3), ("int4_wgmma_persistent", 2)])
def test_packed_b_from_global_memory_is_correct_at_every_size(tmp_path, kernel, ahead):
    """With its packed B read from global memory `ahead` K tiles ahead (B_GLOBAL), the INT4 kernel
    is exact at every configured N on an sm_90 GPU, all of C checked, and on 2 CTAs at N = 1024
    (16 blocks each: the register ring runs across block changes)."""
    assert_build_exact_at_every_size(tmp_path, kernel, tiling_from_config(CONFIG, kernel), [f"-DB_GLOBAL={ahead}"])
