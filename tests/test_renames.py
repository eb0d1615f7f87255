"""Metrics renamed between Nsight Compute versions (analysis/data/metric_aliases.csv) and why
the rows a cross-version comparison leaves one-sided are one-sided (analysis.compare.renames), on
real reports of other people (../shared/foreign-reports) and of this project (tests/data)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from analysis.compare.diff import METRIC_TABLE_COLUMNS, aliases, canonical_names, compare_metric_tables, per_metric
from analysis.errors import ReportError
from analysis.reports.ncu import load_report_isolated
from analysis.compare.renames import (
    NO_LAUNCH,
    ONE_SIDED,
    REAL_GAP,
    RENAMED,
    VERSION_TABLE_COLUMNS,
    build_version_table,
    normalize_version,
    one_sided_reasons,
    reason_counts,
    version_table,
)
from analysis.reports.tables import set_table

from .conftest import REPO

DATA = REPO / "tests" / "data"
DAVID = "thedavidchu__speedy_scan__profile__bee32051.ncu-rep.xz"  # ncu 2020.3.1, RTX 3070, full set
HEAT = "bautista-garcia__heat_sim__report_name__74ef3945.ncu-rep.xz"  # ncu 2021.3.1, GTX 1650, full set
COLEMAN = "iamcoleman__monte-carlo-pi__profile__452bfd7f.ncu-rep.xz"  # ncu 2020.2.1, RTX 3080, with SourceCounters
COLEMAN_TWIN = "iamcoleman__monte-carlo-pi__profile__3d528bfb.ncu-rep.xz"  # the same program, without SourceCounters
TREVOR = "trevorgloe__GPUAcceleratedNetworkSim__profile__131b6e30.ncu-rep.xz"  # ncu 2024.3.1, RTX 4070 Ti SUPER, basic
T4_FULL = "armleth__cuda-mlp-inference__report__b4d31e9a.ncu-rep.xz"  # ncu 2024.2.1, T4, full set
GH200_BASIC = "bobschreiner__NuKEXC__profile__309861cc.ncu-rep.xz"  # ncu 2025.2.1, GH200, basic
RTX3050_BASIC = "DarrenLu666888__CUDATutorial__profile__bebba271.ncu-rep.xz"  # ncu 2025.1.0, basic

#: The entries this module's aliases add: Nsight Compute's memory-table metrics of the Source
#: Counters section, under their 2020.2 and 2020.3 names (source column of the alias file).
RENAMED_2021_2 = {
    "memory_l2_sectors_global": "memory_l2_theoretical_sectors_global",
    "memory_l2_sectors_global_ideal": "memory_l2_theoretical_sectors_global_ideal",
    "memory_l2_sectors_local": "memory_l2_theoretical_sectors_local",
    "memory_l1_sectors_global": "memory_l1_tag_requests_global",
    "memory_l1_sectors_shared": "memory_l1_wavefronts_shared",
    "memory_l1_sectors_shared_ideal": "memory_l1_wavefronts_shared_ideal",
    "derived__memory_l2_sectors_global_excessive": "derived__memory_l2_theoretical_sectors_global_excessive",
    "derived__memory_l1_sectors_shared_excessive": "derived__memory_l1_wavefronts_shared_excessive",
}
RENAMED_2020_3 = {
    "memory_l2_transactions_global": "memory_l2_theoretical_sectors_global",
    "memory_ideal_l2_transactions_global": "memory_l2_theoretical_sectors_global_ideal",
    "memory_l2_transactions_local": "memory_l2_theoretical_sectors_local",
    "memory_l1_transactions_global": "memory_l1_tag_requests_global",
}


@pytest.fixture(scope="module")
def read(foreign_dir):
    """Each report's tidy table, read once, in a process of its own (several ncu versions)."""
    cache: dict[str, pd.DataFrame] = {}

    def get(name: str) -> pd.DataFrame:
        if name not in cache:
            path = DATA / name if (DATA / name).is_file() else foreign_dir / name
            cache[name] = load_report_isolated(path, expect_launches=None)[0]
        return cache[name]

    return get


def _as_one_launch(metrics: pd.DataFrame, launch: int, version: str) -> pd.DataFrame:
    """One launch of a report as a set table, its kernel renamed ``k`` and its N unknown: the
    launches of two programs then meet on the same comparison key, so that their metric
    names are compared (their values are other kernels' and are not checked)."""
    one = metrics[metrics["launch"] == launch].copy()
    for col in ("kernel", "mangled", "function", "demangled"):
        one[col] = "k"
    one["n"] = pd.array([pd.NA] * len(one), dtype="Int64")
    return set_table([one], f"ncu{version}", {"ncu_version": version})


