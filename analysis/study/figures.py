"""The study's figures, each one function of the summary table (:func:`analysis.reports.tables.summary`).

Figures select and plot; every plotted number is a column of the summary. Points a
report cannot supply are left out and listed in a note on the figure and in a warning,
each under what keeps it out: a metric not in the reports (an older or smaller section
set), a counter that is in the reports but zero (no LDGSTS issued), or no N in the
report's name (the axis is N). A figure with nothing to draw at all (:func:`why_not_drawn`)
is not drawn: :func:`placeholder` gives a small figure saying why, in one line.
"""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from analysis.io import atomic_path  # noqa: E402

#: Thread-level executions per SASS opcode, the source of the bytes per LDGSTS sector.
OPCODE_METRIC = "sass__thread_inst_executed_true_per_opcode_with_modifier_all"
from analysis.style import is_ablation, kernel_styles  # noqa: E402 (one style per kernel, every figure)

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


#: Why a point is left out, as the notes say it.
NOT_IN_REPORTS = "not in the reports"
NO_N = "no N in the report's name (a report named {kernel}_n{N} gives it)"
NO_LDGSTS = "no LDGSTS issued (the LDGSTS counters are in the reports, at 0)"
NO_PRECISION = "no known precision (a kernel name starting fp16_, int8_ or int4_ gives it)"

#: Nsight Compute 2020.2 and older name DRAM activity (% of peak) by its old name; where a
#: report stores both they are equal (analysis/data/metric_aliases.csv).
DRAM_PCT = "dram__cycles_active.avg.pct_of_peak_sustained_elapsed"
DRAM_PCT_OLD = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
LDGSTS_REQUESTS = "sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum"
LDGSTS_COUNTERS = "sm__sass_l1tex_t_*_ldgsts* counters"
GLOBAL_LD = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"


class _Notes:
    """What a figure leaves out, grouped by why: ``add(why, item)`` in drawing order; each
    item is listed once, with its count where it came more than once."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, int]] = {}

    def add(self, why: str, item: str) -> None:
        group = self.items.setdefault(why, {})
        group[item] = group.get(item, 0) + 1

    def text(self) -> str:
        parts = []
        for why, items in self.items.items():
            listed = ", ".join(f"{k} (x{n})" if n > 1 else k for k, n in items.items())
            parts.append(f"{why}: {listed}" if listed else why)
        return "; ".join(parts)

    def __bool__(self) -> bool:
        return bool(self.items)

    def counts(self, skip: tuple[str, ...] = ()) -> str:
        """The reasons with how many items each holds, ``skip`` left out."""
        return "; ".join(f"{why} ({len(items)} kernel{'s' if len(items) > 1 else ''})"
                         for why, items in self.items.items() if why not in skip)


def _at(kernel: str, n) -> str:
    """A point's name in a note: the kernel, and its N where the report gives one."""
    return f"{kernel} N={int(n)}" if pd.notna(n) else str(kernel)


def _missing_note(fig, ax, notes: _Notes, figure: str) -> None:
    if not notes:
        return
    text = notes.text()
    warnings.warn(f"{figure}: {text}", stacklevel=3)
    shown = text if len(text) <= 140 else text[:137] + "..."
    fig.text(0.005, 0.25 / fig.get_figheight(), shown, fontsize=5.5, color="#555555", ha="left", va="bottom",
             gid="missing_note")


def dram_pct(s: pd.DataFrame) -> pd.Series:
    """DRAM activity, % of peak (float), per row of a summary: :data:`DRAM_PCT`, or where a
    report lacks it (Nsight Compute 2020.2 and older), the equal :data:`DRAM_PCT_OLD`."""
    pct = s[DRAM_PCT].astype("float64")
    if DRAM_PCT_OLD in s:
        pct = pct.fillna(s[DRAM_PCT_OLD].astype("float64"))
    return pct


def _occupancy_plan(s: pd.DataFrame) -> tuple[str | None, _Notes]:
    occ = "sm__warps_active.avg.pct_of_peak_sustained_active"
    notes = _Notes()
    known = s[s["precision"].notna()]
    for kernel in s.loc[s["precision"].isna(), "kernel"].drop_duplicates():
        notes.add(NO_PRECISION, str(kernel))
    drawn = 0
    for _, r in known.iterrows():
        if pd.isna(r["n"]):
            notes.add(NO_N, str(r["kernel"]))
        elif pd.isna(r[occ]):
            notes.add(f"{NOT_IN_REPORTS}: {occ}", _at(r["kernel"], r["n"]))
        elif pd.isna(r["throughput"]):
            notes.add(f"{NOT_IN_REPORTS}: gpu__time_duration.sum", _at(r["kernel"], r["n"]))
        else:
            drawn += 1
    if drawn:
        return None, notes
    if known.empty:
        return "no launch of a kernel of known precision (a name starting fp16_, int8_ or int4_): throughput " \
               "needs it and N", notes
    return "no launch has both an occupancy and a throughput (" + notes.text() + ")", notes


