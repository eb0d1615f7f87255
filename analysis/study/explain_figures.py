"""The explanation figures: a waterfall per pair of launches (:func:`waterfall`, or one panel
per kernel of a set comparison, :func:`waterfalls`) and a set's stall stacks per precision
(:func:`stall_figure`). Every bar is a cell of the tables written beside them."""

from __future__ import annotations

import math
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from analysis.study.drawing import OKABE_ITO, STYLE  # noqa: E402

#: Parts drawn one by one in a waterfall; the rest are one bar.
WATERFALL_PARTS = 8

#: The panel title of launches whose kernel name gives no precision (reports from elsewhere):
#: a bare "unknown" read as a precision of that name.
UNKNOWN_PRECISION = "precision not known (kernel names without fp16_, int8_ or int4_)"

#: Launches a stall figure's panel draws at most (those of the largest stall stacks).
MAX_STALL_LAUNCHES = 40

UP, DOWN, TOTAL = "#D55E00", "#0072B2", "#999999"


def _draw_waterfall(ax, parts: pd.DataFrame, ta: float, tb: float, title: str, factor: float = 3.0) -> None:
    """One waterfall on ``ax``: Nsight Compute's duration of a (us), the largest parts (bars
    from the running total, error bars ``factor`` x noise), the rest, and b."""
    shown = parts[parts["group"] != "residual"].head(WATERFALL_PARTS)
    rest = parts.drop(shown.index)
    labels = ["a"] + list(shown["item"]) + ([f"{len(rest)} other parts"] if len(rest) else []) + ["b"]
    steps = list(shown["ns"]) + ([rest["ns"].sum()] if len(rest) else [])
    noise = list(shown["noise_ns"]) + ([math.nan] if len(rest) else [])
    y = np.arange(len(labels))[::-1]
    ax.barh(y[0], ta / 1e3, color=TOTAL)
    run = ta
    for i, (step, nz) in enumerate(zip(steps, noise), start=1):
        left = min(run, run + step)
        ax.barh(y[i], abs(step) / 1e3, left=left / 1e3, color=UP if step > 0 else DOWN)
        if not math.isnan(nz) and nz > 0:
            ax.errorbar((run + step) / 1e3, y[i], xerr=factor * nz / 1e3, color="black", capsize=2, lw=0.8)
        run += step
    ax.barh(y[-1], tb / 1e3, color=TOTAL)
    ax.set_yticks(y, labels, fontsize=7)
    lo = min(ta, tb, *(ta + np.cumsum(steps))) if steps else min(ta, tb)
    hi = max(ta, tb, *(ta + np.cumsum(steps))) if steps else max(ta, tb)
    pad = 0.15 * (hi - lo) if hi > lo else 0.05 * hi
    ax.set_xlim((lo - pad) / 1e3, (hi + pad) / 1e3)
    ax.set_xlabel("gpu__time_duration.sum (us)")
    ax.set_title(title, fontsize=8, loc="left")
    ax.grid(axis="y", visible=False)


def waterfall(parts: pd.DataFrame, ta: float, tb: float, title: str, footnote: str = ""):
    """A pair's waterfall: from a's duration (ns, ``ta``) through its largest parts to b's.

    Args:
        parts: :func:`analysis.study.explain.parts_table` of the pair (ranked).
        ta, tb: Nsight Compute's duration of a and b (ns).
        title: the figure's title; footnote: a line under the axes (the verdict).

    Returns:
        The matplotlib figure (draw it with :func:`analysis.study.drawing.save`).
    """
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(6.4, 0.32 * (min(len(parts), WATERFALL_PARTS) + 3) + 1.2),
                               layout="constrained")
        if parts.empty:
            ax.text(0.5, 0.5, "not decomposed (see the page)", ha="center", va="center", transform=ax.transAxes)
            ax.set_axis_off()
            ax.set_title(title, fontsize=8, loc="left")
        else:
            _draw_waterfall(ax, parts, ta, tb, title)
        if footnote:
            fig.supxlabel(textwrap.fill(footnote, 110), fontsize=7)
    return fig


def waterfalls(panels: list[tuple[str, pd.DataFrame, float, float]], title: str):
    """Several waterfalls, one panel per (label, parts, ta, tb), three columns wide."""
    cols = 3 if len(panels) > 2 else max(1, len(panels))
    rows = max(1, math.ceil(len(panels) / cols))
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.0 * rows), layout="constrained", squeeze=False)
        for ax, (label, parts, ta, tb) in zip(axes.flat, panels):
            if parts.empty:
                ax.text(0.5, 0.5, f"{label}: not decomposed", ha="center", va="center", transform=ax.transAxes,
                        fontsize=7)
                ax.set_axis_off()
            else:
                _draw_waterfall(ax, parts, ta, tb, label)
        for ax in list(axes.flat)[len(panels):]:
            ax.set_axis_off()
        if not panels:
            axes.flat[0].text(0.5, 0.5, "no launch pair to explain", ha="center", va="center")
        fig.suptitle(title, fontsize=9)
    return fig


