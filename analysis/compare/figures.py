"""The headline figure of a comparison of two profile sets (:func:`headline_figure`), drawn
from a diff table of :func:`analysis.compare.diff.compare_sets`.

One column per launch: a kernel identity (ncu's function name and, where several
instantiations of a template share it, the instantiation), N and the launch's occurrence,
launches in numeric order (#2 before #10). Beyond :data:`MAX_COLUMNS` launch columns, the
launches of one kernel identity and N share one column (their count, the median relative
change and its range), and columns beyond :data:`MAX_COLUMNS` go to further panels below,
so the figure's width stays bounded whatever the number of launches. The colour scale ends
at a high percentile of the changes (:data:`COLOUR_PERCENTILE`), not at the largest one:
cells beyond it are outlined and keep their value written.
"""

from __future__ import annotations

import math
import textwrap
import re

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

#: The most columns a panel holds. Beyond it the launches of one kernel identity and N
#: share a column, and the columns are spread over several panels stacked top to bottom.
MAX_COLUMNS = 40

#: The colour scale ends at this percentile of |relative change| over the drawn cells
#: (numpy's "lower" method: a value of the cells, never an interpolation towards the
#: largest), rounded up to a round number (:data:`ROUND_STEPS`), and at no less than
#: :data:`MIN_LIMIT_PCT`.
COLOUR_PERCENTILE = 95.0

#: The round numbers a colour scale ends at, times a power of ten.
ROUND_STEPS = (1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)

#: The smallest end of the colour scale, in %: the comparison's default threshold.
MIN_LIMIT_PCT = 5.0

#: Width of one column and height of one row, in inches.
CELL_IN = 0.5

#: The longest line of a column label, in characters (longer names are cut in the middle).
LABEL_CHARS = 56

_CAST = re.compile(r"\((?:unsigned |signed )?(?:int|long|long long|short|char|bool)\)(?=-?\d)")


def _argument_list_start(name: str) -> int:
    """Index of the '(' opening the trailing argument list of a demangled signature, or -1."""
    if not name.endswith(")"):
        return -1
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        if name[i] == ")":
            depth += 1
        elif name[i] == "(":
            depth -= 1
            if depth == 0:
                return i
    return -1


def instantiation_name(demangled: str | None, mangled: str | None, kernel: str) -> str:
    """The name that tells one instantiation of a kernel from another: the demangled name
    without its return type (``void``), argument list and integer casts
    (``void warptiling<(int)128, (int)64>(int, float *)`` -> ``warptiling<128, 64>``); the
    mangled name where no demangled one is given; ``kernel`` where neither is."""
    if isinstance(demangled, str) and demangled.strip():
        name = demangled.strip()
        at = _argument_list_start(name)
        if at > 0:
            name = name[:at]
        name = re.sub(r"^void\s+", "", name)
        return _CAST.sub("", name)
    if isinstance(mangled, str) and mangled.strip():
        return mangled.strip()
    return kernel


def _common_prefix(names: list[str]) -> int:
    first, last = min(names), max(names)
    i = 0
    while i < min(len(first), len(last)) and first[i] == last[i]:
        i += 1
    return i


def distinguishing_names(names: list[str], kernel: str, width: int = LABEL_CHARS) -> list[str]:
    """Labels for several instantiations of ``kernel`` (their :func:`instantiation_name`):
    where every name fits in ``width`` characters, the names; else two lines each, the
    kernel name and the part of the name where the instantiations differ, with a few
    characters of context on either side, cut with "..." (at most ``width`` characters)."""
    if all(len(n) <= width for n in names):
        return list(names)
    p = _common_prefix(names)
    q = _common_prefix([n[::-1] for n in names])
    out = []
    for n in names:
        start = max(0, p - 12)
        end = min(len(n), max(p + 1, len(n) - q) + 12)
        part = n[start:end]
        if len(part) > width - 6:
            part, end = part[:width - 6], start + width - 6
        out.append(f"{kernel}\n{'...' if start else ''}{part}{'...' if end < len(n) else ''}")
    return out