def _metric_table(table: pd.DataFrame, alias: pd.DataFrame) -> pd.DataFrame:
    return per_metric(canonical_names(table, alias))[METRIC_TABLE_COLUMNS]


def _before(alias: pd.DataFrame) -> pd.DataFrame:
    """The alias table without this module's entries (what it held before them)."""
    return alias[~alias["old"].isin({**RENAMED_2021_2, **RENAMED_2020_3})]


@pytest.fixture(scope="module")
def memory_pair(read):
    """ncu 2020.3.1 (thedavidchu's scan kernel) against ncu 2021.3.1 (bautista-garcia's
    heat diffusion, launch 1): both full-set reports, SourceCounters collected."""
    return _as_one_launch(read(DAVID), 0, "2020.3.1"), _as_one_launch(read(HEAT), 1, "2021.3.1")


def test_the_memory_tables_renamed_in_2021_2_are_aligned(memory_pair):
    """The memory-table metrics of ncu 2020.3.1 meet their 2021.2 names in a 2021.3.1 report:
    the 8 renamed metrics leave 16 one-sided rows without the new alias entries, none with."""
    b, c = memory_pair
    alias = aliases()
    new = compare_metric_tables(_metric_table(b, alias), _metric_table(c, alias))
    rows = new.set_index("metric")
    for old_name, new_name in RENAMED_2021_2.items():
        assert rows.loc[new_name, "status"] not in ONE_SIDED, new_name
        assert rows.loc[new_name, "renamed_from_baseline"] == old_name
        assert old_name not in rows.index
    old = compare_metric_tables(_metric_table(b, _before(alias)), _metric_table(c, _before(alias)))
    assert old["status"].isin(ONE_SIDED).sum() - new["status"].isin(ONE_SIDED).sum() == 16
    assert {**RENAMED_2021_2, **RENAMED_2020_3}.items() <= dict(zip(alias["old"], alias["new"])).items()
    # the 2020.3.1 report counts L2 sectors in "byte", 2021.3.1 in "sectors": aligned, not converted
    r = rows.loc["memory_l2_theoretical_sectors_global"]
    assert (r["unit_baseline"], r["unit_candidate"], r["status"]) == ("byte", "sectors", "unit changed")
    assert r["value_baseline"] == 2766869  # thedavidchu's memory_l2_sectors_global
    # excessive = achieved - ideal under both names (the corpus evidence in the alias file)
    v = b.set_index("metric")["value"]
    assert v["derived__memory_l2_sectors_global_excessive"] == (v["memory_l2_sectors_global"]
                                                                  - v["memory_l2_sectors_global_ideal"])
    w = c.set_index("metric")["value"]
    assert w["derived__memory_l2_theoretical_sectors_global_excessive"] == (
        w["memory_l2_theoretical_sectors_global"] - w["memory_l2_theoretical_sectors_global_ideal"])


def test_the_2020_2_memory_names_come_with_source_counters_and_map_to_the_current_ones(read):
    """iamcoleman's ncu 2020.2.1 report with SourceCounters holds the 2020.2 names, its twin
    without that section none; canonical_names gives them the current names."""
    with_sc, without_sc = read(COLEMAN), read(COLEMAN_TWIN)
    assert set(RENAMED_2020_3) <= set(with_sc["metric"])
    assert not set(RENAMED_2020_3) & set(without_sc["metric"])
    assert not set(RENAMED_2020_3.values()) & set(with_sc["metric"])
    t = set_table([with_sc], "ncu2020.2.1", {"ncu_version": "2020.2.1"})
    named = canonical_names(t)
    got = named[named["renamed_from"].notna()].drop_duplicates("metric").set_index("metric")["renamed_from"]
    assert {old: new for new, old in got.items() if old in RENAMED_2020_3} == RENAMED_2020_3
    before = canonical_names(t, _before(aliases()))
    assert not set(RENAMED_2020_3.values()) & set(before["metric"])


