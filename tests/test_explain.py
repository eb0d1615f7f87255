"""Explanations of duration changes (analysis.study.explain and what feeds it), on real
committed reports: the H200 default set's one-knob kernel pairs, the noise set's repeats
and timing samples, a foreign report without rule results and a foreign pair of kernels.

How each pair's cause was established without the explanation (SASS, counters, ncu's
findings) is written in docs/explanations.md, "Checked causes"; the tests below check the
same evidence beside the ranking."""

from __future__ import annotations

import math
import os
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from analysis.compare.diff import compare_metric_tables, is_device_attribute, is_identifier, is_setting
from analysis.compare.explain import write_comparison_explanations
from analysis.errors import AnalysisError
from analysis.reports.noise import duration_interval, model_n, noise_model, read_noise_model
from analysis.reports.parse import write_set_tables
from analysis.study.claims import cause_note
from analysis.study.evidence import SetEvidence, duration_change, load_set_evidence, stall_table
from analysis.study.explain import DURATION, explain_pair, parts_table
from analysis.study.explain_pages import findings_page, hotspots_page, pair_page
from analysis.study.explain_set import explain_launches, kernel_pairs, knob_reference

from .conftest import DEFAULT_SET, REPO, SET_DIR

NOISE_DIR = REPO / "profiles" / f"{DEFAULT_SET}_noise"
KNOB_KERNELS = ["int8_ptx_mma_k32", "int8_ptx_3stage", "int8_ptx_mma_k16", "fp16_ptx_mma_k16", "fp16_ptx_manual_pack",
                "int4_ptx_mma_k64", "int4_ptx_mma_k64_b_trans"]
NO_RULES = "AveryClapp__ESMM-Research__profile__feb2d349"
FOREIGN_PAIR = ["LakshyaSingh354__CudaCode__gemm_reps_naive__7bc2a745",
                "LakshyaSingh354__CudaCode__gemm_reps_global_mem_coalesce__9572408b"]


def _tables(tmp, name, reports, timings=None):
    """A set's tables as rule parse_set writes them, under ``tmp``."""
    out = {k: tmp / f"{k}.parquet" for k in ("metrics", "instances", "per_metric", "findings", "hotspots")}
    write_set_tables(reports, name, None, tmp / "cache", out["metrics"], out["instances"],
                     workers=min(2, os.cpu_count() or 1), metric_table_out=out["per_metric"],
                     findings_out=out["findings"], hotspots_out=out["hotspots"])
    return out


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """The noise model made from the committed noise set's repeats."""
    tmp = tmp_path_factory.mktemp("noise")
    out = _tables(tmp, NOISE_DIR.name, sorted((NOISE_DIR / "reports").glob("*.ncu-rep.xz")))
    m = noise_model(pd.read_parquet(out["metrics"]))
    m.to_csv(tmp / "noise_model.csv", index=False)
    return tmp / "noise_model.csv"


@pytest.fixture(scope="module")
def knobs(tmp_path_factory, model) -> SetEvidence:
    """The default set's reports of the one-knob pairs at N = 8192, with the set's timings."""
    tmp = tmp_path_factory.mktemp("knobs")
    out = _tables(tmp, DEFAULT_SET, [SET_DIR / "reports" / f"{k}_n8192.ncu-rep.xz" for k in KNOB_KERNELS])
    return load_set_evidence(DEFAULT_SET, out["per_metric"], out["instances"], out["findings"], out["hotspots"],
                             SET_DIR / "timings.csv", None, model, "noise model of the _noise set", table=out["metrics"])


@pytest.fixture(scope="module")
def static() -> pd.DataFrame:
    """The static SASS table the workflow wrote (rule sass_table, cuobjdump of each build)."""
    s = pd.read_csv(REPO / "figures" / "sass" / "static_summary.csv")
    return s[s["arch"] == "sm_90"].set_index("kernel")


def _explain(ev, a, b, n=8192):
    la, lb = ev.launch(a, n), ev.launch(b, n)
    e, parts = explain_launches(la, lb)
    return la, lb, e, parts, duration_change(ev, la, ev, lb)


def test_the_noise_model_is_measured_per_metric_and_n(model):
    m = read_noise_model(model).set_index(["metric", "n"])
    # instruction counts repeat exactly for the mma.sync kernels; fp16_wgmma's vary by a few
    # instructions in 10^5 (its warps wait on mbarriers in try_wait loops)
    inst = m.loc["smsp__inst_executed.sum"]
    assert (inst["noise_rel"] < 1e-4).all() and (inst["cv_median"] == 0).all()
    dur = m.loc["gpu__time_duration.sum", "noise_rel"]
    assert 0 < dur.loc[8192] < 0.05 and dur.loc[1024] > dur.loc[8192]  # short launches are noisier
    assert (m.loc["gpu__time_duration.sum", "repeats"] == 4).all()
    assert np.isclose(m.loc[("gpu__time_duration.sum", 8192), "noise_rel"],
                      math.sqrt(2) * m.loc[("gpu__time_duration.sum", 8192), "cv_max"])
    # the model the workflow committed is the one these reports give
    committed = read_noise_model(REPO / "figures" / "noise" / "noise_model.csv").set_index(["metric", "n"])
    assert np.allclose(committed.loc[m.index, "noise_rel"], m["noise_rel"], rtol=1e-5, atol=1e-12)
    sizes = model_n(pd.Series([512, 2048, 4096, 8192, None], dtype="Int64"), read_noise_model(model))
    assert sizes.tolist()[:4] == [1024, 1024, 8192, 8192] and pd.isna(sizes.iloc[4])


