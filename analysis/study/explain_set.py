"""A set's explanation pages, tables and figures (rule explain_set): every registry kernel
against its ``baseline:``, and against the kernel its ``change:`` says it changes one knob
of, at every N both have (``explanations.csv``), a page and a
waterfall per pair at the largest such N, the findings and hot-spot pages and the stall
stacks."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from analysis.io import write_csv, write_text
from analysis.study.drawing import save
from analysis.study.evidence import DurationChange, Launch, SetEvidence, duration_change, stall_table
from analysis.study.explain import Explanation, explain_pair, parts_table
from analysis.study.explain_figures import stall_figure, waterfall
from analysis.study.explain_pages import findings_page, hotspots_page, pair_page

#: Parts of a pair and N kept in explanations.csv one by one; the rest are one row
#: (``item`` = ``N other parts``), so that the committed table stays small.
CSV_PARTS = 12

#: Columns of explanations.csv, in order: the pair, then each part.
#: launch_a and launch_b: each launch as the pages name it (:attr:`analysis.study.evidence.Launch.label`),
#: which tells apart a template's instantiations, NVTX ranges and later launches of one kernel name.
EXPLANATION_COLUMNS = ["set_a", "set_b", "kernel_a", "kernel_b", "launch_a", "launch_b", "n", "ncu_a_ns", "ncu_b_ns",
                       "duration_ratio", "duration_low", "duration_high", "duration_method", "duration_beyond_noise",
                       "rank", "item", "group", "metric", "value_a", "value_b", "ns", "share", "noise_ns",
                       "beyond_noise", "noise_source", "behind"]


def knob_reference(kernel: str, kernels: dict) -> str | None:
    """The kernel a registry entry's ``change:`` names as the one it changes a single knob
    of (``"fp16_ptx_mma_k16 with a 3-stage cp.async pipeline"`` -> ``fp16_ptx_mma_k16``), or
    None where the text does not start with another registry kernel followed by ``with``."""
    first, _, rest = str(kernels.get(kernel, {}).get("change") or "").partition(" ")
    return first if first in kernels and first != kernel and rest.startswith("with ") else None


def kernel_pairs(kernels: dict, present) -> list[tuple[str, str]]:
    """(kernel, reference) pairs of the kernels in ``present``, in registry order: each
    against its ``baseline:``, then each against the kernel its ``change:`` names it one
    knob away from (:func:`knob_reference`) where that is another kernel than the baseline;
    both kernels of a pair must be in ``present``."""
    present = set(present)
    pairs = [(k, spec["baseline"]) for k, spec in kernels.items()
             if k in present and spec.get("baseline") in present]
    for k, spec in kernels.items():
        ref = knob_reference(k, kernels)
        if k in present and ref in present and ref != spec.get("baseline"):
            pairs.append((k, ref))
    return pairs


def pair_stem(kernel_b: str, kernel_a: str) -> str:
    """File stem of a pair's page and figure: ``{b}__vs__{a}``."""
    return f"{kernel_b}__vs__{kernel_a}"


def explain_launches(a: Launch, b: Launch, factor: float = 3.0) -> tuple[Explanation, pd.DataFrame]:
    """:func:`analysis.study.explain.explain_pair` of two launches, with the larger of the
    two sides' noise per metric (and where it comes from)."""
    noise = pd.concat([a.noise, b.noise], axis=1).max(axis=1, skipna=True)
    source = a.noise_source.reindex(noise.index).fillna(b.noise_source.reindex(noise.index))
    e = explain_pair(a.values, b.values, noise=noise, noise_source=source, opcodes_a=a.opcodes, opcodes_b=b.opcodes,
                     factor=factor)
    return e, parts_table(e, factor)


def explanation_rows(set_a: str, set_b: str, a: Launch, b: Launch, e: Explanation, parts: pd.DataFrame,
                     change: DurationChange) -> pd.DataFrame:
    """The rows of explanations.csv for one pair (:data:`EXPLANATION_COLUMNS`); one row
    with an empty part where the pair was not decomposed."""
    head = {"set_a": set_a, "set_b": set_b, "kernel_a": a.kernel, "kernel_b": b.kernel,
            "launch_a": a.label, "launch_b": b.label,
            "n": a.n if pd.notna(a.n) else pd.NA, "ncu_a_ns": e.ncu_a_ns, "ncu_b_ns": e.ncu_b_ns,
            "duration_ratio": change.ratio, "duration_low": change.low, "duration_high": change.high,
            "duration_method": change.method, "duration_beyond_noise": change.beyond_noise}
    body = parts if len(parts) else pd.DataFrame([{"item": "not decomposed: lacks " + ", ".join(e.missing)}])
    if len(body) > CSV_PARTS + 1:
        rest = body.iloc[CSV_PARTS:]
        body = pd.concat([body.iloc[:CSV_PARTS], pd.DataFrame([{
            "rank": CSV_PARTS + 1, "item": f"{len(rest)} other parts", "group": "other", "ns": rest["ns"].sum(),
            "share": rest["share"].sum()}])], ignore_index=True)
    rows = body.assign(**head)
    for col in EXPLANATION_COLUMNS:
        if col not in rows:
            rows[col] = pd.NA
    return rows[EXPLANATION_COLUMNS]


