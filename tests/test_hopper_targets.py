"""The whole-registry sets with the wgmma ceilings and the Triton references (each from one run:
h200_580.159.04_ncu2025.3.1_registry on an H200, h100-80gb-hbm3_580.159.04_ncu2025.3.1_registry
on an H100), and the claims that judge the Hopper targets on each (analysis.study.targets.
_hopper_claims and the INT4 target), recomputed here from the set's raw files."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from analysis.gpu.references import WGMMA_FILLS
from analysis.precision import PAIRED_REFERENCES
from analysis.reports.parse import parse_reports
from analysis.reports.setfiles import read_paired, read_references
from analysis.study.targets import (FP16_WGMMA_VS_BEST_REFERENCE, INT4_VS_INT8_TARGET, INT8_WGMMA_VS_CEILING,
                                    RANDOM_FILL, SM_CLOCK, TENSOR_ACTIVE, _hopper_claims,
                                    profiled_pipe_note, random_operand_note)

from analysis.workflow import profile_sizes

from .conftest import DEFAULT_SET, REPO

#: the whole-registry sets, each from one run, and the registry's kernels each run predates
REGISTRY_SETS = {f"{DEFAULT_SET}_registry": {"int4_wgmma_epi_tma"},
                 "h100-80gb-hbm3_580.159.04_ncu2025.3.1_registry": set()}
CONFIG = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
REGISTRY = CONFIG["kernels"]
#: the registry's FP16 wgmma kernels (mma naming wgmma), whose pairs the FP16 claim judges
FP16_WGMMA = sorted(k for k, spec in REGISTRY.items() if "wgmma" in spec["mma"] and spec["precision"] == "fp16")


@pytest.fixture(scope="module", params=sorted(REGISTRY_SETS))
def profiles(request) -> Path:
    """The folder of one whole-registry set (each test runs on every one)."""
    return REPO / "profiles" / request.param


@pytest.fixture(scope="module")
def timings(profiles) -> pd.DataFrame:
    t = pd.read_csv(profiles / "timings.csv")
    t["throughput"] = 2 * t["n"].astype(float) ** 3 / t["median_ns"] / 1e3
    return t


@pytest.fixture(scope="module")
def set_claims(profiles) -> pd.DataFrame:
    """The set's claims as the main job wrote them (rule study)."""
    return pd.read_csv(REPO / "figures" / profiles.name / "study" / "claims.csv").set_index("claim")


def test_one_run_holds_every_kernel_with_the_ceilings_and_references(timings, profiles):
    """Every registry kernel at every N, a report each, the mma.sync and wgmma ceilings, both
    references of each precision at every N, and every kernel with a library target timed in
    pairs with both."""
    sizes = [512, 1024, 2048, 4096, 8192]
    held = [k for k in REGISTRY if k not in REGISTRY_SETS[profiles.name]]  # the registry as it was run
    assert sorted(set(zip(timings["kernel"], timings["n"]))) == sorted((k, n) for k in held for n in sizes)
    # profiled at every N (the study's kernels) or at profile.sizes_beyond_study (the others)
    assert sorted(p.name for p in (profiles / "reports").iterdir()) == sorted(
        f"{k}_n{'-'.join(map(str, profile_sizes(CONFIG, k)))}.ncu-rep.xz" for k in held)
    refs = read_references(profiles / "references.csv")
    names = set(refs["name"])
    assert {f"peak_wgmma_m64n256k16_f16_f32_wg{w}" for w in (2, 3)} <= names
    assert {f"peak_wgmma_m64n256k32_s8_s32_wg{w}" for w in (2, 3)} <= names
    # each wgmma loop with both operand fills (analysis.gpu.references.WGMMA_FILLS)
    assert {f"{k}{fill}_wg{w}" for k in ("peak_wgmma_m64n256k16_f16_f32", "peak_wgmma_m64n256k32_s8_s32")
            for fill in WGMMA_FILLS for w in (2, 3)} <= names
    lib = refs[refs["kind"] == "library"]
    every_reference = [r for names in PAIRED_REFERENCES.values() for r in names]
    assert "cublas_fp16_f32out" in every_reference  # cuBLAS writing FP32 C, as the FP16 kernels do
    assert sorted(set(zip(lib["name"], lib["n"]))) == sorted((r, n) for r in every_reference for n in sizes)
    paired = read_paired(profiles / "paired.csv")
    tuned_or_wgmma = {k for k, s in REGISTRY.items() if k in held and s["precision"] in ("fp16", "int8")
                      and ("wgmma" in s["mma"] or ("tiling" in s and "wmma" not in s["mma"]))}
    assert set(paired["kernel"]) == tuned_or_wgmma
    # each of them against every reference of its precision, at every N
    pairs = set(zip(paired["kernel"], paired["library"], paired["n"]))
    assert pairs == {(k, r, n) for k in tuned_or_wgmma for r in PAIRED_REFERENCES[REGISTRY[k]["precision"]]
                     for n in sizes}
    assert {"fp16_wgmma_cluster", "int8_wgmma_cluster"} <= tuned_or_wgmma


