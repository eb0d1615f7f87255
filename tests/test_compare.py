"""Set comparison on the two committed H200 sets: kernels built by nvcc 13.0 (default set)
and by nvcc 13.5 (the _nvcc13.5 set, which holds a repeat of every report)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.compare.diff import (
    Thresholds,
    aliases,
    canonical_names,
    compare_metric_tables,
    compare_sets,
    metadata_side_by_side,
    metric_table,
    per_metric,
    read_metric_table,
)
from analysis.errors import AnalysisError
from analysis.names import ReportName

from .conftest import REPO

A = "h200_580.159.04_ncu2025.3.1"
B = "h200_580.159.04_ncu2025.3.1_nvcc13.5"


@pytest.fixture(scope="module")
def set_a(table):
    return table


@pytest.fixture(scope="module")
def set_b(other_set):
    return other_set[0]


@pytest.fixture(scope="module")
def diff(set_a, set_b):
    return compare_sets(set_a, set_b)


def _row(diff, kernel, n, metric):
    return diff[(diff["kernel"] == kernel) & (diff["n"] == n) & (diff["metric"] == metric)].iloc[0]


def test_the_candidate_has_repeats_and_noise(set_b):
    pm = per_metric(canonical_names(set_b))
    t = pm[pm["metric"] == "gpu__time_duration.sum"]
    assert (t["repeats"] == 2).all() and t["noise_rel"].gt(0).all()


def test_compiler_change_in_instruction_counts_is_flagged(diff):
    """nvcc 13.5 adds one uniform-datapath instruction per warp per K tile to int8_wmma."""
    r = _row(diff, "int8_wmma", 1024, "smsp__inst_executed.sum")
    assert r["status"] == "changed" and r["flagged"]
    assert r["value_candidate"] - r["value_baseline"] == 65536  # = 512 blocks x 8 warps x 16 K tiles
    # the same count for fp16_wmma, and the same registers for both
    assert _row(diff, "fp16_wmma", 1024, "smsp__inst_executed.sum")["status"] == "unchanged"
    assert _row(diff, "int8_wmma", 4096, "launch__registers_per_thread")["status"] == "unchanged"


def test_identifiers_are_not_compared_as_measurements(foreign_dir):
    """launch__function_pcs (the kernel's code address) of two runs of a program differs every time:
    a comparison of armleth's T4 reports flagged it `changed`. Such values, and the context, stream,
    device and PCI ids, get the status `identifier` and are never flagged."""
    from analysis.compare.diff import is_identifier
    from analysis.reports.ncu import load_report

    path = foreign_dir / "AveryClapp__ESMM-Research__profile__fcf10798.ncu-rep.xz"
    a = load_report(path)
    b = a.copy()
    pcs = b["metric"] == "launch__function_pcs"
    assert pcs.any()
    b.loc[pcs, "value"] = b.loc[pcs, "value"] + 4096  # the same kernel loaded at another address
    d = compare_sets(a, b)
    ids = d[d["metric"].map(is_identifier)]
    assert set(ids["metric"]) >= {"launch__function_pcs", "launch__context_id", "launch__stream_id"}
    assert (ids["status"] == "identifier").all() and not ids["flagged"].any()
    assert d.loc[~d["metric"].map(is_identifier), "status"].isin(["unchanged", "no value in either", "device"]).all()


def test_device_attributes_of_two_gpus_are_listed_once_with_their_units(foreign_dir):
    """A comparison of two GPUs flagged every device attribute that differs (clock rate, L2
    size, SM count) as `changed`, once per launch and without a unit (Nsight Compute gives
    none): 72 of the 182 changed rows between the A100 and A10G sets. They get the status
    `device`, are never flagged, and the metadata lists each differing attribute once, with
    the unit the CUDA Runtime API gives it (kHz for the clock rates)."""
    from analysis.compare.diff import device_attributes, is_device_attribute, is_identifier
    from analysis.reports.ncu import load_report

    a100 = load_report(REPO / "profiles" / "a100_ncu2021.2.2_bitwise_spgemm" / "reports" / "result.ncu-rep.xz")
    a10g = load_report(REPO / "profiles" / "a10g_ncu2023.1.1_esmm" / "reports" / "profile.ncu-rep.xz")
    d = compare_sets(a100, a10g)  # ampere_sgemm_128x64_nn ran on both
    dev = d[d["metric"].map(is_device_attribute)]
    both = dev["value_baseline"].notna() & dev["value_candidate"].notna()
    assert both.any() and (dev.loc[both, "value_baseline"] != dev.loc[both, "value_candidate"]).any()
    assert (dev.loc[both, "status"] == "device").all() and not dev.loc[both, "flagged"].any()
    assert not d["metric"].map(is_identifier)[d["status"] == "device"].any()
    devices = device_attributes(a100), device_attributes(a10g)
    assert devices[0]["device__attribute_clock_rate"] == "1410000"  # the A100-PCIE-40GB's 1410 MHz
    meta = metadata_side_by_side({}, {}, ("a100", "a10g"), devices=devices).set_index("field")
    clock = meta.loc["device__attribute_clock_rate"]
    assert clock["unit"] == "kHz" and clock["a100"] == "1410000" and clock["a10g"] == devices[1][clock.name] != "1410000"
    assert clock["differs"] and clock["source a100"] == "device attribute"
    assert meta.loc["device__attribute_l2_cache_size", "unit"] == "byte"
    assert devices[0]["device__attribute_warp_size"] == devices[1]["device__attribute_warp_size"]
    assert "device__attribute_warp_size" not in meta.index  # attributes both GPUs share are not listed
    # the session fields are listed even where neither side gives them (here no metadata at all)
    assert list(meta.index[:5]) == ["gpu", "cc", "driver", "cuda_version", "ncu_version"]
    assert (meta.loc["driver", ["source a100", "source a10g"]] == "not recorded").all()


def test_identifier_and_device_rows_of_one_sided_launches_are_not_flagged():
    """Launches that only one set holds gave their device attributes and identifiers the
    status "only in ...", and those rows were flagged wherever the other set had the kernel: in
    the A100/A10G comparison 1341 device-attribute rows and the launch ids. They keep their
    one-sided status (the launch is one-sided) and are never flagged; the kernels' own
    one-sided counters still are."""
    from analysis.compare.diff import is_device_attribute, is_identifier
    from analysis.reports.ncu import load_report

    a100 = load_report(REPO / "profiles" / "a100_ncu2021.2.2_bitwise_spgemm" / "reports" / "result.ncu-rep.xz")
    a10g = load_report(REPO / "profiles" / "a10g_ncu2023.1.1_esmm" / "reports" / "profile.ncu-rep.xz")
    d = compare_sets(a100, a10g)
    one_sided = d["status"].str.startswith("only in")
    special = d["metric"].map(is_device_attribute) | d["metric"].map(is_identifier)
    assert (one_sided & special).sum() > 1000  # the rows this is about are there
    assert not d.loc[one_sided & special, "flagged"].any()
    assert d.loc[one_sided & ~special, "flagged"].any()


def test_system_topology_metrics_are_device_properties(foreign_dir):
    """ncu 2026.2.1 on an RTX 5060 Laptop GPU (no NVLink) wrote nvlink__enabled_mask values that
    look like addresses and differ between two runs of the same program; the comparison flagged
    them `changed`. The NVLink, C2C and NUMA topology metrics describe the system, like the
    device attributes: status `device`, never flagged."""
    from analysis.compare.diff import is_device_attribute
    from analysis.reports.ncu import load_report

    a, b = (load_report(foreign_dir / f"Abhishek7204__raytracingCuda__profile__{h}.ncu-rep.xz")
            for h in ("ca437891", "d36cc9c6"))
    d = compare_sets(a, b)
    mask = d[d["metric"] == "nvlink__enabled_mask"]
    assert len(mask) == 1 and mask["value_baseline"].iloc[0] != mask["value_candidate"].iloc[0]
    assert mask["status"].iloc[0] == "device" and not mask["flagged"].iloc[0]
    topo = d[d["metric"].str.startswith(("nvlink__", "c2clink__", "numa__"))]
    assert len(topo) > 5 and (topo["status"] == "device").all() and not topo["flagged"].any()
    assert all(map(is_device_attribute, ["nvlink__count_logical", "c2clink__present", "numa__id_cpu"]))
    assert not is_device_attribute("nvlrx__bytes.sum")  # NVLink traffic is a counter


#: The warp-state sampler's settings (analysis.compare.diff.SETTING_METRICS) and what it measured.
SAMPLER_SETTINGS = {"smsp__pcsamp_interval", "smsp__pcsamp_interval_cycles", "smsp__pcsamp_buffer_size_bytes",
                    "smsp__pcsamp_aggregated_passes"}


def test_sampler_settings_are_not_compared_as_counters(foreign_dir, diff):
    """The warp-state sampler's interval, buffer size and pass count are settings of the
    measurement (ncu's --sampling-interval, --sampling-buffer-size, --sampling-max-passes), not
    measurements of the kernel, yet they were compared as counters: against iamcoleman's report
    of the same program without them (3d528bfb), those of 452bfd7f (interval 6, 2048 cycles)
    were flagged as one-sided rows, and both-sided they were `unchanged`, `within noise` or
    `changed` counter rows. They get the status `setting`, never flagged; the samples
    themselves stay counters."""
    from analysis.compare.diff import status_counts
    from analysis.reports.ncu import load_report

    old, new = (load_report(foreign_dir / f"iamcoleman__monte-carlo-pi__profile__{h}.ncu-rep.xz")
                for h in ("3d528bfb", "452bfd7f"))
    assert not SAMPLER_SETTINGS & set(old["metric"]) and SAMPLER_SETTINGS <= set(new["metric"])
    d = compare_sets(old, new)
    settings = d[d["metric"].isin(SAMPLER_SETTINGS)]
    assert set(settings["status"]) == {"only in candidate"} and len(settings) == 2 * len(SAMPLER_SETTINGS)
    assert not settings["flagged"].any()  # all 8 were flagged
    samples = d[d["metric"].str.startswith("smsp__pcsamp_warps_issue_stalled_")]
    assert len(samples) and (samples["status"] == "only in candidate").all() and samples["flagged"].all()
    # both sides hold them: armleth's first two T4 reports of matrix_addition2D
    a, b = (load_report(foreign_dir / f"armleth__cuda-mlp-inference__{s}.ncu-rep.xz")
            for s in ("report__b4d31e9a", "report_v2__e4819d2a"))
    d = compare_sets(a, b)
    settings = d[d["metric"].isin(SAMPLER_SETTINGS)]
    assert len(settings) == len(SAMPLER_SETTINGS) and set(settings["status"]) == {"setting"}
    assert not settings["flagged"].any() and settings["value_baseline"].notna().all()
    assert set(d.loc[d["status"] == "setting", "metric"]) == SAMPLER_SETTINGS
    measured = d[d["metric"].str.startswith("smsp__pcsamp") & ~d["metric"].isin(SAMPLER_SETTINGS)]
    assert {"smsp__pcsamp_sample_count", "smsp__pcsamp_dropped_bytes"} <= set(measured["metric"])
    assert measured["status"].isin(["changed", "within noise", "unchanged"]).all()
    assert _first(measured, "smsp__pcsamp_sample_count")["flagged"]  # 1143 samples against 1442
    # the committed H200 sets: 2048-cycle sampling on both sides, shown as settings and counted apart
    h200 = diff[diff["metric"].isin(SAMPLER_SETTINGS)]
    assert not h200["flagged"].any()
    h200 = h200[h200["report_baseline"].notna() & h200["report_candidate"].notna()]  # matched launches
    assert set(h200["status"]) == {"setting"}
    assert set(h200.loc[h200["metric"] == "smsp__pcsamp_interval_cycles", "value_baseline"]) == {2048}
    counts = status_counts(diff).set_index("status")
    assert counts.loc["setting", "rows"] == len(h200) > 0 and counts.loc["setting", "flagged"] == 0
    from analysis.compare.diff import SETTING_METRICS, is_setting

    assert SETTING_METRICS == SAMPLER_SETTINGS and not is_setting("smsp__pcsamp_sample_count")


def _first(rows, metric):
    return rows[rows["metric"] == metric].iloc[0]


def test_noise_is_not_flagged(set_a, set_b):
    """A set against itself flags nothing; nor does the 13.5 set (median of its two repeats)
    against its own second repeat alone: every change lies inside the measured spread."""
    same = compare_sets(set_a, set_a)
    assert not same["flagged"].any() and same["status"].isin(["unchanged", "no value in either", "identifier",
                                                             "device", "setting"]).all()
    second = set_b[set_b["repeat"] == 1].assign(repeat=0)
    d = compare_sets(set_b, second)
    dur = d[d["metric"] == "gpu__time_duration.sum"]
    assert len(dur) == 20 and (dur["value_baseline"] != dur["value_candidate"]).any()
    assert not d["flagged"].any()


def test_threshold_without_repeats_is_the_stated_default(set_a):
    d = compare_sets(set_a, set_a, Thresholds(default_rel=0.05))
    assert d["noise_rel"].isna().all() and (d["threshold_rel"] == 0.05).all()


def test_renamed_metric_is_aligned(set_a, set_b):
    """An older report without dram__cycles_active.avg.pct_of_peak_sustained_elapsed is
    compared through gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed (alias table)."""
    new = "dram__cycles_active.avg.pct_of_peak_sustained_elapsed"
    old = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
    assert ((aliases()["old"] == old) & (aliases()["new"] == new)).any()
    older = set_b[set_b["metric"] != new]
    d = compare_sets(set_a, older)
    r = _row(d, "int8_wmma", 4096, new)
    assert r["renamed_from_candidate"] == old and pd.isna(r["renamed_from_baseline"])
    assert r["status"] not in ("only in baseline", "only in candidate")
    # the alias is an equality in these reports: the value is the one stored under the new name
    v = set_b[(set_b["kernel"] == "int8_wmma") & (set_b["n"] == 4096) & (set_b["repeat"] == 0)].set_index("metric")
    assert v.loc[old, "value"] == pytest.approx(v.loc[new, "value"])


def test_missing_metric_is_reported(set_a, set_b):
    gone = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"
    d = compare_sets(set_a, set_b[set_b["metric"] != gone])
    rows = d[d["metric"] == gone]
    shared = set(zip(set_b["kernel"], set_b["n"]))
    rows = rows[[(k, n) in shared for k, n in zip(rows["kernel"], rows["n"])]]
    assert len(rows) == 20 and (rows["status"] == "only in baseline").all() and rows["flagged"].all()


def test_unit_spellings_and_scales_are_converted_before_comparing(set_a, set_b):
    """sector/sectors (both occur across ncu versions) compare as one unit; a duration in us
    compares with the same duration in ns."""
    plain = compare_sets(set_a, set_b)
    cand = set_b.copy()
    sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    assert (cand.loc[cand["metric"] == sectors, "unit"] == "sector").all()
    cand.loc[cand["metric"] == sectors, "unit"] = "sectors"
    dur = cand["metric"] == "gpu__time_duration.sum"
    assert (cand.loc[dur, "unit"] == "ns").all()
    cand.loc[dur, "value"] = cand.loc[dur, "value"] / 1e3
    cand.loc[dur, "unit"] = "us"
    conv = compare_sets(set_a, cand)
    for metric in (sectors, "gpu__time_duration.sum"):
        a, b = _row(plain, "int8_wmma", 1024, metric), _row(conv, "int8_wmma", 1024, metric)
        assert b["status"] == a["status"] and b["rel_change"] == pytest.approx(a["rel_change"], rel=1e-9, abs=1e-12)
    assert _row(conv, "int8_wmma", 1024, "gpu__time_duration.sum")["unit_factor"] == 1e3


def test_units_that_do_not_convert_get_no_relative_change(set_a, set_b):
    """derived__memory_l2_theoretical_sectors_global_excessive is in byte (its unit read
    alone, in every ncu version; read after the sector counters, as before, it was in
    sector in 2025.3.1): no ratio is taken across byte and sector."""
    metric = "derived__memory_l2_theoretical_sectors_global_excessive"
    base = set_a.copy()
    assert (base.loc[base["metric"] == metric, "unit"] == "byte").all()
    base.loc[base["metric"] == metric, "unit"] = "sector"
    r = _row(compare_sets(base, set_b), "int8_wmma", 1024, metric)
    assert r["status"] == "unit changed" and r["flagged"]
    assert np.isnan(r["rel_change"]) and np.isnan(r["abs_change"]) and np.isnan(r["unit_factor"])


def test_aligned_on_kernel_and_n_not_name_alone(set_a, set_b):
    d = compare_sets(set_a, set_b[set_b["n"] == 1024])
    four = d[(d["n"] == 4096) & (d["metric"] == "gpu__time_duration.sum")]
    assert set(four["status"]) == {"only in baseline"} and not four["flagged"].any()


def test_metadata_side_by_side():
    ma = json.loads((REPO / "profiles" / A / "metadata.json").read_text())
    mb = json.loads((REPO / "profiles" / B / "metadata.json").read_text())
    t = metadata_side_by_side(ma, mb, (A, B)).set_index("field")
    assert t.loc["nvcc_version", "differs"] and not t.loc["driver", "differs"]
    assert (t.loc["nvcc_version", A], t.loc["nvcc_version", B]) == ("13.0.88", "13.5.37")


def _committed_identities(repo) -> dict:
    from analysis.workflow import SetIdentity, set_reports

    profiles = repo / "profiles"
    # the committed sets only: a user's own imports under profiles/ (README, use 3) are not the
    # repository's, and a set of theirs sharing no kernel failed the tests below
    tracked = subprocess.run(["git", "ls-files", "-z", "profiles"], cwd=repo, capture_output=True, check=True).stdout
    committed = {Path(f).parts[1] for f in tracked.decode().split("\0") if f.count("/") >= 2}
    out = {}
    for d in sorted(profiles.iterdir()):
        if d.name not in committed or not (d / "reports").is_dir():
            continue
        meta = json.loads((d / "metadata.json").read_text()) if (d / "metadata.json").exists() else {}
        reports = set_reports(profiles, d.name, warn=lambda m: None)
        if all(ReportName.parse(p) for p in reports):  # kernels from the names, as the workflow takes them
            kernels = frozenset(ReportName.parse(p).kernel for p in reports)
        else:  # imported reports: ncu's function names, as the parse job's table gives them
            from analysis.reports.ncu import load_report
            from analysis.reports.report_info import report_metadata

            kernels = frozenset(k for p in reports for k in load_report(p)["kernel"].unique())
            meta = report_metadata(reports[0])
        out[d.name] = SetIdentity(kernels, meta.get("ncu_version"), meta.get("driver"), meta.get("gpu"))
    return out


def test_each_committed_set_is_compared_with_the_configured_baseline_only(repo):
    """Kind 3: every pair of sets sharing a kernel was compared (18 of 7 sets, growing with
    the square); now each set against config compare_baseline."""
    import yaml

    from analysis.workflow import comparison_pairs

    sets = _committed_identities(repo)
    base = yaml.safe_load((repo / "config" / "config.yaml").read_text())["compare_baseline"]
    pairs = comparison_pairs(sets, base)
    sharing = [s for s in sorted(sets) if s != base and sets[s].kernels & sets[base].kernels]
    assert [p for p in pairs if p[0] == base] == [(base, s) for s in sharing] and len(sharing) >= 5
    # a set sharing no kernel with the baseline (the wgmma kernels; the imported A100 and A10G
    # sets) is compared with the oldest set it shares kernels with: the lowest ncu, then driver
    # version, then one of its own GPU, then by name
    from analysis.workflow import version_key

    others = sorted(set(sets) - {base} - set(sharing))
    for s in others:
        peers = sorted((version_key(sets[t].ncu_version), version_key(sets[t].driver), sets[t].gpu != sets[s].gpu, t)
                       for t in sets if t != base and sets[s].kernels & sets[t].kernels)
        assert [p for p in pairs if p[1] == s] == ([(peers[0][-1], s)] if peers[0][-1] != s else [])
    assert len(pairs) < len(sets) and len({c for _, c in pairs}) == len(pairs)


def test_a_baseline_of_the_candidate_s_own_gpu_comes_before_one_of_another(repo):
    """The H100 registry set sorts before every H200 set by name and shares the wgmma kernels
    with the H200 _wgmma set, on the same ncu and driver: the _wgmma set (sharing no kernel with
    the default baseline) is still compared with an H200 set; with the GPUs unknown, by name."""
    import dataclasses

    from analysis.workflow import comparison_pairs

    sets = _committed_identities(repo)
    h100, wgmma = "h100-80gb-hbm3_580.159.04_ncu2025.3.1_registry", "h200_580.159.04_ncu2025.3.1_wgmma"
    assert sets[h100].gpu == "NVIDIA H100 80GB HBM3" and sets[wgmma].gpu == "NVIDIA H200"
    assert sets[h100].kernels & sets[wgmma].kernels and all(h100 < t for t in sets if t.startswith("h200"))
    base = "h200_580.159.04_ncu2025.3.1"
    (baseline,) = [b for b, c in comparison_pairs(sets, base) if c == wgmma]
    assert baseline != h100 and sets[baseline].gpu == "NVIDIA H200"
    # the H100 set itself shares the study's kernels with the default baseline: compared with it
    assert (base, h100) in comparison_pairs(sets, base)
    unknown = {k: dataclasses.replace(v, gpu=None) for k, v in sets.items()}
    assert [b for b, c in comparison_pairs(unknown, base) if c == wgmma] == [h100]


def test_sets_without_the_baseline_are_compared_against_the_oldest_version(foreign_index, repo):
    """The `add` kernel in trevorgloe's RTX 4070 Ti SUPER report (ncu 2024.3.1) and in the
    project's H200 report (ncu 2025.3.1): the older one is the baseline."""
    from analysis.workflow import SetIdentity, comparison_pairs

    row = foreign_index[foreign_index["first_kernels"] == "add"].iloc[0]
    h200 = json.loads((repo / "profiles" / "h200_580.159.04_ncu2025.3.1" / "metadata.json").read_text())
    sets = {"h200_add": SetIdentity(frozenset({"add"}), h200["ncu_version"], h200["driver"]),
            "rtx4070_add": SetIdentity(frozenset({"add"}), row["ncu_version"], None),
            "render": SetIdentity(frozenset({"render"}), "2026.2.1.0", None)}
    assert comparison_pairs(sets, "h200_580.159.04_ncu2025.3.1") == [("rtx4070_add", "h200_add")]
    assert comparison_pairs(sets, "h200_add") == [("h200_add", "rtx4070_add")]


def test_a_set_sharing_no_kernel_is_named_once_with_what_it_holds(repo, foreign_index):
    from analysis.workflow import SetIdentity, comparison_pairs, unpaired_sets

    sets = _committed_identities(repo)
    assert unpaired_sets(sets) == []  # the imported A100 and A10G sets share ampere_sgemm_128x64_nn
    row = foreign_index[foreign_index["first_kernels"] == "render"].iloc[0]
    sets["render"] = SetIdentity(frozenset({"render"}), row["ncu_version"], None)
    msgs = unpaired_sets(sets)
    assert len(msgs) == 1 and "render" in msgs[0] and "baseline=render" in msgs[0]
    assert "render" not in {x for pair in comparison_pairs(sets, None) for x in pair}


def test_a_set_compared_with_itself_has_two_metadata_columns(repo):
    """A set against itself (compare --config baseline=S candidate=S) crashed writing
    metadata.csv: both columns had the set's name."""
    meta = json.loads((repo / "profiles" / A / "metadata.json").read_text())
    df = metadata_side_by_side(meta, meta, (A, A))
    assert list(df.columns) == ["field", "unit", f"{A} (baseline)", f"{A} (candidate)", f"source {A} (baseline)",
                                f"source {A} (candidate)", "differs"]
    assert not df["differs"].any()


def test_per_metric_tables_compare_as_the_set_tables(set_a, set_b, diff, tmp_path):
    """Rule compare_sets diffs the per-metric tables rule parse_set wrote (parquet round trip),
    and gets what compare_sets gives on the set tables."""
    paths = []
    for name, table in (("a", set_a), ("b", set_b)):
        paths.append(tmp_path / f"{name}.parquet")
        metric_table(table).to_parquet(paths[-1], index=False)
    got = compare_metric_tables(read_metric_table(paths[0]), read_metric_table(paths[1]))
    pd.testing.assert_frame_equal(got, diff)


def test_a_broken_per_metric_table_names_its_file(set_b, tmp_path):
    short = tmp_path / "per_metric.parquet"
    metric_table(set_b).drop(columns=["noise_rel", "unit"]).to_parquet(short, index=False)
    with pytest.raises(AnalysisError, match=r"per_metric.parquet: a per-metric table lacks the columns \['unit', 'noise_rel'\]"):
        read_metric_table(short)
    junk = tmp_path / "junk.parquet"
    junk.write_text("not parquet")
    with pytest.raises(AnalysisError, match="junk.parquet: not a readable per-metric table"):
        read_metric_table(junk)


def test_headline_values_stay_legible_on_dark_cells(diff):
    """The largest change sits at a dark end of the colour scale: its value is written in
    white there, and values on pale cells in black."""
    import matplotlib.pyplot as plt

    from analysis.compare.diff import headline_figure

    fig = headline_figure(diff, "test")
    try:
        ax = fig.axes[0]
        grid = ax.images[0].get_array()
        cells = [t for t in ax.texts if t.get_text()[:1] in "+-"]
        assert cells
        inks = {}
        for t in cells:
            j, i = t.get_position()
            inks[float(abs(grid[int(i), int(j)]))] = t.get_color()
        biggest = max(inks)
        assert inks[biggest] == "#FFFFFF"
        assert inks[min(inks)] == "#000000"
    finally:
        plt.close(fig)


def test_a_field_one_side_does_not_record_is_not_said_to_differ(repo):
    """The default set's metadata.json against the A100 set read from its reports: a field only
    one side records (the default set's nvcc version) was `differs` True."""
    meta = json.loads((repo / "profiles" / A / "metadata.json").read_text())
    df = metadata_side_by_side(meta, {}, (A, "other"), ({}, {"gpu": meta["gpu"]})).set_index("field")
    assert df.loc["nvcc_version", "other"] == "" and pd.isna(df.loc["nvcc_version", "differs"])
    # the empty cell says why: the set records no value (before, its source was empty too)
    assert df.loc["nvcc_version", "source other"] == "not recorded"
    assert df.loc["nvcc_version", f"source {A}"] == "metadata.json"
    assert df.loc["gpu", "differs"] == False  # noqa: E712 (both record it, the same)
