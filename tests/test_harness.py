"""The correctness check itself (CPU) and the kernels on a real GPU (marked gpu)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from analysis.errors import ConfigError
from analysis.harness import GemmRunner, Tiling, check_and_time, compare, make_inputs, sample_rows
from analysis.precision import PRECISIONS

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("prec", ["fp16", "int8", "int4"])
def test_inputs_are_random_not_zero(prec):
    p = PRECISIONS[prec]
    a_dev, b_dev, a, b = make_inputs(p, 64, 32, 256, np.random.default_rng(0))
    assert a.shape == (64, 256) and b.shape == (32, 256)
    assert a.min() >= p.lo and a.max() <= p.hi and np.count_nonzero(a) > 0.9 * a.size
    assert a_dev.nbytes == 64 * 256 * p.bits // 8


def test_int4_packing_low_nibble_first():
    _, _, a, _ = make_inputs(PRECISIONS["int4"], 16, 16, 64, np.random.default_rng(1))
    a_dev, *_ = make_inputs(PRECISIONS["int4"], 16, 16, 64, np.random.default_rng(1))
    lo = (a_dev & 0xF).astype(np.int16)
    hi = (a_dev >> 4).astype(np.int16)
    unpack = lambda v: np.where(v > 7, v - 16, v)  # noqa: E731
    assert np.array_equal(unpack(lo), a[:, 0::2]) and np.array_equal(unpack(hi), a[:, 1::2])


@pytest.mark.parametrize("prec", ["int8", "int4"])
def test_integer_check_is_exact(prec):
    p = PRECISIONS[prec]
    _, _, a, b = make_inputs(p, 64, 32, 128, np.random.default_rng(2))
    c = (a @ b.T).astype(np.int32)
    assert compare(c, a, b, p).passed
    c[3, 5] += 1
    res = compare(c, a, b, p)
    assert not res.passed and res.first_bad == (3, 5) and res.max_abs_error == 1 and res.bad_count == 1


def test_fp16_bound_accepts_fp32_rounding_and_rejects_an_error():
    p = PRECISIONS["fp16"]
    _, _, a, b = make_inputs(p, 64, 64, 1024, np.random.default_rng(3))
    c32 = (a.astype(np.float32) @ b.T.astype(np.float32))  # an FP32 accumulation
    assert compare(c32, a, b, p).passed
    c32[10, 20] += 0.05
    assert compare(c32, a, b, p).first_bad == (10, 20)


def test_unwritten_output_fails():
    p = PRECISIONS["fp16"]
    _, _, a, b = make_inputs(p, 64, 32, 64, np.random.default_rng(4))
    c = (a @ b.T).astype(np.float32)
    c[-1, -1] = np.nan  # the poison of an element nobody wrote
    res = compare(c, a, b, p)
    assert not res.passed and res.first_bad == (63, 31)


def test_sampled_check_reports_global_row():
    p = PRECISIONS["int8"]
    _, _, a, b = make_inputs(p, 256, 64, 64, np.random.default_rng(5))
    c = (a @ b.T).astype(np.int32)
    c[200, 7] -= 3
    rows = sample_rows(256, 64, np.random.default_rng(0), blocks=0)  # first and last block rows
    assert list(rows[:2]) == [0, 1] and rows[-1] == 255 and len(rows) == 128
    res = compare(c, a, b, p, rows)
    assert res.first_bad == (200, 7) and res.max_abs_error == 3


@pytest.mark.parametrize("n", [0, 100, 1000])
def test_untileable_sizes_are_refused(n):
    with pytest.raises(ConfigError, match="not a positive multiple"):
        Tiling().check_shape("int8_wmma", PRECISIONS["int8"], n, n, n)


# ---- on the GPU ------------------------------------------------------------------

def _config() -> dict:
    import yaml

    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())


KERNELS = {k: spec["precision"] for k, spec in _config()["kernels"].items()}


@pytest.fixture(scope="module")
def gpu_cubins(tmp_path_factory):
    from analysis.build import compile_cubin
    from analysis.gpu import detect_gpu

    arch = detect_gpu().arch
    out = tmp_path_factory.mktemp("cubins")
    from analysis.workflow import tiling_from_config

    cfg = _config()
    for k in KERNELS:
        compile_cubin(REPO / "kernels" / f"{k}.cu", k, arch, tiling_from_config(cfg, k).defines(),
                      out / f"{k}.cubin", out / f"{k}.json")
    return out


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("n", [512, 1024, 2048, 4096, 8192])
def test_kernel_passes_its_check(gpu_cubins, kernel, n):
    from analysis.workflow import tiling_from_config

    rec = check_and_time(gpu_cubins / f"{kernel}.cubin", kernel, KERNELS[kernel], n,
                         tiling_from_config(_config(), kernel), warmups=2, repeats=5, seed=int(np.random.default_rng().integers(2**31)))
    assert rec["check"]["passed"] and rec["median_ns"] > 0 and len(rec["samples_ns"]) == 5


@pytest.mark.gpu
def test_wrong_launch_fails_the_check(gpu_cubins):
    """Launching with a grid that covers half of C leaves poisoned elements: the check fails."""
    run = GemmRunner(gpu_cubins / "int8_wmma.cubin", "int8_wmma", "int8", Tiling(block_n=64), 512, 512, 512, 5)
    try:
        res = run.check()
    finally:
        run.close()
    assert not res.passed and res.bad_count == 512 * 256


@pytest.mark.gpu
def test_failing_kernel_writes_no_record(gpu_cubins, tmp_path):
    out = tmp_path / "rec.json"
    proc = subprocess.run([sys.executable, "-m", "analysis.harness", "check-time", "--cubin",
                           str(gpu_cubins / "int8_wmma.cubin"), "--kernel", "int8_wmma", "--precision", "int8",
                           "--n", "512", "--tiling", "64,64,64,4,2,2", "--out", str(out)],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 1 and "first bad (row, col)" in proc.stderr
    assert not out.exists()


@pytest.mark.gpu
def test_check_and_time_record_is_json(gpu_cubins, tmp_path):
    out = tmp_path / "rec.json"
    subprocess.run([sys.executable, "-m", "analysis.harness", "check-time", "--cubin",
                    str(gpu_cubins / "int4_wmma.cubin"), "--kernel", "int4_wmma", "--precision", "int4",
                    "--n", "1024", "--repeats", "7", "--out", str(out)], check=True, cwd=REPO)
    rec = json.loads(out.read_text())
    assert rec["repeats"] == 7 and rec["throughput_unit"] == "TOP/s" and rec["check"]["max_abs_error"] == 0
    assert rec["min_ns"] <= rec["median_ns"] <= rec["max_ns"]



@pytest.mark.gpu
def test_profile_writes_a_readable_report(gpu_cubins, tmp_path):
    """ncu on one kernel: the .xz report appears, parses, and holds one launch of that kernel."""
    import shutil as _sh

    from analysis.ncu import load_report
    from analysis.profile import profile_kernel

    if _sh.which("ncu") is None:
        pytest.skip("ncu not on PATH")
    out = tmp_path / "int8_ptx_mma_k32_n512.ncu-rep.xz"
    profile_kernel(gpu_cubins / "int8_ptx_mma_k32.cubin", "int8_ptx_mma_k32", "int8", 512, Tiling(), out)
    df = load_report(out)
    v = df.set_index("metric")["value"]
    assert v["gpu__time_duration.sum"] > 0 and v["launch__grid_dim_x"] == 512 // 32


@pytest.mark.gpu
def test_float64_reference_on_the_gpu_equals_numpy():
    """The GPU path of matmul_f64 (CuPy) gives NumPy's integer results exactly."""
    pytest.importorskip("cupy")
    from analysis.harness import matmul_f64

    rng = np.random.default_rng(11)
    a = rng.integers(-128, 128, size=(320, 4096)).astype(np.float64)
    b = rng.integers(-128, 128, size=(192, 4096)).astype(np.float64)
    assert np.array_equal(matmul_f64(a, b), a @ b.T)


