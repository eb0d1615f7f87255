"""A cross-version, cross-GPU comparison of real reports: the `add` kernel in trevorgloe's
RTX 4070 Ti SUPER report (Nsight Compute 2024.3.1, ../shared/foreign-reports) against the
project's H200 report (2025.3.1, tests/data/add_n1024): the versions come from the reports
themselves, and the comparison's metadata names both sides."""

from __future__ import annotations

import shutil

import pytest

from analysis.compare.diff import compare_sets, metadata_side_by_side, versions_from_table
from analysis.compare.explain import unmatched_warning
from analysis.reports.parse import parse_reports, write_set_tables

from .conftest import REPO

RTX = "trevorgloe__GPUAcceleratedNetworkSim__profile__131b6e30"
H200_ADD = REPO / "tests" / "data" / "add_n1024.ncu-rep.xz"


@pytest.fixture(scope="module")
def sets(foreign_dir, tmp_path_factory):
    """(baseline, candidate) set tables as the parse job writes them for imported sets."""
    import pandas as pd

    tmp = tmp_path_factory.mktemp("xv")
    out = []
    for name, src, stem in (("rtx", foreign_dir / f"{RTX}.ncu-rep.xz", "profile"), ("h200", H200_ADD, "add_run")):
        folder = tmp / name
        folder.mkdir()
        dst = folder / f"{stem}.ncu-rep.xz"
        shutil.copy(src, dst)
        write_set_tables([dst], name, None, tmp / "cache" / name, folder / "metrics.parquet",
                         folder / "instances.parquet")
        out.append(pd.read_parquet(folder / "metrics.parquet"))
    return tuple(out)


def test_an_imported_set_takes_its_versions_from_its_reports(sets, foreign_index):
    """Kind 8: an imported set had no versions (ncu_version NA, metadata.csv empty)."""
    rtx, h200 = sets
    row = foreign_index[foreign_index["file"] == f"{RTX}.ncu-rep.xz"].iloc[0]
    assert set(rtx["ncu_version"]) == {row["ncu_version"]} and set(rtx["gpu"]) == {row["gpu"]}
    assert set(h200["ncu_version"]) == {"2025.3.1.0"} and set(h200["gpu"]) == {"NVIDIA H200"}
    assert rtx["cuda_version"].notna().all() and h200["cc"].eq("9.0").all()


def test_the_comparison_metadata_names_both_sides(sets):
    rtx, h200 = sets
    meta = metadata_side_by_side({}, {}, ("rtx", "h200"), (versions_from_table(rtx), versions_from_table(h200)))
    t = meta.set_index("field")
    assert list(meta["field"][:2]) == ["gpu", "cc"]
    assert t.loc["ncu_version", "rtx"] == "2024.3.1.0" and t.loc["ncu_version", "h200"] == "2025.3.1.0"
    assert t.loc["ncu_version", "differs"] and t.loc["gpu", "differs"]
    assert (t.loc["ncu_version", ["source rtx", "source h200"]] == "reports").all()


def test_a_metadata_json_version_and_a_report_version_of_one_release_do_not_differ(sets):
    _, h200 = sets
    meta = metadata_side_by_side({"ncu_version": "2025.3.1"}, {}, ("own", "imported"),
                                 ({}, versions_from_table(h200))).set_index("field")
    assert meta.loc["ncu_version", "own"] == "2025.3.1" and meta.loc["ncu_version", "imported"] == "2025.3.1.0"
    assert not meta.loc["ncu_version", "differs"]


def test_two_kernels_of_one_name_and_other_signatures_are_not_matched_and_say_so(sets):
    """`add(int, float *, float *)` on the RTX and `add(const float *, const float *, float *,
    int)` on the H200: one function name, two kernels; each side names the other's."""
    rtx, h200 = sets
    d = compare_sets(rtx, h200)
    dur = d[(d["kernel"] == "add") & (d["metric"] == "gpu__time_duration.sum")].set_index("status")
    assert sorted(dur.index) == ["only in baseline", "only in candidate"]
    assert dur.loc["only in baseline", "match"] == "not matched: add has other mangled names in the other set (_Z3addPKfS0_Pfi)"
    assert dur.loc["only in candidate", "match"] == "not matched: add has other mangled names in the other set (_Z3addiPfS_)"
    # the console said "no kernel and N in common, nor a report of the same name", though both
    # sets hold add at one N
    said = unmatched_warning(d, "rtx", "h200")
    assert said.startswith("h200 against rtx: no launch of either set is matched in the other (rtx: add has other "
                           "mangled names in the other set (_Z3addPKfS0_Pfi); h200: add has other mangled names in the "
                           "other set (_Z3addiPfS_)), so every row is one-sided"), said
    assert unmatched_warning(compare_sets(rtx, rtx), "rtx", "rtx") is None


