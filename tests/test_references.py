"""Hopper's wgmma ceilings and the Triton GEMMs beside the libraries (analysis.gpu.references,
analysis.gpu.triton_gemm), and how the study draws and judges with them, on the committed
set of the run that measured them (h200_580.159.04_ncu2025.3.1_refs)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from analysis.gpu.paired import paired_ratios
from analysis.gpu.triton_gemm import CONFIGS
from analysis.precision import TRITON_NAMES
from analysis.reports.setfiles import SetFileError, read_paired, read_references
from analysis.study.claims import kernel_summary
from analysis.study.plots import _ceilings, datasheet_peaks
from analysis.study.targets import _paired_claim, best_reference

from .conftest import DEFAULT_SET, REPO

REFS = REPO / "profiles" / f"{DEFAULT_SET}_refs"


@pytest.fixture(scope="module")
def refs() -> pd.DataFrame:
    return read_references(REFS / "references.csv")


def test_the_wgmma_ceilings_exceed_the_mma_sync_ones(refs):
    ceil = refs[refs["kind"] == "ceiling"].set_index("name")
    for prec, mma, wgmma in (("fp16", "peak_mma_m16n8k16_f16_f32", "peak_wgmma_m64n256k16_f16_f32"),
                             ("int8", "peak_mma_m16n8k32_s8_s32", "peak_wgmma_m64n256k32_s8_s32")):
        for wg in (2, 3):
            row = ceil.loc[f"{wgmma}_wg{wg}"]
            assert row["precision"] == prec and f"({wg} warpgroups per SM)" in row["source"]
            assert row["rate"] > 1.3 * ceil.loc[mma, "rate"]  # wgmma, not mma.sync, bounds Hopper
    # work = SMs x warpgroups x iterations x 4 wgmma x 2*64*256*K ops
    row = ceil.loc["peak_wgmma_m64n256k32_s8_s32_wg3"]
    assert row["work"] == 132 * 3 * 2048 * 4 * 2 * 64 * 256 * 32
    assert row["rate"] == pytest.approx(row["work"] / row["median_ns"] / 1e3)


def test_the_triton_gemm_is_measured_at_every_n_and_names_its_configuration(refs):
    tri = refs[refs["name"].isin(TRITON_NAMES.values())]
    assert sorted(set(zip(tri["precision"], tri["n"]))) == sorted((p, n) for p in ("fp16", "int8")
                                                                   for n in (512, 1024, 2048, 4096, 8192))
    assert tri["source"].str.contains(f"autotuned over {len(CONFIGS['fp16'])} configurations").all()
    assert tri["source"].str.contains(r"chose \d+ x \d+ x \d+, \d stages, \d warps").all()


def test_the_fastest_reference_of_each_precision_is_named(refs):
    int8, fp16 = best_reference(refs, "int8", 8192), best_reference(refs, "fp16", 8192)
    lib = refs[refs["n"] == 8192].set_index("name")["rate"]
    assert int8["name"] == "triton_int8" and int8["rate"] == lib["triton_int8"] > lib["cublaslt_int8"]
    assert fp16["name"] == "cublas_fp16" and fp16["rate"] == lib["cublas_fp16"] > lib["triton_fp16"]
    assert best_reference(refs, "int4", 8192) is None and best_reference(None, "int8", 8192) is None


def test_each_panel_draws_the_highest_ceiling_of_each_instruction(refs):
    assert list(_ceilings(refs, "fp16")["name"]) == ["peak_mma_m16n8k16_f16_f32", "peak_wgmma_m64n256k16_f16_f32_wg2"]
    int8 = _ceilings(refs, "int8").set_index("name")["rate"]
    assert int8.index.tolist() == ["peak_mma_m16n8k32_s8_s32", "peak_wgmma_m64n256k32_s8_s32_wg3"]
    wg = refs.set_index("name")["rate"]
    assert int8.iloc[1] == max(wg["peak_wgmma_m64n256k32_s8_s32_wg2"], wg["peak_wgmma_m64n256k32_s8_s32_wg3"])
    assert set(_ceilings(refs, "int4")["precision"]) == {"int4", "int8"}  # the s8 bound of unpacking kernels


def test_kernel_rates_are_given_as_a_fraction_of_the_highest_ceiling(refs):
    """The set's kernel summary as the main job wrote it (rule study, kernel_summary with
    references.csv), and the function on that table's own columns."""
    ks = pd.read_csv(REPO / "figures" / f"{DEFAULT_SET}_refs" / "study" / "kernel_summary.csv")
    top = refs[refs["kind"] == "ceiling"].groupby("precision")["rate"].max()
    for prec in ("fp16", "int8"):
        rows = ks[ks["precision"] == prec]
        assert rows["fraction_of_ceiling"].to_numpy() == pytest.approx((rows["throughput"] / top[prec]).to_numpy())
        assert rows["ceiling"].str.startswith("peak_wgmma").all()
    summary = ks.rename(columns={"duration_median_ns": "median_ns", "duration_p25_ns": "p25_ns",
                                 "duration_p75_ns": "p75_ns"}).drop(columns=["ceiling", "fraction_of_ceiling"])
    again = kernel_summary(summary, None, None, refs)
    assert again["fraction_of_ceiling"].to_numpy() == pytest.approx(ks["fraction_of_ceiling"].to_numpy())
    assert "ceiling" not in kernel_summary(summary, None, None, None)