def stall_figure(stalls: pd.DataFrame, title: str, max_reasons: int = 7):
    """Warp cycles per issued instruction by stall reason, stacked, one panel per
    precision: a group of bars per launch (``launch`` of :func:`analysis.study.evidence.stall_table`:
    the kernel, or which of several launches of its name), one bar per N (left to right,
    ascending).

    Args:
        stalls: :func:`analysis.study.evidence.stall_table` of a set.
        title: the figure's title.
        max_reasons: reasons drawn in their own colour (the largest over the set); the
            rest are one grey segment.
    """
    with plt.rc_context(STYLE):
        if stalls.empty:
            fig, ax = plt.subplots(figsize=(6, 1.2), layout="constrained")
            ax.text(0.5, 0.5, "no warp-state metrics in the reports", ha="center", va="center")
            ax.set_axis_off()
            return fig
        order = stalls.groupby("reason")["cycles_per_issue"].sum().sort_values(ascending=False)
        top = list(order.index[:max_reasons])
        s = stalls.assign(reason=stalls["reason"].where(stalls["reason"].isin(top), "other"))
        colours = dict(zip(top, OKABE_ITO)) | {"other": "#CCCCCC"}
        s = s.assign(precision=s["precision"].astype(object).where(s["precision"].notna(), UNKNOWN_PRECISION))
        precisions = sorted(s["precision"].unique())
        # a group of bars per launch identity (stall_table's launch: the kernel, or its instantiation,
        # range, later occurrence or report where the set holds several under one name)
        s = s.assign(kernel=s["launch"]) if "launch" in s else s
        kernels_of = {p: sorted(s.loc[s["precision"] == p, "kernel"].unique()) for p in precisions}
        # a panel of more launches than fit a readable figure (56 imported reports drew 6388 pixels of
        # unreadable labels): the ones of the largest stall stacks, the rest named as left out
        left_out = {}
        for p, names in kernels_of.items():
            if len(names) > MAX_STALL_LAUNCHES:
                total = s[s["precision"] == p].groupby(["kernel", "n"], dropna=False)["cycles_per_issue"].sum()
                largest = total.groupby(level="kernel").max().sort_values(ascending=False, kind="stable")
                kernels_of[p] = sorted(largest.index[:MAX_STALL_LAUNCHES])
                left_out[p] = len(names) - MAX_STALL_LAUNCHES
        width = max(len(k) for k in kernels_of.values())
        fig, axes = plt.subplots(len(precisions), 1, figsize=(max(6.0, 0.55 * width + 2), 2.6 * len(precisions)),
                                 layout="constrained", squeeze=False)
        for ax, p in zip(axes[:, 0], precisions):
            sub = s[s["precision"] == p]
            wide = sub.pivot_table(index=["kernel", "n"], columns="reason", values="cycles_per_issue", aggfunc="sum",
                                   dropna=False).fillna(0.0)
            xs, ticks, names = [], [], []
            for i, k in enumerate(kernels_of[p]):
                ns = [n for (kk, n) in wide.index if kk == k]
                for j, n in enumerate(sorted(ns, key=lambda v: (pd.isna(v), v))):
                    xs.append((i + j / max(len(ns), 1) * 0.8, (k, n)))
                ticks.append(i + 0.4)
                names.append(k)
            bottom = np.zeros(len(xs))
            w = 0.8 / max(1, max(len([1 for (kk, _) in wide.index if kk == k]) for k in kernels_of[p]))
            for reason in [*top, "other"]:
                if reason not in wide.columns:
                    continue
                vals = np.array([wide.loc[key, reason] for _, key in xs])
                ax.bar([x for x, _ in xs], vals, width=w * 0.9, bottom=bottom, color=colours[reason],
                       label=reason if p == precisions[0] else None, align="edge")
                bottom += vals
            ax.set_xticks(ticks, names, rotation=30, ha="right", fontsize=7)
            ax.set_ylabel("warp cycles per\nissued instruction")
            ax.set_title(p + (f" ({MAX_STALL_LAUNCHES} launches of the largest stacks drawn, {left_out[p]} more "
                              "in stalls.csv)" if p in left_out else ""), fontsize=8, loc="left")
            ax.grid(axis="x", visible=False)
        handles, labels = axes[0, 0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncol=4, fontsize=7)
        fig.suptitle(f"{title}\nbars of a kernel, left to right: its N in ascending order "
                     f"({', '.join(str(int(n)) for n in sorted(s['n'].dropna().unique()))})"
                     if s["n"].notna().any() else title, fontsize=9)
    return fig