#: cuBLAS's ampere_sgemm_128x64_nn, run by two programs on two GPUs and profiled by two
#: Nsight Compute versions: ZSL98's A100 (2021.2.2, 11 launches) and AveryClapp's A10G
#: (2023.1.1, two launches among other kernels).
A100 = "ZSL98__bitwise_spgemm__profiling_results_result__0dd03585"
A10G = "AveryClapp__ESMM-Research__profile__fcf10798"
SGEMM = "ampere_sgemm_128x64_nn"


@pytest.fixture(scope="module")
def sgemm(foreign_dir, tmp_path_factory):
    import pandas as pd

    tmp = tmp_path_factory.mktemp("sgemm")
    out = []
    for name, stem in (("a100", A100), ("a10g", A10G)):
        folder = tmp / name
        folder.mkdir()
        dst = folder / "profile.ncu-rep.xz"
        shutil.copy(foreign_dir / f"{stem}.ncu-rep.xz", dst)
        write_set_tables([dst], name, None, tmp / "cache" / name, folder / "metrics.parquet",
                         folder / "instances.parquet")
        out.append(pd.read_parquet(folder / "metrics.parquet"))
    return tuple(out)


def test_one_library_kernel_on_two_gpus_is_matched_launch_to_launch(sgemm):
    a100, a10g = sgemm
    d = compare_sets(a100, a10g)
    dur = d[(d["kernel"] == SGEMM) & (d["metric"] == "gpu__time_duration.sum")]
    # both files are called profile.ncu-rep, so the launches are matched by report name:
    # the A10G's two launches with the A100's first two (of other grids, which the match
    # says), the A100's nine others say why not
    shape = ("same report; launch shape differs (launch__grid_size 2560 against 640, launch__grid_dim_x 32 against 8, "
             "launch__grid_dim_y 80 against 16, launch__grid_dim_z 1 against 5)")
    assert list(dur["match"]) == [shape] * 2 + [
        f"not matched: the other set's 2 launch(es) of {SGEMM} are each matched with a launch of their own report "
        "name"] * 9
    # a real difference, flagged: 16.7 ms on the A100 against 0.149 ms on the A10G, other
    # problem sizes (the grids differ), not only another GPU
    assert dur["status"].iloc[0] == "changed" and dur["rel_change"].iloc[0] < -0.9
    grid = d[(d["kernel"] == SGEMM) & (d["metric"] == "launch__grid_size") & (d["occurrence"] == 0)]
    assert grid["status"].iloc[0] == "changed"


def test_statuses_count_one_sided_rows_by_reason(sgemm):
    """Kind 9: one-sided rows of a cross-version pair are counted by why they are one-sided
    (a version difference apart from real gaps), and the reasons add up to the status."""
    from analysis.compare.diff import status_counts
    from analysis.compare.renames import one_sided_reasons, reason_counts

    a100, a10g = sgemm
    d = compare_sets(a100, a10g)
    reasons = one_sided_reasons(d, "2021.2.2.0", "2023.1.1.0")
    split = status_counts(d, reason_counts(d, reasons))
    plain = status_counts(d).set_index("status")
    summed = split.groupby("status")[["rows", "flagged"]].sum()
    assert (summed.loc[plain.index] == plain[["rows", "flagged"]]).all().all()
    one = split[split["status"].str.startswith("only in") & (split["rows"] > 0)]
    assert (one["reason"] != "").all() and len(set(one["reason"])) > 1
    assert set(split.loc[~split["status"].str.startswith("only in"), "reason"]) == {""}