def _coalescing_plan(s: pd.DataFrame) -> tuple[str | None, _Notes]:
    notes = _Notes()
    drawn = False
    largest = s["n"].max()
    for kernel, g in s.groupby("kernel", sort=True):
        big = g[g["n"] == largest] if pd.notna(largest) else g
        has_req = g[LDGSTS_REQUESTS].notna().any() if LDGSTS_REQUESTS in g else False
        issued = has_req and (g[LDGSTS_REQUESTS].fillna(0) > 0).any()
        if g["ldgsts_sectors_per_request"].notna().any() or g["ldgsts_bytes_per_sector"].notna().any():
            drawn = True
        if not has_req:
            notes.add(f"{NOT_IN_REPORTS}: {LDGSTS_COUNTERS}", str(kernel))
        elif not issued:
            notes.add(NO_LDGSTS, str(kernel))
        elif g["ldgsts_bytes_per_sector"].isna().all():
            notes.add(f"{NOT_IN_REPORTS}: per-opcode thread counts ({OPCODE_METRIC})", str(kernel))
        if big["global_ld_sectors_per_request"].notna().any():
            drawn = True
    if drawn:
        return None, notes
    ld = s["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
    if ld.isna().all():
        ld_why = f"{NOT_IN_REPORTS}: {GLOBAL_LD}"
    else:
        ld_why = "no global loads counted (l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum 0)"
    return f"no LDGSTS or global-load counts to draw: {notes.counts()}; {ld_why}", notes


def _dram_plan(s: pd.DataFrame) -> tuple[str | None, _Notes]:
    cyc, dur = "dram__cycles_active.avg", "gpu__time_duration.sum"
    notes = _Notes()
    pct = dram_pct(s)
    largest = s["n"].max()
    drawn = False
    for i, r in s.sort_values("n").iterrows():
        if pd.isna(r["n"]):
            notes.add(NO_N, str(r["kernel"]))
        for col, v in ((cyc, r[cyc]), (DRAM_PCT, pct[i])):
            if pd.isna(v):
                notes.add(f"{NOT_IN_REPORTS}: {col}", _at(r["kernel"], r["n"]))
        drawn = drawn or (pd.notna(r["n"]) and (pd.notna(pct[i]) or (r["n"] == largest and pd.notna(r[cyc])
                                                                       and pd.notna(r[dur]))))
    if drawn:
        return None, notes
    if s["n"].isna().all():
        also = notes.counts(skip=(NO_N,))
        return ("no launch has an N (a report named {kernel}_n{N} gives it): DRAM activity is drawn against N and "
                "at the largest N" + (f"; also {also}" if also else "")), notes
    return "no DRAM counts to draw (" + notes.text() + ")", notes


_PLANS = {"occupancy_vs_throughput": _occupancy_plan, "coalescing": _coalescing_plan, "dram_active": _dram_plan}

#: The title of each figure, as its placeholder names it.
TITLES = {
    "occupancy_vs_throughput": "Achieved occupancy against throughput",
    "coalescing": "Global-load coalescing per kernel",
    "dram_active": "DRAM-active cycles against N",
}


def why_not_drawn(name: str, s: pd.DataFrame) -> str | None:
    """Why figure ``name`` (a key of :data:`FIGURES`) has nothing to draw from summary
    ``s``, in one line (what blocks every point: no N, no known precision, counters not
    in the reports or at 0); None when it has at least one point.

    Raises:
        KeyError: unknown figure name.
    """
    if s.empty:
        return "the set has no launch"
    return _PLANS[name](s)[0]


def placeholder(name: str, title: str, reason: str):
    """The small figure written in place of figure ``name`` when it has nothing to draw:
    its title and ``reason`` (gid ``not_drawn``), no axes. Saved like any figure
    (:func:`save`), so the workflow's outputs exist and say why they hold no plot."""
    with plt.rc_context(STYLE):
        lines = textwrap.wrap(f"not drawn: {reason}", 130)
        fig = plt.figure(figsize=(7.5, 0.45 + 0.14 * len(lines)))
        fig.text(0.01, 1 - 0.12 / fig.get_figheight(), f"{TITLES.get(name, name)} - {title}", fontsize=9,
                 ha="left", va="top")
        fig.text(0.01, 0.08 / fig.get_figheight(), "\n".join(lines), fontsize=6.5, color="#555555", ha="left",
                 va="bottom", gid="not_drawn")
    return fig


def _skipped(name: str, s: pd.DataFrame, title: str):
    """The placeholder of figure ``name`` with a warning, or None where it has points."""
    reason = why_not_drawn(name, s)
    if reason is None:
        return None
    warnings.warn(f"{name}: not drawn: {reason}", stacklevel=3)
    return placeholder(name, title, reason)


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
    points of the precision (:func:`analysis.study.claims.spearman`)."""
    from analysis.study.claims import spearman

    skipped = _skipped("occupancy_vs_throughput", s, title)
    if skipped is not None:
        return skipped
    notes = _occupancy_plan(s)[1]
    occ = "sm__warps_active.avg.pct_of_peak_sustained_active"
    groups = [g for g in panel_groups(s) if g[1] is not None]
    styles = kernel_styles(list(s["kernel"].unique()))
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(1, max(len(groups), 1), figsize=(3.3 * max(len(groups), 1), 4.4), squeeze=False,
                                 layout="constrained")
        for ax, (name, prec, sub) in zip(axes[0], groups):
            for kernel, g in sub.groupby("kernel"):
                ok = g[[occ, "throughput"]].notna().all(axis=1)
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
        fig.suptitle(f"Achieved occupancy against throughput (points joined from N = 512 up) - {title}", fontsize=9)
        _metric_note(fig, occ)
        _missing_note(fig, axes[0][0], notes, "occupancy_vs_throughput")
    return fig


def coalescing_outliers(rows: pd.DataFrame, tolerance: float = 0.05) -> str:
    """Which kernels use their LDGSTS sectors differently from the median kernel (bytes per
    sector more than ``tolerance`` apart), as a sentence for the figure's title."""
    v = rows.set_index("kernel")["ldgsts_bytes_per_sector"].dropna()
    if v.empty:
        req = rows[LDGSTS_REQUESTS] if LDGSTS_REQUESTS in rows else pd.Series(dtype="float64")
        if (req > 0).any():
            return f"LDGSTS issued, but its bytes are not counted (no {OPCODE_METRIC} in the reports)"
        if req.notna().any():
            return "no kernel issues LDGSTS" + (" (the other reports lack the counters)" if req.isna().any() else "")
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
    A kernel without LDGSTS counters, or with the counters at 0, is listed in the note (each
    under its reason) and not drawn. Reports without N (from elsewhere): one row per kernel,
    the point the median over its launches, the bar their range."""
    skipped = _skipped("coalescing", s, title)
    if skipped is not None:
        return skipped
    notes = _coalescing_plan(s)[1]
    styles = kernel_styles(list(s["kernel"].unique()))
    largest = s["n"].max()
    big = s[s["n"] == largest] if pd.notna(largest) else s
    order = list(dict.fromkeys(
        big.sort_values(["ldgsts_bytes_per_sector", "kernel"], ascending=[False, True])["kernel"].tolist()))
    cols = ["ldgsts_sectors_per_request", "ldgsts_bytes_per_sector", "global_ld_sectors_per_request"]
    with plt.rc_context(STYLE):
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 0.22 * len(order) + 1.6), sharey=True,
                                       layout="constrained")
        for y, kernel in enumerate(order):
            g = s[s["kernel"] == kernel]
            row = big.loc[big["kernel"] == kernel, cols].median()  # one launch per kernel at an N of its own
            st = {k: v for k, v in styles[kernel].items() if k != "linestyle"}
            for ax, col, gid in ((ax1, "ldgsts_sectors_per_request", "ldgsts_sectors_per_request"),
                                 (ax2, "ldgsts_bytes_per_sector", "ldgsts_bytes_per_sector")):
                if g[col].notna().any():
                    ax.plot([g[col].min(), g[col].max()], [y, y], color=st["color"], linewidth=2.5, alpha=0.35,
                            solid_capstyle="round")
                    ax.plot([row[col]], [y], linestyle="none", markersize=5, gid=gid, label=kernel, **st)
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
        n_txt = (f"N = {int(largest)}; bars: range over N" if pd.notna(largest)
                 else "median of each kernel's launches; bars: their range")
        fig.suptitle(f"Global-load coalescing per kernel (cp.async = LDGSTS), {n_txt} - {title}\n"
                     f"{coalescing_outliers(big)}", fontsize=9)
        _metric_note(fig, "sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_{access,bypass}.sum",
                     "sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum", OPCODE_METRIC)
        _missing_note(fig, ax1, notes, "coalescing")
    return fig


def dram_active(s: pd.DataFrame, title: str):
    """(c) DRAM activity: top row, dram__cycles_active.avg.pct_of_peak_sustained_elapsed (%)
    against N, one panel per precision (:func:`panel_groups`); bottom row, at the largest N,
    DRAM-active cycles (dram__cycles_active.avg) against the profiled launch's
    gpu__time_duration.sum (ns), one point per kernel (gid ``largest_n``). Reports of
    Nsight Compute 2020.2 and older give the percentage under its old name (:func:`dram_pct`);
    launches without N are listed in the note, not drawn."""
    skipped = _skipped("dram_active", s, title)
    if skipped is not None:
        return skipped
    notes = _dram_plan(s)[1]
    s = s.assign(**{DRAM_PCT: dram_pct(s)})
    styles = kernel_styles(list(s["kernel"].unique()))
    cyc, pct, dur = ("dram__cycles_active.avg", "dram__cycles_active.avg.pct_of_peak_sustained_elapsed",
                     "gpu__time_duration.sum")
    largest = s["n"].max()
    groups = panel_groups(s)
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(2, max(len(groups), 1), figsize=(3.2 * max(len(groups), 1), 6.4), squeeze=False,
                                 layout="constrained")
        for j, (name, _prec, sub) in enumerate(groups):
            top, bottom = axes[0][j], axes[1][j]
            for kernel, g in sub.sort_values("n").groupby("kernel"):
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
        _missing_note(fig, axes[0][0], notes, "dram_active")
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
    from analysis.reports.schemas import validate_summary

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
