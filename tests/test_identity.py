"""Launch identity in comparisons of other people's reports: launches of different reports
are never pooled as repeats, sets are matched launch to launch by report name, else by
launch order within one kernel identity, and what cannot be matched is said so (real
reports of ../shared/foreign-reports, provenance in its INDEX.tsv)."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from analysis.compare.diff import MATCHED_BY, compare_sets, match_launches, metric_table
from analysis.compare.explain import one_sided_section
from analysis.compare.figures import threshold_note
from analysis.reports.importing import import_stem
from analysis.reports.parse import parse_reports
from analysis.reports.tables import set_table

#: AveryClapp/ESMM-Research: one SGEMM program profiled at several commits (ncu 2023.1.1,
#: A10G); each report holds the kernels basic, gmem_coalesce, smem_blocking, ...
ESMM = ["AveryClapp__ESMM-Research__profile__26b457aa", "AveryClapp__ESMM-Research__profile__398b9bdd",
        "AveryClapp__ESMM-Research__profile__fcf10798", "AveryClapp__ESMM-Research__profile__feb2d349"]
DURATION = "gpu__time_duration.sum"


def _set(foreign_dir, tmp_path, stems, name, rename=None):
    """A set table of foreign reports, each copied under ``rename[i]`` (default: its own
    stem, as an import names it)."""
    folder = tmp_path / name
    folder.mkdir()
    paths = []
    for i, stem in enumerate(stems):
        dst = folder / f"{rename[i] if rename else import_stem(stem + '.ncu-rep')}.ncu-rep.xz"
        shutil.copy(foreign_dir / f"{stem}.ncu-rep.xz", dst)
        paths.append(dst)
    got = parse_reports(paths, workers=1)
    got.raise_errors(name)
    return set_table(got.metrics, name, {})


@pytest.fixture(scope="module")
def esmm(foreign_dir, tmp_path_factory):
    return _set(foreign_dir, tmp_path_factory.mktemp("esmm"), ESMM, "esmm")


def test_launches_of_different_reports_are_never_pooled(esmm):
    """Kind 1: launch 0 of `basic` in four reports became one kernel measured four times
    (a median no launch has, their spread taken as noise). Each launch keeps its row."""
    pm = metric_table(esmm)
    basic = pm[(pm["kernel"] == "basic") & (pm["metric"] == DURATION)]
    assert len(basic) == basic["source"].nunique() == 4
    assert (basic["repeats"] == 1).all() and basic["noise_rel"].isna().all()
    raw = esmm[(esmm["kernel"] == "basic") & (esmm["metric"] == DURATION)]
    assert sorted(basic["value"]) == sorted(raw["value"])  # each launch's own value, no median


def test_a_set_compared_with_itself_matches_every_launch_by_report(esmm):
    d = compare_sets(esmm, esmm)
    assert (d["match"] == "same report").all()
    assert (d["report_baseline"] == d["report_candidate"]).all()
    dur = d[d["metric"] == DURATION]
    assert len(dur) == esmm.drop_duplicates(["report", "launch"]).shape[0]
    assert set(dur["status"]) == {"unchanged"}


def test_one_report_each_is_matched_by_launch_order_and_its_change_is_flagged(foreign_dir, tmp_path):
    """Two commits of the program, one report each under other names: the launches of each
    kernel are matched in order; a real change is judged against the stated threshold,
    not against a spread made of other reports' launches."""
    b = _set(foreign_dir, tmp_path, [ESMM[0]], "b")
    c = _set(foreign_dir, tmp_path, [ESMM[3]], "c")
    d = compare_sets(b, c)
    shared = set(b["kernel"]) & set(c["kernel"])
    dur = d[(d["metric"] == DURATION) & d["kernel"].isin(shared)]
    assert len(dur) and (dur["match"] == "launch order").all()
    assert dur["threshold_rel"].eq(0.05).all()  # no repeats: the stated default, no pooled noise
    assert threshold_note(d) == "none: default_rel: 5 %"  # the headline figure's note says so
    for _, row in dur.iterrows():
        vb = b[(b["kernel"] == row["kernel"]) & (b["occurrence"] == row["occurrence"]) & (b["metric"] == DURATION)]
        vc = c[(c["kernel"] == row["kernel"]) & (c["occurrence"] == row["occurrence"]) & (c["metric"] == DURATION)]
        assert row["value_baseline"] == vb["value"].iloc[0] and row["value_candidate"] == vc["value"].iloc[0]
        assert row["flagged"] == (abs(row["rel_change"]) > 0.05)