def int8_wgmma_kernels() -> list[str]:
    """The registry's INT8 kernels whose mma names wgmma, the ones the INT8 claim takes the fastest of."""
    return sorted(k for k, spec in REGISTRY.items() if spec["precision"] == "int8" and "wgmma" in spec["mma"])


def _ratio(p: pd.DataFrame) -> float:
    """The geometric mean of the position-matched ratios (library ns / kernel ns, medians over
    the rounds both ran first, and second), from the raw rounds."""
    parts = []
    for who_first in ("kernel", "library"):
        r = p[p["first"] == who_first]
        parts.append(r["library_median_ns"].median() / r["kernel_median_ns"].median())
    return math.sqrt(parts[0] * parts[1])


def _smallest_pair(g: pd.DataFrame) -> tuple[float, str]:
    """One kernel's pairs at one N: its smallest paired ratio over its references, and that reference."""
    return min((_ratio(g[g["library"] == lib]), lib) for lib in set(g["library"]))


def _worst_fp16_pairs(paired: pd.DataFrame) -> dict[str, float]:
    """Each FP16 wgmma kernel's smallest paired ratio at N = 8192 over its references."""
    at = paired[(paired["n"] == 8192) & paired["kernel"].isin(FP16_WGMMA)]
    return {k: _smallest_pair(g)[0] for k, g in at.groupby("kernel")}


def test_the_fp16_wgmma_target_is_judged_on_the_pairs(set_claims, profiles):
    worst = _worst_fp16_pairs(pd.read_csv(profiles / "paired.csv"))
    assert set(worst) == set(FP16_WGMMA)
    row = set_claims.loc["Beyond the study: a hand-written wgmma kernel matches the fastest FP16 reference GEMM"]
    for kernel, ratio in worst.items():
        assert f"{kernel} {ratio:.3f}x cublas_fp16" in row["measured"]  # cuBLAS is the faster FP16 reference
    assert row["holds"] == (max(worst.values()) >= FP16_WGMMA_VS_BEST_REFERENCE)


def test_the_int8_wgmma_target_is_judged_against_the_highest_s8_wgmma_ceiling(timings, set_claims, profiles):
    refs = pd.read_csv(profiles / "references.csv")
    ceil = refs[refs["name"].str.startswith("peak_wgmma") & (refs["precision"] == "int8")]["rate"].max()
    at = timings[(timings["n"] == 8192) & timings["kernel"].isin(int8_wgmma_kernels())]
    best = at.loc[at["throughput"].idxmax()]
    row = set_claims.loc["Beyond the study: the INT8 wgmma kernel runs near the s8 wgmma ceiling"]
    assert row["measured"].startswith(f"{best['kernel']} {best['throughput']:.1f} TOP/s")
    assert row["measured"].endswith(f"= {best['throughput'] / ceil:.3f}")
    assert row["holds"] == (best["throughput"] / ceil >= INT8_WGMMA_VS_CEILING)


def test_the_int8_claim_also_gives_the_fraction_of_the_random_operand_ceiling(timings, set_claims, profiles):
    """The note names the highest s8 wgmma ceiling whose operands are random like the kernels'
    inputs and the best kernel's rate over it, from the set's raw rows; without such rows, or
    with their rates not numbers, there is no such note."""
    refs = read_references(profiles / "references.csv")
    s8 = refs[(refs["kind"] == "ceiling") & (refs["precision"] == "int8") & refs["name"].str.contains("wgmma")]
    rnd = s8[s8["name"].str.contains(RANDOM_FILL, regex=False)]
    assert len(rnd) == 2 and len(s8) == 4  # 2 and 3 warpgroups, each fill
    c = rnd.loc[rnd["rate"].idxmax()]
    at = timings[(timings["n"] == 8192) & timings["kernel"].isin(int8_wgmma_kernels())]
    best = at.loc[at["throughput"].idxmax()]
    said = f"({c['name']} {c['rate']:.1f} TOP/s): {best['throughput'] / c['rate']:.3f}"
    assert said in set_claims.loc["Beyond the study: the INT8 wgmma kernel runs near the s8 wgmma ceiling", "note"]
    assert random_operand_note(s8, best).endswith(said)
    assert random_operand_note(s8[~s8["name"].isin(rnd["name"])], best) == ""
    assert random_operand_note(s8.assign(rate=float("nan")), best) == ""
    assert random_operand_note(s8.assign(rate="n/a"), best) == ""
    # judged against random-operand ceilings only, the claim's own ratio is that one: no note
    assert random_operand_note(rnd, best) == ""