def test_the_datasheet_peaks_of_the_gpu():
    s = pd.DataFrame({"gpu": ["NVIDIA H200"]})
    assert datasheet_peaks(s, "fp16")["rate"].tolist() == [989.4]
    assert datasheet_peaks(s, "int8")["rate"].tolist() == [1978.9]
    assert datasheet_peaks(pd.DataFrame({"gpu": ["NVIDIA L4"]}), "fp16").empty


def test_kernels_paired_with_two_references_are_judged_against_the_fastest():
    paired = read_paired(REFS / "paired.csv")
    r = paired_ratios(paired)
    assert set(r.groupby("kernel")["library"].nunique()) == {2}
    rows = []
    registry = __import__("yaml").safe_load((REPO / "config" / "config.yaml").read_text())["kernels"]
    _paired_claim(lambda *a, **k: rows.append(a), paired, registry)
    measured = rows[0][2]
    at = r[r["n"] == 8192]
    for kernel, g in at.groupby("kernel"):
        worst = g.loc[g["ratio"].idxmin()]
        assert f"{kernel} {worst['ratio']:.2f}x {worst['library']}" in measured
        assert f"{kernel} {worst['ratio']:.2f}x {worst['library']} (first {worst['ratio_first']:.2f}, second " \
               f"{worst['ratio_second']:.2f}, target" in measured  # the target is judged on this one


@pytest.mark.parametrize("found, wrong", [("triton_int8", "triton_fp16"), ("cublaslt_int8", "cublas_fp16_f32out")])
def test_a_reference_of_the_wrong_precision_is_refused(tmp_path, found, wrong):
    """An INT8 row naming an FP16 reference (the Triton one, or cuBLAS writing FP32 C)."""
    d = pd.read_csv(REFS / "paired.csv")
    i = d.index[d["library"] == found][0]
    d.loc[i, "library"] = wrong
    d.to_csv(tmp_path / "paired.csv", index=False)
    with pytest.raises(SetFileError, match="library is one of the precision's references"):
        read_paired(tmp_path / "paired.csv")


@pytest.mark.gpu
def test_the_wgmma_ceilings_and_triton_run_on_the_gpu(tmp_path):
    """On a Hopper GPU: both wgmma loops at 2 warpgroups run and exceed 500 TFLOP/s and
    1000 TOP/s; with Triton and PyTorch, the Triton GEMMs pass the library's check at N = 512."""
    from analysis.gpu.build import compile_cubin
    from analysis.gpu.device import detect_gpu
    from analysis.gpu.references import WGMMA_FILLS, triton_reference, wgmma_ceilings

    if detect_gpu().arch != "sm_90":
        pytest.skip("the wgmma ceilings need an sm_90 GPU")
    compile_cubin(REPO / "kernels" / "ceilings" / "wgmma_peak.cu", "peak_wgmma_m64n256k16_f16_f32", "sm_90",
                  ["-arch=sm_90a"], tmp_path / "w.cubin", tmp_path / "w.json")
    rows = wgmma_ceilings(tmp_path / "w.cubin", 2, 5, iters=256, warpgroups=(2,))
    rate = {r.name: r.rate for r in rows}
    # each loop in both operand fills (WGMMA_FILLS), the fill named in the row's source
    assert sorted(rate) == sorted(f"{k}{fill}_wg2" for k in ("peak_wgmma_m64n256k16_f16_f32",
                                                             "peak_wgmma_m64n256k32_s8_s32") for fill in WGMMA_FILLS)
    assert all(WGMMA_FILLS["_random" if "_random" in r.name else ""] in r.source for r in rows)
    assert all(rate[k] > (500 if "f16" in k else 1000) for k in rate)
    torch = pytest.importorskip("torch")
    pytest.importorskip("triton")
    import numpy as np

    from analysis.gpu.harness import make_inputs
    from analysis.precision import precision_of

    for prec in ("fp16", "int8"):
        rng = np.random.default_rng(1)
        name, launch, what = triton_reference(torch, prec, 512, rng, make_inputs(precision_of(prec), 512, 512, 512, rng))
        assert name == TRITON_NAMES[prec] and "chose" in what


def test_the_same_output_reference_is_accepted_for_fp16(tmp_path):
    """cublas_fp16_f32out (cuBLAS writing FP32 C) is one of the FP16 references of paired.csv
    (an INT8 row naming it: test_a_reference_of_the_wrong_precision_is_refused)."""
    d = pd.read_csv(REFS / "paired.csv")
    fp16 = d[d["library"] == "cublas_fp16"].assign(library="cublas_fp16_f32out")
    pd.concat([d, fp16]).to_csv(tmp_path / "paired.csv", index=False)
    assert set(read_paired(tmp_path / "paired.csv")["library"]) >= {"cublas_fp16", "cublas_fp16_f32out"}


