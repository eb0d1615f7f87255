"""The headline figure of a comparison of two profile sets (:func:`headline_figure`), drawn
from a diff table of :func:`analysis.compare.compare_sets`."""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Metrics drawn in the comparison figure.
HEADLINE = [
    "gpu__time_duration.sum",
    "smsp__inst_executed.sum",
    "launch__registers_per_thread",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active",
    "dram__cycles_active.avg",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "lts__t_sectors.sum",
]


def headline_figure(diff: pd.DataFrame, title: str):
    """Relative change of the headline metrics per kernel and N (a heat map, %), each cell
    annotated with its value; a flagged cell's value is bold and starred, grey cells have
    no value on a side or units that do not convert. Values are written in white on the
    dark ends of the colour scale (luma 0.2126 R + 0.7152 G + 0.0722 B of the cell's colour
    under 0.4) and in black elsewhere."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .figures import STYLE

    d = diff[diff["metric"].isin(HEADLINE) & (diff["status"] != "only in baseline")
             & (diff["status"] != "only in candidate")].copy()
    launch = np.where(d["occurrence"] > 0, " #" + d["occurrence"].astype(str), "")
    d["col"] = d["kernel"] + "\nN=" + d["n"].astype("string").fillna("?") + launch

    def order(col: str):
        kernel, rest = col.split("\n")
        n = rest.split("=")[1].split(" ")[0]
        return kernel, int(n) if n.isdigit() else -1, col

    cols = sorted(d["col"].unique(), key=order)
    rows = [m for m in HEADLINE if m in set(d["metric"])]
    grid = d.pivot_table(index="metric", columns="col", values="rel_change", aggfunc="first").reindex(
        index=rows, columns=cols)
    flag = d.pivot_table(index="metric", columns="col", values="flagged", aggfunc="first").reindex(
        index=rows, columns=cols)
    if not rows or not cols:  # nothing the two sets share
        with plt.rc_context(STYLE):
            fig, ax = plt.subplots(figsize=(6, 2.5), layout="constrained")
            ax.axis("off")
            ax.text(0.5, 0.5, "the two sets share no kernel, N and headline metric", ha="center", va="center")
            ax.set_title(title, fontsize=8)
        return fig
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(cols) + 3), 0.45 * len(rows) + 2.2))
        lim = max(0.05, float(np.nanmax(np.abs(grid.to_numpy()))) if grid.size else 0.05) * 100
        cmap = matplotlib.colormaps["PuOr_r"].with_extremes(bad="#BBBBBB")
        im = ax.imshow(grid.to_numpy() * 100, cmap=cmap, vmin=-lim, vmax=lim, aspect="auto")
        status = d.pivot_table(index="metric", columns="col", values="status", aggfunc="first").reindex(
            index=rows, columns=cols)
        for i in range(len(rows)):
            for j in range(len(cols)):
                v = grid.iat[i, j]
                if np.isnan(v):  # grey: no value on a side, or units that do not convert
                    st = status.iat[i, j]
                    if isinstance(st, str) and st != "unchanged":
                        ax.text(j, i, "unit" if st == "unit changed" else "n/a", ha="center", va="center",
                                fontsize=5, color="#333333")
                    continue
                f = bool(flag.iat[i, j]) if not pd.isna(flag.iat[i, j]) else False
                r, g, b, _ = im.cmap(im.norm(v * 100))
                ink = "#FFFFFF" if 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.4 else "#000000"
                ax.text(j, i, f"{v * 100:+.1f}" + ("*" if f else ""), ha="center", va="center", fontsize=5.5,
                        fontweight="bold" if f else "normal", color=ink)
        ax.set_xticks(range(len(cols)), cols, rotation=90, fontsize=6)
        ax.set_yticks(range(len(rows)), rows, fontsize=7)
        ax.grid(False)
        cb = fig.colorbar(im, ax=ax, fraction=0.03)
        cb.set_label("relative change, candidate vs baseline (%)")
        ax.set_title(f"{title}\n* = beyond the run-to-run noise threshold; grey: no value in a set (n/a) or"
                     " units that do not convert (unit)", fontsize=8)
        fig.tight_layout()
    return fig
