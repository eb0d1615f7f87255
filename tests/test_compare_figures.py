"""The comparison headline (analysis.compare.figures) drawn from diffs of real reports: other
people's (the foreign-reports folder) and the H200 test reports of tests/data (templates,
401 launches). Each test checks what the drawn figure shows: column order and labels, the
values in the cells, the PNG's width and the colour scale."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.patches import Rectangle

from analysis.compare.diff import compare_sets
from analysis.compare.figures import HEADLINE, MAX_COLUMNS, headline_figure
from analysis.study.figures import overlaps, save
from analysis.reports.parse import parse_reports
from analysis.reports.tables import set_table

from .conftest import REPO

DATA = REPO / "tests" / "data"


def _set(paths, name: str) -> pd.DataFrame:
    """A set table of real reports, each read in a process of its own (they come from
    several Nsight Compute versions)."""
    got = parse_reports(paths, workers=2, isolate=True)
    got.raise_errors(name)
    return set_table(got.metrics, name, {})


def _foreign(foreign_dir, *stems: str) -> list:
    return [foreign_dir / f"{s}.ncu-rep.xz" for s in stems]


def _columns(ax) -> list[str]:
    return [t.get_text() for t in ax.get_xticklabels()]


def _cell_texts(ax, rows: list[str]) -> dict[tuple[str, int], str]:
    """(metric, column) -> the value written in that cell of a panel."""
    out = {}
    for t in ax.texts:
        j, i = t.get_position()
        out[(rows[int(round(i))], int(round(j)))] = t.get_text()
    return out


def _rows(ax) -> list[str]:
    return [t.get_text() for t in ax.get_yticklabels()]


def _written(v: float) -> str:
    """A relative change as a cell writes it, in % with one decimal: 0 as ``0``, and a change
    that one decimal would round to zero as ``-<0.05`` or ``+<0.05``."""
    pct = v * 100
    if pct == 0:
        return "0"
    if abs(pct) < 0.05:
        return f"{'+' if pct > 0 else '-'}<0.05"
    return f"{pct:+.1f}"


@pytest.fixture(scope="module")
def zsl98(foreign_dir) -> pd.DataFrame:
    """ZSL98's SGEMM run and its variant with the multiplication replaced (one commit,
    A100, ncu 2021.2.2): 11 launches of sgemm_128x128x8_kernel in each."""
    a = _set(_foreign(foreign_dir, "ZSL98__bitwise_spgemm__profiling_results_sgemm__9966c431"), "sgemm")
    b = _set(_foreign(foreign_dir, "ZSL98__bitwise_spgemm__profiling_results_replace_mul_with_add_result__a7d9f02c"),
             "replace_mul_with_add")
    return compare_sets(a, b)


@pytest.fixture(scope="module")
def many() -> pd.DataFrame:
    """tests/data/many: 401 launches (add 101 times, scale<float>, <double>, <int> 100 times each)."""
    return _set([DATA / "many.ncu-rep.xz"], "many")


def test_launch_columns_are_in_numeric_order(zsl98):
    """Launch #10 comes after #9 (the columns sorted as strings: #1, #10, #2, ...), and each
    column holds its own launch's change."""
    fig = headline_figure(zsl98, "replace_mul_with_add\nagainst sgemm")
    try:
        ax = fig.axes[0]
        labels = _columns(ax)
        launches = [int(m.group(1)) for lab in labels for m in [re.search(r"#(\d+)$", lab)] if m]
        assert launches == list(range(11)), labels
        rows = _rows(ax)
        texts = _cell_texts(ax, rows)
        d = zsl98[zsl98["metric"] == "gpu__time_duration.sum"].set_index("occurrence")["rel_change"]
        for j, k in enumerate(launches):
            assert texts[("gpu__time_duration.sum", j)].rstrip("*") == _written(d[k])
        assert overlaps(fig) == []
    finally:
        plt.close(fig)


@pytest.fixture(scope="module")
def warptiling(foreign_dir) -> pd.DataFrame:
    """AveryClapp's ESMM kernels at four commits (A10G, ncu 2023.1.1), two reports per set:
    two instantiations of the template `warptiling` (<128,128,16,...> and <128,128,32,...>),
    one in each report of each set."""
    a = _set(_foreign(foreign_dir, "AveryClapp__ESMM-Research__profile__398b9bdd",
                      "AveryClapp__ESMM-Research__profile__26b457aa"), "early")
    b = _set(_foreign(foreign_dir, "AveryClapp__ESMM-Research__profile__71fb9e58",
                      "AveryClapp__ESMM-Research__profile__fcf10798"), "late")
    return compare_sets(a, b)