def test_a_report_of_another_gpu_in_a_measured_set_keeps_its_own_versions(foreign_dir, tmp_path, capsys):
    """The RTX 4070 Ti SUPER report parsed with the H200 set's metadata.json got the set's
    driver (580.159.04) and Nsight Compute version (2025.3.1) without a word; the report
    records driver 560.35.03 and ncu 2024.3.1.0. The H200 report beside it keeps the set's."""
    meta = REPO / "profiles" / "h200_580.159.04_ncu2025.3.1" / "metadata.json"
    reports = []
    for src, stem in ((foreign_dir / f"{RTX}.ncu-rep.xz", "theirs"), (H200_ADD, "ours")):
        reports.append(tmp_path / f"{stem}.ncu-rep.xz")
        shutil.copy(src, reports[-1])
    out = tmp_path / "out"
    write_set_tables(reports, "mixed", meta, tmp_path / "cache", out / "m.parquet", out / "i.parquet")
    import pandas as pd

    t = pd.read_parquet(out / "m.parquet").drop_duplicates("report").set_index("report")
    assert t.loc["theirs", "gpu"] == "NVIDIA GeForce RTX 4070 Ti SUPER"
    assert (t.loc["theirs", "driver"], t.loc["theirs", "ncu_version"]) == ("560.35.03", "2024.3.1.0")
    assert (t.loc["ours", "driver"], t.loc["ours", "ncu_version"]) == ("580.159.04", "2025.3.1")
    said = capsys.readouterr().out
    assert "theirs.ncu-rep.xz: profiled on NVIDIA GeForce RTX 4070 Ti SUPER, not on the set's GPU (NVIDIA H200" in said
    assert "ours.ncu-rep.xz: profiled on" not in said


def _set_of(foreign_dir, tmp, name, files):
    """The set table of real reports stored under the given names: {stored stem: foreign file stem}."""
    import pandas as pd

    folder = tmp / name
    folder.mkdir()
    dsts = []
    for stem, src in files.items():
        dsts.append(folder / f"{stem}.ncu-rep.xz")
        shutil.copy(foreign_dir / f"{src}.ncu-rep.xz", dsts[-1])
    write_set_tables(dsts, name, None, tmp / "cache" / name, folder / "metrics.parquet", folder / "instances.parquet")
    return pd.read_parquet(folder / "metrics.parquet")


def test_a_launch_left_alone_says_why_as_it_is(foreign_dir, tmp_path):
    """Two sets of two AveryClapp reports, stored as a and b. The candidate's b holds one_d_vec,
    the baseline's only one_d_vec is matched by report name with the candidate's a: before, the
    row said the other set held 1 launch, "fewer than this one's occurrence" (0)."""
    esmm = "AveryClapp__ESMM-Research__profile__"
    base = _set_of(foreign_dir, tmp_path, "av1", {"a": f"{esmm}26b457aa", "b": f"{esmm}398b9bdd"})
    cand = _set_of(foreign_dir, tmp_path, "av2", {"a": f"{esmm}fcf10798", "b": f"{esmm}feb2d349"})
    d = compare_sets(base, cand)
    dur = d[(d["metric"] == "gpu__time_duration.sum") & (d["kernel"] == "one_d_vec")]
    assert list(zip(dur["source"], dur["match"])) == [
        ("a", "same report"),
        ("b", "not matched: the other set's 1 launch(es) of one_d_vec are each matched with a launch of their own "
              "report name")]


def test_launches_left_by_the_report_name_match_are_paired_first_with_first(foreign_dir, tmp_path):
    """The A100's 11 sgemm launches (report a) against the A10G's two in its a and two in its b:
    a's first two are matched by report name, the A100's next two with b's two in order (before,
    by equal occurrence, 2 and 3 against 0 and 1: none), and the last seven say what is left."""
    a100 = _set_of(foreign_dir, tmp_path, "a100", {"a": A100})
    a10g = _set_of(foreign_dir, tmp_path, "a10g", {"a": A10G, "b": "AveryClapp__ESMM-Research__profile__26b457aa"})
    d = compare_sets(a100, a10g)
    dur = d[(d["kernel"] == SGEMM) & (d["metric"] == "gpu__time_duration.sum")].sort_values(
        ["source", "occurrence"])
    first = dur[dur["source"] == "a"]
    assert len(first) == 11 and first["match"].str.startswith("same report").sum() == 2
    order = first[first["occurrence"].isin([2, 3])]
    assert order["match"].str.startswith("launch order").all() and order["value_candidate"].notna().all()
    rest = first[first["occurrence"] >= 4]
    assert list(rest["match"]) == [
        f"not matched: the other set holds 2 launch(es) of {SGEMM} not matched by report name (its other 2 are "
        f"matched by report name), fewer than this one's place among this set's such launches ({r})"
        for r in range(3, 10)]