def test_alias_sources_name_a_page_or_reports_that_exist(foreign_dir):
    """Every alias entry has a source; this module's entries a URL or reports of
    ../shared/foreign-reports by name, and every report a source names exists."""
    alias = aliases()
    assert alias["old"].is_unique and (alias["old"] != alias["new"]).all()
    assert set(alias["relation"]) <= {"equal", "renamed"}
    files = {p.name[: -len(".ncu-rep.xz")] for p in foreign_dir.glob("*.ncu-rep.xz")}
    for old, source in zip(alias["old"], alias["source"]):
        assert isinstance(source, str) and source.strip(), old
        if old in RENAMED_2021_2 or old in RENAMED_2020_3:
            assert "https://docs.nvidia.com/" in source or "corpus: " in source, old
        for stem in re.findall(r"\b[\w-]+__[\w-]+__\w+__[0-9a-f]{8}\b", source):
            assert stem in files, (old, stem)


def test_renamed_names_never_meet_in_one_report_and_follow_each_other():
    """In the version table, no report group holds an old name and its new one together, and
    every version holding an old name precedes every version holding the new one."""
    t = version_table()

    def key(v: str) -> tuple[int, ...]:
        return tuple(int(x) for x in v.split("."))

    groups = ["ncu_version", "cc", "sections"]
    for old, new in {**RENAMED_2021_2, **RENAMED_2020_3}.items():
        a, b = t[t["metric"] == old], t[t["metric"] == new]
        assert len(a) and len(b), (old, new)
        assert a[groups].merge(b[groups]).empty, (old, new)
        assert max(map(key, a["ncu_version"])) < min(map(key, b["ncu_version"])), (old, new)


def test_stale_metric_tables_show_a_rename_as_a_pair_of_one_sided_rows(memory_pair):
    """Per-metric tables written before the alias entries (rule parse_set keeps them) leave
    both names one-sided: the classifier names all 16 rows renamed, and no other."""
    b, c = memory_pair
    alias = aliases()
    stale = compare_metric_tables(_metric_table(b, _before(alias)), _metric_table(c, _before(alias)))
    reasons = one_sided_reasons(stale, "2020.3.1", "2021.3.1")
    is_renamed = reasons.eq(RENAMED).fillna(False).astype(bool)
    assert set(stale.loc[is_renamed, "metric"]) == set(RENAMED_2021_2) | set(RENAMED_2021_2.values())
    assert (stale.loc[is_renamed, "status"] == "only in baseline").sum() == 8


@pytest.fixture(scope="module")
def add_pair(read):
    """The ``add`` kernel: trevorgloe's RTX 4070 Ti SUPER report (ncu 2024.3.1, basic set)
    against this project's H200 one (tests/data/add_n1024, ncu 2025.3.1, full set). Their add
    kernels have other signatures (int, float*, float*) and (const float*, const float*,
    float*, int): aligned here by name."""
    b = set_table([read(TREVOR)], "rtx4070tis_ncu2024.3.1", {"ncu_version": "2024.3.1"})
    c = set_table([read("add_n1024.ncu-rep.xz")], "h200_ncu2025.3.1", {"ncu_version": "2025.3.1"})
    assert set(b["kernel"]) == set(c["kernel"]) == {"add"}
    c = c.assign(mangled=b["mangled"].iloc[0], n=pd.array([pd.NA] * len(c), dtype="Int64"))
    diff = compare_metric_tables(_metric_table(b, aliases()), _metric_table(c, aliases()))
    return diff, one_sided_reasons(diff, "2024.3.1.0", "2025.3.1")


def test_every_one_sided_row_of_the_add_pair_gets_one_reason(add_pair):
    diff, reasons = add_pair
    one = diff["status"].isin(ONE_SIDED)
    assert one.sum() > 1000 and reasons[one].notna().all() and reasons[~one].isna().all()
    assert reasons.index.equals(diff.index) and str(reasons.dtype) == "string"
    counts = reason_counts(diff, reasons)
    assert counts.groupby("status")["rows"].sum().to_dict() == diff.loc[one, "status"].value_counts().to_dict()
    assert set(reasons[one]) <= {REAL_GAP, "not in ncu 2024.3.1", "unknown for ncu 2024.3.1",
                                 "not in ncu 2025.3.1", "unknown for ncu 2025.3.1"}