def test_parts_add_up_to_the_duration_change(knobs):
    for a, b in [("int8_ptx_mma_k32", "int8_ptx_3stage"), ("fp16_ptx_mma_k16", "fp16_ptx_manual_pack"),
                 ("int4_ptx_mma_k64", "int4_ptx_mma_k64_b_trans")]:
        la, lb, e, parts, _ = _explain(knobs, a, b)
        assert not e.missing
        assert math.isclose(parts["ns"].sum(), e.ncu_b_ns - e.ncu_a_ns, rel_tol=1e-9)
        assert e.ncu_a_ns == la.values[DURATION] and e.ncu_b_ns == lb.values[DURATION]
        residual = parts.loc[parts["group"] == "residual", "ns"].abs().sum()
        assert residual < 0.01 * e.ncu_a_ns  # the identity holds within 1 % of the duration
        assert list(parts["ns"].abs()) == sorted(parts["ns"].abs(), reverse=True)


@pytest.mark.parametrize("a, b, first, beyond", [
    # "int8_ptx_mma_k32 with a 3-stage cp.async pipeline": warps wait less at the barrier
    ("int8_ptx_mma_k32", "int8_ptx_3stage", "stall: barrier", True),
    # B transposed in shared memory: more registers, fewer resident warps
    ("int4_ptx_mma_k64", "int4_ptx_mma_k64_b_trans", "active warps per scheduler", True),
    # "32-bit ld.shared per fragment register instead of ldmatrix": LDS instructions
    ("fp16_ptx_mma_k16", "fp16_ptx_manual_pack", "executed LDS", False),
    # two m16n8k16 per K = 32 step instead of one m16n8k32: twice the IMMA instructions
    ("int8_ptx_mma_k32", "int8_ptx_mma_k16", "executed IMMA", False),
])
def test_a_one_knob_pair_ranks_the_knobs_mechanism_first(knobs, static, a, b, first, beyond):
    la, lb, e, parts, change = _explain(knobs, a, b)
    top = parts[parts["group"] != "residual"].iloc[0]
    assert top["item"] == first and bool(top["beyond_noise"])
    assert change.beyond_noise is beyond
    # the cause, established without the ranking (docs/explanations.md, "Checked causes")
    va, vb = la.values, lb.values
    if b == "int8_ptx_3stage":
        assert vb["launch__shared_mem_per_block"] / va["launch__shared_mem_per_block"] == pytest.approx(1.5, rel=0.05)
        stalls = la.findings[la.findings["rule"] == "CPIStall"]["title"].dropna()
        assert stalls.str.contains("Barrier").any()  # ncu's own finding on the 2-stage kernel
    elif b.endswith("_b_trans"):
        assert static.loc[b, "registers"] > static.loc[a, "registers"]
        assert vb["launch__occupancy_limit_registers"] < va["launch__occupancy_limit_registers"]
        assert vb["sm__warps_active.avg.pct_of_peak_sustained_active"] < va["sm__warps_active.avg.pct_of_peak_sustained_active"]
    elif b == "fp16_ptx_manual_pack":
        assert static.loc[b, "static_ldmatrix"] == 0 < static.loc[a, "static_ldmatrix"]
        assert static.loc[b, "static_shared_load_store"] > static.loc[a, "static_shared_load_store"]
        assert lb.opcodes["LDS"] > 4 * la.opcodes.get("LDS", 0)
    else:
        assert static.loc[b, "static_tensor"] == 2 * static.loc[a, "static_tensor"]
        assert lb.opcodes["IMMA"] == 2 * la.opcodes["IMMA"]


def test_a_pair_within_noise_is_said_to_be_within_noise_though_counters_moved(knobs):
    la, lb, e, parts, change = _explain(knobs, "fp16_ptx_mma_k16", "fp16_ptx_manual_pack")
    assert change.beyond_noise is False and abs(change.ratio - 1) < 0.01
    assert parts["beyond_noise"].fillna(False).any()  # the LDS count did change
    page = pair_page("t", la, lb, e, parts, change)
    assert "did not change beyond noise" in page and "within noise" in change.text()