def test_a_kernel_in_several_reports_under_other_names_is_not_matched(foreign_dir, tmp_path):
    """Two reports per set, named differently in each: launch order cannot tell which
    report matches which, so the launches are one-sided and say why, never pooled."""
    b = _set(foreign_dir, tmp_path, ESMM[:2], "b")
    c = _set(foreign_dir, tmp_path, ESMM[2:], "c")
    d = compare_sets(b, c)
    basic = d[(d["kernel"] == "basic") & (d["metric"] == DURATION)]
    assert len(basic) == 4 and basic["status"].str.startswith("only in").all() and basic["flagged"].all()
    assert basic["match"].str.startswith("not matched: basic is in 2 report(s) of the baseline and 2").all()


def test_reports_named_alike_are_matched_by_name_whatever_their_order(foreign_dir, tmp_path):
    """The same two reports in each set, listed in the other order: matched by stem."""
    b = _set(foreign_dir, tmp_path, ESMM[:2], "b", rename=["run_a", "run_b"])
    c = _set(foreign_dir, tmp_path, ESMM[1::-1], "c", rename=["run_b", "run_a"])
    d = compare_sets(b, c)
    dur = d[d["metric"] == DURATION]
    assert (dur["match"] == "same report").all() and (dur["status"] == "unchanged").all()


def test_match_launches_pairs_one_to_one(esmm):
    pm = metric_table(esmm)
    launches = pm.drop_duplicates(["source", "kernel", "mangled", "n", "occurrence"])[
        ["source", "range_name", "kernel", "mangled", "precision", "n", "occurrence"]].reset_index(drop=True)
    half = launches[launches["source"] == launches["source"].iloc[0]].reset_index(drop=True)
    pairs = match_launches(half, launches)
    matched = pairs.dropna(subset=["b", "c"])
    assert len(matched) == len(half) and matched["c"].is_unique and matched["b"].is_unique
    one_sided = ~pairs["match"].isin(MATCHED_BY)
    assert (pairs["b"].isna() == (one_sided & pairs["c"].notna())).all()
    assert pairs.loc[pairs["b"].isna(), "match"].str.match(r"only in candidate|not matched: ").all()
    assert pd.api.types.is_string_dtype(pairs["match"])


def test_launches_matched_by_name_but_of_other_shapes_say_so(foreign_dir, tmp_path):
    """Two commits of AveryClapp's program under one report name: `warptiling` ran 64 blocks
    in one and 1,024 in the other (another problem size), as did `one_warptiling`. Matched by
    name, their rows say the launch shape differs (a set compared with itself keeps the plain
    match: test_a_set_compared_with_itself_matches_every_launch_by_report)."""
    b = _set(foreign_dir, tmp_path, ["AveryClapp__ESMM-Research__profile__26b457aa"], "b", rename=["run"])
    c = _set(foreign_dir, tmp_path, ["AveryClapp__ESMM-Research__profile__263b23de"], "c", rename=["run"])
    d = compare_sets(b, c)
    both = d[d["report_baseline"].notna() & d["report_candidate"].notna()]
    grids = both[both["metric"] == "launch__grid_size"].set_index(["kernel", "occurrence"])
    assert sorted(grids.index.get_level_values("kernel")) == ["one_warptiling", "warptiling"]
    for (kernel, occ), row in grids.iterrows():
        assert row["value_baseline"] != row["value_candidate"]
        rows = both[(both["kernel"] == kernel) & (both["occurrence"] == occ)]
        note = (f"same report; launch shape differs (launch__grid_size {row['value_baseline']:g} against "
                f"{row['value_candidate']:g}")
        assert rows["match"].str.startswith(note).all(), rows["match"].iloc[0]


