"""The correctness check itself (CPU) and the kernels on a real GPU (marked gpu)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from analysis.errors import ConfigError
from analysis.gpu.harness import GemmRunner, Tiling, check_and_time, compare, make_inputs, sample_rows
from analysis.precision import PRECISIONS
from analysis.workflow import kernel_options

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


def test_fp16_c_bound_adds_the_rounding_of_c():
    """FP16 C (c_dtype float16): an FP32 accumulation rounded to FP16 passes within the FP32
    bound plus 2**-11 |ref|; the same rounded values held as FP32 fail the FP32-C bound (so the
    rounding term is what admits them: at K = 64 the FP32 bound is below FP16's rounding), and
    an element off by 2**-9 of its value fails. Products in FP16's subnormal range (inputs of
    2**-13, K = 1: 2**-26 rounds to 0) pass through the bound's 2**-25."""
    p = PRECISIONS["fp16"]
    _, _, a, b = make_inputs(p, 64, 64, 64, np.random.default_rng(3))
    c16 = (a.astype(np.float32) @ b.T.astype(np.float32)).astype(np.float16)
    res = compare(c16, a, b, p)
    assert res.passed and "2^-11|ref|" in res.tolerance and "FP16 C" in res.tolerance
    assert not compare(c16.astype(np.float32), a, b, p).passed
    ref = float(a[7] @ b[9])
    c16[7, 9] = np.float16(ref * (1 + 2.0**-9) + np.sign(ref) * 0.01)
    bad = compare(c16, a, b, p)
    assert not bad.passed and bad.first_bad == (7, 9) and bad.bad_count == 1
    tiny = np.full((4, 1), 2.0**-13)
    assert compare((tiny @ tiny.T).astype(np.float16), tiny, tiny, p).passed


def test_c_dtype_is_refused_beyond_fp16_with_fp32_accumulators():
    """c_dtype float16 for INT8, with FP16 accumulators, or an unknown name: refused before any
    CUDA call (without a GPU a CUDA call would raise RuntimeError instead)."""
    for precision, extra in (("int8", {}), ("fp16", {"accumulator": "f16"}), ("fp16", {"c_dtype": "bfloat16"})):
        kw = {"c_dtype": "float16", **extra}
        with pytest.raises(ConfigError, match="c_dtype"):
            GemmRunner(Path("no.cubin"), "k", precision, Tiling(), 64, 32, 64, 0, **kw)


def test_row_major_b_is_the_transposed_image():
    p = PRECISIONS["int4"]
    a_col, b_col, a, b = make_inputs(p, 16, 32, 64, np.random.default_rng(6))
    a_row, b_row, a2, b2 = make_inputs(p, 16, 32, 64, np.random.default_rng(6), b_layout="row")
    assert np.array_equal(a_col, a_row) and np.array_equal(a, a2) and np.array_equal(b, b2)
    assert b_col.shape == (32, 32) and b_row.shape == (64, 16)  # N x K/2 and K x N/2 bytes
    lo = (b_row & 0xF).astype(np.int16)
    unpack = lambda v: np.where(v > 7, v - 16, v)  # noqa: E731
    assert np.array_equal(unpack(lo), b.T[:, 0::2])  # byte j of row k: columns 2j (low), 2j+1


def _fp16_accumulate(a: np.ndarray, b_t: np.ndarray, chunk: int = 16) -> np.ndarray:
    """A @ B with the running sum rounded to FP16 after every ``chunk`` products (a model of
    an f16-accumulating m16n8k16 mma.sync chain)."""
    acc = np.zeros((a.shape[0], b_t.shape[0]), np.float16)
    for k0 in range(0, a.shape[1], chunk):
        part = a[:, k0:k0 + chunk] @ b_t[:, k0:k0 + chunk].T
        acc = (acc.astype(np.float64) + part).astype(np.float16)
    return acc.astype(np.float32)


def test_fp16_accumulation_is_exact_on_its_inputs_only():
    p = PRECISIONS["fp16"]
    _, _, a, b = make_inputs(p, 32, 32, 4096, np.random.default_rng(7), accumulator="f16")
    assert set(np.unique(a)) == {-1.0, 0.0, 1.0}
    res = compare(_fp16_accumulate(a, b), a, b, p, accumulator="f16")
    assert res.passed and res.tolerance.startswith("exact")
    _, _, a, b = make_inputs(p, 32, 32, 4096, np.random.default_rng(7))  # uniform in [-1, 1]
    f16 = compare(_fp16_accumulate(a, b), a, b, p, accumulator="f16")
    f32 = compare(a.astype(np.float32) @ b.T.astype(np.float32), a, b, p)
    assert not f16.passed and f32.passed and f16.max_abs_error > 100 * f32.max_abs_error