def test_the_timed_launches_give_a_bootstrap_interval():
    samples = pd.read_csv(NOISE_DIR / "timing_samples.csv")
    timings = pd.read_csv(NOISE_DIR / "timings.csv").set_index(["kernel", "n"])
    a = samples[(samples["kernel"] == "fp16_ptx_mma_k16") & (samples["n"] == 8192)]["ns"]
    b = samples[(samples["kernel"] == "fp16_wgmma") & (samples["n"] == 8192)]["ns"]
    assert len(a) == timings.loc[("fp16_ptx_mma_k16", 8192), "repeats"] == 50
    r, lo, hi = duration_interval(a, b)
    want = timings.loc[("fp16_wgmma", 8192), "median_ns"] / timings.loc[("fp16_ptx_mma_k16", 8192), "median_ns"]
    assert r == pytest.approx(want, rel=1e-6) and lo <= r <= hi < 1
    r, lo, hi = duration_interval(a.iloc[::2], a.iloc[1::2])  # one kernel against itself
    assert lo <= 1 <= hi
    with pytest.raises(ValueError, match="2 or more"):
        duration_interval(a.iloc[:1], b)


def test_a_report_without_rule_results_gives_no_findings_and_says_so(foreign_dir, tmp_path, model, capsys):
    out = _tables(tmp_path, "foreign", [foreign_dir / f"{NO_RULES}.ncu-rep.xz"])
    said = [line for line in capsys.readouterr().out.splitlines() if line.startswith("warning:")]
    assert len(said) == 1 and NO_RULES in said[0] and "no guided-analysis rule results" in said[0]
    ev = load_set_evidence("foreign", out["per_metric"], out["instances"], out["findings"], out["hotspots"],
                           model=model, table=out["metrics"])
    assert ev.findings.empty
    assert "hold no rule results" in findings_page("foreign", ev.findings)
    kernels = ev.metrics[["kernel", "source", "occurrence"]].drop_duplicates()
    first = kernels.iloc[0]
    la = ev.launch(first["kernel"], pd.NA, source=first["source"], occurrence=int(first["occurrence"]))
    e, parts = explain_launches(la, la)
    assert "holds no guided-analysis rule results" in pair_page("t", la, la, e, parts, duration_change(ev, la, ev, la))


def test_findings_without_estimates_are_said_to_be_there(tmp_path, model):
    """The A10G report of ncu 2023.1.1 (committed set a10g_ncu2023.1.1_esmm) holds 25 rule
    results, warnings among them, none with an estimated speedup: a pair page's findings
    block said "(none)"."""
    report = REPO / "profiles" / "a10g_ncu2023.1.1_esmm" / "reports" / "profile.ncu-rep.xz"
    out = _tables(tmp_path, "a10g", [report])
    ev = load_set_evidence("a10g", out["per_metric"], out["instances"], out["findings"], out["hotspots"],
                           model=model, table=out["metrics"])
    assert len(ev.findings) and ev.findings["speedup_pct"].isna().all()
    ids = ev.metrics[["kernel", "source", "occurrence", "mangled"]].drop_duplicates().iloc[:2]
    la, lb = (ev.launch(r.kernel, pd.NA, source=r.source, occurrence=int(r.occurrence), mangled=r.mangled)
              for r in ids.itertuples())
    e, parts = explain_launches(la, lb)
    block = pair_page("t", la, lb, e, parts, duration_change(ev, la, ev, lb)).split("Nsight Compute's findings")[1]
    assert f"Both reports hold rule results ({len(la.findings)} and {len(lb.findings)}), none with an estimated " \
           "speedup" in block
    assert "(none)" not in block.split("How to read")[0]


def test_a_foreign_pair_of_kernels_is_decomposed(foreign_dir, tmp_path, model):
    out = _tables(tmp_path, "foreign", [foreign_dir / f"{n}.ncu-rep.xz" for n in FOREIGN_PAIR])
    ev = load_set_evidence("foreign", out["per_metric"], out["instances"], out["findings"], out["hotspots"],
                           model=model, model_name="H200 model", table=out["metrics"])
    m = ev.metrics[["kernel", "source"]].drop_duplicates().set_index("source")["kernel"]
    la = ev.launch(m[FOREIGN_PAIR[0]], pd.NA, source=FOREIGN_PAIR[0])
    lb = ev.launch(m[FOREIGN_PAIR[1]], pd.NA, source=FOREIGN_PAIR[1])
    e, parts = explain_launches(la, lb)
    assert not e.missing and math.isclose(parts["ns"].sum(), e.ncu_b_ns - e.ncu_a_ns, rel_tol=1e-9)
    change = duration_change(ev, la, ev, lb)
    assert "gpu__time_duration.sum" in change.method and "H200 model" in change.method  # no event timings here
    assert set(parts["noise_source"]) - {""} == {"H200 model"}
    assert len(la.findings) > 0 and len(la.hotspots) > 0


#: iamcoleman's RTX 3080 report of ncu 2020.2.1: per-reason warp samples, no smsp__pcsamp_sample_count.
NO_SAMPLE_COUNT = "iamcoleman__monte-carlo-pi__profile__452bfd7f"


