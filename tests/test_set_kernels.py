"""The kernels and versions of imported sets, read when the workflow starts to choose the
automatic comparisons (analysis.reports.kernels), on real reports of other people."""

from __future__ import annotations

import json

import pytest

from analysis.errors import ReportError
from analysis.reports import kernels

A100 = "ZSL98__bitwise_spgemm__profiling_results_result__0dd03585"
A10G = "AveryClapp__ESMM-Research__profile__fcf10798"


def test_kernels_and_versions_of_a_set(foreign_dir, foreign_index, tmp_path):
    cache = tmp_path / "k.json"
    one = kernels.set_kernels([foreign_dir / f"{A100}.ncu-rep.xz"], cache)
    assert one == {"kernels": ["ampere_sgemm_128x64_nn"], "ncu_version": "2021.2.2.0", "driver": "470.57.02",
                   "gpu": "NVIDIA A100-PCIE-40GB"}
    both = kernels.set_kernels([foreign_dir / f"{A100}.ncu-rep.xz", foreign_dir / f"{A10G}.ncu-rep.xz"], cache)
    row = foreign_index.set_index("file").loc[f"{A10G}.ncu-rep.xz"]
    assert "ampere_sgemm_128x64_nn" in both["kernels"] and "basic" in both["kernels"]
    assert len(both["kernels"]) == int(row["kernels"])  # the A10G report's kernels, the sgemm among them
    assert both["ncu_version"] is None and both["driver"] is None  # two versions: no single one
    assert both["gpu"] is None  # an A100 and an A10G: no single GPU


def test_an_unchanged_report_is_not_opened_again(foreign_dir, tmp_path, monkeypatch):
    cache = tmp_path / "k.json"
    path = foreign_dir / f"{A100}.ncu-rep.xz"
    first = kernels.set_kernels([path], cache)
    assert json.loads(cache.read_text())[path.name]["kernels"] == ["ampere_sgemm_128x64_nn"]

    def refuse(p):
        raise AssertionError(f"{p} read again")

    monkeypatch.setattr(kernels, "_function_names", refuse)
    assert kernels.set_kernels([path], cache) == first


def test_a_damaged_report_names_its_file(tmp_path):
    bad = tmp_path / "profile.ncu-rep.xz"
    bad.write_bytes(b"not a report")
    with pytest.raises(ReportError, match="profile.ncu-rep.xz: is not an xz file"):
        kernels.set_kernels([bad], tmp_path / "k.json")


def test_a_launch_without_a_function_name_names_its_file(flipped_plain, tmp_path):
    """Before, such a launch became a null kernel name in the cache and the main job's planning
    stopped with a TypeError naming no file."""
    bad = flipped_plain
    cache = tmp_path / "k.json"
    with pytest.raises(ReportError, match="flipped/profile.ncu-rep: launch 0 has no function name"):
        kernels.set_kernels([bad], cache)
    # a cache written before this check, holding the null name, is not taken as it is
    st = bad.stat()
    cache.write_text(json.dumps({bad.name: {"stamp": [st.st_size, st.st_mtime_ns], "kernels": [None],
                                            "ncu_version": None, "driver": None}}))
    with pytest.raises(ReportError, match="launch 0 has no function name"):
        kernels.set_kernels([bad], cache)