def test_the_int8_claim_gives_the_profiled_launchs_clock_and_tensor_pipe(timings, set_claims, profiles):
    """The INT8 claim's note names the best kernel's profiled launch at N = 8192 with its SM clock
    and tensor-pipe activity, as its report holds them (read here from the committed report)."""
    at = timings[(timings["n"] == 8192) & timings["kernel"].isin(int8_wgmma_kernels())]
    best = at.loc[at["throughput"].idxmax(), "kernel"]
    report = profiles / "reports" / f"{best}_n{'-'.join(map(str, profile_sizes(CONFIG, best)))}.ncu-rep.xz"
    m = parse_reports([report]).metrics[0]

    def value(metric):
        return m[(m["n"] == 8192) & (m["metric"] == metric)]["value"].iloc[0]

    note = set_claims.loc["Beyond the study: the INT8 wgmma kernel runs near the s8 wgmma ceiling", "note"]
    said = (f"in {best}'s profiled launch at N=8192: tensor pipe active {value(TENSOR_ACTIVE):.1f} % of active "
            f"cycles ({TENSOR_ACTIVE}) at an SM clock of {value(SM_CLOCK) / 1e9:.3f} GHz ({SM_CLOCK})")
    assert said in note
    # the same launch's values, one of them missing, NaN or not a number: no such note, no error
    row = pd.Series({"kernel": best, "n": 8192, SM_CLOCK: value(SM_CLOCK), TENSOR_ACTIVE: value(TENSOR_ACTIVE)})
    assert profiled_pipe_note(row) == "; " + said
    for bad in (row.drop(SM_CLOCK), row.drop(TENSOR_ACTIVE), row.replace({value(SM_CLOCK): float("nan")}),
                row.replace({value(TENSOR_ACTIVE): "n/a"})):
        assert profiled_pipe_note(bad) == ""


def test_the_int4_target_is_the_fastest_int4_over_the_fastest_int8(timings, set_claims):
    at = timings[timings["n"] == 8192]
    b4 = at[at["precision"] == "int4"].sort_values("throughput").iloc[-1]
    b8 = at[at["precision"] == "int8"].sort_values("throughput").iloc[-1]
    row = set_claims.loc[[c for c in set_claims.index if c.startswith("Beyond the study: INT4 unpacked")][0]]
    ratio = b4["throughput"] / b8["throughput"]
    # three decimals, so that a ratio just under the target does not print as the target
    assert row["measured"].startswith(f"{b4['kernel']} / {b8['kernel']} {ratio:.3f}x;")
    assert f">= {INT4_VS_INT8_TARGET:.2f}" in row["test"]
    if ratio < INT4_VS_INT8_TARGET:
        assert not row["holds"]


def test_without_pairs_or_ceilings_the_targets_are_not_measured(timings, profiles):
    rows = []
    _hopper_claims(lambda *a: rows.append(a), timings.assign(throughput_unit="TOP/s"), REGISTRY, None, None)
    assert [r[0] for r in rows] == ["Beyond the study: a hand-written wgmma kernel matches the fastest FP16 reference GEMM",
                                    "Beyond the study: the INT8 wgmma kernel runs near the s8 wgmma ceiling"]
    assert all(r[3] is None and r[2].startswith("not measured") for r in rows)
    # the ceilings of a set measured before the wgmma ones (mma.sync only) do not count
    refs = read_references(profiles / "references.csv")
    rows.clear()
    _hopper_claims(lambda *a: rows.append(a), timings.assign(throughput_unit="TOP/s"), REGISTRY,
                   refs[~refs["name"].str.contains("wgmma")], read_paired(profiles / "paired.csv"))
    assert rows[1][3] is None and rows[0][3] is not None