@pytest.mark.gpu
def test_the_same_output_reference_writes_fp32_c_and_is_checked():
    """On a GPU with PyTorch: cuBLAS FP16 with FP32 C passes the library's check at N = 512 and
    is timed beside the other references; the check refuses the same C with one wrong element
    in every sampled row."""
    pytest.importorskip("torch")
    import numpy as np

    from analysis.errors import CheckFailedError
    from analysis.gpu.harness import make_inputs, sample_rows
    from analysis.gpu.references import _check_library, cuda_torch, library_gemms, same_output_gemm
    from analysis.precision import precision_of

    torch, why = cuda_torch()
    if torch is None:
        pytest.skip(why)
    prec = precision_of("fp16")
    rng = np.random.default_rng(3)
    inputs = make_inputs(prec, 512, 512, 512, rng)
    got = same_output_gemm(torch, "fp16", 512, rng, inputs)
    if got is None:
        pytest.skip(f"torch {torch.__version__}: torch.mm takes no out_dtype")
    name, launch, what = got
    assert name == "cublas_fp16_f32out" and "FP32 out" in what
    a_host, b_host, a_ref, b_ref = inputs
    c = torch.mm(torch.from_numpy(a_host).cuda(), torch.from_numpy(b_host).cuda().t(), out_dtype=torch.float32)
    c = c.cpu().numpy()
    assert c.dtype == np.float32
    rows = sample_rows(512, 64, rng)
    _check_library(name, 512, prec, c, a_ref, b_ref, rows)
    c[rows, 0] += 1.0
    with pytest.raises(CheckFailedError, match="cublas_fp16_f32out N=512"):
        _check_library(name, 512, prec, c, a_ref, b_ref, rows)
    refs, _ = library_gemms([512], 2, 5, 0)
    assert {r.name for r in refs} >= {"cublas_fp16", "cublas_fp16_f32out", "cublaslt_int8"}


@pytest.mark.parametrize("column,value,match", [
    ("rate", float("inf"), "rate: finite fails"),
    ("rate", 1e-30, "rate = work / median_ns / 1e3"),
    ("median_ns", 1.0, "rate = work / median_ns / 1e3"),
    ("unit", "TFLOP/s", "unit is the precision's"),
])
def test_an_implausible_reference_row_is_refused_naming_the_file(tmp_path, column, value, match):
    """A references.csv row whose rate is infinite, disagrees with its work and median, or is
    given in another precision's unit is refused, naming the file, rather than judged against
    (the registry set's random-operand s8 ceiling, changed in one column)."""
    d = pd.read_csv(REPO / "profiles" / f"{DEFAULT_SET}_registry" / "references.csv")
    d.loc[d["name"] == "peak_wgmma_m64n256k32_s8_s32_random_wg3", column] = value
    d.to_csv(tmp_path / "references.csv", index=False)
    with pytest.raises(SetFileError, match=rf"references\.csv: reference rates: .*{re.escape(match)}"):
        read_references(tmp_path / "references.csv")


def _sass_by_function(text: str) -> dict[str, list[str]]:
    """``cuobjdump -sass`` text -> function name -> its instruction lines."""
    out: dict[str, list[str]] = {}
    lines: list[str] = []
    for line in text.splitlines():
        m = re.match(r"\s+Function : (\S+)", line)
        if m:
            lines = out.setdefault(m.group(1), [])
        elif "/*" in line and ";" in line:
            lines.append(line)
    return out


def test_the_rotating_a_loops_differ_from_the_random_ones_only_in_their_a(tmp_path):
    """The development loops ``peak_*_random_rot`` of kernels/ceilings/wgmma_peak.cu (each
    warpgroup's A a quarter of the random B tile, another at every iteration) issue as many wgmma
    of the same shape as the ``peak_*_random`` loops, keep one commit group in flight
    (``WARPGROUP.DEPBAR.LE gsb0, 0x1``), spill nothing, and are not among the fills the
    workflow's references measure."""
    from analysis.gpu.build import compile_cubin, disassemble
    from analysis.gpu.references import WGMMA_FILLS

    cubin = tmp_path / "w.cubin"
    compile_cubin(REPO / "kernels" / "ceilings" / "wgmma_peak.cu", "peak_wgmma_m64n256k16_f16_f32", "sm_90",
                  ["-arch=sm_90a"], cubin, tmp_path / "w.json")
    disassemble(cubin, tmp_path / "w.sass")
    funcs = _sass_by_function((tmp_path / "w.sass").read_text())
    for base, op in (("peak_wgmma_m64n256k32_s8_s32", "IGMMA.64x256x32.S8.S8"),
                     ("peak_wgmma_m64n256k16_f16_f32", "HGMMA.64x256x16.F32")):
        rnd, rot = funcs[base + "_random"], funcs[base + "_random_rot"]
        count = [sum(op in line for line in f) for f in (rnd, rot)]
        assert count[0] == count[1] > 0, (base, count)
        assert any("WARPGROUP.DEPBAR.LE gsb0, 0x1" in line for line in rot), base
        assert not any(re.search(r"\b(STL|LDL)\b", line) for line in rot), base
    assert not any(fill.endswith("_rot") for fill in WGMMA_FILLS)
