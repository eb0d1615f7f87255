"""Values beyond a nominal range are kept and flagged, never the cause of a lost set; a
schema error names the report and launch (real reports of ../shared/foreign-reports)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.reports.parse import parse_reports
from analysis.reports.schemas import SchemaError, validate_summary
from analysis.reports.tables import NOMINAL_RANGES, range_flags, set_table, summary

#: LakshyaSingh354/CudaCode, GTX 1660 SUPER, ncu 2024.1.1: two launches of dot-product
#: kernels; launch 1 gives an L2 write hit rate of 102.68 %.
DOT = "LakshyaSingh354__CudaCode__stage1_reps_dot_product__7aafec15"
HIT = "lts__t_sector_op_write_hit_rate.pct"


@pytest.fixture(scope="module")
def dot(foreign_dir):
    got = parse_reports([foreign_dir / f"{DOT}.ncu-rep.xz"], workers=1)
    got.raise_errors(DOT)
    return set_table(got.metrics, "dot", {})


def test_a_percentage_above_100_is_kept_and_flagged_with_its_launch(dot):
    wide = dot[dot["metric"] == HIT].pivot_table(index=["report", "launch"], columns="metric",
                                                  values="value").reset_index()
    flags = range_flags(wide, {HIT: (0.0, 100.0)})
    over = wide[wide[HIT] > 100]
    assert len(over) == 1 and over["launch"].iloc[0] == 1
    assert flags[over.index[0]] == f"{HIT} = {over[HIT].iloc[0]:.6g} outside [0, 100]"
    assert (flags.drop(over.index) == "").all()
    assert wide[HIT].max() > 102.6  # the value is kept as the report gives it


def test_the_summary_flags_instead_of_refusing(dot):
    """Kind 4: the summary schema refused an achieved occupancy above 100 % (a real
    report's 104.7 %), and the set lost every table. No range check remains in the
    schema; the nominal ranges are flags."""
    s = validate_summary(summary(dot, None, None))
    assert "flags" in s and (s["flags"].fillna("") == "").all()
    occ = "sm__warps_active.avg.pct_of_peak_sustained_active"
    assert NOMINAL_RANGES[occ] == (0.0, 100.0)
    checks = validate_summary.__globals__["SUMMARY"].columns[occ].checks
    assert checks == []


def test_a_schema_error_names_the_report_and_launch(dot):
    s = summary(dot, None, None)
    s.loc[s["launch"] == 1, "throughput_unit"] = "GFLOP/s"  # a unit another tool writes
    with pytest.raises(SchemaError, match=rf"report {DOT}, launch 1") as exc:
        validate_summary(s, "summary.csv")
    assert "summary.csv" in str(exc.value) and "re-read them" in str(exc.value)


def test_a_metric_in_two_units_is_kept_named_and_listed(dot):
    """A set whose reports give one summary metric in two units (here launch 1's duration as
    another tool writes it, in us): the values stay as given, every row of that metric says
    its unit and the other, and the units table lists both."""
    from analysis.reports.tables import summary_units

    t = dot.copy()
    dur = (t["metric"] == "gpu__time_duration.sum") & (t["launch"] == 1)
    ns = float(t.loc[dur, "value"].iloc[0])
    t.loc[dur, "value"] = ns / 1e3
    t.loc[dur, "unit"] = "us"
    s = summary(t, None, None).set_index("launch")
    assert s.loc[1, "gpu__time_duration.sum"] == ns / 1e3  # the column keeps the report's value
    assert s.loc[1, "flags"] == ("gpu__time_duration.sum in us (the set also has ns); gpu__time_duration.sum in us: "
                                 "throughput and event_over_ncu use it converted to ns (x 1000)")
    assert s.loc[0, "flags"] == "gpu__time_duration.sum in ns (the set also has us)"
    u = summary_units(t).set_index("column")
    assert u.loc["gpu__time_duration.sum", "unit"] == "ns; us" and "several units" in u.loc["gpu__time_duration.sum",
                                                                                             "source"]
    assert summary_units(dot).set_index("column").loc["gpu__time_duration.sum", "unit"] == "ns"


@pytest.fixture(scope="module")
def ours():
    """Two of the default set's reports (fp16_ptx_3stage at N = 1024 and 2048): precision and N
    known, so the summary derives a throughput from ncu's duration."""
    from .conftest import REPO

    d = REPO / "profiles" / "h200_580.159.04_ncu2025.3.1" / "reports"
    got = parse_reports([d / "fp16_ptx_3stage_n1024.ncu-rep.xz", d / "fp16_ptx_3stage_n2048.ncu-rep.xz"], workers=1)
    got.raise_errors("default set")
    return set_table(got.metrics, "ours", {})


def _with_duration_unit(t, n, unit, scale):
    t = t.copy()
    dur = (t["metric"] == "gpu__time_duration.sum") & (t["n"] == n)
    t.loc[dur, "value"] = t.loc[dur, "value"] * scale
    t.loc[dur, "unit"] = unit
    return t


def test_a_duration_in_another_time_unit_is_converted_for_what_derives_from_it(ours):
    """The N = 2048 duration as another tool writes it (us): the column keeps that value; the
    throughput derived from it is the one of the report's own ns, and the row says so."""
    base = summary(ours, None, None).set_index("n")
    s = summary(_with_duration_unit(ours, 2048, "us", 1e-3), None, None).set_index("n")
    assert s.loc[2048, "gpu__time_duration.sum"] == pytest.approx(base.loc[2048, "gpu__time_duration.sum"] * 1e-3)
    assert s.loc[2048, "throughput"] == pytest.approx(base.loc[2048, "throughput"]) and base.loc[2048, "throughput"] > 0
    assert "gpu__time_duration.sum in us: throughput and event_over_ncu use it converted to ns (x 1000)" in \
        s.loc[2048, "flags"]
    assert s.loc[1024, "throughput"] == base.loc[1024, "throughput"] and "converted" not in s.loc[1024, "flags"]


def test_a_duration_in_no_time_unit_leaves_what_needs_it_na(ours):
    """A duration whose unit is no time (ncu's empty unit, a count) is kept and flagged, and the
    throughput that would divide by it is NA, not a number in an unknown unit."""
    base = summary(ours, None, None).set_index("n")
    s = summary(_with_duration_unit(ours, 1024, "", 1.0), None, None).set_index("n")
    assert s.loc[1024, "gpu__time_duration.sum"] == base.loc[1024, "gpu__time_duration.sum"]
    assert pd.isna(s.loc[1024, "throughput"]) and base.loc[1024, "throughput"] > 0
    assert "gpu__time_duration.sum in (none), not a time unit: throughput and event_over_ncu left NA" in \
        s.loc[1024, "flags"]


def test_repeats_in_two_units_are_not_pooled(tmp_path, capsys):
    """A report and its repeat (tests/data's add_n1024 and a copy named _r1) where the repeat
    gives dram__bytes_read.sum in Kbyte: the comparisons' per-metric row of that metric has no
    median (NaN, 0 repeats), lists both units and is warned of with both reports; the other
    metrics pool as before."""
    import shutil

    from analysis.reports.metric_table import metric_table
    from .conftest import REPO

    src = REPO / "tests" / "data" / "add_n1024.ncu-rep.xz"
    shutil.copy(src, tmp_path / "add_n1024.ncu-rep.xz")
    shutil.copy(src, tmp_path / "add_n1024_r1.ncu-rep.xz")
    got = parse_reports(sorted(tmp_path.glob("*.ncu-rep.xz")), workers=1)
    got.raise_errors("add")
    t = set_table(got.metrics, "add", {})
    metric = "dram__bytes_read.sum"
    r1 = (t["metric"] == metric) & (t["repeat"] == 1)
    assert r1.sum() == 1 and t.loc[r1, "unit"].iloc[0] == "byte"
    plain = metric_table(t).set_index("metric")
    changed = t.copy()
    changed.loc[r1, "value"] = changed.loc[r1, "value"] / 1e3
    changed.loc[r1, "unit"] = "Kbyte"
    capsys.readouterr()
    mixed = metric_table(changed).set_index("metric")
    warned = capsys.readouterr().out
    assert pd.isna(mixed.loc[metric, "value"]) and mixed.loc[metric, "repeats"] == 0
    assert mixed.loc[metric, "unit"] == "Kbyte; byte" and plain.loc[metric, "repeats"] == 2
    assert f"{metric}: its repeats give it in Kbyte; byte" in warned and "add_n1024_r1" in warned
    other = "gpu__time_duration.sum"
    assert mixed.loc[other, "value"] == plain.loc[other, "value"] and mixed.loc[other, "repeats"] == 2
    # a repeat without a number (its unit empty) takes no part: the other's value stands
    gone = t.copy()
    gone.loc[r1, "value"] = np.nan
    gone.loc[r1, "unit"] = ""
    one = metric_table(gone).set_index("metric")
    r0 = (t["metric"] == metric) & (t["repeat"] == 0)
    assert one.loc[metric, "value"] == t.loc[r0, "value"].iloc[0] and one.loc[metric, "repeats"] == 1
    assert one.loc[metric, "unit"] == "byte"


def test_flags_go_by_position_whatever_the_index(dot):
    """range_flags and unit_flags on a table whose index repeats (two summaries concatenated)
    give each row its own flags, as on the table alone."""
    from analysis.reports.tables import unit_flags

    wide = dot[dot["metric"] == HIT].pivot_table(index=["report", "launch"], columns="metric",
                                                  values="value").reset_index()
    twice = pd.concat([wide, wide])
    assert twice.index.duplicated().any()
    one = range_flags(wide, {HIT: (0.0, 100.0)})
    assert list(range_flags(twice, {HIT: (0.0, 100.0)})) == list(one) * 2 and (one != "").sum() == 1
    t = dot.copy()
    t.loc[(t["metric"] == "gpu__time_duration.sum") & (t["launch"] == 1), "unit"] = "us"
    s = summary(t, None, None)
    assert list(unit_flags(t, pd.concat([s, s]))) == list(unit_flags(t, s)) * 2
