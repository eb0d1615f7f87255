"""The study's figures beyond the per-set ones of :mod:`analysis.study.figures`, each drawn from
the tables of :mod:`analysis.study.claims` (so a test can hold the plotted data against them).

Every function returns a matplotlib Figure; :func:`analysis.study.figures.save` writes PNG and PDF.
"""

from __future__ import annotations

import functools

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis.study.figures import OKABE_ITO, STYLE, _legend_below, _metric_note, _n_axis, kernel_styles, panel_groups
from analysis.study.claims import CEILING_OF, LIBRARY
from analysis.precision import SAME_OUTPUT_NAMES, TRITON_NAMES

UNIT = {"fp16": "TFLOP/s", "int8": "TOP/s", "int4": "TOP/s"}
#: The reference GEMMs the throughput figure draws at each N, in this order: (the references.csv
#: name of each precision's, line style, line width, what the legend says it is).
REFERENCE_LINES = (
    (LIBRARY, "--", 1.2, "vendor library"),
    (SAME_OUTPUT_NAMES, (0, (5, 1, 1, 1, 1, 1)), 1.0, "vendor library, C in FP32"),
    (TRITON_NAMES, "-.", 1.2, "Triton, autotuned"),
)


def _with_n(df: pd.DataFrame) -> pd.DataFrame:
    """The rows that have an N: a figure with an N axis has no place for launches of an
    unknown N (reports named other than {kernel}_n{N...}, read with N = NA); they stay in
    the tables and in the figures that need no N."""
    return df[df["n"].notna()]


def _ratio_lines(ax, df: pd.DataFrame, column: str, styles: dict, label=lambda kernel, g: kernel) -> None:
    """One line per kernel of ``column`` against N (rows with an N), a reference line at 1
    and the N axis."""
    df = _with_n(df)
    for kernel, g in df.sort_values("n").groupby("kernel"):
        ax.plot(g["n"], g[column], label=label(kernel, g), **styles[kernel])
    ax.axhline(1.0, color="#555555", linewidth=0.8)
    if len(df):
        _n_axis(ax, df)


def _panels(n: int, width: float = 3.8, height: float = 3.4):
    fig, axes = plt.subplots(1, max(n, 1), figsize=(width * max(n, 1), height), squeeze=False, layout="constrained")
    return fig, axes[0]


#: The ceilings drawn on each precision's panels (the kernel summary's :data:`CEILING_OF`):
#: INT4 panels also show the s8 ceilings, the bound of a kernel that unpacks INT4 to INT8
#: and multiplies with s8 MMAs.
CEILING_PRECISIONS = CEILING_OF


def _ceilings(references: pd.DataFrame, prec: str) -> pd.DataFrame:
    """The tensor ceilings (references.csv rows of kind ``ceiling``) for a precision's panel:
    of each precision and instruction (``peak_mma_*``: mma.sync; ``peak_wgmma_*``: wgmma,
    measured with several warpgroups per SM) the highest measured one."""
    rows = references[(references["kind"] == "ceiling")
                      & references["precision"].isin(CEILING_PRECISIONS.get(prec, (prec,)))]
    if rows.empty:
        return rows
    family = rows["name"].str.extract(r"^(peak_[a-z]+)", expand=False).fillna(rows["name"])
    return rows.loc[rows.groupby([rows["precision"], family])["rate"].idxmax().sort_values()]


@functools.lru_cache(maxsize=1)
def _datasheet_peaks() -> pd.DataFrame:
    """analysis/data/datasheet_peaks.csv, read once per process."""
    from importlib import resources

    with resources.files("analysis").joinpath("data/datasheet_peaks.csv").open(encoding="utf-8") as fh:
        return pd.read_csv(fh)


def datasheet_peaks(summary: pd.DataFrame, prec: str) -> pd.DataFrame:
    """The dense tensor peaks NVIDIA's datasheets give for the set's GPU and ``prec``
    (``analysis/data/datasheet_peaks.csv``: gpu, precision, rate, unit, source); empty for
    a GPU or precision the file does not list."""
    peaks = _datasheet_peaks()
    gpus = set(summary["gpu"].dropna()) if "gpu" in summary else set()
    return peaks[peaks["gpu"].isin(gpus) & (peaks["precision"] == prec)]


def fastest_line(summary: pd.DataFrame) -> str:
    """'Fastest at N = <largest>: <kernel> <rate> <unit>' per precision, from the summary."""
    n = summary["n"].max()
    big = summary[(summary["n"] == n) & summary["throughput"].notna() & summary["precision"].notna()]
    parts = []
    for prec in ("fp16", "int8", "int4"):
        g = big[big["precision"] == prec]
        if len(g):
            r = g.loc[g["throughput"].idxmax()]
            parts.append(f"{prec.upper()} {r['kernel']} {r['throughput']:.0f} {r['throughput_unit']}")
    return f"fastest at N = {int(n)}: " + "; ".join(parts) if parts else ""