def test_one_report_whose_n_only_one_name_gives_says_why_it_is_unmatched(foreign_dir, tmp_path):
    """trevorgloe's report named `add_n1024` in one set (N known) and under its own name in
    the other (N unknown): the same launches match nothing, and each side says at which N the
    other holds the kernel."""
    stem = "trevorgloe__GPUAcceleratedNetworkSim__profile__131b6e30"
    b = _set(foreign_dir, tmp_path, [stem], "b", rename=["add_n1024"])
    c = _set(foreign_dir, tmp_path, [stem], "c", rename=["run"])
    d = compare_sets(b, c)
    dur = d[d["metric"] == DURATION]
    assert len(dur) and dur["status"].str.startswith("only in").all()
    base = dur[dur["status"] == "only in baseline"]["match"]
    cand = dur[dur["status"] == "only in candidate"]["match"]
    assert len(base) and base.str.startswith("not matched: the other set holds add at N = unknown, this one at "
                                             "N = 1024").all()
    assert len(cand) and cand.str.startswith("not matched: the other set holds add at N = 1024, this one at "
                                             "N = unknown").all()


def test_a_kernel_the_other_set_profiled_at_fewer_n_says_so(tmp_path):
    """fp16_wgmma in the `_all` set (profiled at five N) against the `_registry` set (at
    N = 8192 only, config profile.sizes_beyond_study): N = 8192 is matched by kernel and N; each
    other N is one-sided and says that the other set has no launch there, not that the file
    names should be made alike (N is known on both sides)."""
    from .conftest import DEFAULT_SET, REPO

    def one(set_name, stem):
        got = parse_reports([REPO / "profiles" / set_name / "reports" / f"{stem}.ncu-rep.xz"], workers=1)
        got.raise_errors(set_name)
        return set_table(got.metrics, set_name, {})

    b = one(f"{DEFAULT_SET}_all", "fp16_wgmma_n512-1024-2048-4096-8192")
    c = one(f"{DEFAULT_SET}_registry", "fp16_wgmma_n8192")
    dur = compare_sets(b, c)
    dur = dur[dur["metric"] == DURATION]
    assert sorted(dur[dur["status"] == "only in baseline"]["n"]) == [512, 1024, 2048, 4096]
    assert (dur[dur["n"] == 8192]["match"] == "kernel and N").all()
    alone = dur[dur["status"] == "only in baseline"]["match"]
    assert alone.str.startswith("not matched: the other set holds fp16_wgmma at N = 8192, this one at N = ").all()
    assert alone.str.contains("it has no launch of it at this N").all()
    assert not alone.str.contains("name both reports alike").any()
    # the comparison's explanations page names them: one row, the four N, and the cause
    lines = one_sided_section(compare_sets(b, c), "all", "registry")
    rows = [ln for ln in lines if ln.startswith("| all |")]
    assert len(rows) == 1 and rows[0].startswith("| all | fp16_wgmma | 512, 1024, 2048, 4096 | 4 | the other set holds")
    assert one_sided_section(compare_sets(c, c), "registry", "registry") == []
    # a kernel the other set lacks altogether says so
    other = one_sided_section(compare_sets(b, one(f"{DEFAULT_SET}_registry", "int8_wgmma_lag_n8192")), "all", "reg")
    assert "| reg | int8_wgmma_lag | 8192 | 1 | the other set has no launch of this kernel |" in other
    # a matched launch with a metric one side lacks is not one-sided: the other way round, the
    # candidate's launch at 8192 is matched, so only the baseline's four N are listed
    assert [ln.split(" | ")[0] for ln in lines if ln.startswith("| ") and "---" not in ln][1:] == ["| all"]