def pairs_index(set_name: str, pairs: list[tuple[str, str]], table: pd.DataFrame) -> str:
    """The index of a set's pair pages: each pair at its largest N with its duration
    change, verdict and largest parts beyond noise; says so where the set has no pair."""
    lines = [f"# Kernel pairs of {set_name}\n"]
    if not pairs:
        lines.append("No kernel of this set has its registry baseline in the set (an imported set, or a set "
                     "without baselines): no pair to explain.\n")
        return "\n".join(lines)
    lines += ["| pair | N | b / a | beyond noise | largest parts beyond noise |", "| --- | --- | --- | --- | --- |"]
    for kb, ka in pairs:
        rows = table[(table["kernel_b"] == kb) & (table["kernel_a"] == ka)]
        if rows.empty:
            lines.append(f"| [{kb} against {ka}]({pair_stem(kb, ka)}.md) | none in common | | | |")
            continue
        last = rows[rows["n"] == rows["n"].max()]
        top = last[(last["beyond_noise"] == True) & (last["group"] != "residual")].head(3)  # noqa: E712
        parts = ", ".join(f"{r.item} {r.ns / 1e3:+,.1f} us" for r in top.itertuples()) or "none"
        r0 = last.iloc[0]
        beyond = {True: "yes", False: "no"}.get(r0["duration_beyond_noise"], "unknown")
        lines.append(f"| [{kb} against {ka}]({pair_stem(kb, ka)}.md) | {int(r0['n'])} | "
                     f"{r0['duration_ratio']:.4f} | {beyond} | {parts} |")
    return "\n".join(lines) + "\n"


def write_set_explanations(ev: SetEvidence, kernels: dict, out: str | Path, factor: float = 3.0,
                           pairs: list[tuple[str, str]] | None = None) -> pd.DataFrame:
    """Write a set's explanation outputs under ``out`` and return its explanations table.

    Files: ``explanations.csv`` (every pair at every N both kernels have, its
    :data:`CSV_PARTS` largest parts and the rest as one row; :data:`EXPLANATION_COLUMNS`),
    ``pairs/{b}__vs__{a}.md`` and ``.png`` (the largest such N; PNG only, to keep the
    committed figures small) and ``pairs/index.md``, ``findings.md`` and ``hotspots.md``
    (pages of the set's findings and hot-spot tables, which rule parse_set writes as
    parquet), ``stalls.csv``, ``stalls.png`` and ``stalls.pdf``.

    Args:
        ev: the set's evidence (:func:`analysis.study.evidence.load_set_evidence`).
        kernels: the kernel registry (config ``kernels``: ``baseline`` and ``change`` of each).
        out: the folder (``figures/{set}/explain``).
        factor: a part is beyond noise when larger than ``factor`` x its noise.
        pairs: the (kernel, baseline) pairs; None: :func:`kernel_pairs` of the set's kernels.
    """
    out = Path(out)
    (out / "pairs").mkdir(parents=True, exist_ok=True)
    present = set(ev.metrics["kernel"].dropna().unique())
    pairs = kernel_pairs(kernels, present) if pairs is None else pairs
    tables = []
    for kb, ka in pairs:
        ns = sorted(set(ev.metrics.loc[ev.metrics["kernel"] == ka, "n"].dropna())
                    & set(ev.metrics.loc[ev.metrics["kernel"] == kb, "n"].dropna()))
        page = None
        for n in ns:
            la, lb = ev.launch(ka, n), ev.launch(kb, n)
            if la is None or lb is None:
                continue
            e, parts = explain_launches(la, lb, factor)
            change = duration_change(ev, la, ev, lb, factor)
            tables.append(explanation_rows(ev.name, ev.name, la, lb, e, parts, change))
            page = (la, lb, e, parts, change, n)
        stem = pair_stem(kb, ka)
        if page is None:  # no N in common: say so rather than leave the files out
            write_text(out / "pairs" / f"{stem}.md", f"# {kb} against {ka}\n\nNo N at which the set holds both.\n")
            save(waterfall(pd.DataFrame(), math.nan, math.nan, f"{kb} against {ka}: no N in common"),
                 out / "pairs" / f"{stem}.png", None)
            continue
        la, lb, e, parts, change, n = page
        role = "its baseline" if kernels.get(kb, {}).get("baseline") == ka else "the kernel it changes one knob of,"
        title = f"{kb} against {role} {ka}, N = {int(n)} ({ev.name})"
        note = f"The registry's change: \"{kernels.get(kb, {}).get('change', '')}\"."
        write_text(out / "pairs" / f"{stem}.md", pair_page(title, la, lb, e, parts, change, note, f"{stem}.png"))
        save(waterfall(parts, e.ncu_a_ns, e.ncu_b_ns, f"{kb} against {ka}, N = {int(n)}", f"b / a: {change.text()}"),
             out / "pairs" / f"{stem}.png", None)
    table = (pd.concat(tables, ignore_index=True) if tables
             else pd.DataFrame(columns=EXPLANATION_COLUMNS))
    write_text(out / "pairs" / "index.md", pairs_index(ev.name, pairs, table))
    write_csv(table, out / "explanations.csv")
    reports = sorted(ev.launches["report"].dropna().unique())
    write_text(out / "findings.md", findings_page(ev.name, ev.findings, reports))
    write_text(out / "hotspots.md", hotspots_page(ev.name, ev.hotspots))
    stalls = stall_table(ev.metrics)
    write_csv(stalls, out / "stalls.csv")
    save(stall_figure(stalls, f"Warp cycles per issued instruction by stall reason: {ev.name}"),
         out / "stalls.png", out / "stalls.pdf")
    return table