def test_hot_spots_of_a_version_without_a_sample_count_are_the_sum_of_the_reasons(foreign_dir, tmp_path):
    """The page said the 2020.2.1 report holds no warp-sampling data, though each launch holds
    1,637-1,811 sampled PCs by stall reason. Its samples are now the sum of the reasons; in a
    report holding both (the T4's, 2024.2.1), the sample count is that sum at each PC."""
    from analysis.reports.hotspots import SAMPLES, SUMMED

    reports = [foreign_dir / f"{NO_SAMPLE_COUNT}.ncu-rep.xz", foreign_dir / f"{FOREIGN_PAIR[0]}.ncu-rep.xz"]
    out = _tables(tmp_path, "sampled", reports)
    h = pd.read_parquet(out["hotspots"])
    old = h[h["report"] == NO_SAMPLE_COUNT]
    new = h[h["report"] == FOREIGN_PAIR[0]]
    assert set(old["launch"]) == {0, 1} and set(old["samples_metric"]) == {SUMMED}
    assert len(new) and set(new["samples_metric"]) == {SAMPLES}
    for rows in (old, new):
        summed = rows["reasons"].map(lambda s: sum(float(kv.split("=")[1]) for kv in s.split("; ")))
        assert (summed == rows["samples"]).all()
    page = hotspots_page("sampled", h)
    assert "hold no warp-sampling data" not in page
    assert page.count(f"wrote no `{SAMPLES}`") == 2  # the two launches of the 2020.2.1 report


def test_hot_spots_of_a_kernel_in_two_reports_say_which_is_shown_and_keep_sass_whole(foreign_dir, tmp_path):
    """armleth's T4 reports `report` and `report_v2` both hold matrix_addition2D: the page showed one
    report's hot spots under the kernel's name and said nothing of the other. Their SASS holds
    backticks (`BRA `(.L_x_0)`), which ended a single-backtick code span early."""
    from analysis.study.explain_pages import code_span

    names = ["armleth__cuda-mlp-inference__report__b4d31e9a", "armleth__cuda-mlp-inference__report_v2__e4819d2a"]
    out = _tables(tmp_path, "t4", [foreign_dir / f"{n}.ncu-rep.xz" for n in names])
    h = pd.read_parquet(out["hotspots"])
    both = h.groupby("kernel")["report"].nunique()
    kernel = both[both > 1].index[0]
    page = hotspots_page("t4", h)
    # reports from elsewhere have no N: the page said "at its largest N" of launches without one
    assert h["n"].isna().all() and "largest N" not in page and "(the set's launches have no N)" in page
    shown = h[h["kernel"] == kernel]["report"].iloc[0]
    other = [r for r in h[h["kernel"] == kernel]["report"].unique() if r != shown]
    assert f"From report {shown}; {other[0]} also holds this kernel" in page
    ticked = h[h["sass"].str.contains("`")]["sass"]
    assert len(ticked) and any(code_span(s) in page for s in ticked)  # a shown one, whole in its span
    for s in ticked:
        span = code_span(s)
        fence = span[:len(span) - len(span.lstrip("`"))]
        assert len(fence) > max(len(r) for r in re.findall(r"`+", s)) and span.endswith(fence)


def test_the_stall_figure_of_reports_from_elsewhere_names_what_is_unknown(foreign_dir, tmp_path, monkeypatch):
    """The stall figure of imported reports titled its one panel "unknown", which read as a
    precision of that name: their kernel names give none. A panel of more launches than
    MAX_STALL_LAUNCHES (56 imported reports drew 6388 pixels of unreadable labels) draws those
    of the largest stacks and says how many more stalls.csv holds."""
    from analysis.study import explain_figures
    from analysis.study.drawing import overlaps
    from analysis.study.evidence import stall_table
    from analysis.study.explain_figures import UNKNOWN_PRECISION, stall_figure, plt

    out = _tables(tmp_path, "t4", [foreign_dir / f"{FOREIGN_PAIR[0]}.ncu-rep.xz"])
    stalls = stall_table(pd.read_parquet(out["per_metric"]))
    assert len(stalls) and stalls["precision"].isna().all()
    fig = stall_figure(stalls, "t4")
    try:
        titles = [ax.get_title(loc="left") for ax in fig.axes]
        assert titles == [UNKNOWN_PRECISION] and "fp16_" in UNKNOWN_PRECISION
        assert overlaps(fig) == []
    finally:
        plt.close(fig)
    launches = stalls["launch"].nunique()
    assert launches >= 2
    monkeypatch.setattr(explain_figures, "MAX_STALL_LAUNCHES", 1)
    fig = stall_figure(stalls, "t4")
    try:
        ax = fig.axes[0]
        assert ax.get_title(loc="left") == f"{UNKNOWN_PRECISION} (1 launches of the largest stacks drawn, " \
                                           f"{launches - 1} more in stalls.csv)"
        largest = stalls.groupby("launch")["cycles_per_issue"].sum().idxmax()
        assert [t.get_text() for t in ax.get_xticklabels()] == [largest]
    finally:
        plt.close(fig)


