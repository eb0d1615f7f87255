"""The study's figures, each one function of the summary table (:func:`analysis.tables.summary`).

Figures select and plot; every plotted number is a column of the summary. Points a
report cannot supply (a metric missing from an older or smaller section set) are left
out and listed in a note on the figure and in a warning.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from .io import atomic_path  # noqa: E402

#: Thread-level executions per SASS opcode, the source of the bytes per LDGSTS sector.
OPCODE_METRIC = "sass__thread_inst_executed_true_per_opcode_with_modifier_all"
from .style import is_ablation, kernel_styles  # noqa: E402 (one style per kernel, every figure)

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


def _missing_note(fig, ax, missing: list[str], figure: str) -> None:
    if not missing:
        return
    text = "not in the reports: " + "; ".join(missing)
    warnings.warn(f"{figure}: {text}", stacklevel=3)
    shown = text if len(text) <= 140 else text[:137] + "..."
    fig.text(0.005, 0.25 / fig.get_figheight(), shown, fontsize=5.5, color="#555555", ha="left", va="bottom",
             gid="missing_note")


def save(fig, png: str | Path, pdf: str | Path) -> None:
    """Write a figure as PNG (at ``STYLE["savefig.dpi"]``, 200 dpi) and PDF, atomically, with
    fixed metadata (no dates or versions), so reruns give the same bytes.

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
    for path, meta in ((png, {"Software": None}), (pdf, {"CreationDate": None, "Producer": None, "Creator": None})):
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


def occupancy_vs_throughput(s: pd.DataFrame, title: str):
    """(a) Achieved occupancy (sm__warps_active.avg.pct_of_peak_sustained_active, %) against
    throughput, one panel per precision (:func:`panel_groups`), each kernel's points joined
    in order of N (the largest N the filled end), and Spearman's rank correlation over all
    points of the precision (:func:`analysis.study.spearman`)."""
    from .study import spearman

    occ = "sm__warps_active.avg.pct_of_peak_sustained_active"
    groups = [g for g in panel_groups(s) if g[1] is not None]
    styles = kernel_styles(list(s["kernel"].unique()))
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(1, max(len(groups), 1), figsize=(3.3 * max(len(groups), 1), 4.4), squeeze=False,
                                 layout="constrained")
        missing = []
        for ax, (name, prec, sub) in zip(axes[0], groups):
            for kernel, g in sub.groupby("kernel"):
                ok = g[[occ, "throughput"]].notna().all(axis=1)
                missing += [f"{kernel} N={n}" for n in g.loc[~ok, "n"]]
                g = g[ok].sort_values("n")
                ax.plot(g[occ], g["throughput"], label=kernel, linewidth=0.8, markersize=4, **styles[kernel])
            if name == prec.upper():  # the precision's own panel: rho over all its kernels
                every = s[s["precision"] == prec]
                rho = spearman(every[occ], every["throughput"])
                ax.text(0.97, 0.03, f"Spearman rho = {rho:.2f}\n(n = {every[[occ, 'throughput']].dropna().shape[0]},"
                        f" all {prec.upper()} kernels)", transform=ax.transAxes, fontsize=7, va="bottom", ha="right",
                        gid="spearman")
            unit = sub["throughput_unit"].dropna().iloc[0] if sub["throughput_unit"].notna().any() else ""
            ax.set_xlabel("achieved occupancy (% of peak warps)")
            ax.set_ylabel(f"throughput ({unit})")
            ax.set_title(name)
            ax.set_xlim(0, 100)
            ax.set_ylim(bottom=0)
            _legend_below(ax)
        if not groups:
            axes[0][0].text(0.5, 0.5, "no kernel of known precision and N:\nthroughput needs both", ha="center",
                            va="center", transform=axes[0][0].transAxes)
        fig.suptitle(f"Achieved occupancy against throughput (points joined from N = 512 up) - {title}", fontsize=9)
        _metric_note(fig, occ)
        _missing_note(fig, axes[0][0], missing, "occupancy_vs_throughput")
    return fig


def coalescing_outliers(rows: pd.DataFrame, tolerance: float = 0.05) -> str:
    """Which kernels use their LDGSTS sectors differently from the median kernel (bytes per
    sector more than ``tolerance`` apart), as a sentence for the figure's title."""
    v = rows.set_index("kernel")["ldgsts_bytes_per_sector"].dropna()
    if v.empty:
        return "no LDGSTS counters in these reports"
    med = v.median()
    odd = v[(v - med).abs() > tolerance * med].sort_values(ascending=False)
    if odd.empty:
        return f"every kernel uses {med:.1f} of 32 bytes per sector"
    rest = ", ".join(f"{k} {b:.1f}" for k, b in odd.items())
    return f"{len(v) - len(odd)} kernels use {med:.1f} of 32 bytes per sector; apart: {rest}"