@pytest.mark.gpu
def test_references_measure_ceilings_and_libraries(tmp_path):
    """The ceiling kernels and the copy run and give positive rates in their units; the
    library GEMMs (where PyTorch is installed) pass their sampled check at N = 512."""
    from analysis.build import compile_cubin
    from analysis.gpu import detect_gpu
    from analysis.references import PEAK_KERNELS, ceilings, library_gemms

    cubin = tmp_path / "mma_peak.cubin"
    compile_cubin(REPO / "kernels" / "ceilings" / "mma_peak.cu", "peak_mma_m16n8k16_f16_f32", detect_gpu().arch,
                  [], cubin, tmp_path / "mma_peak.json")
    rows = ceilings(cubin, warmups=1, repeats=3, iters=64, copy_bytes=1 << 24)
    assert [r.name for r in rows] == [f for f, _ in PEAK_KERNELS.values()] + ["dram_copy"]
    assert all(r.rate > 0 and r.repeats == 3 for r in rows)
    assert [r.unit for r in rows] == ["TFLOP/s", "TOP/s", "TOP/s", "TB/s"]
    lib, note = library_gemms([512], warmups=1, repeats=3, seed=3)
    if note:
        pytest.skip(note)
    assert [(r.name, r.n) for r in lib] == [("cublas_fp16", 512), ("cublaslt_int8", 512)]
    assert all(r.rate > 0 for r in lib)