def test_a_part_under_a_tenth_of_a_microsecond_is_not_shown_as_zero(repo):
    """A comparison's summary listed `stall: misc -0.0 us` among the parts beyond noise of a pair
    whose duration was within noise, which read as a contradiction. Parts under 100 ns are given
    in ns (from the committed comparison's own parts)."""
    from analysis.study.explain_pages import top_items

    t = pd.read_csv(repo / "figures" / "compare" / "h200_580.159.04_ncu2025.3.1__vs__h200_580.159.04_ncu2025.3.1_int4"
                    / "explanations.csv")
    tiny = t[(t["ns"].abs() < 100) & (t["beyond_noise"] == True) & (t["group"] != "residual")]  # noqa: E712
    pair = t[(t["kernel_a"] == tiny["kernel_a"].iloc[0]) & (t["n"] == tiny["n"].iloc[0])].sort_values("rank")
    line = top_items(pair, k=len(pair))
    item = tiny.iloc[0]
    assert f"{item['item']} {item['ns']:+,.1f} ns" in line
    assert not re.search(r"[+-]0\.0 us", line)


def test_math_pipe_throttle_points_at_every_execution_pipe(knobs):
    """Pages glossed math_pipe_throttle as "the math pipe (tensor pipe) busy" and showed only the
    tensor pipe behind it, also for SIMT kernels: the Profiling Guide's reason is any execution
    pipe the next instruction waits for. The FMA, ALU and FP64 pipes' shares are now read beside
    the tensor pipe's (here from int8_ptx_mma_k32's report at N = 8192)."""
    from analysis.study.explain import MECHANISMS, STALL_MEANING

    meaning, topics = STALL_MEANING["math_pipe_throttle"]
    assert "tensor" in topics and "pipes" in topics and "FMA" in meaning and "tensor pipe) busy" not in meaning
    piped = {label for _, label, topic in MECHANISMS if topic == "pipes"}
    assert piped == {"FMA pipe active (%)", "ALU pipe active (%)", "FP64 pipe active (%)"}
    la, lb = knobs.launch("int8_ptx_mma_k32", 8192), knobs.launch("int8_ptx_3stage", 8192)
    e = explain_pair(la.values, lb.values)
    mech = e.mechanisms.set_index("label")
    fma = "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"
    assert mech.loc["FMA pipe active (%)", "value_a"] == la.values[fma] > 0
    assert mech.loc["FMA pipe active (%)", "topic"] == "pipes"


def test_a_side_without_warp_state_metrics_is_not_decomposed(knobs):
    la = knobs.launch("int8_ptx_mma_k32", 8192)
    b = la.values.drop([m for m in la.values.index if m.startswith("smsp__average_warps_issue_stalled_")])
    e = explain_pair(la.values, b)
    assert e.missing and parts_table(e).empty


def test_a_page_not_decomposed_says_so_and_which_side_lacks_what(knobs):
    """The A100/A10G comparison's page said "the parts below account for Nsight Compute's duration
    change", then that nothing was decomposed because "a side lacks" metrics both lacked."""
    stalls = "smsp__average_warps_issue_stalled_*_per_issue_active.ratio"
    la, lb = knobs.launch("int8_ptx_mma_k32", 8192), knobs.launch("int8_ptx_3stage", 8192)
    b = lb.values.drop([m for m in lb.values.index if m.startswith("smsp__average_warps_issue_stalled_")])
    change = duration_change(knobs, la, knobs, lb)
    assert change.beyond_noise in (True, False)
    e = explain_pair(la.values, b)
    assert e.lacking == {"b": [stalls]}
    page = pair_page("pair", la, lb, e, parts_table(e), change)
    assert f"Not decomposed: the candidate (b) lacks `{stalls}`" in page
    assert "parts below" not in page and "not decomposed" in page.split("Not decomposed")[0]
    both = pair_page("pair", lb, lb, explain_pair(b, b), parts_table(explain_pair(b, b)), change)
    assert f"Not decomposed: both sides lack `{stalls}`" in both


def test_stall_stacks_and_pairs_of_the_registry(knobs, repo):
    import yaml

    s = stall_table(knobs.metrics)
    one = s[(s["kernel"] == "int8_ptx_3stage")]
    assert one["share"].sum() == pytest.approx(1.0) and (one["cycles_per_issue"] >= 0).all()
    kernels = yaml.safe_load((repo / "config" / "config.yaml").read_text())["kernels"]
    assert knob_reference("int8_ptx_3stage", kernels) == "int8_ptx_mma_k32"
    assert knob_reference("int8_ptx_mma_k32", kernels) is None
    pairs = kernel_pairs(kernels, KNOB_KERNELS)
    assert ("int8_ptx_3stage", "int8_ptx_mma_k32") in pairs and ("int4_ptx_mma_k64_b_trans", "int4_ptx_mma_k64") in pairs