def test_fp16_accumulation_of_integers_is_refused():
    with pytest.raises(ValueError, match="FP16 accumulation needs FP16 inputs"):
        make_inputs(PRECISIONS["int8"], 16, 16, 64, np.random.default_rng(0), accumulator="f16")


def test_refused_accumulator_touches_no_gpu():
    """FP16 accumulation for INT8 is refused while drawing the inputs, before any CUDA call
    (without a GPU, a CUDA call would fail with RuntimeError instead)."""
    with pytest.raises(ValueError, match="FP16 accumulation needs FP16 inputs"):
        GemmRunner(Path("no.cubin"), "int8_wmma", "int8", Tiling(), 64, 32, 64, 0, accumulator="f16")


def test_kernel_options_only_beyond_defaults():
    assert kernel_options({"precision": "int4", "b_layout": "col"}) == {}
    assert kernel_options({"precision": "int4", "b_layout": "row"}) == {"b_layout": "row"}
    assert kernel_options({"precision": "fp16", "accumulator": "f16", "study": True}) == {"accumulator": "f16"}
    assert kernel_options({"precision": "fp16", "tma": True, "c_dtype": "float16"}) == {"tma": True, "c_dtype": "float16"}


def test_command_carries_kernel_options():
    from analysis.gpu.harness import command

    cmd = command("check-time", "k.cubin", "k", "int4", 512, Tiling(), b_layout="row", accumulator=None)
    assert cmd[-2:] == ["--b-layout", "row"] and "--accumulator" not in cmd
    assert command("profile", "k.cubin", "k", "fp16", 512, Tiling(), c_dtype="float16")[-2:] == ["--c-dtype", "float16"]


def test_several_n_need_a_record_per_n():
    """check-time over several N writes one record per N ({n} in --out); profile mode
    takes several N (one profiled launch each) but writes no record; an N given twice is
    refused in either mode. Refused before any GPU work."""
    from analysis.gpu.harness import command

    cmd = command("check-time", "k.cubin", "int8_wmma", "int8", [512, 1024], Tiling(), out="r_n{n}.json")
    assert cmd[cmd.index("--n") + 1: cmd.index("--n") + 3] == ["512", "1024"]
    for mode, ns, out, code, why in (
            ("check-time", ["512", "1024"], ["--out", "r.json"], 2, "--out must contain {n}"),
            ("profile", ["512"], ["--out", "r.json"], 2, "--out is for check-time mode"),
            ("check-time", ["512", "512"], [], 2, "an N given twice"),
            ("profile", ["1024", "1024"], [], 2, "an N given twice"),
            ("profile", ["512", "100"], [], 1, "M=100 is not a positive multiple"),
            ("check-time", ["512", "0"], ["--out", "r_n{n}.json"], 1, "M=0 is not a positive multiple")):
        proc = subprocess.run([sys.executable, "-m", "analysis.gpu.harness", mode, "--cubin", "absent.cubin",
                               "--kernel", "int8_wmma", "--precision", "int8", "--n", *ns, *out],
                              capture_output=True, text=True, cwd=REPO)
        assert proc.returncode == code and why in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not (REPO / "r_n512.json").exists()