def _identity_columns(d: pd.DataFrame) -> list[str]:
    """The columns of a diff that tell kernel identities apart: where present, the report
    part and range of a launch's identity, then ncu's function name and the mangled name."""
    return [c for c in ("source", "range_name") if c in d] + ["kernel", "mangled"]


def _labels(d: pd.DataFrame, ident: list[str]) -> dict[tuple, str]:
    """Kernel identity -> its label: the kernel name, or where several instantiations share
    the kernel name, :func:`distinguishing_names` of their :func:`instantiation_name`
    (from ``demangled`` where the diff has that column, else the mangled name)."""
    cols = ident + (["demangled"] if "demangled" in d else [])
    ids = d[cols].drop_duplicates(subset=ident)
    out: dict[tuple, str] = {}
    for kernel, g in ids.groupby("kernel", sort=False):
        keys = [tuple(r) for r in g[ident].itertuples(index=False)]
        if g["mangled"].nunique() <= 1:
            out.update({k: str(kernel) for k in keys})
            continue
        names = [instantiation_name(r.get("demangled"), r["mangled"], str(kernel))
                 for r in g.to_dict("records")]
        uniq = list(dict.fromkeys(names))
        short = dict(zip(uniq, distinguishing_names(uniq, str(kernel))))
        out.update({k: short[n] for k, n in zip(keys, names)})
    return out


def _fmt(v: float, decimals: int = 1) -> str:
    """A relative change in % as written in a cell: ``+1.2``, ``+24,942``, ``+1.2e+05``; ``0`` for
    no change, and ``-<0.05`` for a change that one decimal would show as ``-0.0`` (the bounds of
    a range, ``decimals`` 0, stay numbers)."""
    a = abs(v)
    if v == 0:
        return "0"
    if decimals >= 1 and a < 0.5 * 10 ** -decimals:
        return f"{'+' if v > 0 else '-'}<{0.5 * 10 ** -decimals:g}"
    if a >= 1e5:
        return f"{v:+.1e}"
    if a >= 1000 or (decimals == 0 and a >= 10):
        return f"{v:+,.0f}"
    return f"{v:+.{decimals}f}"