def test_instantiations_of_a_template_have_columns_of_their_own(warptiling):
    """Both instantiations of `warptiling` shared one column, which showed one of them."""
    d = warptiling[(warptiling["kernel"] == "warptiling") & warptiling["metric"].isin(HEADLINE)
                   & warptiling["rel_change"].notna()]
    assert d["mangled"].nunique() == 2  # the reports hold both, matched across the sets
    fig = headline_figure(warptiling, "late\nagainst early")
    try:
        ax = fig.axes[0]
        labels = _columns(ax)
        cols = [j for j, lab in enumerate(labels) if lab.startswith("warptiling")]
        assert len(cols) == 2 and labels[cols[0]] != labels[cols[1]], labels
        rows = _rows(ax)
        texts = _cell_texts(ax, rows)
        drawn = {tuple(texts[(m, j)].rstrip("*") for m in rows if (m, j) in texts) for j in cols}
        wanted = {tuple(_written(g.set_index("metric").loc[m, "rel_change"]) for m in rows if m in set(g["metric"]))
                  for _, g in d.groupby("mangled")}
        assert drawn == wanted
        # each label is the instantiation's demangled name
        assert sorted(labels[j] for j in cols) == ["warptiling<128, 128, 16, 64, 64, 4, 8, 4, 128>",
                                                   "warptiling<128, 128, 32, 64, 32, 1, 8, 4, 256>"]
        assert overlaps(fig) == []
    finally:
        plt.close(fig)


def test_instantiations_are_named_by_their_demangled_names(many):
    """With the diff's `demangled` column, the columns of one function name are labelled
    scale<double>, scale<float>, scale<int>: the templates report against the 401-launch
    one (both H200, ncu 2025.3.1)."""
    tmpl = _set([DATA / "templates.ncu-rep.xz"], "templates")
    diff = compare_sets(tmpl, many)
    fig = headline_figure(diff, "many\nagainst templates")
    try:
        ax = fig.axes[0]
        labels = _columns(ax)
        # each launched on 16 blocks in one report and 4 in the other: marked as of other shapes
        assert labels == ["scale<double> †", "scale<float> †\n#0", "scale<float> †\n#1", "scale<int> †"]
        rows = _rows(ax)
        texts = _cell_texts(ax, rows)
        dur = diff[diff["metric"] == "gpu__time_duration.sum"].set_index(["mangled", "occurrence"])["rel_change"]
        for j, key in enumerate([("_Z5scaleIdEvPT_S0_i", 0), ("_Z5scaleIfEvPT_S0_i", 0), ("_Z5scaleIfEvPT_S0_i", 1),
                                 ("_Z5scaleIiEvPT_S0_i", 0)]):
            assert texts[("gpu__time_duration.sum", j)].rstrip("*") == _written(dur[key])
    finally:
        plt.close(fig)


def test_the_headline_says_how_many_launches_have_no_partner(many):
    """1 launch against 100 said nothing of the 99 launches without a partner, which no column
    shows (only the explanations page did). The note now counts them on each side: the
    templates report's 4 launches all match launches of the 401-launch one, whose other 397 do
    not."""
    from analysis.compare.figures import unmatched_launches

    tmpl = _set([DATA / "templates.ncu-rep.xz"], "templates")
    alone = many["launch"].nunique() - tmpl["launch"].nunique()
    assert alone == 397
    diff = compare_sets(tmpl, many)
    assert unmatched_launches(diff) == (0, alone)
    assert unmatched_launches(compare_sets(many, tmpl)) == (alone, 0)
    assert unmatched_launches(compare_sets(many, many)) == (0, 0)
    fig = headline_figure(diff, "many\nagainst templates")
    try:
        said = " ".join(fig._suptitle.get_text().split())
        assert f"not drawn: 0 launches of the baseline and {alone} of the candidate without a partner" in said
    finally:
        plt.close(fig)