def test_a_kernel_without_a_paired_ratio_is_named_and_the_claim_not_judged(timings, profiles):
    """The committed pairs with fp16_wgmma_cluster's kernel timings at N = 8192 removed in
    one position (NaN, as a file with a position without rounds gives): named, not judged;
    bare tables (no columns) count as not measured, not as errors."""
    paired = read_paired(profiles / "paired.csv")
    gone = (paired["kernel"] == "fp16_wgmma_cluster") & (paired["n"] == 8192) & (paired["first"] == "kernel")
    rows = []
    _hopper_claims(lambda *a: rows.append(a), timings.assign(throughput_unit="TOP/s"), REGISTRY,
                   read_references(profiles / "references.csv"), paired[~gone])
    assert rows[0][2].endswith("no paired ratio at N=8192: fp16_wgmma_cluster") and rows[0][3] is None
    plain = paired[(paired["kernel"] == "fp16_wgmma") & (paired["n"] == 8192)]
    worst = min(_ratio(plain[plain["library"] == lib]) for lib in set(plain["library"]))
    assert rows[0][2].startswith(f"fp16_wgmma {worst:.3f}x cublas_fp16")
    rows.clear()
    _hopper_claims(lambda *a: rows.append(a), timings.iloc[:0], REGISTRY, pd.DataFrame(), pd.DataFrame())
    assert [r[3] for r in rows] == [None, None] and "the largest N" in rows[1][1]


def _judged_fp16_kernel(paired: pd.DataFrame) -> str:
    """The FP16 wgmma kernel the FP16 claim judges: the one whose smallest paired ratio at
    N = 8192 over its references is the largest."""
    worst = _worst_fp16_pairs(paired)
    return max(worst, key=worst.get)


def test_the_fp16_claim_names_a_reference_that_writes_c_in_another_dtype(set_claims, profiles):
    """cuBLAS's references.csv row says "FP16 out": against kernels writing FP32 C the note
    names both with the bytes of C at N = 8192; a row stating FP32 out (the same row with its
    source changed), or one stating no output dtype, gives no note. The set's claim carries the
    note of the kernel it judges: in the registry set that kernel writes FP16 C (no note), in the
    _same_output set, whose FP16 kernels all write FP32, it is named with both byte counts."""
    from analysis.precision import kernel_c_dtype
    from analysis.study.targets import _output_note

    refs = read_references(profiles / "references.csv")
    row = refs[(refs["name"] == "cublas_fp16") & (refs["n"] == 8192)]
    assert row["source"].str.contains("FP16 out").all()
    note = _output_note(refs, "cublas_fp16", 8192)
    assert note == (f"; cublas_fp16 writes C in FP16 (references.csv), the FP16 kernels in FP32: "
                    f"{2 * 8192 ** 2:,} against {4 * 8192 ** 2:,} bytes of C at N=8192")
    text = "Beyond the study: a hand-written wgmma kernel matches the fastest FP16 reference GEMM"
    paired = pd.read_csv(profiles / "paired.csv")
    judged = _judged_fp16_kernel(paired)
    # the reference of its smallest ratio, the one the claim names (cuBLAS writing FP16 C in the
    # H200 set, cuBLAS writing FP32 C in the H100 set)
    _, lib = _smallest_pair(paired[(paired["n"] == 8192) & (paired["kernel"] == judged)])
    own = _output_note(refs, lib, 8192, kernel_c_dtype(REGISTRY[judged]), judged)
    writes = {"cublas_fp16": np.dtype(np.float16), "cublas_fp16_f32out": np.dtype(np.float32)}[lib]
    assert (own == "") == (kernel_c_dtype(REGISTRY[judged]) == writes)
    assert set_claims.loc[text, "note"].startswith("paired.csv of this set" + own + ";")
    other = REPO / "profiles" / f"{DEFAULT_SET}_same_output"
    judged = _judged_fp16_kernel(pd.read_csv(other / "paired.csv"))
    claims = pd.read_csv(REPO / "figures" / other.name / "study" / "claims.csv").set_index("claim")
    assert claims.loc[text, "note"].startswith(
        f"paired.csv of this set; cublas_fp16 writes C in FP16 (references.csv), {judged} in FP32: "
        f"{2 * 8192 ** 2:,} against {4 * 8192 ** 2:,} bytes of C at N=8192")
    fp32 = refs.copy()
    fp32["source"] = fp32["source"].str.replace("FP16 out", "FP32 out")
    assert _output_note(fp32, "cublas_fp16", 8192) == ""
    assert _output_note(refs.drop(columns=["source"]), "cublas_fp16", 8192) == ""
    assert _output_note(refs, "cublas_fp16", 12345) == ""


