"""The set figures of reports made elsewhere (the foreign-reports folder): a figure with
nothing to draw is a placeholder saying why in one line, and a note says why each point
is left out (a metric not in the reports, counters at 0, no N), never "not in the
reports" for a metric that is there."""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

from analysis.study import figures
from analysis.reports.parse import parse_reports
from analysis.reports.schemas import validate_summary
from analysis.reports.tables import set_table, summary

from .conftest import REPO

ZSL98 = "ZSL98__bitwise_spgemm__profiling_results_sgemm__9966c431"  # A100, ncu 2021.2.2, 11 launches
SPYINFER = "spymaster2h__spyinfer__report__76e87892"  # A10, ncu 2023.2.0, 105 launches
MONTE_CARLO = "iamcoleman__monte-carlo-pi__profile__452bfd7f"  # RTX 3080, ncu 2020.2.1, full set


def _summary(foreign_dir, *stems: str) -> pd.DataFrame:
    got = parse_reports([foreign_dir / f"{s}.ncu-rep.xz" for s in stems], workers=2, isolate=True)
    got.raise_errors("foreign")
    table = set_table(got.metrics, "foreign", {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the summary's own warnings (values outside a nominal range)
        return validate_summary(summary(table, pd.concat(got.instances, ignore_index=True), None))


def _draw(name: str, s: pd.DataFrame):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fig = figures.FIGURES[name](s, "foreign")
    return fig, [str(w.message) for w in seen]


@pytest.fixture(scope="module")
def basic_sets(foreign_dir) -> pd.DataFrame:
    """Two reports of basic section sets, no N in their names, no known precision."""
    return _summary(foreign_dir, ZSL98, SPYINFER)


@pytest.mark.parametrize("name", sorted(figures.FIGURES))
def test_a_figure_with_nothing_to_draw_is_a_placeholder_saying_why(basic_sets, name):
    """These figures were drawn empty (axes of made-up limits, a legend of kernels without a
    point) with a note that a metric present in the reports was not."""
    reason = figures.why_not_drawn(name, basic_sets)
    assert reason and "\n" not in reason
    fig, said = _draw(name, basic_sets)
    try:
        assert said == [f"{name}: not drawn: {reason}"]
        assert fig.axes == []
        texts = [t for t in fig.texts if t.get_gid() == "not_drawn"]
        assert len(texts) == 1 and " ".join(texts[0].get_text().split()) == f"not drawn: {reason}"
        assert figures.overlaps(fig) == []
    finally:
        figures.plt.close(fig)
    wanted = {"occupancy_vs_throughput": "no launch of a kernel of known precision",
              "coalescing": f"{figures.NOT_IN_REPORTS}: {figures.LDGSTS_COUNTERS} (2 kernels)",
              "dram_active": "no launch has an N"}[name]
    assert wanted in reason


def test_counters_at_zero_are_not_called_missing(foreign_dir):
    """monte-carlo-pi's kernels issue no LDGSTS: the report holds the LDGSTS counters, at 0.
    The note said the LDGSTS values were not in the reports."""
    s = _summary(foreign_dir, MONTE_CARLO)
    assert (s[figures.LDGSTS_REQUESTS] == 0).all()
    assert figures.why_not_drawn("coalescing", s) is None  # the global-load markers are drawn
    fig, said = _draw("coalescing", s)
    try:
        assert said == [f"coalescing: {figures.NO_LDGSTS}: computeValue, initRNG"]
        note = [t.get_text() for t in fig.texts if t.get_gid() == "missing_note"]
        assert note == [f"{figures.NO_LDGSTS}: computeValue, initRNG"]
        assert "no kernel issues LDGSTS" in fig._suptitle.get_text()
        assert figures.overlaps(fig) == []
    finally:
        figures.plt.close(fig)


def test_dram_activity_is_read_under_its_old_name(foreign_dir):
    """Nsight Compute 2020.2.1 stores DRAM activity (% of peak) as
    gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed only; the figure said the
    percentage was not in the reports."""
    s = _summary(foreign_dir, MONTE_CARLO)
    assert s[figures.DRAM_PCT].isna().all() and s[figures.DRAM_PCT_OLD].notna().all()
    np.testing.assert_array_equal(figures.dram_pct(s).to_numpy(), s[figures.DRAM_PCT_OLD].to_numpy())
    reason = figures.why_not_drawn("dram_active", s)
    assert reason.startswith("no launch has an N") and figures.DRAM_PCT not in reason
    assert "not in the reports: dram__cycles_active.avg (2 kernels)" in reason


@pytest.mark.workflow
def test_import_writes_placeholders_and_says_why_in_one_line(tmp_path, foreign_dir):
    """`snakemake import_set` of a report whose set figures have nothing to draw: every
    output of set_figures exists, and its log says per figure, in one line, why it was not
    drawn."""
    from .test_workflow import snakemake

    root = tmp_path / "wf"
    root.mkdir()
    for item in ("Snakefile", "config", "workflow", "kernels"):
        src = REPO / item
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, root / item)
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(foreign_dir / f"{ZSL98}.ncu-rep.xz", source)
    proc = snakemake(root, "import_set", "--config", "gpu=off", f"source={source}", "set=zsl98")
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = (root / "logs" / "set_figures" / "zsl98.log").read_text()
    lines = [ln for ln in log.splitlines() if " not drawn: " in ln]
    assert sorted(ln.split(" not drawn: ")[0] for ln in lines) == [
        f"zsl98: {n}" for n in sorted(figures.FIGURES)], log
    assert "Warning" not in log
    for name in figures.FIGURES:
        for ext in ("png", "pdf"):
            assert (root / "figures" / "zsl98" / f"{name}.{ext}").stat().st_size > 0
