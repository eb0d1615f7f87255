"""Reports of one kernel at every N, profiled in one ncu process (one launch per N).

Data: tests/data/h200_580.159.04_ncu2025.3.1_multi, the workflow's GPU part for four kernels
on the H200 (`snakemake --config set_suffix=_multi 'profile_kernels=[...]'`), checked
against the default set, whose reports were profiled one N per ncu process."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from analysis.errors import ReportError
from analysis.gpu.harness import Tiling
from analysis.names import ReportName
from analysis.reports.ncu import load_instances, load_report

from .conftest import REPO, SET_DIR

MULTI = REPO / "tests" / "data" / "h200_580.159.04_ncu2025.3.1_multi"
SIZES = (512, 1024, 2048, 4096, 8192)


def _multi(kernel: str):
    return MULTI / "reports" / f"{kernel}_n{'-'.join(map(str, SIZES))}.ncu-rep.xz"


def test_report_names_of_several_sizes():
    name = ReportName.parse("k_x_n512-1024_r2.ncu-rep.xz")
    assert (name.kernel, name.sizes, name.repeat, name.stem) == ("k_x", (512, 1024), 2, "k_x_n512-1024_r2")
    with pytest.raises(ValueError, match="no single N"):
        _ = name.n
    assert ReportName.parse("k_n4096.ncu-rep").n == 4096
    assert ReportName.parse("k_n512-512.ncu-rep.xz") is None  # an N twice: not a name of ours
    assert ReportName.parse("k_n512-.ncu-rep.xz") is None


@pytest.mark.parametrize("kernel", ["int8_wmma", "fp16_wmma"])
def test_one_launch_per_n_matches_the_reports_of_one_n(kernel, registry):
    """Launch i is at the name's i-th N: its grid is the tiling's grid at that N, and its
    instruction count equals that of the default set's report of the same kernel and N
    (another run, one ncu process per N): the counts are deterministic for these kernels;
    durations of the two runs within 5 % (1.6 % seen)."""
    got = load_report(_multi(kernel), expect_launches=1)
    ids = got.drop_duplicates("launch").sort_values("launch")
    assert list(ids["n"]) == list(SIZES) and set(ids["occurrence"]) == {0}
    meta = json.loads((MULTI / "metadata.json").read_text())
    tiling = Tiling(**{k: v for k, v in meta["tiling"].items() if k != "arch"})
    assert list(ids["grid"]) == [f"{gx},{gy},1" for gx, gy in (tiling.grid(n, n) for n in SIZES)]
    for n in SIZES:
        one = load_report(SET_DIR / "reports" / f"{kernel}_n{n}.ncu-rep.xz", expect_launches=1)
        mine = got[got["n"] == n].set_index("metric")["value"]
        theirs = one.set_index("metric")["value"]
        assert mine["smsp__inst_executed.sum"] == theirs["smsp__inst_executed.sum"], n
        assert mine["gpu__time_duration.sum"] == pytest.approx(theirs["gpu__time_duration.sum"], rel=0.05), n


def test_launches_that_do_not_match_the_name_are_refused(tmp_path):
    """A report named for two sizes that holds five launches fails, naming the file and the
    counts, in the metric and the instance reader alike; asking for two launches per N
    fails too."""
    bad = tmp_path / "int8_wmma_n512-1024.ncu-rep.xz"
    shutil.copy(_multi("int8_wmma"), bad)
    for read in (load_report, load_instances):
        with pytest.raises(ReportError, match=r"int8_wmma_n512-1024.ncu-rep.xz: holds 5 kernel launches, "
                                              r"but its name gives 2 sizes"):
            read(bad)
    with pytest.raises(ReportError, match=r"holds 5 kernel launches, expected 2 per N \(10 for the 5 sizes"):
        load_report(_multi("int8_wmma"), expect_launches=2)


@pytest.mark.parametrize("stem, why", [
    ("int8_wmma_n8192-4096-2048-1024-512", r"the launch its name puts at N = 1024 has a smaller grid \(128,64,1\) "
                                           r"than the one at N = 512 \(256,128,1\)"),
    ("int8_wmma_n512", r"its name gives N = 512 to launches of grids \(16,8,1\), \(32,16,1\), \(64,32,1\), \(128,64,1\), \(256,128,1\)"),
    ("fp16_wmma_n512-1024-2048-4096-8192", r"launch 0 is kernel 'int8_wmma', but the file name says 'fp16_wmma'"),
])
def test_a_name_the_launches_contradict_is_refused(tmp_path, stem, why):
    """The five launches of int8_wmma under names that misplace them: sizes out of launch
    order (the grids shrink as N grows), one N for launches of five grids, another kernel;
    refused by the metric and the instance reader alike, naming the file."""
    bad = tmp_path / f"{stem}.ncu-rep.xz"
    shutil.copy(_multi("int8_wmma"), bad)
    for read in (load_report, load_instances):
        with pytest.raises(ReportError, match=why) as e:
            read(bad)
        assert str(bad) in str(e.value)


def test_names_with_a_zero_or_a_leading_zero_are_not_ours(tmp_path):
    """N = 0 and N written with a leading zero are no sizes of this workflow's names: such a
    file is read as a report of another program (kernel from ncu, N = NA)."""
    for stem in ("int8_wmma_n0512-1024-2048-4096-8192", "int8_wmma_n0-1-2-3-4"):
        assert ReportName.parse(f"{stem}.ncu-rep.xz") is None
    odd = tmp_path / "int8_wmma_n0512-1024-2048-4096-8192.ncu-rep.xz"
    shutil.copy(_multi("int8_wmma"), odd)
    got = load_report(odd)
    assert got["n"].isna().all() and set(got["kernel"]) == {"int8_wmma"}


@pytest.fixture(scope="module")
def multi_set():
    """The test set read as the workflow reads a set: (set table, instances)."""
    from analysis.reports.parse import parse_reports
    from analysis.reports.tables import set_table

    got = parse_reports(sorted((MULTI / "reports").glob("*.ncu-rep.xz")), workers=2, expect_launches=1)
    got.raise_errors(MULTI.name)
    table = set_table(got.metrics, MULTI.name, json.loads((MULTI / "metadata.json").read_text()))
    return table, pd.concat(got.instances, ignore_index=True)


def test_compared_launch_by_launch_with_a_set_of_one_report_per_n(multi_set, table):
    """Against the default set (one report per N), each launch of a report per kernel meets
    the report of its kernel and N: int8_wmma's and fp16_wmma's instruction counts unchanged
    at every N, no row of theirs only on one side."""
    from analysis.compare.diff import compare_sets

    diff = compare_sets(table, multi_set[0])
    mine = diff[diff["kernel"].isin(["int8_wmma", "fp16_wmma"])]
    inst = mine[mine["metric"] == "smsp__inst_executed.sum"]
    assert sorted(zip(inst["kernel"], inst["n"])) == sorted((k, n) for k in ("fp16_wmma", "int8_wmma")
                                                               for n in SIZES)
    assert (inst["status"] == "unchanged").all() and (inst["occurrence"] == 0).all()
    assert not mine["status"].str.startswith("only in").any()


def test_event_timings_reach_every_launch_of_the_set(multi_set):
    """The set's summary gives each launch of a one-report-per-kernel set its event timing
    (the timings.csv row of its kernel and N), so its rates are those of timings.csv."""
    from analysis.reports.tables import summary

    timings = pd.read_csv(MULTI / "timings.csv")
    summ = summary(*multi_set, timings)
    assert len(summ) == 4 * len(SIZES)
    assert (summ["throughput_source"] == "cuda events (outside profiler)").all()
    both = summ.merge(timings, on=["kernel", "n"], suffixes=("", "_timed"))
    assert len(both) == len(summ)
    assert both["throughput"].to_numpy() == pytest.approx(both["throughput_timed"].to_numpy(), rel=1e-9)


def test_a_kernel_and_n_in_two_reports_of_a_set_is_refused(multi_set, table):
    """fp16_wmma's report of every N beside the default set's reports of one N each: the
    summary refuses the set, naming the kernel, N and both reports, instead of counting the
    launches twice."""
    from analysis.errors import AnalysisError
    from analysis.reports.tables import summary

    both = pd.concat([table, multi_set[0][multi_set[0]["kernel"] == "fp16_wmma"].assign(set=table["set"].iloc[0])],
                     ignore_index=True)
    with pytest.raises(AnalysisError, match=r"set h200_580.159.04_ncu2025.3.1: kernel fp16_wmma at N = 512 is in "
                                            r"several reports \(fp16_wmma_n512, fp16_wmma_n512-1024-2048-4096-8192\)"):
        summary(both, None, None)
