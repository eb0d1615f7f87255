"""Reports this workflow did not make: other kernels, several launches, templates and
lambdas, the basic section set (real H200 reports in tests/data, tests/data/src)."""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

from analysis.study import figures
from analysis.compare.diff import compare_sets, status_counts
from analysis.reports.importing import import_plan, import_report, import_stem
from analysis.reports.ncu import load_report
from analysis.reports.parse import parse_reports
from analysis.reports.schemas import validate_set, validate_summary
from analysis.reports.tables import set_table, summary
from analysis.workflow import committed_sets, set_reports

from .conftest import REPO

DATA = REPO / "tests" / "data"
FULL = DATA / "several_full.ncu-rep.xz"  # 8 launches: add x3, axpy<float>, axpy<double>, scale, apply x2
BASIC = DATA / "several.ncu-rep.xz"  # the same launches, basic section set
ADD = DATA / "add_n1024.ncu-rep.xz"  # one launch of a non-GEMM kernel, named as documented


def _set(paths, name="s"):
    got = parse_reports(paths, workers=1)
    got.raise_errors(name)
    table = validate_set(set_table(got.metrics, name, {}))
    return table, pd.concat(got.instances, ignore_index=True)


def test_non_gemm_kernel_gets_summary_rows_without_rates():
    """Fault 1: a set holding a one-launch report of `add` (precision NA) crashed the summary."""
    table, inst = _set([ADD])
    s = validate_summary(summary(table, inst, None))
    assert len(s) == 1 and pd.isna(s.loc[0, "precision"]) and s.loc[0, "n"] == 1024
    assert np.isnan(s.loc[0, "throughput"]) and pd.isna(s.loc[0, "throughput_unit"])
    assert s.loc[0, "gpu__time_duration.sum"] > 0 and s.loc[0, "launch__registers_per_thread"] > 0
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for draw in figures.FIGURES.values():
            figures.plt.close(draw(s, "add"))
    # drawn, and what the report cannot give is said: add issues no LDGSTS
    assert any("coalescing: no LDGSTS issued (the LDGSTS counters are in the reports, at 0): add" in str(w.message)
               for w in seen)


def test_plain_reports_in_a_set_are_read_with_a_warning(tmp_path):
    """Fault 1: plain .ncu-rep files were skipped silently; a set of plain reports only was
    'no reports under ...'."""
    import lzma

    d = tmp_path / "profiles" / "plain" / "reports"
    d.mkdir(parents=True)
    (d / "add_n1024.ncu-rep").write_bytes(lzma.decompress(ADD.read_bytes()))
    assert committed_sets(tmp_path / "profiles") == ["plain"]
    with pytest.warns(UserWarning, match="1 plain .ncu-rep file"):
        assert set_reports(tmp_path / "profiles", "plain") == [d / "add_n1024.ncu-rep"]


def test_every_launch_is_read_with_its_identity():
    """Faults 2 and 3: all eight launches, each with function, demangled and mangled name,
    occurrence, grid and block."""
    t = load_report(FULL)
    launches = t.drop_duplicates("launch").set_index("launch")
    assert list(launches.index) == list(range(8))
    assert list(launches["function"]) == ["add"] * 3 + ["axpy"] * 2 + ["scale"] + ["apply"] * 2
    assert list(launches["occurrence"]) == [0, 1, 2, 0, 0, 0, 0, 0]
    # one template, two instantiations; two lambdas: one function name, distinct mangled names
    assert launches.loc[3, "demangled"].startswith("void axpy<float>")
    assert launches.loc[4, "demangled"].startswith("void axpy<double>")
    assert launches.loc[[3, 4, 6, 7], "mangled"].is_unique
    assert launches.loc[5, "grid"] == "8,1,1" and launches.loc[5, "block"] == "512,1,1"
    assert (launches["grid"].drop(5) == "16,1,1").all()
    assert not launches["profiling_failed"].any()
    assert t.groupby("launch")["metric"].nunique().eq(2243).all()


