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

from analysis.io import atomic_path  # noqa: E402,F401

#: Thread-level executions per SASS opcode, the source of the bytes per LDGSTS sector.
OPCODE_METRIC = "sass__thread_inst_executed_true_per_opcode_with_modifier_all"
from analysis.style import is_ablation, kernel_styles  # noqa: E402,F401 (one style per kernel, every figure)
from analysis.study.drawing import (  # noqa: E402,F401 (the shared drawing, named here too)
    ABLATION_ROOT, OKABE_ITO, STYLE, _legend_below, _metric_note, _n_axis, _precisions, _texts, overlaps, panel_groups,
    points, save)


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
        return "no launch of a kernel of known precision (a name starting fp16_, int8_ or int4_): the " \
               "throughput (TFLOP/s or TOP/s) is computed from the precision and N", notes
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
    from analysis.reports.schemas import read_summary

    s = read_summary(summary_csv)
    fig = FIGURES[name](s, title)
    save(fig, png, pdf)