def test_many_launches_keep_the_figure_narrow(many, tmp_path):
    """401 launches gave 401 columns and a PNG 35,674 pixels wide; now one column per
    kernel identity with its launch count, and a PNG a few thousand pixels wide."""
    diff = compare_sets(many, many)
    fig = headline_figure(diff, "many\nagainst many")
    try:
        labels = [lab for ax in fig.axes for lab in _columns(ax)]
        counts = [int(m.group(1)) for lab in labels for m in [re.search(r"(\d+) launches$", lab)] if m]
        assert len(labels) <= MAX_COLUMNS and sum(counts) == 401, labels
        assert sorted(counts) == [100, 100, 100, 101]
        assert "401 launches in 4 columns:" in fig._suptitle.get_text()
        assert overlaps(fig) == []
        save(fig, tmp_path / "h.png", tmp_path / "h.pdf")
    finally:
        plt.close(fig)
    # one kernel's 100 launches: one column, said in the singular ("in 1 columns" before)
    one = diff[diff["mangled"] == "_Z5scaleIiEvPT_S0_i"]
    fig = headline_figure(one, "scale<int>\nagainst itself")
    try:
        assert [lab for ax in fig.axes for lab in _columns(ax)] == ["scale\n100 launches"]
        assert "100 launches in 1 column:" in fig._suptitle.get_text()
    finally:
        plt.close(fig)
    from PIL import Image

    with Image.open(tmp_path / "h.png") as im:
        assert im.size[0] <= 4000, im.size


def test_a_column_of_several_launches_gives_their_median_and_range(zsl98):
    """Beyond max_columns launch columns, the 11 launches of sgemm_128x128x8_kernel share a
    column: the median of their changes, and below it their range."""
    fig = headline_figure(zsl98, "replace_mul_with_add\nagainst sgemm", max_columns=5)
    try:
        ax = fig.axes[0]
        assert _columns(ax) == ["sgemm_128x128x8_kernel\n11 launches"]
        texts = _cell_texts(ax, _rows(ax))
        for metric, g in zsl98[zsl98["metric"].isin(HEADLINE)].groupby("metric"):
            v = g["rel_change"].to_numpy() * 100
            lines = texts[(metric, 0)].split("\n")
            assert lines[0].rstrip("*") == _written(np.median(v) / 100)
            if v.min() != v.max():
                lo, hi = (float(x.replace(",", "")) for x in lines[1].split(".."))
                assert abs(lo - v.min()) <= 0.5 and abs(hi - v.max()) <= 0.5
        assert overlaps(fig) == []
    finally:
        plt.close(fig)


def test_one_outlier_does_not_set_the_colour_scale(foreign_dir):
    """bobschreiner's Kokkos kernel at two commits (GH200, ncu 2025.2.1): registers per
    thread +17 %, every other headline metric within 1.1 %. The colour scale used to end
    at the largest change, leaving every other cell white; it now ends at a high
    percentile, and the +17 % cell is outlined, its value written."""
    a = _set(_foreign(foreign_dir, "bobschreiner__NuKEXC__profile__309861cc"), "profile")
    b = _set(_foreign(foreign_dir, "bobschreiner__NuKEXC__profile_fastc__8c579199"), "fastc")
    diff = compare_sets(a, b)
    h = diff[diff["metric"].isin(HEADLINE) & diff["rel_change"].notna()]
    biggest = h.loc[h["rel_change"].abs().idxmax()]
    assert biggest["metric"] == "launch__registers_per_thread"
    fig = headline_figure(diff, "fastc\nagainst profile")
    try:
        ax = fig.axes[0]
        im = ax.images[0]
        assert im.norm.vmax < abs(biggest["rel_change"]) * 100 / 2
        assert im.norm.vmax >= (h["rel_change"].abs() * 100).nlargest(2).iloc[-1]  # the rest on the scale
        rows = _rows(ax)
        i = rows.index("launch__registers_per_thread")
        cell = [t for t in ax.texts if round(t.get_position()[1]) == i]
        assert [t.get_text() for t in cell] == [_written(biggest["rel_change"]) + "*"]
        assert cell[0].get_gid() == "clipped"
        frames = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_gid() == "clipped"]
        assert len(frames) == 1 and abs(frames[0].get_y() + frames[0].get_height() / 2 - i) < 0.01
        others = [t for t in ax.texts if t.get_gid() == "clipped"]
        assert others == cell
    finally:
        plt.close(fig)


def test_a_change_too_small_for_one_decimal_is_not_written_as_zero(zsl98):
    """ZSL98's two SGEMM runs: achieved occupancy moved by -0.02 % in several launches, which the
    cells wrote as "-0.0", and an unchanged value as "+0.0"."""
    fig = headline_figure(zsl98, "replace_mul_with_add\nagainst sgemm")
    try:
        texts = [t.get_text().rstrip("*") for ax in fig.axes for t in ax.texts]
        assert texts and not {"+0.0", "-0.0"} & set(texts)
        h = zsl98[zsl98["metric"].isin(HEADLINE) & zsl98["rel_change"].notna()]
        tiny = h[(h["rel_change"] != 0) & (h["rel_change"].abs() * 100 < 0.05)]
        assert len(tiny) and (tiny["rel_change"] < 0).all()
        assert texts.count("-<0.05") == len(tiny)
    finally:
        plt.close(fig)
