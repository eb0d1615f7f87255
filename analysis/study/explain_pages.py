"""The explanation pages as Markdown: one per pair of launches (:func:`pair_page`), and per
set its findings (:func:`findings_page`) and source hot spots (:func:`hotspots_page`).
Every number is a cell of the tables the pages are written beside."""

from __future__ import annotations

import math
import re

import pandas as pd

from analysis.reports.hotspots import SAMPLES, SUMMED
from analysis.study.evidence import DurationChange, Launch
from analysis.study.explain import Explanation, STALL_MEANING, findings_change
from analysis.study.targets import to_markdown

#: Parts listed one by one on a page; the rest are summed in one row.
TOP_PARTS = 12

#: What a page without parts (not decomposed) says of how to read it; HOW_TO_READ adds the parts.
HOW_TO_READ_BASE = "How this is computed and how to read it: docs/explanations.md."
HOW_TO_READ = (HOW_TO_READ_BASE + " Parts add up to the change of "
               "Nsight Compute's duration; 'beyond noise' means larger than 3 standard deviations of the part's "
               "own metric noise.")


def _n(v: float, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if v != 0 and (abs(v) >= 1e6 or abs(v) < 1e-3):
        return f"{v:.{digits - 1}e}"
    return f"{v:,.{digits}g}" if abs(v) < 1e4 else f"{v:,.0f}"


def _ns(v: float, sign: str = "") -> str:
    """A duration in ns as the pages write it: thousands separated, no fraction, ``sign`` ``+``
    for a change (so ``+1,280`` beside ``-4,416``), never in exponent notation; ``n/a`` for NaN."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v:{sign},.0f}"


def _md_table(df: pd.DataFrame) -> str:
    """:func:`analysis.study.targets.to_markdown`, or ``(none)`` for a table without rows."""
    return "(none)\n" if df.empty else to_markdown(df)


def _beyond(v) -> str:
    return "unknown" if pd.isna(v) else ("yes" if v else "no")


def verdict(change: DurationChange, decomposed: bool = True) -> str:
    """One sentence on whether the duration changed beyond noise, and what the parts below are
    (none where the change is not ``decomposed``)."""
    if change.beyond_noise is True:
        return ("The duration changed beyond noise; the parts below account for Nsight Compute's duration change."
                if decomposed else "The duration changed beyond noise; it is not decomposed (below).")
    if change.beyond_noise is False:
        return ("The duration did not change beyond noise. The parts below are what the counters moved; "
                "they do not explain a change in duration." if decomposed
                else "The duration did not change beyond noise.")
    return ("Whether the duration changed beyond noise is unknown ("
            + (change.method if change.method.startswith("no duration") else "no timing or noise for one side")
            + ").")


def top_items(parts: pd.DataFrame, k: int = 3) -> str:
    """The ``k`` largest parts beyond noise as one line: ``stall: barrier -970.3 us, ...``; a part
    under 100 ns in ns (``stall: misc -3.2 ns``), which one decimal of us showed as ``-0.0 us``."""
    rows = parts[(parts["beyond_noise"] == True) & (parts["group"] != "residual")].head(k)  # noqa: E712
    return ", ".join(f"{r.item} {r.ns / 1e3:+,.1f} us" if abs(r.ns) >= 100 else f"{r.item} {r.ns:+,.1f} ns"
                     for r in rows.itertuples()) or "no part beyond noise"


def pair_page(title: str, a: Launch, b: Launch, e: Explanation, parts: pd.DataFrame, change: DurationChange,
              note: str = "", figure: str = "", level: int = 1) -> str:
    """The Markdown page of one pair: duration change and verdict, ranked parts, parts by
    group, the counters behind them, and ncu's findings that appear, disappear or change.

    Args:
        title: the page's heading.
        a, b: the two launches (a is the reference).
        e, parts: :func:`analysis.study.explain.explain_pair` of them and its
            :func:`analysis.study.explain.parts_table`.
        change: :func:`analysis.study.evidence.duration_change` of them.
        note: a line under the heading (the registry's ``change:`` of the kernel).
        figure: the file name of the pair's waterfall figure, linked where given.
        level: the heading level of the title (its sections one below).
    """
    h = "#" * (level + 1)
    out = [f"{'#' * level} {title}\n"]
    if note:
        out.append(f"{note}\n")
    delta = e.ncu_b_ns - e.ncu_a_ns
    out.append(f"- Reference (a): {a.label}; candidate (b): {b.label}.")
    out.append(f"- Duration b / a: {change.text()}.")
    pct = f"{delta / e.ncu_a_ns * 100:+.2f} %" if e.ncu_a_ns > 0 else "n/a"
    out.append(f"- Nsight Compute duration: {_ns(e.ncu_a_ns)} -> {_ns(e.ncu_b_ns)} ns ({_ns(delta, '+')} ns, "
               f"{pct}).\n")
    out.append(verdict(change, decomposed=not e.missing) + "\n")
    if figure:
        out.append(f"![waterfall]({figure})\n")
    if e.missing:
        def listed(ms: list[str]) -> str:
            return ", ".join(f"`{m}`" for m in ms)

        la, lb = e.lacking.get("a", []), e.lacking.get("b", [])
        if not e.lacking:
            who = "a side lacks " + listed(e.missing)
        elif la == lb:
            who = "both sides lack " + listed(la)
        else:
            who = "; ".join(f"the {side} lacks {listed(ms)}"
                            for side, ms in (("reference (a)", la), ("candidate (b)", lb)) if ms)
        out.append("Not decomposed: " + who
                   + " (a report without the full section set, or of an older Nsight Compute).\n")
    else:
        out.append(f"{h} What accounts for the change\n")
        shown = parts.head(TOP_PARTS)
        table = pd.DataFrame({
            "rank": shown["rank"], "part": shown["item"], "a": shown["value_a"].map(_n), "b": shown["value_b"].map(_n),
            "ns": shown["ns"].map(lambda v: f"{v:+,.0f}"), "share": shown["share"].map(
                lambda v: "n/a" if math.isnan(v) else f"{v * 100:+.0f} %"),
            "noise (1 sd, ns)": shown["noise_ns"].map(lambda v: "unknown" if math.isnan(v) else f"{v:,.0f}"),
            "beyond noise": shown["beyond_noise"].map(_beyond), "behind it": shown["behind"]})
        out.append(_md_table(table))
        rest = parts.iloc[TOP_PARTS:]
        if len(rest):
            out.append(f"\n{len(rest)} more parts: {rest['ns'].sum():+,.0f} ns together.\n")
        groups = parts.groupby("group", sort=False)["ns"].sum().reset_index()
        groups["share"] = groups["ns"] / delta if delta else math.nan
        out.append(f"\n{h} By factor of the identity\n")
        out.append(_md_table(groups.assign(ns=groups["ns"].map(lambda v: f"{v:+,.0f}"),
                                           share=groups["share"].map(lambda v: "n/a" if math.isnan(v)
                                                                     else f"{v * 100:+.0f} %"))))
        stalls = parts[parts["group"] == "stalls"].head(5)
        if len(stalls):
            out.append("\nStall reasons, as Nsight Compute's Kernel Profiling Guide describes them: "
                       + "; ".join(f"{s.item.split(': ', 1)[1]}: {STALL_MEANING.get(s.item.split(': ', 1)[1], ('?',))[0]}"
                                   for s in stalls.itertuples()) + ".\n")
    out.append(f"\n{h} Counters behind the parts\n")
    mech = e.mechanisms
    if not mech.empty:
        mech = pd.DataFrame({"counter": mech["label"], "metric": mech["metric"].map(lambda m: f"`{m}`"),
                             "a": mech["value_a"].map(_n), "b": mech["value_b"].map(_n),
                             "change": mech["rel_change"].map(lambda v: "n/a" if math.isnan(v) else f"{v * 100:+.1f} %"),
                             "beyond noise": mech["beyond_noise"].map(_beyond)})
    out.append(_md_table(mech))
    out.append(f"\n{h} Nsight Compute's findings (estimated speedup, %)\n")
    every = findings_change(a.findings, b.findings)
    fc = every[every["status"] != "unchanged"]
    if a.findings.empty or b.findings.empty:
        out.append("A side's report holds no guided-analysis rule results.\n")
    elif every.empty:  # e.g. the rules of Nsight Compute 2023.1 give warnings without an estimate
        out.append(f"Both reports hold rule results ({len(a.findings)} and {len(b.findings)}), none with an "
                   "estimated speedup: each set's findings.md lists them.\n")
    elif fc.empty:
        out.append(f"The {len(every)} findings with an estimated speedup differ by less than 1 percentage point.\n")
    if len(fc) or a.findings.empty or b.findings.empty:
        out.append(_md_table(fc.assign(speedup_a=fc["speedup_a"].map(_n), speedup_b=fc["speedup_b"].map(_n))))
    out.append(f"\n{HOW_TO_READ_BASE if e.missing else HOW_TO_READ}\n")
    return "\n".join(out)


def findings_page(set_name: str, findings: pd.DataFrame, reports: list[str] | None = None) -> str:
    """A set's findings, per kernel and N, by estimated speedup (largest first): rule,
    title, kind, estimated speedup and its type, and the message; ``reports``: the set's
    report stems, of which those without any rule result are named at the end."""
    out = [f"# Nsight Compute's findings: {set_name}\n",
           "Each launch's guided-analysis rule results as the report holds them (ncu's own rules; no rule "
           "of this project). Estimated speedup: ncu's estimate, `global` of the whole kernel, `local` of "
           "the part the rule looks at. Results without a message of interest (kind `ok` or `none`) are "
           "counted, not listed.\n"]
    if findings.empty:
        out.append("The set's reports hold no rule results.\n")
        return "\n".join(out)
    f = findings.sort_values(["kernel", "n", "report", "launch", "speedup_pct"],
                             ascending=[True, True, True, True, False], na_position="last")
    for (kernel, n), per_kernel in f.groupby(["kernel", "n"], sort=False, dropna=False):
        launches = list(per_kernel.groupby(["report", "launch"], sort=False))
        for (report, launch), g in launches:
            shown = g[g["kind"].isin(["optimization", "warning", "error", "unreadable"])]
            at = f"N = {int(n)}" if pd.notna(n) else "no N"
            # several launches of one kernel name and N (instantiations, ranges, repeated launches): each its own
            which = f"{_launch_name(g.iloc[0], kernel)} (report {report}, launch {int(launch)})" \
                if len(launches) > 1 else ""
            out.append(f"## {kernel}, {at}{which}\n")
            table = pd.DataFrame({"rule": shown["rule"], "title": shown["title"].fillna(""), "kind": shown["kind"],
                                  "speedup %": shown["speedup_pct"].map(lambda v: "" if pd.isna(v) else f"{v:.1f}"),
                                  "type": shown["speedup_type"].fillna(""),
                                  # whole (a cut at 300 characters ended most messages mid-word), on one line
                                  "message": shown["message"].fillna("").str.replace(r"\s+", " ", regex=True)})
            out.append(_md_table(table))
            out.append(f"\n{len(g) - len(shown)} results of kind ok or none.\n")
    silent = sorted(set(reports or ()) - set(findings["report"].dropna()))
    if silent:
        out.append(f"No rule results in {len(silent)} report(s), whose launches are not listed above: "
                   f"{', '.join(silent)} (an older Nsight Compute, or a profile of metrics without rules).\n")
    return "\n".join(out)


def hotspots_page(set_name: str, hotspots: pd.DataFrame) -> str:
    """A set's source hot spots at each kernel's largest N (every launch where the set has no
    N, as reports from elsewhere): the most-sampled SASS instructions with their CUDA file
    and line and samples by stall reason."""
    with_n = hotspots.empty or hotspots["n"].notna().any()
    scope = "Per kernel, at its largest N" if with_n else "Per kernel and launch (the set's launches have no N)"
    out = [f"# Source hot spots: {set_name}\n",
           f"{scope}: the SASS instructions where Nsight Compute's warp sampling found "
           "warps most often (`smsp__pcsamp_sample_count` per PC), with the CUDA file and line it maps them "
           "to (where the kernel was built with `-lineinfo`) and the samples by stall reason "
           "(`smsp__pcsamp_warps_issue_stalled_*`). PC offset: bytes from the lowest sampled address.\n"]
    if hotspots.empty:
        out.append("The set's reports hold no warp-sampling data (`smsp__pcsamp_*`, the Source Counters "
                   "section).\n")
        return "\n".join(out)
    h = hotspots[hotspots["n"].notna()] if with_n else hotspots
    for kernel, g in h.groupby("kernel", sort=True):
        top_n = g["n"].max()
        g = g[g["n"] == top_n] if pd.notna(top_n) else g
        reports = list(g["report"].unique())  # in the table's order
        g = g[g["report"] == reports[0]].sort_values(["launch", "rank"])
        at = f"N = {int(top_n)}" if pd.notna(top_n) else "no N"
        out.append(f"## {kernel}, {at}\n")
        if len(reports) > 1:  # one report's launches shown: say so, and which others hold the kernel
            out.append(f"From report {reports[0]}; {', '.join(map(str, reports[1:]))} also "
                       f"{'holds' if len(reports) == 2 else 'hold'} this kernel at {at} (not shown here).\n")
        launches = list(g.groupby("launch", sort=True))
        for launch, one in launches:
            if len(launches) > 1:  # instantiations, ranges or repeated launches of one name: each its own table
                out.append(f"### {kernel}{_launch_name(one.iloc[0], kernel)} (report {one['report'].iloc[0]}, "
                           f"launch {int(launch)})\n")
            src = one["file"].fillna("").str.replace(r"^.*/(kernels/)", r"\1", regex=True)
            table = pd.DataFrame({"rank": one["rank"], "PC offset": one["pc_offset"].map(lambda v: f"0x{int(v):x}"),
                                  "SASS": one["sass"].map(code_span),
                                  "source": [f"{f}:{ln}" if f else ""
                                             for f, ln in zip(src, one["line"].fillna(0).astype(int))],
                                  "samples": one["samples"].map(lambda v: f"{v:,.0f}"),
                                  "share": one["samples_share"].map(lambda v: f"{v * 100:.1f} %"),
                                  "by reason": one["reasons"]})
            if "samples_metric" in one and (one["samples_metric"] == SUMMED).any():
                out.append(f"Samples: the sum of the stall reasons at each PC ({SUMMED}): the report's "
                           f"Nsight Compute wrote no `{SAMPLES}`. Where reports hold both, the two are equal at "
                           "every PC.\n")
            out.append(_md_table(table))
    return "\n".join(out)


def code_span(text: str) -> str:
    """``text`` as a Markdown code span that holds it whole: fenced by one more backtick than its
    longest run of backticks, with spaces inside where it starts or ends with one (CommonMark,
    "Code spans"; SASS such as ``BRA `(.L_x_0)`` broke a single-backtick span)."""
    text = str(text)
    fence = "`" * (max(map(len, re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _launch_name(row: pd.Series, kernel: str) -> str:
    """What a heading adds after ``kernel`` to tell one of its launches from the others of
    its name, before their report and position: ``: {range or demangled name}`` where that
    says more than the kernel's name (a demangled name in backticks: rendered Markdown read
    ``axpy<float>`` as an HTML tag, so two instantiations' headings looked alike), and
    `` [occurrence k]`` for a later launch of one report; '' for neither (repeats of one
    profile)."""
    rng, dem, occ = row.get("range_name"), row.get("demangled"), row.get("occurrence")
    name = f"range {rng}" if not pd.isna(rng) else ("" if pd.isna(dem) or str(dem) == kernel else code_span(dem))
    later = f" [occurrence {int(occ)}]" if not pd.isna(occ) and int(occ) > 0 else ""
    return (f": {name}" if name else "") + later