def test_several_launches_get_one_summary_row_each():
    """Fault 2: the summary kept launch 0 of a report silently."""
    table, inst = _set([FULL, BASIC])
    s = validate_summary(summary(table, inst, None))
    assert len(s) == 16 and s.groupby("report").size().to_dict() == {"several": 8, "several_full": 8}
    dur = s.set_index(["report", "launch"])["gpu__time_duration.sum"]
    assert dur.notna().all() and dur.gt(0).all()


def test_launches_are_compared_one_to_one_never_as_repeats():
    """Fault 2: compare took the launches of a report as repeats of one profile."""
    a, _ = _set([FULL], "a")
    d = compare_sets(a, a)
    assert (d["repeats_baseline"].fillna(1) <= 1).all()
    adds = d[(d["kernel"] == "add") & (d["metric"] == "gpu__time_duration.sum")]
    assert sorted(adds["occurrence"]) == [0, 1, 2] and (adds["status"] == "unchanged").all()
    axpy = d[(d["kernel"] == "axpy") & (d["metric"] == "gpu__time_duration.sum")]
    assert len(axpy) == 2  # axpy<float> and axpy<double> stay apart


def test_metrics_without_value_are_counted_not_dropped(tmp_path):
    """Fault 4: 14 sampling metrics of these short launches have no value in either report;
    they were dropped from the diff. A launch whose values were lost (here: a copy of the
    baseline's table with its durations blanked, as a failed profile leaves them) reads
    'no value in candidate', never 'only in baseline'."""
    shutil.copy(ADD, tmp_path / "add_run.ncu-rep.xz")  # no N in the name: aligns with FULL's add
    base, _ = _set([tmp_path / "add_run.ncu-rep.xz"], "base")
    cand, _ = _set([FULL], "cand")
    d = compare_sets(base, cand)
    add0 = d[(d["kernel"] == "add") & (d["occurrence"] == 0)]
    none = add0[add0["status"] == "no value in either"]
    assert len(none) == 14 and not none["flagged"].any()
    lost = cand.copy()
    lost.loc[lost["metric"] == "gpu__time_duration.sum", "value"] = np.nan
    d2 = compare_sets(base, lost)
    row = d2[(d2["kernel"] == "add") & (d2["occurrence"] == 0) & (d2["metric"] == "gpu__time_duration.sum")].iloc[0]
    assert row["status"] == "no value in candidate" and row["flagged"]
    counts = status_counts(d2).set_index("status")
    assert counts.loc["no value in candidate", "rows"] == 1 and counts.loc["no value in either", "rows"] == 14


def test_import_names_and_compresses(tmp_path):
    import lzma

    src = tmp_path / "src"
    src.mkdir()
    (src / "my app (run 1).ncu-rep").write_bytes(lzma.decompress(BASIC.read_bytes()))
    shutil.copy(ADD, src)
    (src / "notes.txt").write_text("not a report")
    plan = import_plan(src)
    assert sorted(plan) == ["add_n1024", "my_app__run_1_"]
    out = tmp_path / "out" / "my_app__run_1_.ncu-rep.xz"
    import_report(plan["my_app__run_1_"], out)
    pd.testing.assert_frame_equal(load_report(out).drop(columns="report"),
                                  load_report(BASIC).drop(columns="report"))
    assert import_stem("a/b/x$(y).ncu-rep.xz") == "x__y_"


@pytest.mark.parametrize("name", ["-dash.start.ncu-rep.xz", ".hidden.ncu-rep", "--.ncu-rep.xz", "x y.ncu-rep",
                                  "Ünïcode.ncu-rep.xz", "..ncu-rep"])
def test_import_stems_are_names_the_workflow_reads(name):
    """Whatever the source file is called, the name it gets in the set is one the main job
    reads (a leading '-' was kept by the import and then skipped by the main job)."""
    from analysis.workflow import SAFE_REPORT

    assert SAFE_REPORT.match(f"{import_stem(name)}.ncu-rep.xz"), import_stem(name)


def test_import_refuses_two_files_with_one_name(tmp_path):
    from analysis.errors import ConfigError

    for name in ("a b.ncu-rep.xz", "a_b.ncu-rep.xz"):
        shutil.copy(ADD, tmp_path / name)
    with pytest.raises(ConfigError, match="would both be imported as a_b.ncu-rep.xz"):
        import_plan(tmp_path)


