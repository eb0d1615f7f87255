"""The committed H200 reports, read through analysis.load_report, hold real values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import analysis
from analysis.reports.ncu import IDENTITY_COLUMNS, TIDY_COLUMNS, ReportName

from .conftest import REPORTS

#: Percentages seen above 100 in the committed H200 reports (hardware counter overshoot).
PCT_OVERSHOOT = {"lts__t_sector_op_write_hit_rate.pct"}


def test_default_set_is_complete(report_tables, timings, repo):
    """Every configured kernel x the config's 5 sizes, each with a report and an event timing;
    a kernel beyond the study (study: false) not yet profiled into the set has none at all."""
    import yaml

    cfg = yaml.safe_load((repo / "config" / "config.yaml").read_text())
    measured = {r.kernel for r in report_tables}
    pending = {k for k, spec in cfg["kernels"].items() if not spec.get("study", True) and k not in measured}
    want = {(k, n) for k in cfg["kernels"] if k not in pending for n in cfg["sizes"]}
    assert {(r.kernel, r.n) for r in report_tables} == want
    assert set(zip(timings["kernel"], timings["n"])) == want


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.name)
def test_report_values(path, report_tables):
    name = ReportName.parse(path)
    df = report_tables[name]
    assert list(df.columns) == TIDY_COLUMNS + IDENTITY_COLUMNS
    # one row per metric: a single launch, no metric twice; its identity is the kernel's
    assert df["launch"].eq(0).all() and df["occurrence"].eq(0).all() and not df["profiling_failed"].any()
    assert set(df["mangled"]) == set(df["function"]) == {name.kernel}  # extern "C": not mangled
    assert set(df["report"]) == {name.stem}
    assert df["metric"].is_unique
    assert len(df) > 1000
    # the kernel and N are the file's
    assert set(df["kernel"]) == {name.kernel}
    assert set(df["n"]) == {name.n}
    assert set(df["precision"]) == {name.kernel.split("_")[0]}
    value = df.set_index("metric")["value"]
    assert value["gpu__time_duration.sum"] > 0
    assert df.set_index("metric").loc["gpu__time_duration.sum", "unit"] == "ns"
    # every scalar percentage lies in [0, 100]. Instanced metrics are left out: their row
    # holds the total over instances (e.g. derived__pct_occupancy_per_block_size sums a
    # curve to ~3000). One counter overshoots in the real H200 data: the L2 write hit
    # rate reads up to 100.67 % in 60 of the 120 reports; it is held to [0, 101].
    pct = df[(df["unit"] == "%") & df["value"].notna() & (df["instances"] == 0)]
    assert len(pct) > 500
    upper = np.where(pct["metric"].isin(PCT_OVERSHOOT), 101.0, 100.0)
    bad = pct[(pct["value"] < 0) | (pct["value"] > upper)]
    assert bad.empty, bad[["metric", "value"]].to_string()


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.name)
def test_grid_matches_n(path, report_tables, set_metadata, registry):
    """The launch grid the report recorded is (N / block_n, N / block_m): the file's N (with
    the set's tiling, or the kernel's own where the registry gives it one)."""
    name = ReportName.parse(path)
    value = report_tables[name].set_index("metric")["value"]
    tiling = {**set_metadata["tiling"], **registry.get(name.kernel, {}).get("tiling", {})}
    assert value["launch__grid_dim_x"] * tiling["block_n"] == name.n
    assert value["launch__grid_dim_y"] * tiling["block_m"] == name.n
    assert value["launch__block_size"] == tiling["warps_m"] * tiling["warps_n"] * 32


def test_string_metrics_have_their_own_column(report_tables):
    df = next(iter(report_tables.values()))
    row = df.set_index("metric").loc["device__attribute_display_name"]
    assert row["value_str"] == "NVIDIA H200"
    assert np.isnan(row["value"])


def test_public_api_reads_plain_and_xz(small_report, tmp_path):
    import lzma
    import shutil

    plain = tmp_path / small_report.name[: -len(".xz")]
    with lzma.open(small_report) as src, open(plain, "wb") as dst:
        shutil.copyfileobj(src, dst)
    a, b = analysis.load_report(small_report), analysis.load_report(plain)
    pd.testing.assert_frame_equal(a, b)


def test_clocks_recorded(report_tables):
    """The clocks the GPU ran at while profiled (--clock-control none) are in every report."""
    for df in report_tables.values():
        v = df.set_index("metric")["value"]
        assert 0.5e9 < v["sm__cycles_elapsed.avg.per_second"] < 2.5e9
        assert v["dram__cycles_elapsed.avg.per_second"] > 1e9