SAME_OUTPUT = f"{DEFAULT_SET}_same_output"


def test_the_fp16_claim_gives_the_pairs_with_cublas_writing_fp32_c(profiles):
    """The _same_output set (one run of the FP16 and INT8 wgmma kernels, with cuBLAS FP16 writing
    FP32 C beside the other references): the FP16 claim is still judged on each kernel's
    smallest paired ratio over all its references, and its note gives each FP16 wgmma kernel's
    ratio against cublas_fp16_f32out, both recomputed here from the raw rounds; a set without
    that reference (the registry set's pairs without its rows) gets no such note."""
    from analysis.gpu.paired import paired_ratios
    from analysis.study.targets import _same_output_note

    paired = pd.read_csv(REPO / "profiles" / SAME_OUTPUT / "paired.csv")
    refs = read_references(REPO / "profiles" / SAME_OUTPUT / "references.csv")
    assert set(refs.loc[refs["name"] == "cublas_fp16_f32out", "n"]) == {512, 1024, 2048, 4096, 8192}
    claims = pd.read_csv(REPO / "figures" / SAME_OUTPUT / "study" / "claims.csv").set_index("claim")
    row = claims.loc["Beyond the study: a hand-written wgmma kernel matches the fastest FP16 reference GEMM"]
    at = paired[(paired["n"] == 8192) & paired["kernel"].isin(["fp16_wgmma", "fp16_wgmma_cluster"])]
    assert set(at["library"]) == {"cublas_fp16", "cublas_fp16_f32out", "triton_fp16"}
    for kernel, g in at.groupby("kernel"):
        by_lib = {lib: _ratio(h) for lib, h in g.groupby("library")}
        lib = min(by_lib, key=by_lib.get)
        assert f"{kernel} {by_lib[lib]:.3f}x {lib} (first" in row["measured"]
        assert f"{kernel} {by_lib['cublas_fp16_f32out']:.3f}x (first" in row["note"]
    assert "cublas_fp16_f32out (cuBLAS writing C in FP32, as the kernels do)" in row["note"]
    registry = paired_ratios(read_paired(profiles / "paired.csv"))
    assert "cublas_fp16_f32out" in set(registry["library"])
    assert _same_output_note(registry[registry["library"] != "cublas_fp16_f32out"], 8192) == ""


def test_the_fp16_claim_notes_follow_each_kernels_c_dtype(profiles):
    """A kernel writing FP16 C (registry c_dtype float16) against cuBLAS writing FP16 C gets no
    note on the bytes of C; one writing FP32 C is named with both byte counts. Against the
    FP32-C reference the note names the kernels that do not write FP32 (here fp16_wgmma given
    FP16 C over the registry set's real pairs), and names none where all write FP32."""
    from analysis.gpu.paired import paired_ratios
    from analysis.study.targets import _output_note, _same_output_note

    refs = read_references(profiles / "references.csv")
    assert _output_note(refs, "cublas_fp16", 8192, np.dtype(np.float16), "fp16_wgmma_cluster_f16c") == ""
    assert _output_note(refs, "cublas_fp16", 8192, np.dtype(np.float32), "fp16_wgmma") == (
        f"; cublas_fp16 writes C in FP16 (references.csv), fp16_wgmma in FP32: "
        f"{2 * 8192 ** 2:,} against {4 * 8192 ** 2:,} bytes of C at N=8192")
    ratios = paired_ratios(read_paired(profiles / "paired.csv"))
    ratios = ratios[ratios["kernel"].isin(["fp16_wgmma", "fp16_wgmma_cluster"])]
    mixed = _same_output_note(ratios, 8192, {"fp16_wgmma": np.dtype(np.float16),
                                             "fp16_wgmma_cluster": np.dtype(np.float32)})
    assert "(cuBLAS writing C in FP32, as the kernels do but fp16_wgmma, which writes FP16)" in mixed
    plain = _same_output_note(ratios, 8192, {"fp16_wgmma": np.dtype(np.float32)})
    assert plain == _same_output_note(ratios, 8192) and "as the kernels do)" in plain
