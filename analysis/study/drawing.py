"""What every figure of the package shares: the style (Okabe & Ito colours, sizes), the N
axis, the panels per precision and path, legends and notes below the axes, the check that
no two texts of a figure overlap, and :func:`save` (PNG and PDF, atomically, with nothing
in the files that changes from run to run)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from analysis.io import atomic_path  # noqa: E402
from analysis.style import is_ablation  # noqa: E402


#: Okabe & Ito (2008), "Color Universal Design": distinguishable with any colour-vision deficiency.
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]


STYLE = {
    "figure.dpi": 110, "savefig.dpi": 200, "font.size": 9, "axes.grid": True, "grid.alpha": 0.3,
    "axes.spines.top": False, "axes.spines.right": False, "legend.fontsize": 8, "legend.frameon": False,
    "axes.prop_cycle": matplotlib.cycler(color=OKABE_ITO),
    "pdf.fonttype": 42,
}


def points(style: dict) -> dict:
    """A kernel's style (:func:`analysis.style.kernel_styles`) for markers without a line."""
    return {**style, "linestyle": "none"}


def save(fig, png: str | Path, pdf: str | Path | None) -> None:
    """Write a figure as PNG (at ``STYLE["savefig.dpi"]``, 200 dpi) and PDF (None: PNG only,
    as for the many small figures of explanations), atomically, with fixed metadata (no
    dates or versions), so reruns give the same bytes.

    The layout is computed once: constrained layout at the PNG's dpi, then frozen, and the
    tight bounding box (padded by ``savefig.pad_inches``) passed to both files. With
    ``bbox_inches="tight"`` matplotlib draws each file twice and runs the layout engine on
    every draw. Measured on the default set's three figures: identical PNG pixels, 2.59 s
    -> 2.29 s for PNG and PDF of all three. The frozen figure then has no layout engine at
    all: ``savefig`` of a figure with one, even the placeholder ``"none"`` leaves, first
    draws it once more without rendering (matplotlib 3.11, ``FigureCanvasBase.print_figure``).
    Measured on the largest comparison headline (120 columns): 4.85 s -> 2.97 s with the same
    PNG and PDF bytes (docs/benchmarks.md). The layout engine itself runs once, as
    ``Figure.draw`` runs it before drawing, rather than through a draw of every artist
    without rendering: every figure of the main job came out byte-identical, and their jobs
    took 74.0-77.9 s instead of 80.7-80.8 s (docs/benchmarks.md).
    """
    fig.set_dpi(STYLE["savefig.dpi"])
    engine = fig.get_layout_engine()
    if engine is not None and fig.axes:  # what Figure.draw runs first, without drawing every artist
        engine.execute(fig)
    # None, not "none"; with the rc defaults, since None means "from rcParams"
    with matplotlib.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)
    bbox = fig.get_tightbbox(fig.canvas.get_renderer()).padded(matplotlib.rcParams["savefig.pad_inches"])
    files = ((png, {"Software": None}), (pdf, {"CreationDate": None, "Producer": None, "Creator": None}))
    for path, meta in (f for f in files if f[0] is not None):
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=Path(path).suffix[1:], metadata=meta, dpi=STYLE["savefig.dpi"], bbox_inches=bbox)
    plt.close(fig)


def _n_axis(ax, s: pd.DataFrame) -> None:
    """Log2 N axis with a tick per measured N; limits set from N itself, so an axis whose
    points are all missing (NaN) still draws."""
    ns = sorted(int(v) for v in s["n"].dropna().unique())
    ax.set_xlabel("N (M = N = K)")
    if not ns:  # no point has an N (reports from elsewhere)
        return
    ax.set_xscale("log", base=2)
    ax.set_xlim(ns[0] / 1.4, ns[-1] * 1.4)
    ax.set_xlabel("N (M = N = K)")
    ax.set_xticks(ns, [str(v) for v in ns])
    ax.minorticks_off()


def _precisions(df: pd.DataFrame) -> list[str]:
    order = {"fp16": 0, "int8": 1, "int4": 2}
    return sorted(df["precision"].dropna().unique(), key=lambda p: order.get(p, 9))


#: The kernel every INT4 k64 ablation variant changes one knob of: drawn in their panel.
ABLATION_ROOT = "int4_ptx_mma_k64"


