"""Values beyond a nominal range are kept and flagged, never the cause of a lost set; a
schema error names the report and launch (real reports of ../shared/foreign-reports)."""

from __future__ import annotations

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
    assert s.loc[1, "gpu__time_duration.sum"] == ns / 1e3  # not converted
    assert s.loc[1, "flags"] == "gpu__time_duration.sum in us (the set also has ns)"
    assert s.loc[0, "flags"] == "gpu__time_duration.sum in ns (the set also has us)"
    u = summary_units(t).set_index("column")
    assert u.loc["gpu__time_duration.sum", "unit"] == "ns; us" and "several units" in u.loc["gpu__time_duration.sum",
                                                                                             "source"]
    assert summary_units(dot).set_index("column").loc["gpu__time_duration.sum", "unit"] == "ns"
