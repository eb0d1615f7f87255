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

#: Okabe & Ito (2008), "Color Universal Design": distinguishable with any colour-vision deficiency.
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "h"]
STYLE = {
    "figure.dpi": 110, "savefig.dpi": 160, "font.size": 9, "axes.grid": True, "grid.alpha": 0.3,
    "axes.spines.top": False, "axes.spines.right": False, "legend.fontsize": 8, "legend.frameon": False,
    "axes.prop_cycle": matplotlib.cycler(color=OKABE_ITO),
    "pdf.fonttype": 42,
}


def kernel_styles(kernels: list[str]) -> dict[str, dict]:
    """A fixed colour and marker per kernel (sorted by name, so every figure agrees)."""
    return {k: {"color": OKABE_ITO[i % len(OKABE_ITO)], "marker": MARKERS[i % len(MARKERS)]}
            for i, k in enumerate(sorted(kernels))}


def _missing_note(fig, ax, missing: list[str], figure: str) -> None:
    if not missing:
        return
    text = "not in the reports: " + "; ".join(missing)
    warnings.warn(f"{figure}: {text}", stacklevel=3)
    fig.text(0.01, 0.005, text, fontsize=6, color="#555555", ha="left", va="bottom", wrap=True)


def save(fig, png: str | Path, pdf: str | Path) -> None:
    """Write a figure as PNG and PDF (fixed metadata, so reruns give the same bytes), atomically."""
    for path, meta in ((png, {"Software": None}), (pdf, {"CreationDate": None, "Producer": None, "Creator": None})):
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=Path(path).suffix[1:], metadata=meta, bbox_inches="tight")
    plt.close(fig)


def _n_axis(ax, s: pd.DataFrame) -> None:
    """Log2 N axis with a tick per measured N; limits set from N itself, so an axis whose
    points are all missing (NaN) still draws."""
    ns = sorted(int(v) for v in s["n"].dropna().unique())
    ax.set_xscale("log", base=2)
    ax.set_xlim(ns[0] / 1.4, ns[-1] * 1.4)
    ax.set_xlabel("N (M = N = K)")
    ax.set_xticks(ns, [str(v) for v in ns])
    ax.minorticks_off()


def _precisions(df: pd.DataFrame) -> list[str]:
    order = {"fp16": 0, "int8": 1, "int4": 2}
    return sorted(df["precision"].dropna().unique(), key=lambda p: order.get(p, 9))


def occupancy_vs_throughput(s: pd.DataFrame, title: str):
    """(a) Achieved occupancy (sm__warps_active.avg.pct_of_peak_sustained_active, %) against
    throughput, one panel per precision, one marker per kernel, N written beside each point,
    and Spearman's rank correlation over the panel's points (:func:`analysis.study.spearman`)."""
    occ = "sm__warps_active.avg.pct_of_peak_sustained_active"
    precs = _precisions(s)
    styles = kernel_styles(list(s["kernel"].unique()))
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(1, max(len(precs), 1), figsize=(3.6 * max(len(precs), 1), 3.4),
                                 squeeze=False)
        missing = []
        for ax, prec in zip(axes[0], precs):
            sub = s[s["precision"] == prec]
            for kernel, g in sub.groupby("kernel"):
                ok = g[[occ, "throughput"]].notna().all(axis=1)
                missing += [f"{kernel} N={n}" for n in g.loc[~ok, "n"]]
                g = g[ok].sort_values("n")
                ax.plot(g[occ], g["throughput"], linestyle="none", label=kernel, **styles[kernel])
                for _, r in g.iterrows():
                    ax.annotate(f"{int(r['n'])}", (r[occ], r["throughput"]), fontsize=6,
                                xytext=(3, 2), textcoords="offset points")
            from .study import spearman

            rho = spearman(sub[occ], sub["throughput"])
            ax.text(0.02, 0.97, f"Spearman rho = {rho:.2f} (n = {sub[[occ, 'throughput']].dropna().shape[0]})",
                    transform=ax.transAxes, fontsize=7, va="top", gid="spearman")
            unit = sub["throughput_unit"].iloc[0]
            ax.set_xlabel(f"achieved occupancy (% of peak warps)\n{occ}")
            ax.set_ylabel(f"throughput ({unit})")
            ax.set_title(prec.upper())
            ax.set_xlim(0, 100)
            ax.set_ylim(bottom=0)
            ax.legend(loc="best")
        fig.suptitle(f"Achieved occupancy against throughput - {title}")
        _missing_note(fig, axes[0][0], missing, "occupancy_vs_throughput")
        fig.tight_layout()
    return fig