def panel_groups(df: pd.DataFrame) -> list[tuple[str, str, pd.DataFrame]]:
    """(title, precision, rows) per panel: one per precision, the INT4 k64 ablation in a
    panel of its own (with int4_ptx_mma_k64, the kernel it varies), so that no panel holds
    more than about eight kernels; kernels of no known precision form an 'other' panel."""
    abl = df["kernel"].map(is_ablation).astype(bool)
    out = []
    for prec in _precisions(df):
        sub = df[(df["precision"] == prec) & ~abl]
        if len(sub):
            out.append((prec.upper(), prec, sub))
        if prec == "int4" and abl.any():
            out.append(("INT4 k64 ablation", prec, df[abl | (df["kernel"] == ABLATION_ROOT)]))
    other = df[df["precision"].isna()]
    if len(other):
        out.append(("other kernels", None, other))
    return out


def _legend_below(ax, fontsize: float = 6.5, ncol: int = 2) -> None:
    """The panel's legend under its axes, outside the data."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=ncol, fontsize=fontsize,
                  handlelength=2.2)


def _metric_note(fig, *metrics: str) -> None:
    """The Nsight Compute metrics a figure plots, verbatim, in small type at its foot; the
    constrained layout keeps a strip free for it (and for a note of missing points)."""
    height = fig.get_figheight()
    fig.get_layout_engine().set(rect=(0, 0.5 / height, 1, 1 - 0.5 / height))
    fig.text(0.995, 0.004, "metrics: " + ", ".join(metrics), fontsize=5.5, color="#555555", ha="right", va="bottom",
             gid="metric_note")


def _texts(fig) -> list[tuple[str, object]]:
    """(description, artist) of every visible, non-empty text of a figure: the figure's own
    texts and title, and per axes its titles, axis labels, tick labels, offset texts,
    annotations and legend entries."""
    out = [(f"figure text {t.get_text()[:40]!r}", t) for t in fig.texts]
    for i, ax in enumerate(fig.axes):
        name = ax.get_title() or f"axes {i}"
        # tick labels of ticks outside the view limits exist but are not drawn
        lo_x, hi_x = sorted(ax.get_xlim())
        lo_y, hi_y = sorted(ax.get_ylim())
        xt = [t.label1 for t in ax.xaxis.get_major_ticks() if lo_x <= t.get_loc() <= hi_x]
        yt = [t.label1 for t in ax.yaxis.get_major_ticks() if lo_y <= t.get_loc() <= hi_y]
        if isinstance(ax.yaxis.get_major_formatter(), matplotlib.ticker.FixedFormatter):
            yt = [t.label1 for t in ax.yaxis.get_major_ticks()]
        if isinstance(ax.xaxis.get_major_formatter(), matplotlib.ticker.FixedFormatter):
            xt = [t.label1 for t in ax.xaxis.get_major_ticks()]
        arts = [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label,
                ax.xaxis.get_offset_text(), ax.yaxis.get_offset_text(), *ax.texts, *xt, *yt]
        leg = ax.get_legend()
        if leg is not None:
            arts += leg.get_texts()
            if leg.get_title().get_text():
                arts.append(leg.get_title())
        out += [(f"{name}: {a.get_text()[:40]!r}", a) for a in arts]
    for leg in fig.legends:
        out += [(f"figure legend: {t.get_text()[:40]!r}", t) for t in leg.get_texts()]
    return [(d, a) for d, a in out if a.get_visible() and a.get_text().strip()]


def overlaps(fig) -> list[str]:
    """What overlaps in a drawn figure, as matplotlib's renderer lays it out: every pair of
    text artists whose bounding boxes intersect, and every legend that covers an axes'
    data area (legends belong outside the axes). An empty list means a clean figure.

    Raises nothing; the figure is drawn (``fig.canvas.draw()``) to measure it.
    """
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [(d, a.get_window_extent(renderer)) for d, a in _texts(fig)]
    found = []
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            (da, a), (db, b) = boxes[i], boxes[j]
            if a.width > 0 and b.width > 0 and a.overlaps(b):
                ix = min(a.x1, b.x1) - max(a.x0, b.x0)
                iy = min(a.y1, b.y1) - max(a.y0, b.y0)
                if ix > 0.5 and iy > 0.5:  # more than half a pixel each way
                    found.append(f"text {da} overlaps text {db}")
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
    for leg in legends:
        lb = leg.get_window_extent(renderer)
        for ax in fig.axes:
            ab = ax.get_window_extent(renderer)
            if lb.overlaps(ab) and min(lb.x1, ab.x1) - max(lb.x0, ab.x0) > 0.5 and \
                    min(lb.y1, ab.y1) - max(lb.y0, ab.y0) > 0.5:
                found.append(f"a legend covers the data area of {ax.get_title() or 'an axes'}")
    return found