def test_no_gpu_is_one_line_not_a_traceback():
    """Without a GPU and driver the harness says so in one line (on a GPU machine: skipped)."""
    from analysis.gpu.device import detect_gpu

    if detect_gpu() is not None:
        pytest.skip("this machine has a GPU")
    proc = subprocess.run([sys.executable, "-m", "analysis.gpu.harness", "check-time", "--cubin", "absent.cubin",
                           "--kernel", "int8_wmma", "--precision", "int8", "--n", "512"],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 1 and proc.stderr.startswith("error: no NVIDIA GPU with a working driver")
    assert "Traceback" not in proc.stderr


@pytest.mark.gpu
def test_one_process_checks_every_n(gpu_cubins, tmp_path):
    """The workflow's check_time job: several N in one process, one record per N."""
    subprocess.run([sys.executable, "-m", "analysis.gpu.harness", "check-time", "--cubin",
                    str(gpu_cubins / "int8_wmma.cubin"), "--kernel", "int8_wmma", "--precision", "int8",
                    "--n", "512", "1024", "--repeats", "5", "--out", str(tmp_path / "r_n{n}.json")],
                   check=True, cwd=REPO)
    recs = {n: json.loads((tmp_path / f"r_n{n}.json").read_text()) for n in (512, 1024)}
    assert {n: r["n"] for n, r in recs.items()} == {512: 512, 1024: 1024}
    assert all(r["check"]["max_abs_error"] == 0 and r["repeats"] == 5 for r in recs.values())


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
OPTIONS = {k: kernel_options(spec) for k, spec in _config()["kernels"].items()}


@pytest.fixture(scope="module")
def gpu_cubins(tmp_path_factory):
    from analysis.gpu.build import compile_cubin
    from analysis.gpu.device import detect_gpu

    arch = detect_gpu().arch
    out = tmp_path_factory.mktemp("cubins")
    from analysis.workflow import kernel_target, tiling_from_config

    cfg = _config()
    for k in KERNELS:
        if kernel_target(arch, cfg["kernels"][k]["archs"]) is None:
            continue  # not for this GPU (e.g. the sm_90a wgmma kernels on an sm_89 GPU)
        compile_cubin(REPO / "kernels" / f"{k}.cu", k, arch, tiling_from_config(cfg, k).defines(),
                      out / f"{k}.cubin", out / f"{k}.json")
    return out


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("n", [512, 1024, 2048, 4096, 8192])
def test_kernel_passes_its_check(gpu_cubins, kernel, n):
    from analysis.workflow import tiling_from_config

    if not (gpu_cubins / f"{kernel}.cubin").exists():
        pytest.skip(f"{kernel}: its archs do not include this GPU's")

    rec = check_and_time(gpu_cubins / f"{kernel}.cubin", kernel, KERNELS[kernel], n,
                         tiling_from_config(_config(), kernel), warmups=2, repeats=5,
                         seed=int(np.random.default_rng().integers(2**31)), **OPTIONS[kernel])
    assert rec["check"]["passed"] and rec["median_ns"] > 0 and len(rec["samples_ns"]) == 5


@pytest.mark.gpu
def test_b_layout_reaches_the_kernel(gpu_cubins):
    """The row-major-B kernel fed B column-major computes with B transposed: the check fails,
    while the same inputs in its own layout pass."""
    def run(layout):
        r = GemmRunner(gpu_cubins / "int4_ptx_mma_k64_b_trans.cubin", "int4_ptx_mma_k64_b_trans", "int4",
                       Tiling(), 512, 512, 512, 8, b_layout=layout)
        try:
            return r.check()
        finally:
            r.close()

    assert run("row").passed
    wrong = run("col")
    assert not wrong.passed and wrong.bad_count > 0.9 * 512 * 512


@pytest.mark.gpu
def test_fp16_accumulator_is_fp16(gpu_cubins):
    """On uniform inputs in [-1, 1] at K = 4096 the FP16-accumulating kernel is far less
    accurate than the FP32-accumulating one (it does accumulate in FP16)."""
    errs = {}
    for kernel in ("fp16_ptx_fp16acc", "fp16_ptx_mma_k16"):
        r = GemmRunner(gpu_cubins / f"{kernel}.cubin", kernel, "fp16", Tiling(), 512, 512, 4096, 9)
        try:
            errs[kernel] = r.check(sample_rows(512, 64, np.random.default_rng(0)))
        finally:
            r.close()
    assert errs["fp16_ptx_mma_k16"].passed
    assert errs["fp16_ptx_fp16acc"].max_abs_error > 100 * errs["fp16_ptx_mma_k16"].max_abs_error


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
    proc = subprocess.run([sys.executable, "-m", "analysis.gpu.harness", "check-time", "--cubin",
                           str(gpu_cubins / "int8_wmma.cubin"), "--kernel", "int8_wmma", "--precision", "int8",
                           "--n", "512", "--tiling", "64,64,64,4,2,2", "--out", str(out)],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 1 and "first bad (row, col)" in proc.stderr
    assert not out.exists()


@pytest.mark.gpu
def test_check_and_time_record_is_json(gpu_cubins, tmp_path):
    out = tmp_path / "rec.json"
    subprocess.run([sys.executable, "-m", "analysis.gpu.harness", "check-time", "--cubin",
                    str(gpu_cubins / "int4_wmma.cubin"), "--kernel", "int4_wmma", "--precision", "int4",
                    "--n", "1024", "--repeats", "7", "--out", str(out)], check=True, cwd=REPO)
    rec = json.loads(out.read_text())
    assert rec["repeats"] == 7 and rec["throughput_unit"] == "TOP/s" and rec["check"]["max_abs_error"] == 0
    assert rec["min_ns"] <= rec["median_ns"] <= rec["max_ns"]



@pytest.mark.gpu
def test_profile_writes_a_readable_report(gpu_cubins, tmp_path):
    """One ncu process profiles a kernel at two N: the .xz report appears, parses, and holds
    one checked launch per N, in order (the grid of each is the tiling's at its N)."""
    from analysis.errors import ToolNotFoundError
    from analysis.reports.ncu import load_report
    from analysis.gpu.profile import profile_kernel
    from analysis.tools import find_tool

    try:
        find_tool("ncu")
    except ToolNotFoundError:
        pytest.skip("no ncu")
    out = tmp_path / "int8_ptx_mma_k32_n512-1024.ncu-rep.xz"
    profile_kernel(gpu_cubins / "int8_ptx_mma_k32.cubin", "int8_ptx_mma_k32", "int8", [512, 1024], Tiling(), out)
    df = load_report(out, expect_launches=1)
    per = df[df["metric"] == "launch__grid_dim_x"].sort_values("launch")
    assert list(per["n"]) == [512, 1024] and list(per["value"]) == [512 // 32, 1024 // 32]
    assert (df[df["metric"] == "gpu__time_duration.sum"]["value"] > 0).all()


@pytest.mark.gpu
def test_float64_reference_on_the_gpu_equals_numpy():
    """The GPU path of matmul_f64 (CuPy) gives NumPy's integer results exactly."""
    pytest.importorskip("cupy")
    from analysis.gpu.harness import matmul_f64

    rng = np.random.default_rng(11)
    a = rng.integers(-128, 128, size=(320, 4096)).astype(np.float64)
    b = rng.integers(-128, 128, size=(192, 4096)).astype(np.float64)
    assert np.array_equal(matmul_f64(a, b), a @ b.T)


@pytest.mark.gpu
def test_references_measure_ceilings_and_libraries(tmp_path):
    """The ceiling kernels and the copy run and give positive rates in their units; the
    library GEMMs (where PyTorch is installed) pass their sampled check at N = 512, in the order
    references.csv lists them."""
    from analysis.gpu.build import compile_cubin
    from analysis.gpu.device import detect_gpu
    from analysis.gpu.references import PEAK_KERNELS, ceilings, library_gemms

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
    import importlib.util

    import torch

    # per precision: the library, the one writing our kernels' C dtype where torch.mm takes
    # out_dtype (FP16 only: cuBLAS with FP32 C), the Triton GEMM where Triton is installed
    try:
        torch.mm(torch.ones((16, 16), dtype=torch.float16, device="cuda"),
                 torch.ones((16, 16), dtype=torch.float16, device="cuda"), out_dtype=torch.float32)
        same = ["cublas_fp16_f32out"]
    except (TypeError, RuntimeError):
        same = []
    triton = importlib.util.find_spec("triton") is not None
    names = (["cublas_fp16", *same] + ["triton_fp16"] * triton) + (["cublaslt_int8"] + ["triton_int8"] * triton)
    assert [(r.name, r.n) for r in lib] == [(name, 512) for name in names]
    assert all(r.rate > 0 for r in lib)



def _bad_products(rng, prec_name: str):
    """(C, A, B^T) of a small INT8-valued or FP16-valued product with C wrong at (3, 5) and
    NaN at (7, 1)."""
    a = rng.integers(-8, 8, (96, 256)).astype(np.float64)
    b = rng.integers(-8, 8, (64, 256)).astype(np.float64)
    if prec_name == "fp16":
        a, b = a / 8, b / 8
    c = (a @ b.T).astype(np.float32 if prec_name == "fp16" else np.int32)
    c[3, 5] += 1
    if prec_name == "fp16":
        c[7, 1] = np.nan
    return c, a, b


@pytest.mark.parametrize("prec_name", ["int8", "fp16"])
def test_the_host_comparison_finds_the_first_bad_element(prec_name):
    from analysis.gpu.harness.check import _compare
    from analysis.precision import precision_of

    c, a, b = _bad_products(np.random.default_rng(5), prec_name)
    r = _compare(np, c, a, b, precision_of(prec_name), None, None)
    assert not r.passed and r.first_bad == (3, 5) and r.bad_count == (2 if prec_name == "fp16" else 1)
    assert r.max_abs_error == (np.inf if prec_name == "fp16" else 1.0)
    rows = _compare(np, c, a, b, precision_of(prec_name), np.array([0, 1, 2]), None)
    assert rows.passed and rows.bad_count == 0


@pytest.mark.gpu
@pytest.mark.parametrize("prec_name", ["int8", "fp16"])
def test_the_gpu_comparison_equals_the_hosts(prec_name):
    """compare() runs on the GPU through CuPy where it sees one: the same outcome as NumPy's."""
    cupy = pytest.importorskip("cupy")
    from analysis.gpu.harness.check import _array_module, _compare
    from analysis.precision import precision_of

    assert _array_module() is cupy
    c, a, b = _bad_products(np.random.default_rng(5), prec_name)
    for rows in (None, np.array([3, 7, 9])):
        host = _compare(np, c, a, b, precision_of(prec_name), rows, None)
        dev = _compare(cupy, c, a, b, precision_of(prec_name), rows, None)
        assert (dev.passed, dev.bad_count, dev.first_bad, dev.tolerance) == (host.passed, host.bad_count,
                                                                            host.first_bad, host.tolerance)
        assert dev.max_abs_error == host.max_abs_error and dev.rel_fro_error == pytest.approx(host.rel_fro_error)


def test_host_inputs_are_numpys_draws_of_the_seed():
    """Without CuPy's GPU path, make_inputs draws what NumPy's generator gives for the seed:
    INT8 as int8 directly, FP16 uniform in [-1, 1], so a record's seed replays its inputs."""
    _, _, a, b = make_inputs(PRECISIONS["int8"], 32, 16, 64, np.random.default_rng(21))
    rng = np.random.default_rng(21)
    assert np.array_equal(a, rng.integers(-128, 128, size=(32, 64), dtype=np.int8))
    assert np.array_equal(b, rng.integers(-128, 128, size=(16, 64), dtype=np.int8))
    a16, *_ = make_inputs(PRECISIONS["fp16"], 8, 8, 16, np.random.default_rng(22))
    assert np.array_equal(a16, np.random.default_rng(22).uniform(-1, 1, size=(8, 16)).astype(np.float16))


@pytest.mark.gpu
@pytest.mark.parametrize("prec", ["fp16", "int8", "int4"])
@pytest.mark.parametrize("b_layout", ["col", "row"])
def test_inputs_drawn_on_the_gpu(prec, b_layout):
    """device_rng gives CuPy on a GPU; its inputs stay there, span the precision's range, are
    the same for one seed, and their byte images hold the values (INT4 unpacked here)."""
    cupy = pytest.importorskip("cupy")
    from analysis.gpu.harness import device_rng

    p = PRECISIONS[prec]
    xp, rng = device_rng(5)
    assert xp is cupy
    a_dev, b_dev, a, b = make_inputs(p, 128, 64, 256, rng, b_layout=b_layout, xp=xp)
    assert all(isinstance(v, cupy.ndarray) for v in (a_dev, b_dev, a, b))
    assert a.shape == (128, 256) and b.shape == (64, 256) and a.dtype == np.float64
    assert float(a.min()) >= p.lo and float(a.max()) <= p.hi and int(cupy.count_nonzero(a)) > 0.9 * a.size
    if p.exact:  # every integer of the range is drawn
        assert int(cupy.unique(a).size) == p.hi - p.lo + 1
    again = make_inputs(p, 128, 64, 256, device_rng(5)[1], b_layout=b_layout, xp=xp)
    assert bool(cupy.array_equal(again[2], a)) and bool(cupy.array_equal(again[3], b))
    img = cupy.asnumpy(b_dev)
    if prec == "int4":
        nib = np.stack([img & 0xF, img >> 4], axis=-1).reshape(img.shape[0], -1).astype(np.int16)
        img = np.where(nib > 7, nib - 16, nib)
    assert np.array_equal(img.astype(np.float64), cupy.asnumpy(b if b_layout == "col" else b.T))
