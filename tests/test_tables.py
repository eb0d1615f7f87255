"""Set table, summary and figures from the committed H200 set."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.study import figures
from analysis.reports.tables import SET_COLUMNS, access_bytes, summary


def test_set_table_columns(table, report_tables):
    assert list(table.columns[: len(SET_COLUMNS)]) == SET_COLUMNS
    assert len(table) == sum(len(t) for t in report_tables.values())
    one = table.drop_duplicates(SET_COLUMNS)[SET_COLUMNS]
    assert len(one) == 1
    row = one.iloc[0]
    assert (row["gpu"], row["cc"], row["driver"], row["ncu_version"]) == ("NVIDIA H200", "9.0", "580.159.04", "2025.3.1")
    assert not table.duplicated(["kernel", "n", "repeat", "launch", "metric"]).any()
    assert set(table["repeat"]) == {0}


def test_summary_one_row_per_kernel_and_n(summ, report_tables, registry):
    measured = {r.kernel for r in report_tables}
    assert {k for k, spec in registry.items() if spec.get("study", True)} <= measured <= set(registry)
    assert len(summ) == len({(r.kernel, r.n) for r in report_tables}) == 5 * len(measured)
    assert not summ.duplicated(["kernel", "n"]).any()


def test_throughput_is_event_timing(summ, timings):
    """Throughput = 2 N^3 / the harness's median event time, not ncu's duration."""
    m = summ.merge(timings, on=["kernel", "n"], suffixes=("", "_t"))
    expect = 2.0 * m["n"].astype(float) ** 3 / m["median_ns_t"] / 1e3
    np.testing.assert_allclose(m["throughput"], expect, rtol=1e-12)
    np.testing.assert_allclose(m["throughput"], m["throughput_t"], rtol=1e-9)
    assert (summ["throughput_source"] == "cuda events (outside profiler)").all()


def test_throughput_falls_back_to_ncu_duration(table, report_instances):
    s = summary(table, report_instances, None)
    expect = 2.0 * s["n"].astype(float) ** 3 / s["gpu__time_duration.sum"] / 1e3
    np.testing.assert_allclose(s["throughput"], expect)
    assert s["throughput_source"].str.startswith("ncu").all()


def test_ldgsts_coalescing_from_counters(summ, table):
    """Bytes per sector and sectors per request come from the reports' own counters."""
    row = summ[(summ["kernel"] == "int8_wmma") & (summ["n"] == 1024)].iloc[0]
    v = table[(table["kernel"] == "int8_wmma") & (table["n"] == 1024) & (table["repeat"] == 0)]
    v = v.set_index("metric")["value"]
    sectors = (v["sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access.sum"]
               + v["sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum"])
    assert row["ldgsts_sectors_per_request"] == pytest.approx(
        sectors / v["sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum"])
    # every kernel copies 16 B per lane with cp.async.cg: LDGSTS.E.BYPASS.128
    assert row["ldgsts_ideal_sectors_per_request"] == pytest.approx(16.0)
    assert 0 < row["ldgsts_bytes_per_sector"] <= 32
    # no kernel here issues LDG, so ncu's LDG bytes-per-sector ratio is not shown
    assert summ["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"].isna().all()


@pytest.mark.parametrize("opcode,nbytes", [("LDGSTS.E.BYPASS.128", 16), ("LDG.E.64", 8), ("LDG.E", 4),
                                           ("LDGSTS.E.BYPASS.LTC128B.128", 16)])
def test_access_bytes(opcode, nbytes):
    assert access_bytes(opcode) == nbytes


@pytest.mark.parametrize("name", sorted(figures.FIGURES))
def test_figures_plot_the_summary(name, summ):
    """Every plotted point is a summary value: compare the drawn data with the table."""
    fig = figures.FIGURES[name](summ, "test")
    drawn = []
    for ax in fig.axes:
        for line in ax.get_lines():
            x, y = line.get_xdata(), line.get_ydata()
            if len(x) and line.get_label() and not line.get_label().startswith("_"):
                drawn.append((ax, line.get_label(), np.asarray(x, float), np.asarray(y, float)))
    assert drawn
    if name == "occupancy_vs_throughput":
        for _, label, x, y in drawn:
            sub = summ[summ["kernel"] == label].sort_values("n")
            np.testing.assert_allclose(x, sub["sm__warps_active.avg.pct_of_peak_sustained_active"])
            np.testing.assert_allclose(y, sub["throughput"])
    elif name == "dram_active":
        for ax, label, x, y in drawn:
            if any(ln.get_gid() == "largest_n" for ln in ax.get_lines()):  # its own test below
                continue
            sub = summ[summ["kernel"] == label].sort_values("n")
            np.testing.assert_allclose(x, sub["n"])
            np.testing.assert_allclose(y, sub["dram__cycles_active.avg.pct_of_peak_sustained_elapsed"])
    else:  # coalescing: one point per kernel, at the largest N, on its row
        big = summ[summ["n"] == summ["n"].max()].set_index("kernel")
        seen = set()
        for ax, label, x, y in drawn:
            gid = next(ln.get_gid() for ln in ax.get_lines() if ln.get_label() == label and ln.get_gid())
            assert x[0] == big.loc[label, gid]
            assert fig.axes[0].get_yticklabels()[int(y[0])].get_text() == label
            seen.add((label, gid))
        assert len(seen) == 2 * len(big)
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_missing_metric_is_marked_not_faked(summ):
    """A set whose reports lack DRAM counters still draws, and says what is missing."""
    s = summ.copy()
    s["dram__cycles_active.avg"] = np.nan
    with pytest.warns(UserWarning, match="dram__cycles_active.avg"):
        fig = figures.dram_active(s, "no dram counters")
    texts = " ".join(t.get_text() for t in fig.texts)
    assert "not in the reports" in texts
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_summary_round_trips_through_csv(summ, tmp_path):
    p = tmp_path / "summary.csv"
    summ.to_csv(p, index=False)
    back = pd.read_csv(p)
    assert list(back.columns) == list(summ.columns)
    np.testing.assert_allclose(back["throughput"], summ["throughput"])


def test_atomic_write_keeps_umask_mode_and_leaves_nothing_on_error(tmp_path):
    import os

    from analysis.io import atomic_path

    target = tmp_path / "t.csv"
    with atomic_path(target) as tmp:
        tmp.write_text("a\n")
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask
    with pytest.raises(RuntimeError):
        with atomic_path(tmp_path / "u.csv") as tmp:
            tmp.write_text("half")
            raise RuntimeError("interrupted")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


def test_dram_figure_plots_the_largest_n_against_duration(summ):
    """The third panel of dram_active: one point per kernel at the largest N, at (duration,
    DRAM-active cycles) as in the summary."""
    import matplotlib.pyplot as plt

    fig = figures.dram_active(summ, "test")
    try:
        pts = {ln.get_label(): (ln.get_xdata()[0], ln.get_ydata()[0])
               for ax in fig.axes for ln in ax.get_lines() if ln.get_gid() == "largest_n"}
    finally:
        plt.close(fig)
    big = summ[summ["n"] == summ["n"].max()].set_index("kernel")
    assert set(pts) == set(big.index)
    for kernel, (x, y) in pts.items():
        assert (x, y) == (big.loc[kernel, "gpu__time_duration.sum"], big.loc[kernel, "dram__cycles_active.avg"])

