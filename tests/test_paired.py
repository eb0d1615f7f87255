"""Kernels timed in pairs with their library GEMM (analysis.gpu.paired, rule references),
tested on the committed paired.csv of the whole-registry set."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pandas as pd
import pytest
import yaml

from analysis.gpu.paired import PairedKernel, paired_ratios
from analysis.gpu.references import library_gemms_paired
from analysis.reports.setfiles import SetFileError, read_paired
from analysis.study.claims import TUNED_TARGET, WGMMA_TARGET, claims, library_target
from analysis.workflow import kernel_options, kernel_target, tiling_from_config

from .conftest import DEFAULT_SET, REPO

ALL_SET = REPO / "profiles" / f"{DEFAULT_SET}_all"
PAIRED = ALL_SET / "paired.csv"
CONFIG = yaml.safe_load((REPO / "config" / "config.yaml").read_text())


@pytest.fixture(scope="module")
def paired() -> pd.DataFrame:
    return read_paired(PAIRED)


def test_committed_file_alternates_and_covers_every_n(paired):
    """Every kernel of the committed file has the configured rounds at every configured N,
    half of them with the kernel first."""
    rounds = CONFIG["timing"]["paired_rounds"]
    for (kernel, n), g in paired.groupby(["kernel", "n"]):
        assert sorted(g["round"]) == list(range(rounds)), (kernel, n)
        assert (g["first"] == "kernel").sum() == math.ceil(rounds / 2), (kernel, n)
    assert set(paired["n"]) == set(CONFIG["sizes"])
    # every such kernel of the registry that the set's run timed (kernels registered later are not in it)
    timed = set(pd.read_csv(ALL_SET / "timings.csv")["kernel"])
    expected = {k for k, s in CONFIG["kernels"].items()
                if not s.get("study", True) and s["precision"] in ("fp16", "int8") and k in timed}
    assert set(paired["kernel"]) == expected


def test_ratios_are_matched_by_position(paired):
    """ratio_first compares the rounds where each ran first, ratio_second those where each
    ran second, and ratio is their geometric mean: recomputed here from the rows."""
    got = paired_ratios(paired).set_index(["kernel", "n"])
    assert len(got) == paired.groupby(["kernel", "n"]).ngroups
    for (kernel, n), g in paired.groupby(["kernel", "n"]):
        even, odd = g[g["round"] % 2 == 0], g[g["round"] % 2 == 1]
        # odd rounds ran the library first: its first-position timings are there
        first = odd["library_median_ns"].median() / even["kernel_median_ns"].median()
        second = even["library_median_ns"].median() / odd["kernel_median_ns"].median()
        row = got.loc[(kernel, n)]
        assert row["ratio_first"] == pytest.approx(first, rel=1e-12)
        assert row["ratio_second"] == pytest.approx(second, rel=1e-12)
        assert row["ratio"] == pytest.approx(math.sqrt(first * second), rel=1e-12)


def test_a_missing_position_gives_no_ratio(paired):
    """With the odd rounds removed neither ran second to the other's first: every ratio is
    NaN, not a number made from one position."""
    got = paired_ratios(paired[paired["round"] % 2 == 0])
    assert len(got) == paired.groupby(["kernel", "n"]).ngroups
    assert got[["ratio_first", "ratio_second", "ratio"]].isna().all().all()


def test_claim_judges_each_kernel_by_its_target(paired, summ, registry, static, references):
    """The claims row of paired timings lists every kernel at the largest N with its ratio,
    and holds exactly when every kernel with a target reaches it."""
    rows = claims(summ, registry, static, "sm_90", references, paired)
    row = rows[rows["claim"].str.contains("timed in pairs")].iloc[0]
    ratios = paired_ratios(paired)
    at = ratios[ratios["n"] == ratios["n"].max()]
    targets = {k: library_target(registry[k]) for k in at["kernel"]}
    assert {TUNED_TARGET["fp16"], TUNED_TARGET["int8"], WGMMA_TARGET} <= set(targets.values())
    for _, r in at.iterrows():
        assert f"{r['kernel']} {r['ratio']:.2f}x" in row["measured"]
    assert row["holds"] == all(r["ratio"] >= targets[r["kernel"]] for _, r in at.iterrows())


def test_without_paired_timings_the_claims_are_unchanged(summ, registry, static, references):
    """A set without paired.csv gets no paired row: the study set's claims stay as committed."""
    rows = claims(summ, registry, static, "sm_90", references)
    assert not rows["claim"].str.contains("timed in pairs").any()
    committed = pd.read_csv(REPO / "figures" / DEFAULT_SET / "study" / "claims.csv")
    assert list(rows["claim"]) == list(committed["claim"])