def test_a_cause_both_sides_give_is_said_once(foreign_dir, tmp_path):
    """The A100's sgemm report against two AveryClapp reports that both hold the sgemm: no launch
    is matched, and the warning gave the one cause twice, once per set."""
    from analysis.compare.explain import unmatched_warning

    esmm = "AveryClapp__ESMM-Research__profile__"
    zsl = _set_of(foreign_dir, tmp_path, "zsl", {"result": A100})
    av1 = _set_of(foreign_dir, tmp_path, "av1", {"a": f"{esmm}26b457aa", "b": f"{esmm}398b9bdd"})
    said = unmatched_warning(compare_sets(zsl, av1), "zsl", "av1")
    cause = (f"{SGEMM} is in 1 report(s) of the baseline and 2 of the candidate under other names (name the reports "
             "alike to match them)")
    assert f"zsl and av1: {cause}" in said and said.count(cause) == 1


def test_the_headline_marks_launches_of_other_shapes(sgemm):
    """The A10G's two sgemm launches matched by name with the A100's first two, of other grids:
    the headline figure drew their -99 % durations like any other change."""
    from analysis.compare.figures import headline_columns, headline_figure

    d = compare_sets(*sgemm)
    cols, _ = headline_columns(d)
    marked = cols[cols["shape"]]
    assert len(marked) == 2 and marked["label"].str.split("\n").str[0].str.endswith(" †").all()
    assert not cols.loc[~cols["shape"], "label"].str.contains("†").any()
    fig = headline_figure(d, "a100 vs a10g")
    assert "\u2020 = launches of other shapes (grid or block) matched by name" in fig._suptitle.get_text()


def test_a_name_the_other_set_holds_at_another_n_is_not_called_missing(foreign_dir, tmp_path):
    """The H200's add stored as add_n1024 (N = 1024) against the RTX's add (no N, another
    signature): the page said "the other set has no launch of this kernel" of both, though each
    set holds add."""
    from analysis.compare.explain import one_sided_section
    from analysis.reports.tables import set_table

    def one(name, src, stem):
        (tmp_path / name).mkdir()
        dst = tmp_path / name / f"{stem}.ncu-rep.xz"
        shutil.copy(src, dst)
        got = parse_reports([dst], workers=1)
        got.raise_errors(name)
        return set_table(got.metrics, name, {})

    h200 = one("h200add", H200_ADD, "add_n1024")
    rtx = one("rtx", foreign_dir / f"{RTX}.ncu-rep.xz", "profile")
    rows = [ln for ln in one_sided_section(compare_sets(h200, rtx), "h200add", "rtx") if ln.startswith("| ")][2:]
    assert [r.split(" | ")[:3] for r in rows] == [["| h200add", "add", "1024"], ["| rtx", "add", "unknown"]]
    assert all(r.endswith("| the other set holds this name only as other launches (another mangled name, N or "
                          "range) |") for r in rows)


def test_sets_of_no_kernel_in_common_are_said_so_where_the_rows_are(foreign_dir, tmp_path):
    """An RTX 3080 report (ncu 2020.2.1) and an RTX 5060 one (2026.2.1), both stored as
    `profile`, share no kernel: no launch is matched. The warning said "nor a report of the
    same name", though both hold `profile`, and sent the reader to changes.csv's match column,
    which is empty here (one-sided rows of a kernel the other set lacks are not flagged). The
    explanations page did the same."""
    from analysis.compare.explain import one_sided_section, unmatched_warning

    rtx3080 = _set_of(foreign_dir, tmp_path, "rtx3080", {"profile": "iamcoleman__monte-carlo-pi__profile__3d528bfb"})
    rtx5060 = _set_of(foreign_dir, tmp_path, "rtx5060", {"profile": "Abhishek7204__raytracingCuda__profile__ca437891"})
    d = compare_sets(rtx3080, rtx5060)
    assert not d["flagged"].any()  # changes.csv would be empty
    said = unmatched_warning(d, "rtx3080", "rtx5060")
    assert "no kernel and N in common)" in said and "same name" not in said, said
    assert "match column of results/compare/rtx3080__vs__rtx5060/diff.parquet" in said and "changes.csv" not in said
    page = "\n".join(one_sided_section(d, "rtx3080", "rtx5060"))
    assert "results/compare/rtx3080__vs__rtx5060/diff.parquet says why for each launch" in page