def test_the_add_pair_separates_the_version_from_the_section_set(add_pair, read):
    """Rows the version causes against rows the report causes, each checked in real reports."""
    diff, reasons = add_pair
    why = dict(zip(diff["metric"], reasons))
    trevor = set(read(TREVOR)["metric"])
    # appears in 2025.3.1: the GH200 report of ncu 2025.2.1 (basic set, cc 9.0) lacks it, as
    # the RTX 4070 Ti SUPER one does; the H200 basic report of 2025.3.1 has it
    new_metric = "launch__persisting_l2_cache_size"
    assert new_metric not in set(read(GH200_BASIC)["metric"]) | trevor
    assert new_metric in set(read("add_basic.ncu-rep.xz")["metric"])
    assert why[new_metric] == "not in ncu 2024.3.1"
    # appears in 2025.1.0: the RTX 3050 Laptop report of ncu 2025.1.0 with the same four
    # sections holds it, the 2024.3.1 report (sections LaunchStats, Occupancy, ...) does not
    occupancy = "derived__pct_occupancy_per_block_size"
    assert occupancy in set(read(RTX3050_BASIC)["metric"]) and occupancy not in trevor
    assert why[occupancy] == "not in ncu 2024.3.1"
    # instruction counts and the memory tables exist before and after 2024.3.1 (the T4 report
    # of 2024.2.1, full set, holds them): the basic-set report simply did not collect them
    for metric in ("smsp__inst_executed.sum", "memory_l2_theoretical_sectors_global"):
        assert metric in set(read(T4_FULL)["metric"]) and metric not in trevor
        assert why[metric] == REAL_GAP
    # thread-block clusters are seen on compute capability 9.0 and 12.0 only: nothing to say
    # about an 8.9 GPU's report
    assert why["launch__cluster_size"] == "unknown for ncu 2024.3.1"


def test_rows_of_launches_the_other_set_lacks_are_not_blamed_on_the_metric(read):
    """Unaligned, the two add kernels (other mangled names) share no launch: every row is
    one-sided for that reason alone."""
    b = set_table([read(TREVOR)], "a", {"ncu_version": "2024.3.1"})
    c = set_table([read("add_n1024.ncu-rep.xz")], "b", {"ncu_version": "2025.3.1"})
    diff = compare_metric_tables(_metric_table(b, aliases()), _metric_table(c, aliases()))
    reasons = one_sided_reasons(diff, "2024.3.1", "2025.3.1")
    assert diff["status"].isin(ONE_SIDED).all() and (reasons == NO_LAUNCH).all()


def test_a_side_without_a_version_is_unknown(add_pair):
    diff, _ = add_pair
    reasons = one_sided_reasons(diff, None, "2025.3.1")
    cand = diff["status"] == "only in candidate"
    assert (reasons[cand] == "unknown (ncu version not given)").all()
    assert not (reasons[diff["status"] == "only in baseline"] == "unknown (ncu version not given)").any()


def test_the_version_table_is_made_from_the_reports(foreign_dir, foreign_index):
    """Rebuilt from its only ncu 2024.3.1 report, the table's 2024.3.1 rows come out the same;
    a version the report contradicts is refused."""
    t = version_table()
    assert list(t.columns) == VERSION_TABLE_COLUMNS
    given = {normalize_version(v) for v in foreign_index["ncu_version"].dropna()} - {None}
    versions = given | {"2025.3.1"}
    assert set(t["ncu_version"]) == versions
    rebuilt = build_version_table([(foreign_dir / TREVOR, "2024.3.1.0")])
    shipped = t[t["ncu_version"] == "2024.3.1"].reset_index(drop=True)
    pd.testing.assert_frame_equal(rebuilt, shipped)
    with pytest.raises(ReportError, match="said to be of Nsight Compute 2024.2.1 but records version 2024.3.1"):
        build_version_table([(foreign_dir / TREVOR, "2024.2.1")])


def test_versions_are_written_as_year_minor_patch():
    assert normalize_version("2024.3.1.0") == "2024.3.1" == normalize_version("2024.3.1")
    assert normalize_version(pd.NA) is None and normalize_version("") is None
    with pytest.raises(ValueError, match="not an Nsight Compute version"):
        normalize_version("ncu 2024.3")


@pytest.mark.parametrize("args, says", [([], "no report given"), (["--foreign", "."], "no INDEX.tsv there"),
                                        (["--profiles", "no/such/folder"], "--profiles no/such/folder: no such folder")])
def test_the_version_table_command_refuses_no_reports_and_writes_nothing(tmp_path, args, says, capsys):
    from analysis.compare.renames import main

    with pytest.raises(SystemExit) as e:
        main([str(tmp_path / "versions.parquet"), *args])
    assert e.value.code == 2 and says in capsys.readouterr().err
    assert not (tmp_path / "versions.parquet").exists()