def _relabel_one_row(d: pd.DataFrame, kernel: str) -> pd.DataFrame:
    """One row of ``kernel`` relabelled INT8 (with the INT8 library, so the row is consistent)."""
    i = d.index[d["kernel"] == kernel][0]
    return d.assign(precision=d["precision"].where(d.index != i, "int8"),
                    library=d["library"].where(d.index != i, "cublaslt_int8"))


@pytest.mark.parametrize(("edit", "cause"), [
    (lambda d: d.assign(first=d["first"].where(d["round"] != 1, "kernel")), "first is kernel in even rounds"),
    (lambda d: d.assign(kernel_median_ns=d["kernel_median_ns"].where(d.index != 3, -1.0)), "kernel_median_ns"),
    (lambda d: d.assign(library_median_ns=d["library_median_ns"].where(d.index != 0, np.nan)), "library_median_ns"),
    (lambda d: pd.concat([d, d.iloc[[0]]]), "unique"),
    (lambda d: d.drop(columns=["first"]), "no column first"),
    (lambda d: d.assign(kernel_median_ns=d["kernel_median_ns"].where(d.index != 5, np.inf)), "finite"),
    (lambda d: d.assign(library=d["library"].where(d.index != 2, "cublaslt_int8")),
     "library is one of the precision's references"),
    (lambda d: _relabel_one_row(d, "fp16_wgmma"), "kernel fp16_wgmma is given more than one precision"),
    (lambda d: d[~((d["kernel"] == "fp16_wgmma") & (d["n"] == 8192) & (d["round"] % 2 == 1))],
     "fp16_wgmma N=8192: every round has the kernel first"),
    (lambda d: d.assign(n=d["n"].astype(float).where(d.index != 7, 8192.5)), "n: not a whole number in row 9"),
    (lambda d: d.assign(round=d["round"].astype(float).where(d.index != 1, 1.9)), "round: not a whole number"),
])
def test_damaged_file_is_refused_naming_it(tmp_path, edit, cause):
    """A copy of the committed file with one fault is refused, naming the file and the cause."""
    bad = tmp_path / "paired.csv"
    edit(pd.read_csv(PAIRED)).to_csv(bad, index=False)
    with pytest.raises(SetFileError, match=rf"paired\.csv(.|\n)*{cause}"):
        read_paired(bad)


def test_kernels_must_belong_to_the_registry_and_the_set(paired, registry, summ):
    """A kernel the registry lacks, a precision the registry contradicts, or kernels the set
    does not hold (the whole-registry set's file put beside the study set) are refused,
    naming the file; the committed file passes against its own set's kernels."""
    from analysis.gpu.paired import check_paired_kernels

    check_paired_kernels(paired, registry, set(paired["kernel"]), PAIRED)
    renamed = paired.assign(kernel=paired["kernel"].replace("fp16_wgmma", "fp16_mystery"))
    with pytest.raises(SetFileError, match=r"paired\.csv.*not in the registry.*fp16_mystery"):
        check_paired_kernels(renamed, registry, set(renamed["kernel"]), PAIRED)
    relabelled = paired.assign(precision=paired["precision"].where(paired["kernel"] != "fp16_wgmma", "int8"))
    with pytest.raises(SetFileError, match=r"fp16_wgmma \(int8 here, fp16 in the registry\)"):
        check_paired_kernels(relabelled, registry, set(paired["kernel"]), PAIRED)
    with pytest.raises(SetFileError, match=r"does not hold.*fp16_ptx_tuned"):
        check_paired_kernels(paired, registry, set(summ["kernel"]), PAIRED)


