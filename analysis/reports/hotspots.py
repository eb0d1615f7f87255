"""Source hot spots of a launch: the SASS instructions where Nsight Compute's warp-state
sampling found warps most often, with their CUDA file and line and the samples by stall
reason, read through ``ncu_report`` (the per-PC instances of ``smsp__pcsamp_sample_count``
and ``smsp__pcsamp_warps_issue_stalled_*``, ``IAction.sass_by_pc``, ``IAction.source_info``).

The Source Counters section of ``--set full`` collects these; a report without them (other
sets, ``--metrics`` only) gives no rows. Nsight Compute 2020.2 and 2020.3 wrote the
per-reason samples but no ``smsp__pcsamp_sample_count`` (two reports of ``foreign-reports``):
there a PC's samples are the sum of its reasons (:data:`SUMMED`). Where a report holds both,
that sum equals the sample count at every PC: checked on 43 launches (the first five of each
range) of 28 reports, 17 of ``foreign-reports`` (ncu 2021.3.1-2024.2.1) and 11 of this
project (2025.3.1).
"""

from __future__ import annotations

import math

import pandas as pd

from analysis.names import report_stem

#: Columns of the hot-spot table, one row per launch and sampled SASS instruction.
HOTSPOT_COLUMNS = ["report", "launch", "rank", "pc", "pc_offset", "sass", "file", "line", "samples",
                   "samples_share", "reasons", "samples_metric"]

#: Per-PC sample count of all warp states (ncu's Source Counters section).
SAMPLES = "smsp__pcsamp_sample_count"
#: Prefix of the per-PC samples by stall reason (the ``_not_issued`` variants are left out:
#: they count the same samples again, restricted to cycles without an issue).
REASON_PREFIX = "smsp__pcsamp_warps_issue_stalled_"
#: ``samples_metric`` of a launch whose report has no :data:`SAMPLES` (module docstring).
SUMMED = f"sum of {REASON_PREFIX}*"

#: Instructions kept per launch (the rest of the samples is in ``samples_share``'s complement).
TOP = 10


def _instanced(action, name: str) -> dict[int, float]:
    m = action.metric_by_name(name)
    if m is None or m.num_instances() == 0 or not m.has_correlation_ids():
        return {}
    ids = m.correlation_ids()
    out = {}
    for i in range(m.num_instances()):
        v = m.value(i)
        if v is not None and not isinstance(v, str):
            out[int(ids.value(i))] = float(v)
    return out


def _at(action, name: str, wanted: dict[int, int]) -> dict[int, float]:
    """Values of instanced metric ``name`` at the PCs of ``wanted`` (PC -> the instance index
    it has in the sample count). The per-reason metrics list the same PCs in the same order
    in the reports seen, so only those instances are read; where an index holds another PC,
    the whole metric is read instead."""
    m = action.metric_by_name(name)
    if m is None or m.num_instances() == 0 or not m.has_correlation_ids():
        return {}
    ids = m.correlation_ids()
    n = m.num_instances()
    if all(i < n and int(ids.value(i)) == pc for pc, i in wanted.items()):
        out = {}
        for pc, i in wanted.items():
            v = m.value(i)
            out[pc] = float(v) if v is not None and not isinstance(v, str) else 0.0
        return out
    return _instanced(action, name)


def hotspots_of(path, actions: list, top: int = TOP) -> pd.DataFrame:
    """The ``top`` most-sampled SASS instructions of every launch in ``actions``.

    Args:
        path: the report (its stem names the rows).
        actions: ``(launch, range, IAction)`` as :func:`analysis.reports.ncu.launches._actions`
            gives them.
        top: instructions kept per launch.

    Returns:
        DataFrame with columns :data:`HOTSPOT_COLUMNS`: ``launch`` (int), ``rank`` (1 = most
        samples), ``pc`` (int, the address ncu gives), ``pc_offset`` (int, byte, from the
        lowest sampled address of the launch), ``sass`` (the instruction text), ``file`` and
        ``line`` (the CUDA source ncu maps the PC to, as the report gives them; NA without
        ``-lineinfo``), ``samples`` (float64, warp samples at this PC), ``samples_share``
        (fraction of the launch's samples), ``reasons`` (``reason=samples; ...``, largest
        first, non-zero only; reason is the ``smsp__pcsamp_warps_issue_stalled_`` suffix),
        ``samples_metric`` (where ``samples`` comes from: :data:`SAMPLES`, or :data:`SUMMED`
        for a report without it).
        Empty where the report holds no sampling data.
    """
    rows = []
    for launch, _rng, action in actions:
        reason_names = sorted(n for n in action.metric_names()
                              if n.startswith(REASON_PREFIX) and not n.endswith("_not_issued"))
        samples, source = _instanced(action, SAMPLES), SAMPLES
        summed: dict[str, dict[int, float]] = {}
        if not samples and reason_names:  # ncu 2020.2: no sample count, the reasons add up to it
            summed = {n[len(REASON_PREFIX):]: _instanced(action, n) for n in reason_names}
            for per_pc in summed.values():
                for pc, v in per_pc.items():
                    samples[pc] = samples.get(pc, 0.0) + v
            source = SUMMED
        total = sum(samples.values())
        if not samples or total <= 0:
            continue
        base = min(samples)
        ranked = sorted(samples.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        index = {pc: i for i, pc in enumerate(samples)}  # the sample count's instance order
        wanted = {pc: index[pc] for pc, _ in ranked}
        by_reason = summed or {n[len(REASON_PREFIX):]: _at(action, n, wanted) for n in reason_names}
        for rank, (pc, count) in enumerate(ranked, start=1):
            info = action.source_info(pc)
            file = info.file_name() if info is not None else None
            line = int(info.line()) if info is not None else None
            reasons = sorted(((r, v.get(pc, 0.0)) for r, v in by_reason.items()), key=lambda kv: -kv[1])
            text = "; ".join(f"{r}={v:.0f}" for r, v in reasons if v > 0)
            rows.append((report_stem(path), launch, rank, pc, pc - base, (action.sass_by_pc(pc) or "").strip(),
                         file or None, line, count, count / total if total else math.nan, text, source))
    df = pd.DataFrame(rows, columns=HOTSPOT_COLUMNS)
    for col in ("launch", "rank", "pc", "pc_offset"):
        df[col] = df[col].astype("int64")
    df["line"] = pd.array(df["line"], dtype="Int64")
    for col in ("samples", "samples_share"):
        df[col] = df[col].astype("float64")
    for col in ("report", "sass", "file", "reasons", "samples_metric"):
        df[col] = df[col].astype("string")
    return df
