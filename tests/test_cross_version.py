"""A cross-version, cross-GPU comparison of real reports: the `add` kernel in trevorgloe's
RTX 4070 Ti SUPER report (Nsight Compute 2024.3.1, ../shared/foreign-reports) against the
project's H200 report (2025.3.1, tests/data/add_n1024): the versions come from the reports
themselves, and the comparison's metadata names both sides."""

from __future__ import annotations

import shutil

import pytest

from analysis.compare import compare_sets, metadata_side_by_side, versions_from_table
from analysis.parse import parse_reports, write_set_tables

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