def throughput(summary: pd.DataFrame, references: pd.DataFrame | None, title: str):
    """Event-timed throughput against N, one panel per precision, error bars from the 25th
    to 75th percentile of the timings; the vendor library at each N (dashed, black), the
    vendor GEMM writing C in the kernels' dtype where measured (dash-dot-dot, SAME_OUTPUT_NAMES), the
    Triton GEMM where measured (dash-dot), the measured ceilings of the precision (dotted
    lines, each named by the loop kernel and so the instruction it bounds: mma.sync, and
    wgmma on Hopper; see CEILING_PRECISIONS) from references.csv, and the datasheet's dense
    peak of the GPU (long dashes, :func:`datasheet_peaks`). Launches of an unknown N are left out (:func:`_with_n`)."""
    styles = kernel_styles(list(summary["kernel"].unique()))
    summary = _with_n(summary)
    ops = 2.0 * summary["n"].astype("float64") ** 3
    s = summary.assign(t_lo=ops / summary["p75_ns"] / 1e3, t_hi=ops / summary["p25_ns"] / 1e3)
    groups = [g for g in panel_groups(s) if g[1] is not None]
    with plt.rc_context(STYLE):
        fig, axes = _panels(len(groups), 3.6, 5.0)
        for ax, (name, prec, sub) in zip(axes, groups):
            for kernel, g in sub.sort_values("n").groupby("kernel"):
                ax.errorbar(g["n"], g["throughput"], yerr=[g["throughput"] - g["t_lo"], g["t_hi"] - g["throughput"]],
                            label=kernel, capsize=2, markersize=4, linewidth=1, **styles[kernel])
            if references is not None and len(references):
                for names, style, width, what in REFERENCE_LINES:
                    ref = references[(references["name"] == names.get(prec)) & (references["n"] > 0)].sort_values("n")
                    if len(ref):
                        ax.plot(ref["n"], ref["rate"], color="#000000", linestyle=style, linewidth=width,
                                label=f"{names[prec]} ({what})")
                for r in _ceilings(references, prec).itertuples():
                    ax.axhline(r.rate, color="#555555", linestyle=":", linewidth=1)
                    ax.annotate(f"{r.name}: {r.rate:.0f} {r.unit}", (0.02, r.rate), xycoords=("axes fraction", "data"),
                                fontsize=6, xytext=(0, 2), textcoords="offset points", color="#555555")
            for r in datasheet_peaks(summary, prec).itertuples():
                ax.axhline(r.rate, color="#999999", linestyle=(0, (6, 3)), linewidth=1)
                ax.annotate(f"{r.gpu} datasheet, dense: {r.rate:.1f} {r.unit}", (0.98, r.rate), ha="right",
                            xycoords=("axes fraction", "data"), fontsize=6, xytext=(0, -8), textcoords="offset points",
                            color="#777777")
            _n_axis(ax, sub)
            ax.set_yscale("log")
            ax.set_ylabel(f"throughput ({UNIT[prec]})")
            ax.set_title(name)
            _legend_below(ax)
        fig.suptitle(f"Throughput (2N^3 / median event time, IQR bars) - {title}\n{fastest_line(summary)}",
                     fontsize=9)
        _metric_note(fig, "CUDA-event timings (timings.csv)", "references.csv")
    return fig


def speedup(sp: pd.DataFrame, title: str):
    """Speedups (ratio of medians) against N: left, each PTX kernel over its WMMA baseline,
    one panel per precision; right, the fastest INT8 and INT4 kernels over fp16_wmma."""
    base = sp[sp["comparison"] == "vs_baseline"]
    groups = [g for g in panel_groups(base) if g[1] is not None]
    styles = kernel_styles(list(sp["kernel"].unique()))
    with plt.rc_context(STYLE):
        fig, axes = _panels(len(groups) + 1, 3.4, 4.8)
        for ax, (name, _prec, sub) in zip(axes, groups):
            _ratio_lines(ax, sub, "speedup", styles)
            refs = ", ".join(sorted(sub["reference"].unique()))
            ax.set_ylabel(f"speedup over {refs} (x)")
            ax.set_title(name)
            _legend_below(ax)
        ax = axes[-1]
        _ratio_lines(ax, sp[sp["comparison"] == "vs_fp16_wmma"], "speedup", styles,
                     lambda kernel, g: f"{kernel} / fp16_wmma")
        ax.set_ylabel("speedup over fp16_wmma (x)")
        ax.set_title("fastest INT8 / INT4 at the largest N")
        _legend_below(ax, ncol=1)
        fig.suptitle(f"Speedup (ratio of median event times) - {title}", fontsize=9)
        _metric_note(fig, "CUDA-event timings (timings.csv)")
    return fig