def headline_columns(diff: pd.DataFrame, max_columns: int = MAX_COLUMNS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """What :func:`headline_figure` draws, as two tables.

    Args:
        diff: a comparison (:func:`analysis.compare.diff.compare_sets`); rows of the
            :data:`HEADLINE` metrics present in both sets are used. Optional columns
            ``demangled``, ``source`` and ``range_name`` refine the kernel identity.
        max_columns: beyond this many launch columns, the launches of one kernel identity
            and N share one column.

    Returns:
        ``(columns, cells)``. ``columns``: one row per column in drawing order, with
        ``col`` (int, 0...), ``label`` (the tick label, lines joined by newlines),
        ``launches`` (int, launches the column holds), ``pooled`` (bool, True for a
        column of several launches) and ``shape`` (bool, True where a launch of the column
        was matched with one of another grid or block: ``match`` holds
        :data:`analysis.compare.diff.SHAPE_NOTE`; its label's first line ends in " †").
        ``cells``: one row per (metric, column) with a value: ``metric``, ``col``, ``value`` (relative change in %, float: the
        launch's, or the median over the column's launches that have one; NaN where
        none has), ``low`` and ``high`` (the range over the launches, %), ``flagged``
        (int, launches flagged) and ``status`` (the launch's status; for a pooled column
        the most common one).
    """
    d = diff[diff["metric"].isin(HEADLINE) & ~diff["status"].isin(["only in baseline", "only in candidate"])].copy()
    empty_cols = pd.DataFrame({"col": pd.Series(dtype="int64"), "label": pd.Series(dtype="object"),
                               "launches": pd.Series(dtype="int64"), "pooled": pd.Series(dtype="bool"),
                               "shape": pd.Series(dtype="bool")})
    empty_cells = pd.DataFrame({c: pd.Series(dtype=t) for c, t in (
        ("metric", "object"), ("col", "int64"), ("value", "float64"), ("low", "float64"), ("high", "float64"),
        ("flagged", "int64"), ("status", "object"))})
    if d.empty:
        return empty_cols, empty_cells
    if "mangled" not in d:
        d["mangled"] = d["kernel"]
    d["mangled"] = d["mangled"].fillna(d["kernel"])
    if "occurrence" not in d:
        d["occurrence"] = 0
    d["occurrence"] = pd.to_numeric(d["occurrence"], errors="coerce").fillna(0).astype("int64")
    d["_n"] = pd.to_numeric(d["n"], errors="coerce").fillna(-1).astype("int64")
    ident = _identity_columns(d)
    for c in ident:  # group keys without NA (groupby drops NA keys by default)
        d[c] = d[c].astype("object").where(d[c].notna(), "")
    labels = _labels(d, ident)
    d["_label"] = [labels[tuple(k)] for k in d[ident].itertuples(index=False)]
    launch_keys = ident + ["_n", "occurrence"]
    n_launch_cols = d[launch_keys].drop_duplicates().shape[0]
    pool = n_launch_cols > max_columns
    col_keys = ident + ["_n"] + ([] if pool else ["occurrence"])
    launches_per = d[ident + ["_n", "occurrence"]].drop_duplicates().groupby(ident + ["_n"]).size()

    cols = d[col_keys + ["_label"]].drop_duplicates(subset=col_keys)
    cols = cols.assign(_occ=cols["occurrence"] if not pool else 0)
    cols = cols.sort_values(["kernel", "_label", "_n", "_occ"] + ident, kind="stable").reset_index(drop=True)
    cols["col"] = np.arange(len(cols))
    k = launches_per.reindex(pd.MultiIndex.from_frame(cols[ident + ["_n"]])).to_numpy()
    cols["launches"] = k.astype("int64") if pool else 1
    cols["pooled"] = cols["launches"] > 1
    several = k > 1  # a kernel identity with several launches at this N: number them

    def label(row, many: bool) -> str:
        lines = [row["_label"]]
        n = f"N={row['_n']}" if row["_n"] >= 0 else ""
        if row["pooled"]:
            lines.append(", ".join(x for x in (n, f"{row['launches']} launches") if x))
        else:
            tail = ", ".join(x for x in (n, f"#{row['_occ']}" if many else "") if x)
            if tail:
                lines.append(tail)
        return "\n".join(lines)

    cols["label"] = [label(r, bool(m)) for r, m in zip(cols.to_dict("records"), several)]
    extra = [c for c in ("source", "range_name") if c in ident]
    twins = cols["label"].duplicated(keep=False)
    if extra and twins.any():  # columns alike but for the report or range: name it
        where = cols.loc[twins, extra].apply(lambda r: ", ".join(str(v) for v in r if v != ""), axis=1)
        cols.loc[twins, "label"] = cols.loc[twins, "label"] + "\n" + where.str.slice(0, LABEL_CHARS)
    d = d.merge(cols[col_keys + ["col"]], on=col_keys, how="left")
    from analysis.compare.diff import SHAPE_NOTE

    shaped = (set(d.loc[d["match"].astype("string").str.contains(SHAPE_NOTE, regex=False).fillna(False), "col"])
              if "match" in d else set())
    cols["shape"] = cols["col"].isin(shaped)
    cols.loc[cols["shape"], "label"] = cols.loc[cols["shape"], "label"].str.replace(r"^([^\n]*)", r"\1 †", n=1,
                                                                                    regex=True)
    d["_v"] = d["rel_change"].astype("float64") * 100
    d["_f"] = d["flagged"].fillna(False).astype(bool).astype("int64")
    g = d.groupby(["metric", "col"], sort=False)
    cells = g["_v"].agg(value="median", low="min", high="max").reset_index()
    cells["flagged"] = g["_f"].sum().to_numpy()
    cells["status"] = g["status"].agg(lambda s: s.value_counts().index[0]).to_numpy()
    return cols[["col", "label", "launches", "pooled", "shape"]], cells


def round_up(x: float) -> float:
    """The smallest number of :data:`ROUND_STEPS` times a power of ten that is >= ``x``
    (``x`` > 0): 94.7 -> 100, 11.2 -> 15, 0.31 -> 0.4."""
    scale = 10.0 ** math.floor(math.log10(x))
    for step in ROUND_STEPS:
        if step * scale >= x * (1 - 1e-12):
            return step * scale
    return 10 * scale


def colour_limit(values: np.ndarray) -> tuple[float, float]:
    """The end of the colour scale for cells of these relative changes (%), and the
    percentile it comes from: the :data:`COLOUR_PERCENTILE` percentile of |value| over the
    finite values (numpy's "lower" method, so the largest value alone never sets it),
    rounded up (:func:`round_up`), at least :data:`MIN_LIMIT_PCT`. ``(MIN_LIMIT_PCT, nan)``
    without a finite value."""
    v = np.abs(np.asarray(values, dtype="float64"))
    v = v[np.isfinite(v)]
    if v.size == 0:
        return MIN_LIMIT_PCT, math.nan
    pct = float(np.percentile(v, COLOUR_PERCENTILE, method="lower"))
    return (max(MIN_LIMIT_PCT, round_up(pct)) if pct > 0 else MIN_LIMIT_PCT), pct


def threshold_note(diff: pd.DataFrame, min_rel: float | None = None) -> str:
    """Where the thresholds of a comparison's headline rows (:data:`HEADLINE`, both sides
    valued) came from, for the figure's note: each ``noise_source`` with its range of
    ``threshold_rel`` in %, e.g. ``noise model of SET: 2-546 %; min_rel: 0.5 %; none:
    default_rel: 5 %``; "none" where no such row has a threshold. A row with a noise whose
    threshold is ``min_rel`` (default :class:`analysis.compare.diff.Thresholds`' own) was
    held at that floor (threshold = max(noise_factor x noise, min_rel)) and counts as
    ``min_rel``, not as its noise's source."""
    import numpy as np

    from analysis.compare.diff import Thresholds

    floor = Thresholds().min_rel if min_rel is None else min_rel
    d = diff[diff["metric"].isin(HEADLINE) & diff["threshold_rel"].notna()
             & diff["value_baseline"].notna() & diff["value_candidate"].notna()]
    at_floor = d["noise_rel"].notna() & np.isclose(d["threshold_rel"], floor, rtol=1e-9, atol=0)
    source = d["noise_source"].astype("string").where(~at_floor, "min_rel")
    parts = []
    for name, g in d.groupby(source, sort=True):
        lo, hi = 100 * g["threshold_rel"].min(), 100 * g["threshold_rel"].max()
        parts.append(f"{name}: {lo:.3g} %" if f"{lo:.3g}" == f"{hi:.3g}" else f"{name}: {lo:.3g}-{hi:.3g} %")
    return "; ".join(parts) or "none"


def unmatched_launches(diff: pd.DataFrame) -> tuple[int, int]:
    """Launches of the baseline and of the candidate that have no partner in the other set
    (their rows' ``match`` is none of :data:`analysis.compare.diff.MATCHED_BY`: ``only in ...``
    or ``not matched: ...``), counted once each by their identity
    (:data:`analysis.compare.diff.LAUNCH_KEYS`) and report. (0, 0) for a table without the
    ``match`` column."""
    from analysis.compare.diff import LAUNCH_KEYS, MATCHED_BY

    if "match" not in diff or diff.empty:
        return 0, 0
    alone = diff[~diff["match"].isin(MATCHED_BY)]
    ids = [c for c in LAUNCH_KEYS if c in alone]
    counts = []
    for side, other in (("baseline", "candidate"), ("candidate", "baseline")):
        rows = alone[alone[f"report_{other}"].isna() & alone[f"report_{side}"].notna()]
        counts.append(len(rows.drop_duplicates(ids + [f"report_{side}"])))
    return counts[0], counts[1]


def headline_figure(diff: pd.DataFrame, title: str, max_columns: int = MAX_COLUMNS,
                    min_rel: float | None = None):
    """Relative change of the headline metrics (:data:`HEADLINE`) per kernel identity, N and
    launch, as a heat map in %, every cell annotated with its value.

    Columns (:func:`headline_columns`): one per launch in numeric launch order, the
    instantiations of one template apart; beyond ``max_columns`` launch columns one per
    kernel identity and N with its launch count, the cell giving the median and, below it,
    the range over the launches. Panels of at most ``max_columns`` columns are stacked, so
    the figure is at most about ``max_columns`` x :data:`CELL_IN` inches plus its labels
    wide. The colour scale is symmetric, ending at :func:`colour_limit` of the cells;
    cells beyond it are outlined (gid ``clipped``) and keep their value. A flagged cell's
    value is bold and starred; grey cells have no value on a side (n/a) or units that do
    not convert (unit). Values are written in white on the dark ends of the colour scale
    (luma 0.2126 R + 0.7152 G + 0.0722 B of the cell's colour under 0.4), black elsewhere.
    The note under it says where the thresholds came from (:func:`threshold_note`, with
    ``min_rel`` the comparison's floor) and how many launches of each set have no partner
    (:func:`unmatched_launches`), which no column shows.

    Returns:
        A matplotlib Figure (the project's STYLE); a small one saying so where the two
        sets share no kernel, N and headline metric.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    from analysis.study.figures import STYLE

    cols, cells = headline_columns(diff, max_columns)
    rows = [m for m in HEADLINE if m in set(cells["metric"])]
    if not rows or cols.empty:  # nothing the two sets share
        with plt.rc_context(STYLE):
            fig, ax = plt.subplots(figsize=(6, 2.5), layout="constrained")
            ax.axis("off")
            ax.text(0.5, 0.5, "the two sets share no kernel, N and headline metric", ha="center", va="center")
            ax.set_title(title, fontsize=8)
        return fig
    n_cols = len(cols)
    panels = math.ceil(n_cols / max_columns)
    per = math.ceil(n_cols / panels)
    grid = cells.pivot(index="metric", columns="col", values="value").reindex(index=rows, columns=cols["col"])
    lim, pct = colour_limit(grid.to_numpy())
    finite = grid.to_numpy()[np.isfinite(grid.to_numpy())]
    extend = {(False, False): "neither", (True, False): "min", (False, True): "max", (True, True): "both"}[
        (bool((finite < -lim).any()), bool((finite > lim).any()))]
    by_cell = cells.set_index(["metric", "col"])
    pooled = bool(cols["pooled"].any())
    longest = max(len(line) for lab in cols["label"] for line in lab.split("\n"))
    label_in = 0.6 + 6 / 72 * 0.62 * min(longest, LABEL_CHARS + 6)  # rotated tick labels, 6 pt
    panel_h = CELL_IN * len(rows) + label_in + 0.3
    width = max(6.0, CELL_IN * per + 5.2)
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(panels, 1, figsize=(width, panels * panel_h + 1.0), squeeze=False,
                                 layout="constrained")
        axes = axes[:, 0]
        cmap = matplotlib.colormaps["PuOr_r"].with_extremes(bad="#BBBBBB")
        im = None
        for p, ax in enumerate(axes):
            sub = cols.iloc[p * per:(p + 1) * per]
            block = grid[sub["col"]].to_numpy()
            # pad a short last panel so that its cells are as wide as the others'
            pad = per - block.shape[1]
            shown = np.hstack([block, np.full((len(rows), pad), np.nan)]) if pad else block
            im = ax.imshow(shown, cmap=cmap, vmin=-lim, vmax=lim, aspect="auto")
            if pad:  # the padding is no cell: white, not the grey of a cell without a value
                ax.add_patch(Rectangle((block.shape[1] - 0.5, -0.5), pad, len(rows), facecolor="white",
                                       edgecolor="none", zorder=2))
            for i, metric in enumerate(rows):
                for j, c in enumerate(sub["col"]):
                    if (metric, c) not in by_cell.index:
                        continue
                    cell = by_cell.loc[(metric, c)]
                    v = cell["value"]
                    if np.isnan(v):  # grey: no value on a side, or units that do not convert
                        st = cell["status"]
                        if isinstance(st, str) and st != "unchanged":
                            ax.text(j, i, "unit" if st == "unit changed" else "n/a", ha="center", va="center",
                                    fontsize=5, color="#333333")
                        continue
                    f = int(cell["flagged"]) > 0
                    clipped = abs(v) > lim
                    r, g, b, _ = im.cmap(im.norm(v))
                    ink = "#FFFFFF" if 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.4 else "#000000"
                    text = _fmt(v) + ("*" if f else "")
                    size = 5.5
                    if cols.at[c, "pooled"] and cell["low"] != cell["high"]:
                        text += f"\n{_fmt(cell['low'], 0)}..{_fmt(cell['high'], 0)}"
                        size = 4.5
                    ax.text(j, i, text, ha="center", va="center", fontsize=size, linespacing=1.1,
                            fontweight="bold" if f else "normal", color=ink, gid="clipped" if clipped else None)
                    if clipped:
                        ax.add_patch(Rectangle((j - 0.46, i - 0.46), 0.92, 0.92, fill=False, edgecolor="#000000",
                                               linewidth=0.9, zorder=3, gid="clipped"))
            ax.set_xticks(range(len(sub)), list(sub["label"]), rotation=90, fontsize=6)
            ax.set_xlim(-0.5, per - 0.5)
            ax.set_yticks(range(len(rows)), rows, fontsize=7)
            ax.grid(False)
        cb = fig.colorbar(im, ax=list(axes), fraction=0.03 if panels == 1 else 0.015, extend=extend)
        cb.set_label("relative change (%),\ncandidate vs baseline", fontsize=6)
        notes = [f"* = beyond the row's threshold ({threshold_note(diff, min_rel)}); "
                 "grey: no value in a set (n/a) or units that do not convert (unit)",
                 f"colour scale ends at \u00b1{lim:,g} % (the {COLOUR_PERCENTILE:g}th percentile of |change|, {pct:,.3g} %,"
                 f" rounded up; at least {MIN_LIMIT_PCT:g} %); outlined cells lie beyond it, their value written"]
        if cols["shape"].any():
            notes.append("\u2020 = launches of other shapes (grid or block) matched by name: not the same work, so "
                         "their change is not that of one kernel across versions (changes.csv, match)")
        if pooled:
            notes.append(f"{int(cols['launches'].sum())} launches in {n_cols} column{'s' * (n_cols != 1)}: a column of "
                         "several launches gives their median and, below, their range; * = at least one launch flagged")
        alone_b, alone_c = unmatched_launches(diff)
        if alone_b or alone_c:
            notes.append(f"not drawn: {alone_b} launch{'es' * (alone_b != 1)} of the baseline and {alone_c} of the "
                         "candidate without a partner in the other set (statuses.csv: launch not in the other set)")
        # the figure's title, over the whole width (a narrow grid of few columns left the
        # notes running into the colour bar), each note wrapped to that width (7 pt type:
        # about 0.55 of its size per character)
        chars = max(40, int(width * 72 / (7 * 0.55)))
        wrapped = [textwrap.fill(n, chars) for n in notes]
        fig.suptitle(title + "\n" + "\n".join(wrapped), fontsize=7)
    return fig
