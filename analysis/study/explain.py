"""Why one launch takes longer than another: the duration change of a pair of launches
split into additive parts, from the two reports' own counters.

**The identity.** Nsight Compute's duration is the SM cycles elapsed over the SM clock,
``gpu__time_duration = sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second``. Per
SM sub-partition (SMSP), the warp cycles spent while the SMSP is active equal the
instructions it issued times the warp cycles per issued instruction, which the warp-state
counters split by reason (``smsp__average_warps_issue_stalled_{reason}_per_issue_active``,
summed over reasons: the "cycles per issued instruction" stack of the GUI's Warp State
section), and also the active cycles times the warps active per cycle. Hence

    T = E / P * (I / (E / P)) * S / W * r * (C / A) / f

with E executed instructions (``smsp__inst_executed.sum``), P the SMSPs (``.sum / .avg``), I
issued instructions per SMSP (``smsp__inst_issued.avg``), S the stall stack, W the warps
active per active cycle (``smsp__warps_active.avg.per_cycle_active``), C / A the elapsed
over the active cycles (``sm__cycles_elapsed.avg / smsp__cycles_active.avg``: idle SMSPs
in the tail wave or by imbalance), f the SM clock and r what the identity leaves (on the
committed H200 set within 0.38 % at N = 8192, up to 22 % at N = 512, where the metrics'
replay passes differ: docs/explanations.md).

**The split.** The log of the duration ratio is the sum of the logs of the factors'
ratios. Sums inside a factor (E over SASS opcodes, S over stall reasons) are split with
the logarithmic mean, ``ln(X_b / X_a) = sum_i (x_i,b - x_i,a) / L(X_a, X_b)``,
``L(x, y) = (x - y) / ln(x / y)``: exact and free of residual (Ang, "The LMDI approach to
decomposition analysis: a practical guide", Energy Policy 33, 2005). Each part in ns is
its log term times L(T_a, T_b), so the parts add up to ``T_b - T_a`` exactly.

**Noise.** A part's noise is the noise of its metric (``noise_rel``: from repeats where
the set has them, else the noise model, :mod:`analysis.reports.noise`) carried to ns the
same way; a part is beyond noise when larger than ``factor`` times its noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

DURATION = "gpu__time_duration.sum"
CYCLES = "sm__cycles_elapsed.avg"
CLOCK = "sm__cycles_elapsed.avg.per_second"
ACTIVE = "smsp__cycles_active.avg"
ISSUED = "smsp__inst_issued.avg"
EXECUTED = "smsp__inst_executed.sum"
EXECUTED_AVG = "smsp__inst_executed.avg"
WARPS = "smsp__warps_active.avg.per_cycle_active"
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"

#: The metrics the identity needs; a pair lacking one is not decomposed.
REQUIRED = [DURATION, CYCLES, CLOCK, ACTIVE, ISSUED, EXECUTED, WARPS]

#: What a stall reason means, and the counters behind it (NVIDIA, Nsight Compute Kernel
#: Profiling Guide, "Warp Stall Reasons"; the counters are those of the sections that
#: guide points to for each reason).
STALL_MEANING = {
    "long_scoreboard": ("waiting on an L1TEX (global, local) result", ["dram", "l2", "global_ld"]),
    "short_scoreboard": ("waiting on an MIO result (shared memory, ldmatrix, special math)", ["shared"]),
    "mio_throttle": ("MIO queue full (shared-memory and ldmatrix instructions)", ["shared"]),
    "lg_throttle": ("LSU queue for global/local memory full", ["global_ld"]),
    "barrier": ("waiting at a block barrier for the other warps", ["barrier"]),
    "math_pipe_throttle": ("waiting for an execution pipe to be free (whichever pipe the next instruction "
                           "needs: FMA, ALU, FP64, tensor ...)", ["pipes", "tensor"]),
    "wait": ("fixed-latency dependency", []),
    "not_selected": ("eligible, another warp issued", ["issue"]),
    "selected": ("issuing", ["issue"]),
    "no_instruction": ("instruction not fetched (instruction cache, after a branch)", []),
    "dispatch_stall": ("dispatch stalled by the pipeline", []),
    "branch_resolving": ("waiting for a branch target", []),
    "membar": ("waiting at a memory barrier", []),
    "drain": ("draining memory writes at exit", []),
    "sleeping": ("sleeping (nanosleep, suspended)", []),
    "tex_throttle": ("TEX queue full", []),
    "imc_miss": ("immediate constant cache miss", []),
    "gmma": ("waiting on a warpgroup MMA (wgmma) result", ["tensor"]),
    "misc": ("other", []),
}

#: Counters behind the parts: (metric or ratio of two metrics, label, topic of
#: :data:`STALL_MEANING`). A ratio is given as ``numerator / denominator``.
MECHANISMS = [
    ("dram__bytes_read.sum", "DRAM bytes read", "dram"),
    ("dram__bytes_write.sum", "DRAM bytes written", "dram"),
    ("lts__t_sectors.sum", "L2 sectors", "l2"),
    ("lts__t_sector_hit_rate.pct", "L2 hit rate", "l2"),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
     "sectors per global-load request", "global_ld"),
    ("sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum / "
     "sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum", "sectors per LDGSTS request", "global_ld"),
    ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "shared-memory bank conflicts", "shared"),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "shared-memory wavefronts", "shared"),
    ("smsp__inst_executed_op_shared_ld.sum", "shared loads executed", "shared"),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "achieved occupancy (%)", "warps"),
    ("sm__maximum_warps_per_active_cycle_pct", "theoretical occupancy (%)", "warps"),
    ("launch__registers_per_thread", "registers per thread", "warps"),
    ("launch__shared_mem_per_block", "shared memory per block (byte)", "warps"),
    ("launch__occupancy_limit_registers", "blocks per SM (register limit)", "warps"),
    ("launch__occupancy_limit_shared_mem", "blocks per SM (shared-memory limit)", "warps"),
    ("launch__waves_per_multiprocessor", "waves per SM", "idle"),
    ("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "tensor pipe active (%)", "tensor"),
    ("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "FMA pipe active (%)", "pipes"),
    ("sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active", "ALU pipe active (%)", "pipes"),
    ("sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active", "FP64 pipe active (%)", "pipes"),
    ("smsp__issue_active.avg.per_cycle_active", "issue slots used per cycle", "issue"),
    ("smsp__inst_executed_op_bar.sum", "barrier instructions (BAR) executed", "barrier"),
]

#: Topic of each part group other than stalls.
GROUP_TOPICS = {"warps": "warps", "idle": "idle"}


def log_mean(x: float, y: float) -> float:
    """Logarithmic mean L(x, y) = (x - y) / ln(x / y), L(x, x) = x; x, y > 0."""
    if x <= 0 or y <= 0:
        raise ValueError(f"log_mean of {x} and {y}: both must be > 0")
    return x if math.isclose(x, y, rel_tol=1e-12) else (x - y) / math.log(x / y)


@dataclass
class Part:
    """One additive part of a duration change.

    Attributes:
        item: what it is (``stall: barrier``, ``executed HMMA``, ``SM clock``...).
        group: ``instructions``, ``stalls``, ``warps``, ``idle``, ``clock``, ``smsp``,
            ``issue``, ``residual``.
        metric: the Nsight Compute metric(s) it comes from.
        value_a, value_b: that metric on each side (the opcode's executed count, the
            reason's warp cycles per issued instruction, ...).
        ns: its share of the duration change (ns; the parts add up to T_b - T_a).
        noise_ns: one standard deviation of ``ns`` from the metric's noise (NaN: unknown).
        noise_source: where the noise comes from.
    """

    item: str
    group: str
    metric: str
    value_a: float
    value_b: float
    ns: float
    noise_ns: float = math.nan
    noise_source: str = ""


@dataclass
class Explanation:
    """A pair's duration change and its parts (:func:`explain_pair`).

    Attributes:
        ncu_a_ns, ncu_b_ns: ``gpu__time_duration.sum`` of each side (ns).
        parts: every :class:`Part`, ranked by |ns|, largest first.
        missing: metrics the identity needs that a side lacks (nothing decomposed then).
        lacking: what each side lacks of them, ``{"a": [...], "b": [...]}`` (only sides that lack one).
        mechanisms: DataFrame of :data:`MECHANISMS` on both sides (label, metric, topic,
            value_a, value_b, rel_change, noise_rel, beyond_noise).
    """

    ncu_a_ns: float
    ncu_b_ns: float
    parts: list[Part] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    mechanisms: pd.DataFrame = field(default_factory=pd.DataFrame)
    lacking: dict[str, list[str]] = field(default_factory=dict)


def _stalls(values: pd.Series) -> pd.Series:
    names = [m for m in values.index if m.startswith(STALL_PREFIX) and m.endswith(STALL_SUFFIX)]
    out = values[names].astype("float64")
    out.index = [m[len(STALL_PREFIX):-len(STALL_SUFFIX)] for m in names]
    return out


def _split(a: pd.Series, b: pd.Series) -> pd.Series:
    """LMDI split of ln(sum b / sum a) over the items of a and b (missing = 0): the items'
    terms add up to that log exactly. Empty where a sum is not > 0."""
    idx = a.index.union(b.index)
    a, b = a.reindex(idx, fill_value=0.0).fillna(0.0), b.reindex(idx, fill_value=0.0).fillna(0.0)
    sa, sb = float(a.sum()), float(b.sum())
    if sa <= 0 or sb <= 0:
        return pd.Series(dtype="float64")
    return (b - a) / log_mean(sa, sb)


def _metric_value(values: pd.Series, spec: str) -> float:
    if " / " in spec:
        num, den = spec.split(" / ")
        n, d = values.get(num, np.nan), values.get(den, np.nan)
        return float(n) / float(d) if pd.notna(n) and pd.notna(d) and float(d) != 0 else math.nan
    v = values.get(spec, np.nan)
    return float(v) if pd.notna(v) else math.nan


def mechanisms(a: pd.Series, b: pd.Series, noise: pd.Series, factor: float) -> pd.DataFrame:
    """:data:`MECHANISMS` on both sides: label, metric, topic, value_a, value_b, rel_change
    (b / a - 1; NaN where a is 0 or missing), noise_rel (the larger of a ratio's two
    metrics'), beyond_noise (|rel_change| > max(factor * noise_rel, 0.005); NA where the
    noise is unknown). Rows where both sides lack the metric are left out."""
    rows = []
    for spec, label, topic in MECHANISMS:
        va, vb = _metric_value(a, spec), _metric_value(b, spec)
        if math.isnan(va) and math.isnan(vb):
            continue
        rel = vb / va - 1 if va and not math.isnan(va) and not math.isnan(vb) else (0.0 if va == vb else math.nan)
        nr = max((float(noise.get(m, np.nan)) for m in spec.split(" / ")), default=math.nan)
        beyond = pd.NA if math.isnan(nr) or math.isnan(rel) else bool(abs(rel) > max(factor * nr, 0.005))
        rows.append((label, spec, topic, va, vb, rel, nr, beyond))
    return pd.DataFrame(rows, columns=["label", "metric", "topic", "value_a", "value_b", "rel_change", "noise_rel",
                                       "beyond_noise"])


def explain_pair(a: pd.Series, b: pd.Series, *, noise: pd.Series | None = None,
                 noise_source: pd.Series | None = None, opcodes_a: pd.Series | None = None,
                 opcodes_b: pd.Series | None = None, factor: float = 3.0) -> Explanation:
    """The duration change of launch b against launch a, split into parts (module docstring).

    Args:
        a, b: each launch's metric values, indexed by Nsight Compute metric name (one
            launch of a per-metric table, :func:`analysis.reports.metric_table.metric_table`).
        noise: relative noise of each metric (``noise_rel``: one standard deviation of the
            relative difference of the two sides), indexed by metric; NaN or absent: unknown.
        noise_source: where each metric's noise comes from (``repeats``, ``noise model``).
        opcodes_a, opcodes_b: executed instructions per SASS opcode
            (``sass__inst_executed_per_opcode``, summed over SMSPs); where both are given and
            each adds up to ``smsp__inst_executed.sum`` within 1 %, the executed-instruction
            factor is split by opcode, else it is one part.
        factor: a part is beyond noise when |ns| > factor * noise_ns.

    Returns:
        :class:`Explanation`; ``parts`` empty and ``missing`` naming the metrics when a side
        lacks one of :data:`REQUIRED` or has a value <= 0 in it.
    """
    noise = pd.Series(dtype="float64") if noise is None else noise
    noise_source = pd.Series(dtype="string") if noise_source is None else noise_source
    ta, tb = float(a.get(DURATION, np.nan)), float(b.get(DURATION, np.nan))
    def lacks(side: pd.Series) -> list[str]:
        gone = [m for m in REQUIRED if not (pd.notna(side.get(m)) and side[m] > 0)]
        return gone + ([f"{STALL_PREFIX}*{STALL_SUFFIX}"] if _stalls(side).sum() <= 0 else [])

    la, lb = lacks(a), lacks(b)
    missing = list(dict.fromkeys(la + lb))
    sa, sb = _stalls(a), _stalls(b)
    mech = mechanisms(a, b, noise, factor)
    if missing:
        return Explanation(ta, tb, [], missing, mech, {k: v for k, v in (("a", la), ("b", lb)) if v})
    lt = log_mean(ta, tb)

    def nz(metric: str) -> tuple[float, str]:
        v = noise.get(metric, np.nan)
        return (float(v) if pd.notna(v) else math.nan), str(noise_source.get(metric, "") or "")

    parts: list[Part] = []

    def add(item, group, metric, va, vb, term, rel_noise_term=math.nan, source=""):
        parts.append(Part(item, group, metric, float(va), float(vb), term * lt, abs(rel_noise_term) * lt, source))

    ea, eb = float(a[EXECUTED]), float(b[EXECUTED])
    term_e = math.log(eb / ea)
    ne, se = nz(EXECUTED)
    split = None
    if opcodes_a is not None and opcodes_b is not None and len(opcodes_a) and len(opcodes_b):
        if abs(opcodes_a.sum() / ea - 1) < 0.01 and abs(opcodes_b.sum() / eb - 1) < 0.01:
            split = _split(opcodes_a.astype("float64"), opcodes_b.astype("float64"))
    if split is not None and len(split):
        for op, term in split.items():
            va, vb = float(opcodes_a.get(op, 0.0)), float(opcodes_b.get(op, 0.0))
            if va == vb == 0:
                continue
            add(f"executed {op}", "instructions", f"sass__inst_executed_per_opcode [{op}]", va, vb, term,
                ne * max(va, vb) / log_mean(ea, eb) if not math.isnan(ne) else math.nan, se)
    else:
        add("executed instructions", "instructions", EXECUTED, ea, eb, term_e, ne, se)
    # SMSPs of the GPU (a comparison across GPUs): executed per SMSP is what the identity holds
    pa = ea / float(a.get(EXECUTED_AVG, np.nan)) if pd.notna(a.get(EXECUTED_AVG)) else math.nan
    pb = eb / float(b.get(EXECUTED_AVG, np.nan)) if pd.notna(b.get(EXECUTED_AVG)) else math.nan
    if not (math.isnan(pa) or math.isnan(pb)):
        add("SM sub-partitions of the GPU", "smsp", f"{EXECUTED} / {EXECUTED_AVG}", pa, pb, -math.log(pb / pa))
        per_a, per_b = ea / pa, eb / pb
    else:
        per_a, per_b = ea, eb
    ia, ib = float(a[ISSUED]), float(b[ISSUED])
    ni, si = nz(ISSUED)
    add("issued per executed instruction", "issue", f"{ISSUED} / ({EXECUTED} per SMSP)", ia / per_a, ib / per_b,
        math.log((ib / per_b) / (ia / per_a)), ni, si)
    for reason, term in _split(sa, sb).items():
        va, vb = float(sa.get(reason, 0.0)), float(sb.get(reason, 0.0))
        if va == vb == 0:
            continue
        metric = f"{STALL_PREFIX}{reason}{STALL_SUFFIX}"
        nr, sr = nz(metric)
        add(f"stall: {reason}", "stalls", metric, va, vb, term,
            nr * max(va, vb) / log_mean(float(sa.sum()), float(sb.sum())) if not math.isnan(nr) else math.nan, sr)
    wa, wb = float(a[WARPS]), float(b[WARPS])
    nw, sw = nz(WARPS)
    add("active warps per scheduler", "warps", WARPS, wa, wb, -math.log(wb / wa), nw, sw)
    ca, cb = float(a[CYCLES]) / float(a[ACTIVE]), float(b[CYCLES]) / float(b[ACTIVE])
    nc, sc = nz(ACTIVE)
    add("idle SMSP cycles (tail wave, imbalance)", "idle", f"{CYCLES} / {ACTIVE}", ca, cb, math.log(cb / ca), nc, sc)
    fa, fb = float(a[CLOCK]), float(b[CLOCK])
    nf, sf = nz(CLOCK)
    add("SM clock", "clock", CLOCK, fa, fb, -math.log(fb / fa), nf, sf)
    accounted = sum(p.ns for p in parts)
    parts.append(Part("not accounted by the identity", "residual", DURATION, ta, tb, (tb - ta) - accounted))
    parts.sort(key=lambda p: -abs(p.ns))
    return Explanation(ta, tb, parts, [], mech)


def parts_table(e: Explanation, factor: float = 3.0) -> pd.DataFrame:
    """An explanation's parts as a table, ranked: rank, item, group, metric, value_a,
    value_b, ns, share (ns / (T_b - T_a); NaN where the change is 0), noise_ns,
    beyond_noise (bool, NA where the noise is unknown), noise_source, behind (the counters
    of :data:`MECHANISMS` of the part's topic that changed beyond noise, ``label
    a -> b``)."""
    change = e.ncu_b_ns - e.ncu_a_ns
    mech = e.mechanisms
    moved: dict[str, list[str]] = {}  # topic -> the counters of it that changed beyond noise
    if not mech.empty:
        for r in mech[mech["beyond_noise"].fillna(False).astype(bool)].itertuples():
            moved.setdefault(r.topic, []).append(f"{r.label} {_fmt(r.value_a)} -> {_fmt(r.value_b)}")
    rows = []
    for rank, p in enumerate(e.parts, start=1):
        topics: list[str] = []
        if p.group == "stalls":
            topics = STALL_MEANING.get(p.item.split(": ", 1)[1], ("", []))[1]
        elif p.group in GROUP_TOPICS:
            topics = [GROUP_TOPICS[p.group]]
        behind = "; ".join(text for t in topics for text in moved.get(t, []))
        beyond = pd.NA if math.isnan(p.noise_ns) else bool(abs(p.ns) > factor * p.noise_ns)
        if p.group == "residual":
            beyond = pd.NA
        rows.append((rank, p.item, p.group, p.metric, p.value_a, p.value_b, p.ns,
                     p.ns / change if change else math.nan, p.noise_ns, beyond, p.noise_source, behind))
    df = pd.DataFrame(rows, columns=["rank", "item", "group", "metric", "value_a", "value_b", "ns", "share",
                                     "noise_ns", "beyond_noise", "noise_source", "behind"])
    df["beyond_noise"] = df["beyond_noise"].astype("boolean")
    return df


def _fmt(v: float) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v:.4g}" if abs(v) < 1e5 else f"{v:.3e}"


def findings_change(fa: pd.DataFrame, fb: pd.DataFrame, min_points: float = 1.0) -> pd.DataFrame:
    """How ncu's findings with an estimated speedup differ between two launches: rule,
    title, speedup_a, speedup_b (%, NaN on the side without it), status (``appears``,
    ``disappears``, ``changed`` where |b - a| >= ``min_points`` percentage points,
    ``unchanged``). Findings are matched by rule and title; one per rule and title (the
    largest estimate) on each side. Sorted by the larger |change|."""
    def keyed(f: pd.DataFrame) -> pd.Series:
        empty = pd.Series(dtype="float64", index=pd.MultiIndex.from_tuples([], names=["rule", "title"]))
        if f is None or f.empty:
            return empty
        g = f[f["speedup_pct"].notna()].assign(title=lambda d: d["title"].fillna(""))
        return g.groupby(["rule", "title"])["speedup_pct"].max() if len(g) else empty

    a, b = keyed(fa), keyed(fb)
    if a.empty and b.empty:
        return pd.DataFrame(columns=["rule", "title", "speedup_a", "speedup_b", "status"])
    idx = a.index.union(b.index)
    out = pd.DataFrame({"speedup_a": a.reindex(idx), "speedup_b": b.reindex(idx)})
    out.index = idx.set_names(["rule", "title"])
    out = out.reset_index()
    diff = (out["speedup_b"] - out["speedup_a"]).abs()
    out["status"] = np.select([out["speedup_a"].isna(), out["speedup_b"].isna(), diff >= min_points],
                              ["appears", "disappears", "changed"], default="unchanged")
    key = diff.fillna(out["speedup_a"].fillna(out["speedup_b"]))
    return out.assign(_k=key).sort_values("_k", ascending=False).drop(columns="_k").reset_index(drop=True)