def instructions(ratios: pd.DataFrame, static: pd.DataFrame | None, arch: str | None, title: str):
    """Top: executed warp instructions (smsp__inst_executed.sum) relative to the kernel's
    baseline at each N, one panel per precision (:func:`analysis.study.figures.panel_groups`).
    Bottom: the static SASS instruction classes of the same kernels for ``arch``
    (cuobjdump -sass), stacked."""
    styles = kernel_styles(list(ratios["kernel"].unique()))
    groups = [g for g in panel_groups(ratios) if g[1] is not None]
    with plt.rc_context(STYLE):
        fig = plt.figure(figsize=(3.3 * max(len(groups), 3), 9.0), layout="constrained")
        top, bottom = fig.subfigures(2, 1, height_ratios=[1.1, 1])
        axes = top.subplots(1, max(len(groups), 1), squeeze=False)[0]
        for ax, (name, _prec, sub) in zip(axes, groups):
            _ratio_lines(ax, sub, "ratio", styles, lambda kernel, g: f"{kernel} / {g['baseline'].iloc[0]}")
            ax.set_yscale("log")
            ax.set_ylabel("executed instructions / baseline's (x)")
            ax.set_title(name)
            _legend_below(ax, 6, ncol=1)
        ax2 = bottom.subplots()
        if static is not None and len(static):
            st = static[(static["arch"] == arch) & static["kernel"].isin(set(ratios["kernel"]) | set(ratios["baseline"]))]
            st = st.sort_values(["precision", "kernel"])
            cols = [c for c in st.columns if c.startswith("static_") and c != "static_total"]
            bottom_y = np.zeros(len(st))
            for i, c in enumerate(cols):
                ax2.barh(range(len(st)), st[c], left=bottom_y, color=OKABE_ITO[i % len(OKABE_ITO)],
                         hatch="//" if i >= len(OKABE_ITO) else None, label=c.removeprefix("static_").replace("_", " "))
                bottom_y += st[c].to_numpy()
            ax2.set_yticks(range(len(st)), [k + (" (emulated)" if e else "") for k, e in zip(st["kernel"], st["emulated"])],
                           fontsize=6)
            ax2.invert_yaxis()
            ax2.set_xlabel(f"static SASS instructions ({arch}) (instruction)")
            ax2.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=6)
        fig.suptitle(f"Executed instructions against the baseline, and the static SASS mix - {title}", fontsize=9)
        _metric_note(fig, "smsp__inst_executed.sum", "cuobjdump -sass")
    return fig


def ablation(sp: pd.DataFrame, title: str):
    """The INT4 k64 ablation: each single-knob variant's speedup over int4_ptx_mma_k64
    (ratio of medians) against N; 1 = no change, below 1 = the knob slows it down."""
    ab = sp[sp["comparison"] == "ablation"]
    styles = kernel_styles(list(ab["kernel"].unique()))
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(5.5, 4.6), layout="constrained")
        _ratio_lines(ax, ab, "speedup", styles)
        ax.set_ylabel("speedup over int4_ptx_mma_k64 (x)")
        _legend_below(ax)
        fig.suptitle(f"INT4 k64 ablation, one knob at a time - {title}", fontsize=9)
        _metric_note(fig, "CUDA-event timings (timings.csv)")
    return fig


def roofline(rl: pd.DataFrame, references: pd.DataFrame | None, title: str):
    """Roofline per precision: achieved rate (2N^3 / gpu__time_duration.sum) against
    arithmetic intensity (2N^3 / DRAM bytes, Nsight Compute's dram__bytes_read/write.sum),
    under the measured ceilings (mma.sync loop; DRAM copy) and ncu's DRAM peak."""
    styles = kernel_styles(list(rl["kernel"].unique()))
    groups = [g for g in panel_groups(rl) if g[1] is not None]
    with plt.rc_context(STYLE):
        fig, axes = _panels(len(groups), 3.6, 5.6)
        for ax, (name, prec, sub) in zip(axes, groups):
            sub = sub.dropna(subset=["intensity_op_per_byte", "achieved"])
            for kernel, g in sub.sort_values("n").groupby("kernel"):
                ax.plot(g["intensity_op_per_byte"], g["achieved"], label=kernel, linewidth=0.8, **styles[kernel])
            x = np.logspace(np.log10(max(sub["intensity_op_per_byte"].min() / 3, 1e-3)),
                            np.log10(sub["intensity_op_per_byte"].max() * 3), 50) if len(sub) else np.array([1.0, 10.0])
            peak = sub["ncu_dram_peak_tb_s"].median() if len(sub) else np.nan
            if np.isfinite(peak):
                ax.plot(x, peak * x, color="#555555", linestyle="-.", linewidth=0.8,
                        label=f"ncu DRAM peak {peak:.2f} TB/s")
            if references is not None and len(references):
                copy = references[references["name"] == "dram_copy"]
                for r in _ceilings(references, prec).itertuples():
                    ax.axhline(r.rate, color="#000000", linestyle=":", linewidth=1, label=f"{r.name} {r.rate:.0f} {r.unit}")
                if len(copy):
                    bw = copy["rate"].iloc[0]
                    ax.plot(x, bw * x, color="#000000", linestyle="--", linewidth=1,
                            label=f"DRAM copy {bw:.2f} TB/s (measured)")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("arithmetic intensity (op/byte of DRAM traffic)")
            ax.set_ylabel(f"achieved ({UNIT[prec]})")
            ax.set_title(name)
            _legend_below(ax, 6, ncol=1)
        fig.suptitle(f"Roofline from Nsight Compute metrics under the measured ceilings - {title}", fontsize=9)
        _metric_note(fig, "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
                     "dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second")
    return fig
