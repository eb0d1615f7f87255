"""Nsight Compute's guided-analysis findings read from real reports: the H200 profiles of
this project, and other people's (one without rule results)."""

from __future__ import annotations

import lzma
import warnings

import ncu_report
import numpy as np
import pytest

from analysis.reports.findings import _row, load_findings, plain_message
from analysis.reports.ncu import load_report
from analysis.reports.schemas import validate_findings

from .conftest import SET_DIR

REPORT = SET_DIR / "reports" / "fp16_wmma_n512.ncu-rep.xz"
NO_RULES = "AveryClapp__ESMM-Research__profile__feb2d349"


@pytest.fixture(scope="module")
def raw(tmp_path_factory):
    """The report's rule results as ncu_report gives them."""
    plain = tmp_path_factory.mktemp("f") / "r.ncu-rep"
    plain.write_bytes(lzma.decompress(REPORT.read_bytes()))
    return ncu_report.load_report(str(plain)).range_by_idx(0).action_by_idx(0).rule_results_as_dicts()


def test_every_rule_result_is_a_row_with_its_speedup(raw):
    f = validate_findings(load_findings(REPORT), REPORT.name)
    assert len(f) == len(raw) > 0 and (f["launch"] == 0).all()
    est = f["speedup_pct"].dropna()
    assert len(est) == sum("speedup_estimation" in r for r in raw) and est.between(0, 100).all()
    assert list(est) == sorted(est, reverse=True)  # the largest estimated speedup first
    want = {(r["rule_identifier"], round(r["speedup_estimation"]["speedup"], 6)) for r in raw if "speedup_estimation" in r}
    assert {(a, round(b, 6)) for a, b in zip(f["rule"], f["speedup_pct"]) if not np.isnan(b)} == want


def test_focus_metrics_are_the_reports_own_values():
    f = load_findings(REPORT)
    t = load_report(REPORT).set_index("metric")["value"]
    small = f[f["rule"] == "SOLBottleneck"].iloc[0]
    name, value = small["focus_metrics"].split(";")[0].split(" = ")
    assert name == "launch__waves_per_multiprocessor" and float(value) == pytest.approx(t[name], rel=1e-5)


def test_the_guis_markup_is_removed(raw):
    marked = [r["rule_message"]["message"] for r in raw if "@section:" in r["rule_message"]["message"]]
    assert marked
    plain = [plain_message(t) for t in marked]
    assert all("@" not in t for t in plain)
    # "@section:LaunchStats:Launch Statistics@" reads as the section's label
    assert any("Look at Launch Statistics for more details" in t for t in plain)


def test_a_report_without_rule_results_gives_none_and_says_so(foreign_dir):
    path = foreign_dir / f"{NO_RULES}.ncu-rep.xz"
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        f = load_findings(path)
    assert f.empty and any(f"{NO_RULES}.ncu-rep.xz: holds no guided-analysis rule results" in str(w.message)
                           for w in seen)
    validate_findings(f, path.name)


def test_a_result_of_another_shape_is_kept_as_text(raw):
    """A rule result whose identifier is missing (another version's keys) is kept, as
    text, not dropped and not a crash."""
    damaged = {k: v for k, v in raw[0].items() if k != "rule_identifier"}
    row = _row(damaged)
    assert row["kind"] == "unreadable" and raw[0]["rule_message"]["message"][:40] in row["message"]