def coalescing(s: pd.DataFrame, title: str):
    """(b) Global-load coalescing per kernel, a sorted dot chart (the counters do not follow
    N for these kernels): LDGSTS sectors per request (sm__sass_*ldgsts* counters) and
    bytes used per LDGSTS sector (opcode thread counts), each at the largest N, with a bar
    over the range the other N span; L1TEX global loads per request as a hollow marker.
    A kernel without LDGSTS counters is listed in the note and not drawn."""
    styles = kernel_styles(list(s["kernel"].unique()))
    largest = s["n"].max()
    big = s[s["n"] == largest] if pd.notna(largest) else s
    order = big.sort_values(["ldgsts_bytes_per_sector", "kernel"], ascending=[False, True])["kernel"].tolist()
    missing = []
    with plt.rc_context(STYLE):
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 0.22 * len(order) + 1.6), sharey=True,
                                       layout="constrained")
        for y, kernel in enumerate(order):
            g = s[s["kernel"] == kernel]
            row = big[big["kernel"] == kernel].iloc[0]
            st = {k: v for k, v in styles[kernel].items() if k != "linestyle"}
            for ax, col, gid in ((ax1, "ldgsts_sectors_per_request", "ldgsts_sectors_per_request"),
                                 (ax2, "ldgsts_bytes_per_sector", "ldgsts_bytes_per_sector")):
                if g[col].notna().any():
                    ax.plot([g[col].min(), g[col].max()], [y, y], color=st["color"], linewidth=2.5, alpha=0.35,
                            solid_capstyle="round")
                    ax.plot([row[col]], [y], linestyle="none", markersize=5, gid=gid, label=kernel, **st)
                else:
                    missing.append(f"{kernel}: {col}")
            ld = row["global_ld_sectors_per_request"]
            if pd.notna(ld):
                ax1.plot([ld], [y], linestyle="none", marker="o", markersize=4, markerfacecolor="none",
                         color="#555555", gid="global_ld_sectors_per_request")
        ideal = s["ldgsts_ideal_sectors_per_request"].dropna().unique()
        for v in ideal:
            ax1.axvline(v, color="#555555", linewidth=0.8, linestyle=":")
        ax2.axvline(32, color="#555555", linewidth=0.8, linestyle=":")
        ax1.set_yticks(range(len(order)), order, fontsize=7)
        ax1.invert_yaxis()
        ax1.set_xlabel("LDGSTS sectors per request (sector/request)\n"
                       "dotted: the ideal for the access width; hollow: all L1TEX global loads")
        ax2.set_xlabel("bytes used per LDGSTS sector (byte/sector)\ndotted: all 32 bytes used")
        ax1.set_xlim(left=0)
        ax2.set_xlim(0, 34)
        for ax in (ax1, ax2):
            ax.grid(axis="y", alpha=0.15)
        n_txt = f"N = {int(largest)}; bars: range over N" if pd.notna(largest) else "every launch"
        fig.suptitle(f"Global-load coalescing per kernel (cp.async = LDGSTS), {n_txt} - {title}\n"
                     f"{coalescing_outliers(big)}", fontsize=9)
        _metric_note(fig, "sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_{access,bypass}.sum",
                     "sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum", OPCODE_METRIC)
        _missing_note(fig, ax1, missing, "coalescing")
    return fig


def dram_active(s: pd.DataFrame, title: str):
    """(c) DRAM activity: top row, dram__cycles_active.avg.pct_of_peak_sustained_elapsed (%)
    against N, one panel per precision (:func:`panel_groups`); bottom row, at the largest N,
    DRAM-active cycles (dram__cycles_active.avg) against the profiled launch's
    gpu__time_duration.sum (ns), one point per kernel (gid ``largest_n``)."""
    styles = kernel_styles(list(s["kernel"].unique()))
    cyc, pct, dur = ("dram__cycles_active.avg", "dram__cycles_active.avg.pct_of_peak_sustained_elapsed",
                     "gpu__time_duration.sum")
    largest = s["n"].max()
    groups = panel_groups(s)
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(2, max(len(groups), 1), figsize=(3.2 * max(len(groups), 1), 6.4), squeeze=False,
                                 layout="constrained")
        missing = []
        for j, (name, _prec, sub) in enumerate(groups):
            top, bottom = axes[0][j], axes[1][j]
            for kernel, g in sub.sort_values("n").groupby("kernel"):
                for col in (cyc, pct):
                    missing += [f"{kernel} N={n} {col}" for n in g.loc[g[col].isna(), "n"]]
                top.plot(g["n"], g[pct], label=kernel, markersize=4, linewidth=1, **styles[kernel])
                big = g[g["n"] == largest]
                bottom.plot(big[dur], big[cyc], gid="largest_n", label=kernel, markersize=5, **points(styles[kernel]))
            _n_axis(top, s)
            top.set_ylim(bottom=0)
            top.set_title(name)
            top.set_ylabel("DRAM active (% of elapsed cycles)")
            # data in ns, ticks written in ms (the offset text of ns collides with the label)
            bottom.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(4))
            bottom.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v / 1e6:g}"))
            bottom.set_xlabel("duration of the profiled launch (ms)")
            bottom.set_ylabel("DRAM-active cycles (cycle)")
            bottom.ticklabel_format(axis="y", style="sci", scilimits=(0, 0), useMathText=True)
            bottom.set_title(f"N = {int(largest)}" if pd.notna(largest) else "", fontsize=8)
            _legend_below(bottom)
        fig.suptitle(f"DRAM-active cycles against N, and against duration at the largest N - {title}", fontsize=9)
        _metric_note(fig, pct, cyc, dur)
        _missing_note(fig, axes[0][0], missing, "dram_active")
    return fig


FIGURES = {
    "occupancy_vs_throughput": occupancy_vs_throughput,
    "coalescing": coalescing,
    "dram_active": dram_active,
}


def draw(name: str, summary_csv: str | Path, png: str | Path, pdf: str | Path, title: str) -> None:
    """Draw figure ``name`` from a summary CSV to PNG and PDF.

    Raises:
        KeyError: unknown figure name.
    """
    from .schemas import validate_summary

    s = validate_summary(pd.read_csv(summary_csv), summary_csv)
    fig = FIGURES[name](s, title)
    save(fig, png, pdf)



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