def test_a_claim_about_a_cause_quotes_the_explanation(repo):
    table = pd.read_csv(repo / "figures" / DEFAULT_SET / "explain" / "explanations.csv",
                        dtype={"beyond_noise": "string", "duration_beyond_noise": "string"})
    note = cause_note(table, "int4_ptx_mma_k64_b_trans", "int4_ptx_mma_k64")
    assert note.startswith("explanation of int4_ptx_mma_k64_b_trans against int4_ptx_mma_k64 at N=8192")
    assert "active warps per scheduler" in note
    claims = pd.read_csv(repo / "figures" / DEFAULT_SET / "study" / "claims.csv")
    row = claims[claims["claim"] == "INT4 k64 ablation: transposed B badly hurts coalescing"].iloc[0]
    assert note in row["note"]
    assert cause_note(table, "no_such_kernel", "int4_ptx_mma_k64") == ""


def test_a_comparison_without_repeats_takes_the_noise_model(knobs, model):
    t = knobs.metrics
    one = t[t["kernel"] == "int8_ptx_mma_k32"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        diff = compare_metric_tables(one, one, model=read_noise_model(model), model_name="the model")
    assert set(diff["noise_source"]) == {"the model", "none: default_rel"}
    modelled = diff[diff["noise_source"] == "the model"]
    expected = modelled["metric"].map(lambda m: "identifier" if is_identifier(m) else
                                      "device" if is_device_attribute(m) else
                                      "setting" if is_setting(m) else "unchanged")
    assert (modelled["status"] == expected).all()
    assert modelled["noise_rel"].notna().all()
    assert len(modelled) > 0.9 * len(diff)
    # the headline figure's note: rows whose 3 x noise falls under min_rel were held at that
    # floor and are counted as min_rel, not as the model's
    from analysis.compare.figures import HEADLINE, threshold_note

    head = diff[diff["metric"].isin(HEADLINE) & diff["value_baseline"].notna()]
    floor = head[(head["noise_source"] == "the model") & (3 * head["noise_rel"] < 0.005)]
    above = head[(head["noise_source"] == "the model") & (3 * head["noise_rel"] > 0.005)]
    note = threshold_note(diff)
    assert len(floor) and len(above) and "min_rel: 0.5 %" in note
    lo, hi = 100 * above["threshold_rel"].min(), 100 * above["threshold_rel"].max()
    assert f"the model: {lo:.3g}-{hi:.3g} %" in note


def test_the_timing_samples_are_the_launches_timings_csv_summarises(tmp_path):
    """timing_samples.csv (rule timings) holds every event-timed launch: per kernel and N as
    many as timings.csv's repeats, with its median and quartiles; a damaged copy is refused."""
    from analysis.reports.setfiles import SetFileError, read_timing_samples

    samples = read_timing_samples(NOISE_DIR / "timing_samples.csv")
    timings = pd.read_csv(NOISE_DIR / "timings.csv").set_index(["kernel", "n"])
    for (kernel, n), g in samples.groupby(["kernel", "n"]):
        row = timings.loc[(kernel, n)]
        assert len(g) == row["repeats"] and list(g["sample"]) == list(range(len(g)))
        assert np.median(g["ns"]) == pytest.approx(row["median_ns"], rel=1e-9)
        assert np.quantile(g["ns"], 0.25) == pytest.approx(row["p25_ns"], rel=1e-9)
    bad = samples.copy()
    bad.loc[3, "ns"] = -1.0
    bad.to_csv(tmp_path / "timing_samples.csv", index=False)
    with pytest.raises(SetFileError, match=r"timing_samples\.csv: timing samples: ns"):
        read_timing_samples(tmp_path / "timing_samples.csv")


# --- launches that share a name: template instantiations, NVTX ranges, repeated launches ---------------

DATA = REPO / "tests" / "data"
#: tests/data/README.md: several_full holds add three times, axpy<float> and axpy<double>, two
#: instantiations of apply and scale; templates scale<float> twice, scale<double> and scale<int>;
#: ranges_ab the NVTX ranges alpha and beta, both of ncu's name `range`.
NAME_SHARING = ["several_full", "templates", "ranges_ab"]


def _evidence(tmp, name, reports):
    out = _tables(tmp, name, reports)
    return out, load_set_evidence(name, out["per_metric"], out["instances"], out["findings"], out["hotspots"],
                                  table=out["metrics"])


@pytest.mark.parametrize("report", NAME_SHARING)
def test_each_launch_gets_its_own_instructions_findings_and_hot_spots(tmp_path, report):
    out, ev = _evidence(tmp_path, report, [DATA / f"{report}.ncu-rep.xz"])
    ids = pd.read_parquet(out["metrics"], columns=["report", "launch", "kernel", "mangled", "range_name", "occurrence"])
    ids = ids.drop_duplicates(["report", "launch"])
    inst = pd.read_parquet(out["instances"])
    inst = inst[inst["metric"] == "sass__inst_executed_per_opcode"]
    labels = []
    for r in ids.itertuples():
        la = ev.launch(r.kernel, pd.NA, occurrence=r.occurrence, mangled=r.mangled, range_name=r.range_name)
        assert la.opcodes.sum() == inst.loc[inst["launch"] == r.launch, "value"].sum()
        assert len(la.findings) > 0 and set(la.findings["launch"]) == {r.launch}
        assert set(la.hotspots["launch"]) <= {r.launch}
        labels.append(la.label)
    assert len(set(labels)) == len(ids), labels  # every launch told apart on the pages
    if report == "several_full":  # scale's instructions are its own (2048), not those of launch 0 (add, 2560)
        assert ev.launch("scale", pd.NA).opcodes.sum() == 2048
        assert "void axpy<double>" in ev.launch("axpy", pd.NA, mangled="_Z4axpyIdEvT_PKS0_PS0_i").label


def test_a_launch_named_only_by_a_name_it_shares_is_refused(tmp_path):
    _, ev = _evidence(tmp_path, "several_full", [DATA / "several_full.ncu-rep.xz"])
    with pytest.raises(AnalysisError, match=r"axpy at no N, occurrence 0, in report several_full is 2 launches "
                                            r"\(_Z4axpyIdEvT_PKS0_PS0_i; _Z4axpyIfEvT_PKS0_PS0_i\)"):
        ev.launch("axpy", pd.NA)


@pytest.mark.parametrize("baseline, candidate", [("several_full", "several_full"), ("templates", "templates"),
                                                 ("ranges_ab", "ranges_ba")])
def test_a_comparison_explains_each_instantiation_and_range_apart(tmp_path, baseline, candidate):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    out_a, a = _evidence(tmp_path / "a", "a", [DATA / f"{baseline}.ncu-rep.xz"])
    out_b, b = _evidence(tmp_path / "b", "b", [DATA / f"{candidate}.ncu-rep.xz"])
    diff = compare_metric_tables(pd.read_parquet(out_a["per_metric"]), pd.read_parquet(out_b["per_metric"]))
    table = write_comparison_explanations(diff, a, b, tmp_path / "e.md", tmp_path / "e.csv", tmp_path / "e.png", None)
    page = (tmp_path / "e.md").read_text()
    ids = pd.read_parquet(out_a["metrics"], columns=["kernel", "mangled", "range_name", "occurrence"]).drop_duplicates()
    sections = [line for line in page.splitlines() if line.startswith("## ")]
    # one per instantiation, range and launch of a shared name (several_full's three launches of
    # add had one section, the last one's), none pooled with another
    assert len(sections) == len(ids)
    assert {s[3:] for s in sections} == set(table["launch_a"])
    pairs = set(zip(table["launch_a"], table["launch_b"]))
    launches = pd.read_parquet(out_a["metrics"], columns=["report", "launch"]).drop_duplicates().shape[0]
    assert len(pairs) == table["launch_a"].nunique() == launches  # every launch explained, each once
    if baseline == "ranges_ab":  # matched by range name, whichever order the program ran the ranges in
        assert {s.split(" (")[0] for s in sections} == {"## range alpha", "## range beta"}
        assert pairs == {("range alpha (ranges_ab)", "range alpha (ranges_ba)"),
                         ("range beta (ranges_ab)", "range beta (ranges_ba)")}
    else:
        assert all(x == y for x, y in pairs)


def test_a_comparison_of_two_other_gpus_says_what_its_verdicts_rest_on(tmp_path):
    """The A100 / A10G comparison: its verdicts took the H200 noise model without saying so on the
    page; a launch pair not decomposed read "no part beyond noise"; the sections of pairs matched
    by name but of other shapes did not say so, and said "Parts add up" of no parts."""
    from analysis.compare.diff import versions_from_table
    from analysis.compare.explain import noise_caveat

    reports = {"a100": REPO / "profiles" / "a100_ncu2021.2.2_bitwise_spgemm" / "reports" / "result.ncu-rep.xz",
               "a10g": REPO / "profiles" / "a10g_ncu2023.1.1_esmm" / "reports" / "profile.ncu-rep.xz"}
    (out_a, a), (out_b, b) = (_evidence(tmp_path / k, k, [v]) for k, v in reports.items())
    gpus = tuple(versions_from_table(pd.read_parquet(o["metrics"]))["gpu"] for o in (out_a, out_b))
    model = "noise model of h200_580.159.04_ncu2025.3.1_noise"
    assert noise_caveat(model, "NVIDIA H200", ("NVIDIA H200", "NVIDIA H200")) == ""
    assert noise_caveat("", "NVIDIA H200", gpus) == ""
    assert noise_caveat(model, "NVIDIA H200", ("?, NVIDIA H200", "")) == ""  # no other GPU given
    caveat = noise_caveat(model, "NVIDIA H200", gpus)
    assert all(g in caveat for g in gpus) and "measured on NVIDIA H200" in caveat
    diff = compare_metric_tables(pd.read_parquet(out_a["per_metric"]), pd.read_parquet(out_b["per_metric"]))
    write_comparison_explanations(diff, a, b, tmp_path / "e.md", tmp_path / "e.csv", tmp_path / "e.png", None,
                                  caveat=caveat)
    page = (tmp_path / "e.md").read_text()
    assert page.splitlines()[2] == caveat  # under the title, before anything else
    rows = [line for line in page.splitlines() if line.startswith("| ampere_sgemm")]
    assert rows and all(line.endswith("| not decomposed |") for line in rows)
    sections = [sec for sec in page.split("\n## ")[1:] if sec.startswith("ampere_sgemm")]  # the launch pairs'
    assert len(sections) == 2 and all(sec.count("**Matched by name, not by shape**: launch__grid_size 2560 against 640") == 1
                            and "Not decomposed:" in sec and "Parts add up" not in sec for sec in sections)


def test_the_findings_page_gives_each_launch_of_a_shared_name_its_own_heading(tmp_path):
    _, ev = _evidence(tmp_path, "several_full", [DATA / "several_full.ncu-rep.xz"])
    heads = [line for line in findings_page("several_full", ev.findings).splitlines() if line.startswith("## ")]
    assert len(heads) == ev.findings[["report", "launch"]].drop_duplicates().shape[0] == 8
    assert "## add, no N: `add(const float *, const float *, float *, int)` [occurrence 2] (report several_full, " \
           "launch 2)" in heads
    # in backticks, so that rendered Markdown does not take <float> for an HTML tag
    assert "## axpy, no N: `void axpy<float>(T1, const T1 *, T1 *, int)` (report several_full, launch 3)" in heads
    assert "## scale, no N" in heads  # a name of one launch keeps its plain heading


def test_each_launch_of_a_shared_name_has_its_own_stall_stack(tmp_path):
    """several_full: axpy<float> and axpy<double> (one name), add three times; each launch's
    shares add up to 1 on their own, and the figure's bars are those launches."""
    _, ev = _evidence(tmp_path, "several_full", [DATA / "several_full.ncu-rep.xz"])
    s = stall_table(ev.metrics)
    per = s.groupby("launch")["share"].sum()
    assert len(per) == 8 and np.allclose(per.to_numpy(), 1.0)
    assert {"void axpy<float>(T1, const T1 *, T1 *, int)", "void axpy<double>(T1, const T1 *, T1 *, int)",
            "add", "add [occurrence 1]", "add [occurrence 2]"} <= set(per.index)
    assert not s.duplicated(["launch", "n", "reason"]).any()


def test_the_findings_page_names_the_reports_without_rule_results(foreign_dir, tmp_path):
    out, ev = _evidence(tmp_path, "foreign", [foreign_dir / f"{n}.ncu-rep.xz" for n in (NO_RULES, FOREIGN_PAIR[0])])
    page = findings_page("foreign", ev.findings, sorted(ev.launches["report"].unique()))
    assert page.splitlines()[-1] == (f"No rule results in 1 report(s), whose launches are not listed above: {NO_RULES} "
                                     "(an older Nsight Compute, or a profile of metrics without rules).")
    heads = [line for line in page.splitlines() if line.startswith("## ")]  # the other report's launches
    assert len(heads) == ev.findings.groupby(["report", "launch"]).ngroups > 0
    assert set(ev.findings["report"]) == {FOREIGN_PAIR[0]}
    # every message whole: the page cut them at 300 characters, mid-word and without a mark
    shown = ev.findings[ev.findings["kind"].isin(["optimization", "warning", "error", "unreadable"])]
    longest = max(shown["message"].dropna(), key=len)
    assert len(longest) > 300 and " ".join(longest.split()).replace("|", "\\|") in page


def test_the_duration_noise_is_named_by_the_side_it_comes_from(knobs, model, tmp_path):
    """The larger of the two sides' duration noise is used; its source was taken from side a
    whatever its size, so a pair of the noise set's repeats (b) against a set without repeats
    (a) gave the repeats' spread labelled "noise model"."""
    reports = sorted((NOISE_DIR / "reports").glob("fp16_ptx_mma_k16_*.ncu-rep.xz"))
    out = _tables(tmp_path, NOISE_DIR.name, reports)
    rep = load_set_evidence(NOISE_DIR.name, out["per_metric"], out["instances"], out["findings"], out["hotspots"],
                            None, None, model, "noise model of the _noise set", table=out["metrics"])
    la, lb = knobs.launch("fp16_ptx_mma_k16", 8192), rep.launch("fp16_ptx_mma_k16", 8192)
    assert lb.noise_source[DURATION].startswith("repeats") and not la.noise_source[DURATION].startswith("repeats")
    for first, second, ev1, ev2 in ((la, lb, knobs, rep), (lb, la, rep, knobs)):
        said = duration_change(ev1, first, ev2, second).method
        larger = max((la, lb), key=lambda x: x.noise[DURATION])
        v = larger.noise[DURATION]
        assert f"({larger.noise_source[DURATION]})" in said and f"noise_rel {v:.4f}" in said, said