def test_a_kernel_missing_at_the_largest_n_leaves_the_claim_open(paired, summ, registry, static, references):
    """With fp16_ptx_tuned's rounds at N = 8192 removed the claim is not judged on the other
    three: holds is None and the missing kernel is named."""
    short = paired[~((paired["kernel"] == "fp16_ptx_tuned") & (paired["n"] == 8192))]
    row = claims(summ, registry, static, "sm_90", references, short)
    row = row[row["claim"].str.contains("timed in pairs")].iloc[0]
    assert row["holds"] is None and "not timed in pairs at N=8192: fp16_ptx_tuned" in row["measured"]


def test_refuses_too_few_rounds_and_kernels_without_a_library(tmp_path):
    """Checked before any GPU work: one round cannot match positions; INT4 has no library."""
    t = tiling_from_config(CONFIG, "int8_ptx_tuned")
    k8 = PairedKernel("int8_ptx_tuned", tmp_path / "x.cubin", "int8", t, {})
    with pytest.raises(ValueError, match="at least 2"):
        library_gemms_paired([512], 1, 1, 0, [k8], rounds=1)
    k4 = PairedKernel("int4_ptx_tuned_unpack_s8", tmp_path / "x.cubin", "int4", t, {})
    with pytest.raises(ValueError, match="int4 has no library GEMM"):
        library_gemms_paired([512], 1, 1, 0, [k4], rounds=2)


@pytest.mark.gpu
def test_times_a_kernel_in_pairs_on_the_gpu(tmp_path):
    """On a GPU with PyTorch: int8_ptx_tuned and cuBLASLt alternate, four rounds at N = 512
    right after the library's own timing, every duration positive, the kernel first in even
    rounds."""
    pytest.importorskip("torch")
    from analysis.gpu.build import compile_cubin
    from analysis.gpu.device import detect_gpu

    kernel = "int8_ptx_tuned"
    spec = CONFIG["kernels"][kernel]
    target = kernel_target(detect_gpu().arch, spec["archs"])
    if target is None:
        pytest.skip(f"{kernel} is not built for this GPU")
    t = tiling_from_config(CONFIG, kernel)
    compile_cubin(REPO / "kernels" / f"{kernel}.cu", kernel, target, t.defines(), tmp_path / "k.cubin",
                  tmp_path / "k.json")
    refs, rows, note = library_gemms_paired(
        [512], 2, 5, 7, [PairedKernel(kernel, tmp_path / "k.cubin", "int8", t, kernel_options(spec))], rounds=4)
    assert note == ""
    triton = importlib.util.find_spec("triton") is not None  # the Triton GEMMs, where installed
    libs = ["cublaslt_int8", "triton_int8"] if triton else ["cublaslt_int8"]
    fp16 = ["cublas_fp16", "cublas_fp16_f32out", *(["triton_fp16"] if triton else [])]  # cuBLAS writing FP32 C too
    assert [r.name for r in refs] == [*fp16, *libs]
    assert [(r.library, r.round, r.first) for r in rows] == [
        (lib, r, "kernel" if r % 2 == 0 else "library") for lib in libs for r in range(4)]
    assert all(r.kernel_median_ns > 0 and r.library_median_ns > 0 for r in rows)


def test_every_committed_run_reads_cleanly(registry):
    """The runs kept in docs/paired-timing (and the set's own) pass the reader and the
    registry check, and each covers the four kernels at every configured N."""
    from analysis.gpu.paired import check_paired_kernels

    files = sorted((REPO / "docs" / "paired-timing").glob("*_paired.csv")) + [PAIRED]
    assert len(files) == 6
    for f in files:
        d = read_paired(f)
        check_paired_kernels(d, registry, set(d["kernel"]), f)
        r = paired_ratios(d)
        assert len(r) == 4 * len(CONFIG["sizes"]) and r["ratio"].notna().all(), f
