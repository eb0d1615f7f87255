"""Explanations of a set comparison: for every kernel the two sets share, its launches at the
largest N matched in both (the comparison's own matching, :func:`analysis.compare.diff.match_launches`)
explained as one pair (:mod:`analysis.study.explain`), on one page with a waterfall panel
per kernel, and at every matched N in ``explanations.csv``; the page ends with the launches
in one set only (set, kernel, N, cause)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.compare.diff import SHAPE_NOTE
from analysis.io import write_csv, write_text
from analysis.study.drawing import save
from analysis.study.evidence import SetEvidence, duration_change
from analysis.study.explain_figures import waterfalls
from analysis.study.explain_pages import pair_page, top_items, verdict
from analysis.study.explain_set import EXPLANATION_COLUMNS, explain_launches, explanation_rows

#: Launches drawn as panels and given a section of the page (the largest changes first).
MAX_PANELS = 24


def matched_launches(diff: pd.DataFrame) -> pd.DataFrame:
    """One row per launch pair the comparison matched on both sides: kernel, mangled,
    range_name, n, occurrence, report_baseline, report_candidate, match (a matched pair
    shares its mangled name and range: :func:`analysis.compare.diff.match_launches`)."""
    cols = ["kernel", "mangled", "range_name", "n", "occurrence", "report_baseline", "report_candidate", "match"]
    both = diff[diff["report_baseline"].notna() & diff["report_candidate"].notna()]
    return both[cols].drop_duplicates().reset_index(drop=True)


def unmatched_warning(diff: pd.DataFrame, baseline: str, candidate: str) -> str | None:
    """The console's warning for a comparison where no launch of either set is matched in the
    other (every row one-sided, nothing compared), naming why from the rows' ``match``
    (:func:`analysis.compare.diff.match_launches`: another signature under one function
    name, the kernel at another N, in reports of other names...); None where a launch is
    matched or ``diff`` is empty.

    Args:
        diff: a comparison (:func:`analysis.compare.diff.compare_metric_tables`), with
            columns ``report_baseline``, ``report_candidate``, ``status`` and ``match``.
        baseline, candidate: the sets' names, for the message.
    """
    if diff.empty or not matched_launches(diff).empty:
        return None
    sides: dict[str, list[str]] = {}  # cause -> the sets whose one-sided rows give it (a cause of both, once)
    for status, side in (("only in baseline", baseline), ("only in candidate", candidate)):
        said = diff.loc[diff["status"] == status, "match"].dropna()
        for m in dict.fromkeys(said):
            if m.startswith("not matched: "):
                sides.setdefault(m.removeprefix("not matched: "), []).append(side)
    causes = [f"{' and '.join(who)}: {cause}" for cause, who in sides.items()]
    same_report = bool(set(diff["report_baseline"].dropna()) & set(diff["report_candidate"].dropna()))
    why = ("; ".join(causes[:3]) + (f"; and {len(causes) - 3} more" if len(causes) > 3 else "") if causes
           else "no kernel and N in common" + ("" if same_report else ", nor a report of the same name"))
    # changes.csv holds flagged rows only, and with no kernel and N in common no one-sided row is
    # flagged: the whole comparison, with every launch's match, is the rule's diff.parquet
    return (f"{candidate} against {baseline}: no launch of either set is matched in the other ({why}), so every row "
            f"is one-sided and nothing is compared (figures/compare/{baseline}__vs__{candidate}/statuses.csv; "
            f"the match column of results/compare/{baseline}__vs__{candidate}/diff.parquet says why for each launch)")


def one_sided_section(diff: pd.DataFrame, baseline: str, candidate: str) -> list[str]:
    """Lines of the explanations page on the launches that no launch of the other set matched
    (a report on one side only; not a matched launch's metric that one side lacks): per set,
    kernel and cause (the rows' ``match``, :func:`analysis.compare.diff.match_launches`), the N
    they were profiled at and how many, so that a kernel profiled at fewer N in one set, or one
    set's new kernels, are named instead of left out; [] where every launch is matched.

    Args:
        diff: a comparison (:func:`analysis.compare.diff.compare_metric_tables`), with columns
            ``kernel``, ``n``, ``occurrence``, ``report_baseline``, ``report_candidate`` and ``match``.
        baseline, candidate: the sets' names.
    """
    alone = diff[diff["report_baseline"].isna() != diff["report_candidate"].isna()]
    if alone.empty:
        return []
    alone = alone.assign(_side=np.where(alone["report_baseline"].notna(), baseline, candidate),
                         _report=alone["report_baseline"].fillna(alone["report_candidate"]))
    alone = alone.drop_duplicates(["_side", "_report", "kernel", "n", "occurrence"])
    # one row per cause: the parts that name the row's own N or place are in the other columns
    cause = (alone["match"].fillna("").str.replace(r", this one at N = [^ ]+", "", regex=True)
             .str.replace(r" \(\d+\)$", "", regex=True))
    lines = ["## Launches in one set only", "",
             "Not compared: no launch of the other set matched them (the match column of "
             f"results/compare/{baseline}__vs__{candidate}/diff.parquet says why for each launch; changes.csv "
             "holds the rows of those whose kernel and N the other set has).", "",
             "| set | kernel | N | launches | why |", "| --- | --- | --- | --- | --- |"]
    # the kernel names each set holds, matched or not: a name the other set also holds under another
    # mangled name, N or range is not "no launch of this kernel"
    held = {baseline: set(diff.loc[diff["report_baseline"].notna(), "kernel"].unique()),
            candidate: set(diff.loc[diff["report_candidate"].notna(), "kernel"].unique())}
    other = {baseline: candidate, candidate: baseline}
    for (side, kernel, why), g in alone.groupby(["_side", "kernel", cause], sort=False):
        ns = ", ".join(dict.fromkeys("unknown" if pd.isna(n) else str(int(n))
                                     for n in sorted(g["n"], key=lambda v: (pd.isna(v), 0 if pd.isna(v) else v))))
        why = why.removeprefix("not matched: ")
        if why in ("", "only in baseline", "only in candidate"):  # match_launches' label where no cause applies
            why = ("the other set holds this name only as other launches (another mangled name, N or range)"
                   if kernel in held[other[side]] else "the other set has no launch of this kernel")
        why = why.replace("|", "\\|")
        lines.append(f"| {side} | {kernel} | {ns} | {len(g)} | {why} |")
    return lines + [""]


def noise_caveat(model_name: str, model_gpu: str, gpus: tuple[str, str]) -> str:
    """The paragraph a comparison page opens with where its verdicts may rest on a noise model of
    another GPU: ``model_name`` (the model's set) was measured on ``model_gpu``, the sets' reports
    give ``gpus`` (:func:`analysis.compare.diff.versions_from_table`'s ``gpu`` of each; several
    joined by ", "). Empty where there is no model, its GPU is not known, or both sets ran on it
    alone."""
    if not model_name or not model_gpu:
        return ""
    others = [g for g in dict.fromkeys(x.strip() for side in gpus for x in side.split(","))
              if g not in ("", "?", model_gpu)]  # "?": a report of a mixed set that gives no GPU
    if not others:
        return ""
    return (f"**Noise from another GPU**: a launch pair without repeats of its own takes its noise, and so its "
            f"verdict (within or beyond noise), from the {model_name}, measured on {model_gpu}. These sets ran on "
            f"{', '.join(others)}: there the verdicts rest on that model as an assumption, not on a measurement of "
            "these GPUs or programs (docs/explanations.md). Profile repeats (`_r1`, `_r2` files) to measure it.")


def write_comparison_explanations(diff: pd.DataFrame, base: SetEvidence, cand: SetEvidence, out_md: str | Path,
                                  out_csv: str | Path, out_png: str | Path, out_pdf: str | Path | None,
                                  factor: float = 3.0, caveat: str = "") -> pd.DataFrame:
    """Explain every kernel of a comparison (module docstring) and write the page
    (``out_md``), the table (``out_csv``, :data:`analysis.study.explain_set.EXPLANATION_COLUMNS`)
    and the figure (``out_png``, and ``out_pdf`` unless None). ``caveat``: a paragraph the page
    gives first (:func:`noise_caveat`). Returns the table."""
    launches = matched_launches(diff)
    rows, sections, panels = [], [], []
    # a launch is one function under one mangled name (a template's instantiations are several), range
    # and occurrence (a report's 2nd, 3rd... launch of it); its section is at its largest N
    for (kernel, *_), g in launches.groupby(["kernel", "mangled", "range_name", "occurrence"], sort=True,
                                            dropna=False):
        best = None
        for r in g.sort_values("n", na_position="first", kind="stable").itertuples():
            la = base.launch(kernel, r.n, source=r.report_baseline, occurrence=int(r.occurrence),
                             mangled=r.mangled, range_name=r.range_name)
            lb = cand.launch(kernel, r.n, source=r.report_candidate, occurrence=int(r.occurrence),
                             mangled=r.mangled, range_name=r.range_name)
            if la is None or lb is None:
                continue
            e, parts = explain_launches(la, lb, factor)
            change = duration_change(base, la, cand, lb, factor)
            rows.append(explanation_rows(base.name, cand.name, la, lb, e, parts, change))
            best = (la, lb, e, parts, change, r.match)
        if best is not None:
            sections.append(best)
    table = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=EXPLANATION_COLUMNS)
    # the largest duration changes first
    sections.sort(key=lambda s: -abs(math.log(s[4].ratio)) if s[4].ratio > 0 else 0.0)  # stable
    text = [f"# {cand.name} against {base.name}: what accounts for each kernel's duration change\n",
            "Each launch matched in both sets (a kernel, and each of its launches where a report holds several), "
            "at its largest N matched, largest relative change first; every matched N is in explanations.csv. "
            "A section per launch: the pair's page, as for kernel pairs within a set.\n",
            "| kernel | b / a (event or ncu) | verdict | top parts beyond noise |", "| --- | --- | --- | --- |"]
    shaped = launches[launches["match"].str.contains(SHAPE_NOTE, regex=False, na=False)]
    if len(shaped):
        listed = "; ".join(dict.fromkeys(
            f"{r.kernel}{'' if pd.isna(r.n) else f' N={r.n}'} ({r.match.split(f'{SHAPE_NOTE} (', 1)[1]}"
            for r in shaped.itertuples()))
        text[2:2] = [f"**Launches of other shapes were matched by name** ({listed}): each ran another problem "
                     "size or configuration, so its duration change is not that of one kernel run in both sets.\n"]
    if caveat:
        text[1:1] = [f"{caveat}\n"]
    for la, lb, e, parts, change, _ in sections:
        said = verdict(change, decomposed=not e.missing).split(".")[0]
        text.append(f"| {la.label} | {change.text()} | {said} | {'not decomposed' if e.missing else top_items(parts)} |")
    text.append("")
    for la, lb, e, parts, change, match in sections[:MAX_PANELS]:
        note = ""
        if SHAPE_NOTE in str(match):
            note = (f"**Matched by name, not by shape**: {match.split(f'{SHAPE_NOTE} (', 1)[1].rstrip(')')}. "
                    "The two launches ran other problem sizes or configurations; their duration change is not "
                    "that of one kernel run in both sets.")
        text.append(pair_page(la.label, la, lb, e, parts, change, note=note, level=2))
        panels.append((la.label, parts, e.ncu_a_ns, e.ncu_b_ns))
    if len(sections) > MAX_PANELS:
        text.append(f"\nThe pages of {len(sections) - MAX_PANELS} more launches (listed in the table above): "
                    "see explanations.csv.\n")
    if not sections:
        text.append("No launch is matched in both sets.\n")
    text += one_sided_section(diff, base.name, cand.name)
    write_text(out_md, "\n".join(text))
    write_csv(table, out_csv)
    save(waterfalls(panels, f"{cand.name} against {base.name}"), out_png, out_pdf)
    return table
