"""Every figure of both committed sets, drawn as the workflow draws it, is readable: no text
overlaps another, no legend covers data, at most eight kernels per panel, and each kernel
keeps one style in every figure (matplotlib's own renderer measures the layout)."""

from __future__ import annotations


import matplotlib.pyplot as plt
import pandas as pd
import pytest

from analysis.study import claims as study
from analysis.study import figures
from analysis.study import plots as sf
from analysis.compare.diff import compare_sets, headline_figure
from analysis.study.figures import overlaps
from analysis.study.sass import mix_figure
from analysis.style import kernel_styles, registry
from analysis.reports.tables import summary

from .conftest import DEFAULT_SET, REPO

OTHER_SET = f"{DEFAULT_SET}_nvcc13.5"
SET_FIGURES = sorted(figures.FIGURES)
STUDY_FIGURES = ["throughput", "speedup", "instructions", "ablation", "roofline"]


@pytest.fixture(scope="module")
def other_summary(other_set):
    table, instances = other_set
    return summary(table, instances, pd.read_csv(REPO / "profiles" / OTHER_SET / "timings.csv")), table


@pytest.fixture(scope="module")
def sets(summ, table, other_summary, references, static, registry):
    def inputs(s, refs):
        return {"summary": s, "refs": refs, "sp": study.speedups(s, registry), "rl": study.roofline(s),
                "ir": study.instruction_ratios(s, registry)}
    return {DEFAULT_SET: inputs(summ, references), OTHER_SET: inputs(other_summary[0], None),
            "tables": (table, other_summary[1])}


def _draw(name: str, d: dict, static: pd.DataFrame):
    if name in figures.FIGURES:
        return figures.FIGURES[name](d["summary"], "test")
    return {"throughput": lambda: sf.throughput(d["summary"], d["refs"], "test"),
            "speedup": lambda: sf.speedup(d["sp"], "test"),
            "instructions": lambda: sf.instructions(d["ir"], static, "sm_90", "test"),
            "ablation": lambda: sf.ablation(d["sp"], "test"),
            "roofline": lambda: sf.roofline(d["rl"], d["refs"], "test")}[name]()


@pytest.mark.parametrize("set_name", [DEFAULT_SET, OTHER_SET])
@pytest.mark.parametrize("name", SET_FIGURES + STUDY_FIGURES)
def test_figure_has_no_overlap_and_few_series_per_panel(sets, static, set_name, name):
    with _quiet():
        fig = _draw(name, sets[set_name], static)
    try:
        assert overlaps(fig) == []
        kernels = set(registry())
        rows = {t.get_text() for t in fig.axes[0].get_yticklabels()}
        for ax in fig.axes:
            labels = {ln.get_label() for ln in ax.get_lines()} | {c.get_label() for c in ax.containers}
            drawn = {lab.split(" / ")[0] for lab in labels} & kernels
            if drawn <= rows:  # a dot chart: one named row per kernel, not a series
                continue
            assert len(drawn) <= 8, (ax.get_title(), sorted(drawn))
        # one style per kernel, the style map's
        styles = kernel_styles(sorted(registry()))
        for ax in fig.axes:
            for ln in ax.get_lines():
                k = ln.get_label().split(" / ")[0]
                if k in styles and ln.get_marker() not in (None, "None", ""):
                    assert (ln.get_color(), ln.get_marker()) == (styles[k]["color"], styles[k]["marker"]), k
    finally:
        plt.close(fig)


def test_static_mix_and_comparison_figures_have_no_overlap(sets, static):
    a, b = sets["tables"]
    for fig in (mix_figure(static), headline_figure(compare_sets(a, b), f"{OTHER_SET}\nagainst {DEFAULT_SET}")):
        try:
            assert overlaps(fig) == []
        finally:
            plt.close(fig)


def test_the_check_finds_overlaps(summ):
    """The check fails a figure made to overlap: a note written over the title, and a
    legend put inside an axes over its data."""
    fig = figures.coalescing(summ, "test")
    try:
        assert overlaps(fig) == []
        title = fig.texts[0] if fig._suptitle is None else fig._suptitle
        fig.text(*title.get_position(), "a note over the title", ha="center", va="top", fontsize=9)
        fig.axes[0].legend(["a legend over the data"], loc="center")
        found = overlaps(fig)
        assert any("a note over the title" in f for f in found)
        assert any(f.startswith("a legend covers the data area") for f in found)
    finally:
        plt.close(fig)


class _quiet:
    """Figures warn about points a report cannot supply; that is tested elsewhere."""

    def __enter__(self):
        import warnings

        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("ignore", UserWarning)

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def test_titles_name_the_fastest_kernels_and_the_coalescing_outliers(summ):
    """The throughput title names, per precision, the kernel with the highest event-timed
    rate at the largest N; the coalescing title names the kernels whose bytes per sector
    differ from the median kernel's."""
    fig = sf.throughput(summ, None, "test")
    big = summ[summ["n"] == summ["n"].max()]
    try:
        for prec in ("fp16", "int8", "int4"):
            g = big[big["precision"] == prec]
            assert f"{prec.upper()} {g.loc[g['throughput'].idxmax(), 'kernel']} " in fig._suptitle.get_text()
    finally:
        plt.close(fig)
    fig = figures.coalescing(summ, "test")
    try:
        text = fig._suptitle.get_text()
        v = big.set_index("kernel")["ldgsts_bytes_per_sector"]
        odd = v[(v - v.median()).abs() > 0.05 * v.median()]
        assert len(odd) >= 1 and all(k in text for k in odd.index)
        assert not any(f" {k} " in text.split("apart:")[1] for k in v.index.difference(odd.index))
    finally:
        plt.close(fig)
