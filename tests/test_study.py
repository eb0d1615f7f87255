"""The study's tables, claims and figures, held against the committed H200 data they come from."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from analysis.study import claims as study
from analysis.study import figures
from analysis.study import plots as sf

from .conftest import DEFAULT_SET, REPO


@pytest.fixture(scope="module")
def sp(summ, registry):
    return study.speedups(summ, registry)


def test_speedup_is_the_ratio_of_the_two_medians(sp, timings):
    """Every speedup equals reference median / kernel median read straight from timings.csv."""
    med = timings.set_index(["kernel", "n"])["median_ns"]
    assert len(sp) > 50
    for r in sp.itertuples():
        assert r.speedup == pytest.approx(med[(r.reference, r.n)] / med[(r.kernel, r.n)], rel=1e-12)
    # every PTX kernel with a WMMA baseline appears at all five sizes
    base = sp[sp["comparison"] == "vs_baseline"]
    assert base.groupby("kernel")["n"].nunique().eq(5).all()
    assert {"int8_ptx_mma_k32", "fp16_ptx_mma_k16", "int4_ptx_mma_k64"} <= set(base["kernel"])


def test_faster_beyond_spread_uses_disjoint_quartiles(sp, timings):
    t = timings.set_index(["kernel", "n"])
    for r in sp.itertuples():
        assert r.faster_beyond_spread == (t.loc[(r.kernel, r.n), "p75_ns"] < t.loc[(r.reference, r.n), "p25_ns"])


def test_plotted_speedup_equals_the_table(sp):
    fig = sf.speedup(sp, "test")
    try:
        plotted = {}
        for ax in fig.axes:
            for line in ax.get_lines():
                label = line.get_label()
                if not label.startswith("_"):
                    plotted[label] = (list(line.get_xdata()), list(line.get_ydata()))
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
    base = sp[sp["comparison"] == "vs_baseline"]
    for kernel, g in base.sort_values("n").groupby("kernel"):
        assert plotted[kernel] == (g["n"].tolist(), g["speedup"].tolist())
    vs = sp[sp["comparison"] == "vs_fp16_wmma"]
    assert len(vs) == 2 * 5
    for kernel, g in vs.sort_values("n").groupby("kernel"):
        assert plotted[f"{kernel} / fp16_wmma"][1] == g["speedup"].tolist()


def test_spearman_known_values():
    assert study.spearman([1, 2, 3, 4], [10, 20, 30, 45]) == pytest.approx(1.0)
    assert study.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # ties get average ranks: ranks x = (1.5, 1.5, 3, 4), y = (1, 2, 3, 4)
    assert study.spearman([5, 5, 6, 7], [1, 2, 3, 4]) == pytest.approx(np.corrcoef([1.5, 1.5, 3, 4], [1, 2, 3, 4])[0, 1])
    assert np.isnan(study.spearman([1, 2], [2, 1]))


def test_printed_correlation_equals_the_computed_one(summ):
    """The rho printed on the occupancy figure equals the Pearson correlation of the average
    ranks (ties share the mean of their positions) over the panel's points, computed here
    independently with NumPy."""
    occ = study.OCC
    fig = figures.occupancy_vs_throughput(summ, "test")
    try:
        printed = {ax.get_title(): t.get_text() for ax in fig.axes for t in ax.texts if t.get_gid() == "spearman"}
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
    assert set(printed) == {"FP16", "INT8", "INT4"}
    for prec, text in printed.items():
        sub = summ[summ["precision"] == prec.lower()].dropna(subset=[occ, "throughput"])
        def avg_rank(v):
            srt = np.sort(v)
            return (np.searchsorted(srt, v, "left") + np.searchsorted(srt, v, "right") - 1) / 2

        n = len(sub)
        rho = np.corrcoef(avg_rank(sub[occ].to_numpy()), avg_rank(sub["throughput"].to_numpy()))[0, 1]
        m = re.search(r"rho = (-?[\d.]+)\s+\(n = (\d+)", text)
        assert m and float(m.group(1)) == pytest.approx(rho, abs=0.005) and int(m.group(2)) == n


def test_throughput_figure_plots_the_timings_and_references(summ, references):
    fig = sf.throughput(summ, references, "test")
    try:
        panels = {ax.get_title(): ax for ax in fig.axes}
        groups = {name: sub for name, _prec, sub in figures.panel_groups(summ)}
        for title, ax in panels.items():
            prec = title.split(" ")[0]
            lines = {ln.get_label(): ln for ln in ax.get_lines()}
            sub = groups[title]
            for kernel, g in sub.sort_values("n").groupby("kernel"):
                # errorbar's data line carries no label; its container does
                cont = [c for c in ax.containers if c.get_label() == kernel]
                assert len(cont) == 1
                assert list(cont[0].lines[0].get_ydata()) == g["throughput"].tolist()
            lib = sf.LIBRARY.get(prec.lower())
            if lib:
                ref = references[references["name"] == lib].sort_values("n")
                assert list(lines[f"{lib} (vendor library)"].get_ydata()) == ref["rate"].tolist()
            # the measured ceilings are annotated with their rate; INT4 also shows the s8 one
            notes = {t.get_text().split(":")[0]: t.xy[1] for t in ax.texts if hasattr(t, "xy")}
            want = {"FP16": ["peak_mma_m16n8k16_f16_f32"], "INT8": ["peak_mma_m16n8k32_s8_s32"],
                    "INT4": ["peak_mma_m16n8k64_s4_s32", "peak_mma_m16n8k32_s8_s32"]}[prec]
            ceil = references.set_index("name")["rate"]
            assert sorted(k for k in notes if k.startswith("peak_")) == sorted(want)
            assert all(notes[k] == ceil[k] for k in want)
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
    assert set(panels) == {"FP16", "INT8", "INT4", "INT4 k64 ablation"}


def test_references_are_measured(references, timings):
    """Ceilings for the three mma shapes and the copy, and both libraries at every N."""
    ceil = references[references["kind"] == "ceiling"].set_index("name")
    assert set(ceil.index) == {"peak_mma_m16n8k16_f16_f32", "peak_mma_m16n8k32_s8_s32",
                               "peak_mma_m16n8k64_s4_s32", "dram_copy"}
    assert (references["rate"] > 0).all() and (references["repeats"] == 50).all()
    lib = references[references["kind"] == "library"]
    assert set(zip(lib["name"], lib["n"])) == {(k, n) for k in ("cublas_fp16", "cublaslt_int8")
                                               for n in sorted(timings["n"].unique())}
    # rate = work / median, in T per second
    assert np.allclose(references["rate"], references["work"] / references["median_ns"] / 1e3)
    # no kernel of ours runs above the measured mma.sync ceiling of its precision
    for prec, name in (("fp16", "peak_mma_m16n8k16_f16_f32"), ("int8", "peak_mma_m16n8k32_s8_s32")):
        assert timings[timings["precision"] == prec]["throughput"].max() < ceil.loc[name, "rate"]


def test_roofline_from_the_reports_own_counters(summ, report_tables):
    rl = study.roofline(summ).set_index(["kernel", "n"])
    for name, df in list(report_tables.items())[:10]:
        v = df.set_index("metric")["value"]
        nbytes = v["dram__bytes_read.sum"] + v["dram__bytes_write.sum"]
        assert rl.loc[(name.kernel, name.n), "intensity_op_per_byte"] == pytest.approx(2 * name.n**3 / nbytes)
        assert rl.loc[(name.kernel, name.n), "achieved"] == pytest.approx(2 * name.n**3 / v["gpu__time_duration.sum"] / 1e3)
    assert rl["ncu_dram_peak_tb_s"].between(3, 6).all()  # H200 HBM3e: 4.8 TB/s nominal


def test_claims_table(summ, registry, static, sp):
    c = study.claims(summ, registry, static, "sm_90")
    assert len(c) >= 10 and c["claim"].is_unique
    assert c["measured"].str.len().gt(0).all()
    row = c.set_index("claim")
    k32 = sp[(sp["kernel"] == "int8_ptx_mma_k32") & (sp["comparison"] == "vs_baseline")]["speedup"]
    int8 = row.loc["INT8: PTX 1.4-1.8x faster than WMMA"]
    assert int8["measured"] == f"{k32.min():.2f}-{k32.max():.2f}x"
    assert int8["holds"] == bool(k32.between(1.4, 1.8).all())
    int4 = row.loc["INT4: PTX 2.9-4.3x faster than WMMA (native m16n8k64.s4)"]
    # on sm_90 both INT4 kernels are emulated (static SASS) and the claim's range is not reached
    assert "IMMA.16832.S8" in int4["note"] and "no S4 tensor instruction" in int4["note"]
    assert int4["holds"] is not None and not int4["holds"]
    # the memory-vs-tensor claim quotes the rank correlations of the N = 8192 rows
    mem = row.loc["At large N, throughput tracks memory-system behaviour more than tensor-core utilisation"]
    big = summ[(summ["n"] == 8192) & (summ["precision"] == "int8")]
    dram = study.spearman(big["throughput"], big[study.DRAM_PCT])
    tensor = study.spearman(big["throughput"], big[study.TENSOR])
    assert f"int8: DRAM {dram:.2f}, tensor {tensor:.2f}" in mem["measured"]


def test_claims_beyond_the_study(summ, registry, static, timings):
    """The study's claims leave out the kernel beyond the study; its own row and the
    transposed-B row quote the timings and counters they test."""
    c = study.claims(summ, registry, static, "sm_90").set_index("claim")
    assert "int4_ptx_unpack_s8" in [k for k, spec in registry.items() if not spec.get("study", True)]
    ours = c.index.str.startswith("Beyond the study: unpacking")
    study_rows = ~c.index.str.startswith("Beyond the study")
    assert ours.sum() == 1 and not c[study_rows]["measured"].str.contains("int4_ptx_unpack_s8").any()
    t = timings.set_index(["kernel", "n"])
    sizes = sorted(timings["n"].unique())
    ratio = [t.loc[("int4_ptx_mma_k64", n), "median_ns"] / t.loc[("int4_ptx_unpack_s8", n), "median_ns"] for n in sizes]
    row = c[ours].iloc[0]
    assert row["measured"].endswith(f"speedup {min(ratio):.2f}-{max(ratio):.2f}x")
    assert row["holds"] == all(t.loc[("int4_ptx_unpack_s8", n), "p75_ns"] < t.loc[("int4_ptx_mma_k64", n), "p25_ns"]
                               for n in sizes)
    assert "emulated" in row["note"]  # sm_90: the k64 kernel's s4 MMAs are emulated (static SASS)
    trans = c.loc["INT4 k64 ablation: transposed B badly hurts coalescing"]
    bps = summ.set_index(["kernel", "n"])["ldgsts_bytes_per_sector"]
    assert trans["measured"].startswith(f"bytes per sector {bps[('int4_ptx_mma_k64_b_trans', 8192)]:.2f} against "
                                        f"{bps[('int4_ptx_mma_k64', 8192)]:.2f}")
    assert trans["holds"] == all(bps[("int4_ptx_mma_k64_b_trans", n)] < bps[("int4_ptx_mma_k64", n)]
                                 and t.loc[("int4_ptx_mma_k64_b_trans", n), "p25_ns"]
                                 > t.loc[("int4_ptx_mma_k64", n), "p75_ns"] for n in sizes)


def test_claims_with_missing_data_are_not_judged(summ, registry, static):
    """A counter missing at one N leaves the transposed-B claim unjudged (None), and a set
    without the kernels leaves both new rows unmeasured, rather than a False."""
    gap = summ.copy()
    gap.loc[(gap["kernel"] == "int4_ptx_mma_k64") & (gap["n"] == 8192), "ldgsts_bytes_per_sector"] = np.nan
    c = study.claims(gap, registry, static, "sm_90").set_index("claim")
    assert c.loc["INT4 k64 ablation: transposed B badly hurts coalescing", "holds"] is None
    without = summ[~summ["kernel"].isin(["int4_ptx_unpack_s8", "int4_ptx_mma_k64_b_trans"])]
    c = study.claims(without, registry, static, None).set_index("claim")
    rows = c.loc[["INT4 k64 ablation: transposed B badly hurts coalescing",
                  "Beyond the study: unpacking INT4 to INT8 once per K tile beats the compiler's s4 emulation"]]
    assert (rows["measured"] == "not measured").all() and rows["holds"].isna().all()


TUNED_SET = REPO / "profiles" / f"{DEFAULT_SET}_tuned"


@pytest.fixture(scope="module")
def tuned_summary(registry):
    """The committed batch of the tuned kernels and the study kernels they change
    (profile_kernels, set_suffix _tuned), summarised as the workflow does."""
    from analysis.reports.parse import parse_reports
    from analysis.reports.tables import set_table, summary

    got = parse_reports(sorted((TUNED_SET / "reports").glob("*.ncu-rep.xz")), workers=2)
    got.raise_errors(TUNED_SET.name)
    meta = json.loads((TUNED_SET / "metadata.json").read_text())
    table = set_table(got.metrics, TUNED_SET.name, meta)
    return summary(table, pd.concat(got.instances, ignore_index=True), pd.read_csv(TUNED_SET / "timings.csv"))


def test_a_batch_of_a_few_kernels_does_not_judge_claims_about_all(tuned_summary, registry, static):
    """The _tuned batch holds one FP16 study kernel: 'all FP16 kernels converge' would hold
    with one kernel; it is left unjudged, naming the kernels the set lacks."""
    assert set(tuned_summary["kernel"]) & {k for k, s in registry.items() if s["precision"] == "fp16"} == {
        "fp16_ptx_3stage", "fp16_ptx_tuned"}
    c = study.claims(tuned_summary, registry, static, "sm_90").set_index("claim")
    conv = c.loc["FP16: at large N all kernels converge"]
    assert conv["holds"] is None and conv["measured"].startswith("not measured: the set lacks ")
    assert "fp16_wmma" in conv["measured"] and "fp16_ptx_3stage" not in conv["measured"]
    assert c.loc["Occupancy is a poor predictor of throughput", "holds"] is None


def test_tuned_kernels_against_the_library_of_the_same_run(tuned_summary, registry, static):
    """The tuned-vs-library row quotes each ratio of timings.csv's throughput to the
    library GEMM in references.csv of the same run, and judges it by the stated bounds."""
    from analysis.reports.setfiles import read_references

    refs = read_references(TUNED_SET / "references.csv")
    row = study.claims(tuned_summary, registry, static, "sm_90", refs).set_index("claim").loc[
        "Beyond the study: tuned mma.sync closes part of the gap to the library, the study's tiling none of it"]
    t = pd.read_csv(TUNED_SET / "timings.csv").query("n == 8192").set_index("kernel")["throughput"]
    lib = refs[refs["n"] == 8192].set_index("name")["rate"]
    ratios = {"fp16_ptx_tuned": t["fp16_ptx_tuned"] / lib["cublas_fp16"],
              "fp16_ptx_3stage": t["fp16_ptx_3stage"] / lib["cublas_fp16"],
              "int8_ptx_tuned": t["int8_ptx_tuned"] / lib["cublaslt_int8"],
              "int8_ptx_3stage": t["int8_ptx_3stage"] / lib["cublaslt_int8"]}
    for kernel, r in ratios.items():
        assert f"{kernel} {r:.2f}x" in row["measured"]
    assert row["holds"] == (ratios["fp16_ptx_tuned"] >= 0.60 and ratios["int8_ptx_tuned"] >= 0.80
                            and ratios["fp16_ptx_3stage"] <= 0.25 and ratios["int8_ptx_3stage"] <= 0.25)
    # no wgmma kernel yet: that claim is not judged
    wg = study.claims(tuned_summary, registry, static, "sm_90", refs).set_index("claim").loc[
        "Beyond the study: wgmma is needed to approach the library on Hopper"]
    assert wg["holds"] is None and "not measured" in wg["measured"]


def test_instruction_ratios_against_the_reports(summ, registry):
    r = study.instruction_ratios(summ, registry)
    inst = summ.set_index(["kernel", "n"])[study.INST]
    for x in r.itertuples():
        assert x.ratio == pytest.approx(inst[(x.kernel, x.n)] / inst[(x.baseline, x.n)])
    assert (r["ratio"] > 0).all()


def test_markdown_has_every_row(summ, static):
    ks = study.kernel_summary(summ, static, "sm_90")
    md = study.to_markdown(ks)
    assert md.count("\n") == len(ks) + 2
    assert (ks["spill_store_bytes"] == 0).all()
    assert ks["duration_median_ns"].notna().all()


WGMMA_SET = REPO / "profiles" / f"{DEFAULT_SET}_wgmma"


def test_wgmma_against_mma_sync_and_the_library(registry, static):
    """The _wgmma batch holds no study kernel at all: the study's claims are not judged (and
    do not fail), and the wgmma row quotes the ratios of timings.csv to references.csv."""
    from analysis.reports.parse import parse_reports
    from analysis.reports.setfiles import read_references
    from analysis.reports.tables import set_table, summary

    got = parse_reports(sorted((WGMMA_SET / "reports").glob("*.ncu-rep.xz")), workers=2)
    got.raise_errors(WGMMA_SET.name)
    table = set_table(got.metrics, WGMMA_SET.name, json.loads((WGMMA_SET / "metadata.json").read_text()))
    timings = pd.read_csv(WGMMA_SET / "timings.csv")
    summ = summary(table, pd.concat(got.instances, ignore_index=True), timings)
    refs = read_references(WGMMA_SET / "references.csv")
    c = study.claims(summ, registry, static, "sm_90", refs).set_index("claim")
    assert c[~c.index.str.startswith("Beyond the study")]["holds"].isna().all()
    row = c.loc["Beyond the study: wgmma is needed to approach the library on Hopper"]
    t = timings.query("n == 8192").set_index("kernel")["throughput"]
    lib = refs[refs["n"] == 8192].set_index("name")["rate"]
    r = {k: t[k] / lib["cublas_fp16" if k.startswith("fp16") else "cublaslt_int8"] for k in t.index}
    for k, v in r.items():
        assert f"{k} {v:.2f}x" in row["measured"]
    assert row["holds"] == (r["fp16_wgmma"] >= 0.90 > r["fp16_ptx_tuned"] and r["int8_wgmma"] >= 0.90 > r["int8_ptx_tuned"])


INT4_SET = REPO / "profiles" / f"{DEFAULT_SET}_int4"


def test_int4_against_int8_and_the_study_s4_kernels(registry, static):
    """The _int4 batch (INT4 on every path beside int8_wgmma): the INT4 row quotes the ratios
    of timings.csv's throughputs at the largest N and judges them by the stated bounds; the
    same set without its INT8 kernel leaves the row unjudged."""
    from analysis.reports.parse import parse_reports
    from analysis.reports.tables import set_table, summary

    got = parse_reports(sorted((INT4_SET / "reports").glob("*.ncu-rep.xz")), workers=2)
    got.raise_errors(INT4_SET.name)
    table = set_table(got.metrics, INT4_SET.name, json.loads((INT4_SET / "metadata.json").read_text()))
    timings = pd.read_csv(INT4_SET / "timings.csv")
    summ = summary(table, pd.concat(got.instances, ignore_index=True), timings)
    claim = "Beyond the study: INT4 unpacked to INT8 reaches the INT8 kernels' speed and far beyond the study's s4 mma.sync kernels"
    row = study.claims(summ, registry, static, "sm_90").set_index("claim").loc[claim]
    t = timings.query("n == 8192").set_index("kernel")["throughput"]
    best4 = t[[k for k in t.index if registry[k]["precision"] == "int4"]].idxmax()
    best8 = t[[k for k in t.index if registry[k]["precision"] == "int8"]].idxmax()
    assert (best4, best8) == ("int4_wgmma_unpack_s8", "int8_wgmma")
    vs8, vs_k64, vs_k32 = (t[best4] / t[best8], t[best4] / t["int4_ptx_mma_k64"], t[best4] / t["int4_ptx_mma_k32"])
    assert f"{best4} / {best8} {vs8:.3f}x" in row["measured"]
    assert f"/ int4_ptx_mma_k64 {vs_k64:.1f}x" in row["measured"] and f"/ int4_ptx_mma_k32 {vs_k32:.1f}x" in row["measured"]
    assert row["holds"] == (vs8 >= study.INT4_VS_INT8_TARGET == 0.90 and vs_k64 >= 10 and vs_k32 >= 10)
    without_int8 = summ[summ["precision"] != "int8"]
    row = study.claims(without_int8, registry, static, "sm_90").set_index("claim").loc[claim]
    assert row["holds"] is None and "not measured" in row["measured"]


def test_a_launch_without_n_is_left_off_the_n_axes(summ, references, registry):
    """A set with timings that also holds a launch of unknown N (a report named close to
    {kernel}_n{N}, read with N = NA; its rate NA): the throughput and speedup figures draw
    every other launch as before and leave that one out, instead of failing."""
    import matplotlib.pyplot as plt

    extra = summ[(summ["kernel"] == "int4_ptx_mma_k64") & (summ["n"] == 512)].assign(
        n=pd.NA, throughput=np.nan, median_ns=np.nan, p25_ns=np.nan, p75_ns=np.nan)
    with_na = pd.concat([summ, extra], ignore_index=True).astype({"n": "Int64"})
    assert with_na["n"].isna().sum() == 1
    for draw in (lambda s: sf.throughput(s, references, "test"),
                 lambda s: sf.speedup(study.speedups(s, registry), "test"),
                 lambda s: sf.ablation(study.speedups(s, registry), "test")):
        got, want = draw(with_na), draw(summ)
        try:
            for ax_got, ax_want in zip(got.axes, want.axes, strict=True):
                assert [list(ln.get_xydata().ravel()) for ln in ax_got.get_lines()] == \
                       [list(ln.get_xydata().ravel()) for ln in ax_want.get_lines()]
        finally:
            plt.close(got)
            plt.close(want)