def test_import_never_changes_a_measured_set_or_a_report_it_holds(tmp_path):
    from analysis.errors import ConfigError
    from analysis.reports.importing import check_import_target

    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ADD, src)
    plan = import_plan(src)
    with pytest.raises(ConfigError, match="holds a set measured by this workflow .metadata.json, timings.csv"):
        check_import_target(plan, REPO / "profiles" / "h200_580.159.04_ncu2025.3.1")
    target = tmp_path / "set"
    check_import_target(plan, target)  # a new set
    (target / "reports").mkdir(parents=True)
    import_report(plan["add_n1024"], target / "reports" / "add_n1024.ncu-rep.xz")
    check_import_target(plan, target)  # the same report again: nothing changes
    shutil.copy(DATA / "add_basic.ncu-rep.xz", src / "add_n1024.ncu-rep.xz")  # other content, same name
    with pytest.raises(ConfigError, match="already in the set with other content: .*add_n1024.ncu-rep.xz"):
        check_import_target(import_plan(src), target)


def test_an_import_cut_short_is_not_silently_joined_by_another(tmp_path):
    """An import stopped after its reports were stored and before its record was written left a
    set folder that a later import of other reports joined without a word (the set's tables then
    held both). Now that import is refused, naming the stored files; the same import run again
    finishes the first."""
    from analysis.errors import ConfigError
    from analysis.reports.importing import check_import_target, write_import_record

    first, other, target = tmp_path / "first", tmp_path / "other", tmp_path / "set"
    first.mkdir()
    other.mkdir()
    shutil.copy(ADD, first)
    shutil.copy(DATA / "add_basic.ncu-rep.xz", other)
    (target / "reports").mkdir(parents=True)
    plan = import_plan(first)
    import_report(plan["add_n1024"], target / "reports" / "add_n1024.ncu-rep.xz")  # no imported.csv yet
    with pytest.raises(ConfigError, match=r"set/reports holds add_n1024.ncu-rep.xz, which no import record .* cut "
                                          r"short.* again to finish it \(with --rerun-incomplete where Snakemake"):
        check_import_target(import_plan(other), target)
    check_import_target(plan, target)  # the first import again: it finishes
    write_import_record(plan, target / "imported.csv")
    check_import_target(import_plan(other), target)  # a recorded set may take more reports


def test_a_name_that_reads_as_kernel_and_n_must_hold_that_kernel(tmp_path):
    from analysis.errors import ReportError

    p = tmp_path / "myapp_n2.ncu-rep.xz"
    shutil.copy(FULL, p)
    with pytest.raises(ReportError, match="file name says 'myapp' .a name of the form .kernel._n.N. names the kernel"):
        load_report(p)


def test_a_per_opcode_breakdown_of_no_opcode_has_no_value(foreign_dir):
    """iamcoleman's report by Nsight Compute 2020.2.1 (3d528bfb) stores the per-opcode thread
    instruction counts with no instance and a total of 0, beside 2.9e8 executed warp
    instructions: the 0 is no measurement. It read as 0, and against the same program's other
    report (452bfd7f, 8.35e10 in launch 0) the comparison flagged a change of -100 %."""
    old, new = (foreign_dir / f"iamcoleman__monte-carlo-pi__profile__{h}.ncu-rep.xz" for h in ("3d528bfb", "452bfd7f"))
    t_old, t_new = load_report(old), load_report(new)
    thread = "sass__thread_inst_executed_true_per_opcode"
    rows = t_old[t_old["metric"].str.startswith(thread)]
    assert len(rows) == 6 and rows["value"].isna().all() and (rows["instances"] == 0).all()
    warp = t_old[t_old["metric"] == "sass__inst_executed_per_opcode"]
    assert (warp["instances"] > 0).all() and (warp["value"] > 2.9e8).all()  # its sibling keeps its total
    kept = t_new[t_new["metric"] == thread]
    assert (kept["instances"] > 0).all() and (kept["value"] > 8e10).any()
    d = compare_sets(set_table([t_new], "new", {}), set_table([t_old], "old", {}))
    assert set(d.loc[d["metric"] == thread, "status"]) == {"no value in candidate"}