def coalescing(s: pd.DataFrame, title: str):
    """(b) Global-load coalescing per kernel and N: sectors per request (LDGSTS from the
    sm__sass_*ldgsts* counters, all L1TEX global loads from l1tex__t_*global_op_ld) and
    bytes used per sector (LDGSTS from opcode thread counts; LDG from
    smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio where LDG executed)."""
    styles = kernel_styles(list(s["kernel"].unique()))
    with plt.rc_context(STYLE):
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4.0 + 0.12 * s["kernel"].nunique()))
        missing = []
        for kernel, g in s.sort_values("n").groupby("kernel"):
            st = styles[kernel]
            ax1.plot(g["n"], g["ldgsts_sectors_per_request"], label=f"{kernel} LDGSTS", **st)
            ax1.plot(g["n"], g["global_ld_sectors_per_request"], linestyle="--", color=st["color"],
                     marker=st["marker"], markerfacecolor="none", label=f"{kernel} L1TEX global ld")
            ax2.plot(g["n"], g["ldgsts_bytes_per_sector"], label=f"{kernel} LDGSTS", **st)
            ldg = g["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"]
            if ldg.notna().any():
                ax2.plot(g["n"], ldg, linestyle="--", color=st["color"], marker=st["marker"],
                         markerfacecolor="none", label=f"{kernel} LDG")
            if g["ldgsts_sectors_per_request"].isna().all():
                missing.append(f"{kernel}: LDGSTS counters")
            if g["ldgsts_bytes_per_sector"].isna().all():
                missing.append(f"{kernel}: per-opcode thread counts")
        ideal = s["ldgsts_ideal_sectors_per_request"].dropna().unique()
        for v in ideal:
            ax1.axhline(v, color="#555555", linewidth=0.8, linestyle=":")
        if len(ideal):
            ax1.annotate("ideal for the LDGSTS width", (s["n"].min(), ideal[0]), fontsize=6,
                         xytext=(0, 3), textcoords="offset points", color="#555555")
        ax2.axhline(32, color="#555555", linewidth=0.8, linestyle=":")
        for ax in (ax1, ax2):
            _n_axis(ax, s)
        ax1.set_ylabel("sectors per request (sector/request)")
        ax2.set_ylabel("bytes used per sector (byte/sector)")
        ax2.set_ylim(0, 34)
        ax1.set_ylim(bottom=0)
        for ax in (ax1, ax2):
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize=5)
        fig.suptitle(f"Global-load coalescing (cp.async = LDGSTS) - {title}")
        _missing_note(fig, ax1, missing, "coalescing")
        fig.tight_layout()
    return fig


def dram_active(s: pd.DataFrame, title: str):
    """(c) DRAM-active cycles against N: dram__cycles_active.avg (cycle, log scale) and
    dram__cycles_active.avg.pct_of_peak_sustained_elapsed (%); and at the largest N,
    DRAM-active cycles against the profiled launch's gpu__time_duration.sum (ns), one
    point per kernel (gid ``largest_n``)."""
    styles = kernel_styles(list(s["kernel"].unique()))
    cyc, pct, dur = ("dram__cycles_active.avg", "dram__cycles_active.avg.pct_of_peak_sustained_elapsed",
                     "gpu__time_duration.sum")
    largest = s["n"].max()
    with plt.rc_context(STYLE):
        fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(13, 4.6))
        missing = []
        for kernel, g in s.sort_values("n").groupby("kernel"):
            for col in (cyc, pct):
                missing += [f"{kernel} N={n} {col}" for n in g.loc[g[col].isna(), "n"]]
            ax1.plot(g["n"], g[cyc], label=kernel, **styles[kernel])
            ax2.plot(g["n"], g[pct], label=kernel, **styles[kernel])
            big = g[g["n"] == largest]
            ax3.plot(big[dur], big[cyc], linestyle="none", gid="largest_n", label=kernel, **styles[kernel])
        for ax in (ax1, ax2):
            _n_axis(ax, s)
        if (s[cyc] > 0).any():  # log scale needs at least one positive point
            ax1.set_yscale("log")
            ax3.set_yscale("log")
        ax1.set_ylabel(f"DRAM-active cycles (cycle)\n{cyc}")
        ax2.set_ylabel(f"DRAM active (% of elapsed)\n{pct}")
        ax2.set_ylim(0, 100)
        ax3.set_xscale("log")
        ax3.set_xlabel(f"duration of the profiled launch (ns)\n{dur}")
        ax3.set_ylabel(f"DRAM-active cycles (cycle)\n{cyc}")
        ax3.set_title(f"N = {int(largest)}" if pd.notna(largest) else "")
        rows = -(-s["kernel"].nunique() // 6)
        fig.legend(*ax1.get_legend_handles_labels(), loc="lower center", ncol=6, fontsize=6)
        fig.suptitle(f"DRAM-active cycles against N, and against duration at the largest N - {title}")
        _missing_note(fig, ax1, missing, "dram_active")
        fig.tight_layout(rect=(0, min(0.05 + 0.045 * rows, 0.4), 1, 1))
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

