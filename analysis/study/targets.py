"""The targets the claims of the kernels beyond the study are judged by (INT4 against INT8 and
against the study's s4 kernels; the tuned mma.sync and wgmma kernels against the library
GEMM, by timing or in pairs), the claims that judge them, and the claims table as Markdown."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.gpu.paired import paired_ratios
from analysis.gpu.references import RANDOM_FILL as _RANDOM_OPERANDS
from analysis.precision import LIBRARY_NAMES, SAME_OUTPUT_NAMES, kernel_c_dtype, precision_of
from analysis.study.explain import CLOCK


#: Targets of the INT4 kernels beyond the study at the largest N: the fastest INT4 kernel
#: against the fastest INT8 kernel (0.90 since the wgmma kernels; 0.80 before) and against
#: each of the study's s4 mma.sync kernels.
INT4_VS_INT8_TARGET = 0.90
INT4_VS_STUDY_S4_TARGET = 10.0


def _int4_claim(claim, summary: pd.DataFrame, registry: dict) -> None:
    """The claim that INT4 on a GPU without s4 tensor instructions is best served by
    unpacking to INT8: at the set's largest timed N, the fastest INT4 kernel reaches
    :data:`INT4_VS_INT8_TARGET` of the fastest INT8 kernel and :data:`INT4_VS_STUDY_S4_TARGET`
    times each study kernel issuing s4 mma.sync (registry ``mma`` naming mma.sync and s4);
    None where the set lacks INT8 kernels or those study kernels."""
    t = summary.dropna(subset=["median_ns"])
    largest = int(t["n"].max()) if len(t) else None
    t = t[t["n"] == largest]
    int4, int8 = t[t["precision"] == "int4"], t[t["precision"] == "int8"]
    study_s4 = sorted(k for k, spec in registry.items()
                      if spec.get("study", True) and spec["precision"] == "int4"
                      and "mma.sync" in spec["mma"] and ".s4" in spec["mma"] and k in set(int4["kernel"]))
    text = ("Beyond the study: INT4 unpacked to INT8 reaches the INT8 kernels' speed and far beyond the "
            "study's s4 mma.sync kernels")
    test = (f"at N={largest}, the fastest INT4 kernel / the fastest INT8 kernel >= {INT4_VS_INT8_TARGET:.2f} "
            f"and / each study s4 mma.sync kernel >= {INT4_VS_STUDY_S4_TARGET:g}")
    if int4.empty or int8.empty or not study_s4:
        claim(text, test, "not measured (needs INT4 and INT8 kernels and a study s4 mma.sync kernel)", None)
        return
    b4, b8 = int4.loc[int4["throughput"].idxmax()], int8.loc[int8["throughput"].idxmax()]
    vs8 = b4["throughput"] / b8["throughput"]
    vs_s4 = {k: b4["throughput"] / int4.loc[int4["kernel"] == k, "throughput"].iloc[0] for k in study_s4}
    # three decimals: a ratio of 0.896 printed as 0.90x would read as the target met
    measured = (f"{b4['kernel']} / {b8['kernel']} {vs8:.3f}x; "
                + ", ".join(f"/ {k} {v:.1f}x" for k, v in vs_s4.items()))
    claim(text, test, measured,
          vs8 >= INT4_VS_INT8_TARGET and all(v >= INT4_VS_STUDY_S4_TARGET for v in vs_s4.values()),
          "event-timed medians (timings.csv) of this set")


#: The library GEMM each precision is measured against (analysis.gpu.references names).
LIBRARY = LIBRARY_NAMES
#: Issue targets of the tuned mma.sync kernels at the largest N (ratio to LIBRARY), and the
#: ratio below which the study's tiling counts as closing none of the gap.
TUNED_TARGET = {"fp16": 0.60, "int8": 0.80}
STUDY_TILING_CEILING = 0.25
WGMMA_TARGET = 0.90


def best_reference(references: pd.DataFrame | None, prec: str, n: int | None) -> pd.Series | None:
    """The fastest reference GEMM of ``prec`` at N = ``n`` in references.csv (rows of kind
    ``library``: the vendor library and, where measured, the Triton GEMM), as its row (name,
    rate, unit, ...); None where the set has none."""
    if references is None or n is None:
        return None
    rows = references[(references["kind"] == "library") & (references["precision"] == prec)
                      & (references["n"] == n)]
    return None if rows.empty else rows.loc[rows["rate"].idxmax()]


def _library_claims(claim, summary: pd.DataFrame, registry: dict, references: pd.DataFrame | None) -> None:
    """Claims beyond the study that compare kernels with the fastest reference GEMM of each
    precision of the same run (references.csv, :func:`best_reference`, named in the claim)
    at the set's largest timed N: tuned mma.sync kernels (a ``tiling`` of
    their own in the registry) against the study's tiling, and warpgroup wgmma kernels
    (``mma`` naming wgmma)."""
    t = summary.dropna(subset=["median_ns"])
    largest = int(t["n"].max()) if len(t) else None
    t = t[t["n"] == largest]
    lib = {p: best_reference(references, p, largest) for p in LIBRARY}

    def best(kinds: set[str], prec: str):
        rows = t[(t["precision"] == prec) & t["kernel"].isin(kinds)]
        return None if rows.empty else rows.loc[rows["throughput"].idxmax()]

    def against_library(new: set[str], old: set[str], what: str, judge) -> tuple[str, bool | None]:
        """(measured, holds) of 'the fastest of ``new`` against the fastest of ``old``', each
        as a ratio to the precision's library GEMM, judged per precision by
        ``judge(prec, new_ratio, old_ratio)``; holds is None unless both precisions were measured."""
        parts, verdicts = [], []
        for prec in TUNED_TARGET:
            b_new, b_old, ref = best(new, prec), best(old, prec), lib.get(prec)
            if b_new is None or b_old is None or ref is None:
                parts.append(f"{prec}: not measured (needs {what} and {LIBRARY[prec]})")
                continue
            r_new, r_old = b_new["throughput"] / ref["rate"], b_old["throughput"] / ref["rate"]
            parts.append(f"{prec}: {b_new['kernel']} {r_new:.2f}x, {b_old['kernel']} {r_old:.2f}x {ref['name']}")
            verdicts.append(judge(prec, r_new, r_old))
        return "; ".join(parts), None if len(verdicts) < len(TUNED_TARGET) else all(verdicts)

    # kernels with a library target (library_target): the wgmma ones and the tuned mma.sync ones
    wgmma = {k for k, spec in registry.items() if "wgmma" in spec["mma"]}
    tuned = {k for k, spec in registry.items() if library_target(spec) is not None} - wgmma
    study_tiling = {k for k, spec in registry.items()
                    if "tiling" not in spec and "wmma" not in spec["mma"] and "mma" in spec["mma"]}
    source = "library GEMMs: references.csv of this set (measured in the same run)"
    claim("Beyond the study: tuned mma.sync closes part of the gap to the library, the study's tiling none of it",
          f"at N={largest}, the fastest tuned mma.sync kernel / library GEMM of the same run >= "
          + ", ".join(f"{v:.2f} ({p})" for p, v in TUNED_TARGET.items())
          + f" while the fastest study-tiling mma.sync kernel stays <= {STUDY_TILING_CEILING:.2f}",
          *against_library(tuned, study_tiling, "a tuned and a study-tiling mma.sync kernel",
                           lambda prec, rt, rs: rt >= TUNED_TARGET[prec] and rs <= STUDY_TILING_CEILING), source)
    claim("Beyond the study: wgmma is needed to approach the library on Hopper",
          f"at N={largest}, the fastest wgmma kernel / library GEMM >= {WGMMA_TARGET:.2f} and no mma.sync "
          "kernel reaches it, for FP16 and INT8",
          *against_library(wgmma, tuned | study_tiling, "a wgmma and an mma.sync kernel",
                           lambda prec, rw, rm: rw >= WGMMA_TARGET > rm), source)


#: Targets of Hopper's own path at the largest N: the fastest FP16 wgmma kernel against the
#: fastest FP16 reference GEMM when timed in pairs (paired.csv), and the fastest INT8 wgmma
#: kernel's event-timed rate against the highest measured s8 wgmma ceiling (references.csv).
FP16_WGMMA_VS_BEST_REFERENCE = 1.00
INT8_WGMMA_VS_CEILING = 0.85


def _c_label(dtype: np.dtype) -> str:
    """C's dtype as the notes name it: FP16, FP32 (floating-point C only)."""
    return f"FP{np.dtype(dtype).itemsize * 8}"


def _output_note(references: pd.DataFrame | None, library: str, n: int,
                 kernel_c: np.dtype = precision_of("fp16").c_dtype, kernel: str = "the FP16 kernels") -> str:
    """Where references.csv's ``source`` of ``library`` at N = ``n`` states the dtype the
    library writes C in ("FP16 out") and it is not ``kernel_c``, the C of ``kernel`` (by default
    FP32, the ``c_dtype`` of :func:`analysis.precision.precision_of` ``("fp16")``;
    :func:`analysis.precision.kernel_c_dtype` of the judged kernel), a note naming both ("" otherwise):
    the pair then times kernels that write different bytes of C."""
    if references is None or not {"name", "n", "source"} <= set(references.columns):
        return ""
    rows = references[(references["name"] == library) & (references["n"] == n)]
    found = rows["source"].astype(str).str.extract(r"\b(FP16|FP32|BF16) out\b")[0].dropna()
    c_bytes, label = np.dtype(kernel_c).itemsize, _c_label(kernel_c)
    if found.empty or found.iloc[0] == label:
        return ""
    lib_c = found.iloc[0]
    return (f"; {library} writes C in {lib_c} (references.csv), {kernel} in {label}: "
            f"{int(lib_c[-2:]) // 8 * n * n:,} against {c_bytes * n * n:,} bytes of C at N={n}")


def _same_output_note(ratios: pd.DataFrame, n: int, c_dtypes: dict | None = None) -> str:
    """The FP16 wgmma kernels' paired ratios at N = ``n`` against the vendor GEMM that writes C
    in the kernels' dtype (:data:`analysis.precision.SAME_OUTPUT_NAMES`, FP32), as a note
    ("" where paired.csv has none): it separates the kernels' speed from the bytes of C, which
    the fastest reference may write fewer of (:func:`_output_note`).

    Args:
        ratios: :func:`analysis.gpu.paired.paired_ratios` of the FP16 wgmma kernels.
        n: the N the claim judges.
        c_dtypes: kernel name -> the dtype of C it writes (:func:`analysis.precision.kernel_c_dtype`);
            the kernels not writing FP32 are named as the exception. None: all write FP32.
    """
    same = ratios[(ratios["library"] == SAME_OUTPUT_NAMES["fp16"]) & (ratios["n"] == n)].sort_values("kernel")
    if same.empty:
        return ""
    parts = [f"{r['kernel']} {r['ratio']:.3f}x (first {r['ratio_first']:.3f}, second {r['ratio_second']:.3f})"
             for _, r in same.iterrows()]
    other = sorted(k for k in same["kernel"] if (c_dtypes or {}).get(k, np.dtype(np.float32)) != np.float32)
    but = (f" but {', '.join(other)}, which write{'s' if len(other) == 1 else ''} "
           + "/".join(sorted({_c_label(c_dtypes[k]) for k in other}))) if other else ""
    return (f"; against {SAME_OUTPUT_NAMES['fp16']} (cuBLAS writing C in FP32, as the kernels do{but}), "
            f"timed in pairs in the same run: {', '.join(parts)}")


def _hopper_claims(claim, summary: pd.DataFrame, registry: dict, references: pd.DataFrame | None,
                   paired: pd.DataFrame | None) -> None:
    """The two targets of the wgmma kernels (registry ``mma`` naming wgmma) at the largest N:
    the fastest FP16 one against the fastest FP16 reference it was timed in pairs with (the
    smallest of its paired ratios, :func:`analysis.gpu.paired.paired_ratios`; the fastest
    kernel by that ratio) >= :data:`FP16_WGMMA_VS_BEST_REFERENCE`, and the fastest INT8 one
    (timings.csv) against the highest s8 wgmma ceiling of references.csv (rows of kind
    ``ceiling`` whose name holds ``wgmma``) >= :data:`INT8_WGMMA_VS_CEILING`; None where the set
    lacks the kernels, the pairs or the ceiling, or where an FP16 wgmma kernel of the pairs has
    no ratio at the largest N (it is named)."""
    wgmma = {k for k, spec in registry.items() if "wgmma" in spec["mma"]}
    fp16 = {k for k in wgmma if registry[k]["precision"] == "fp16"}
    text = "Beyond the study: a hand-written wgmma kernel matches the fastest FP16 reference GEMM"
    ratios = (paired_ratios(paired) if paired is not None and len(paired)
              else pd.DataFrame(columns=["kernel", "n", "library", "ratio", "ratio_first", "ratio_second"]))
    ratios = ratios[ratios["kernel"].isin(fp16)]
    mine = ratios.dropna(subset=["ratio"])
    if mine.empty:
        claim(text, f"the fastest FP16 wgmma kernel / the fastest FP16 reference, timed in pairs, >= "
              f"{FP16_WGMMA_VS_BEST_REFERENCE:.2f}", "not measured (no FP16 wgmma kernel in paired.csv)", None,
              "paired.csv of this set")
    else:
        largest = int(mine["n"].max())
        worst = mine[mine["n"] == largest].sort_values("ratio").groupby("kernel").head(1)
        best = worst.loc[worst["ratio"].idxmax()]
        # a kernel of the pairs without a ratio at that N (a position without rounds) is named, and
        # the claim is then not judged
        missing = sorted(set(ratios["kernel"]) - set(worst["kernel"]))
        parts = [f"{r['kernel']} {r['ratio']:.3f}x {r['library']} (first {r['ratio_first']:.3f}, "
                 f"second {r['ratio_second']:.3f})" for _, r in worst.sort_values("kernel").iterrows()]
        if missing:
            parts.append(f"no paired ratio at N={largest}: {', '.join(missing)}")
        claim(text,
              f"at N={largest}, the fastest FP16 wgmma kernel / the fastest FP16 reference it was timed in pairs "
              f"with (its smallest paired ratio) >= {FP16_WGMMA_VS_BEST_REFERENCE:.2f}",
              "; ".join(parts), None if missing else bool(best["ratio"] >= FP16_WGMMA_VS_BEST_REFERENCE),
              "paired.csv of this set"
              + _output_note(references, best["library"], largest, kernel_c_dtype(registry[best["kernel"]]),
                             best["kernel"] if any("c_dtype" in registry[k] for k in fp16) else "the FP16 kernels")
              + _same_output_note(ratios, largest, {k: kernel_c_dtype(registry[k]) for k in fp16}))
    text = "Beyond the study: the INT8 wgmma kernel runs near the s8 wgmma ceiling"
    t = summary.dropna(subset=["median_ns"])
    largest = int(t["n"].max()) if len(t) else None
    int8 = t[(t["n"] == largest) & (t["precision"] == "int8") & t["kernel"].isin(wgmma)]
    has_refs = references is not None and {"kind", "precision", "name", "rate"} <= set(references.columns)
    ceil = (references[(references["kind"] == "ceiling") & (references["precision"] == "int8")
                       & references["name"].str.contains("wgmma")] if has_refs else pd.DataFrame())
    test = (f"at N={largest if largest is not None else 'the largest N'}, the fastest INT8 wgmma kernel / the "
            f"highest s8 wgmma ceiling >= {INT8_WGMMA_VS_CEILING:.2f}")
    if int8.empty or ceil.empty:
        claim(text, test, "not measured (needs an INT8 wgmma kernel and the s8 wgmma ceilings)", None,
              "timings.csv and references.csv of this set")
        return
    b, c = int8.loc[int8["throughput"].idxmax()], ceil.loc[ceil["rate"].idxmax()]
    claim(text, test,
          f"{b['kernel']} {b['throughput']:.1f} {b['throughput_unit']} / {c['name']} {c['rate']:.1f} {c['unit']} = "
          f"{b['throughput'] / c['rate']:.3f}",
          bool(b["throughput"] / c["rate"] >= INT8_WGMMA_VS_CEILING),
          "event-timed median (timings.csv) against the ceiling measured in the same run (references.csv)"
          + random_operand_note(ceil, b) + profiled_pipe_note(b))


#: Name suffix of a wgmma ceiling whose operands are random like the kernels' inputs
#: (analysis.gpu.references.WGMMA_FILLS), with the ``_wg{W}`` that follows it.
RANDOM_FILL = f"{_RANDOM_OPERANDS}_wg"


def random_operand_note(ceilings: pd.DataFrame, row: pd.Series) -> str:
    """``; against the highest such ceiling on random operands ({name} {rate} {unit}): {ratio}``:
    the kernel of ``row`` (its ``throughput``) against the highest of ``ceilings`` (references.csv
    rows: ``name``, ``rate``, ``unit``; the ceilings the claim was judged against, the highest of
    them) whose name holds :data:`RANDOM_FILL`, the loop whose operands are drawn like the GEMMs'
    inputs. The empty string where there is none (sets measured before that fill), where its rate
    is not a positive finite number, or where the highest of ``ceilings`` is that one already
    (the claim's own ratio says it)."""
    rate = pd.to_numeric(ceilings["rate"], errors="coerce")
    ok = np.isfinite(rate) & (rate > 0)
    if not ok.any():
        return ""
    rnd = ok & ceilings["name"].str.contains(RANDOM_FILL, regex=False)
    if not rnd.any() or bool(rnd[rate[ok].idxmax()]):
        return ""
    i = rate[rnd].idxmax()
    c, r = ceilings.loc[i], float(rate[i])
    return (f"; against the highest such ceiling on random operands, drawn like the kernels' inputs "
            f"({c['name']} {r:.1f} {c['unit']}): {row['throughput'] / r:.3f}")


#: The counters of a kernel's profiled launch that say whether a gap to a ceiling lies in its
#: cycles or in its clock (ncu metric names; the clock in Hz, the pipe in % of active cycles;
#: claims.py's TENSOR is this one).
SM_CLOCK = CLOCK
TENSOR_ACTIVE = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"


def profiled_pipe_note(row: pd.Series) -> str:
    """``; in {kernel}'s profiled launch at N={n}: tensor pipe active X % of active cycles
    (TENSOR_ACTIVE) at an SM clock of Y GHz (SM_CLOCK)``, from one row of the per-launch summary
    (columns :data:`TENSOR_ACTIVE` in percent and :data:`SM_CLOCK` in Hz, as the profile with
    ``--clock-control none`` recorded them); the empty string where either is missing or not a
    number, so an unprofiled or foreign set's claim keeps its plain note."""
    vals = [row.get(SM_CLOCK), row.get(TENSOR_ACTIVE)]
    if any(v is None or not np.isfinite(pd.to_numeric(v, errors="coerce")) for v in vals):
        return ""
    return (f"; in {row['kernel']}'s profiled launch at N={int(row['n'])}: tensor pipe active "
            f"{float(vals[1]):.1f} % of active cycles ({TENSOR_ACTIVE}) at an SM clock of "
            f"{float(vals[0]) / 1e9:.3f} GHz ({SM_CLOCK})")


def library_target(spec: dict) -> float | None:
    """The issue's target ratio to the library GEMM at the largest N for a registry entry:
    :data:`WGMMA_TARGET` for a wgmma kernel, :data:`TUNED_TARGET` of its precision for a
    tuned mma.sync kernel (a ``tiling`` of its own), None for any other."""
    if "wgmma" in spec["mma"]:
        return WGMMA_TARGET
    if "tiling" in spec and "wmma" not in spec["mma"]:
        return TUNED_TARGET.get(spec["precision"])
    return None


def _paired_claim(claim, paired: pd.DataFrame, registry: dict) -> None:
    """The library targets tested on kernels timed in pairs with their reference GEMMs
    (paired.csv, :func:`analysis.gpu.paired.paired_ratios`) at the largest N there: each kernel
    with a target (:func:`library_target`) must reach it by the geometric mean of its two
    position-matched ratios, against the fastest reference it was paired with (the vendor
    library, or the Triton GEMM where measured: the smallest ratio). holds is None where no such kernel was timed, or where one
    timed at another N lacks the largest (it is named)."""
    text = "Beyond the study: the tuned and wgmma kernels reach their library targets when timed in pairs"
    ratios = paired_ratios(paired)
    if ratios.empty:
        claim(text, "paired.csv holds no rounds", "not measured", None, "paired.csv of this set")
        return
    largest = int(ratios["n"].max())
    at = ratios[ratios["n"] == largest].sort_values("kernel")
    targets = {k: library_target(registry[k]) for k in sorted(set(ratios["kernel"])) if k in registry}
    parts, verdicts = [], []
    for kernel, g in at.groupby("kernel", sort=True):
        # against each reference it was paired with; judged against the fastest (the smallest ratio)
        target = targets.get(kernel)
        for _, r in g.sort_values("ratio").iterrows():
            verdict = "" if target is None or r["ratio"] != g["ratio"].min() else f", target {target:.2f}"
            parts.append(f"{kernel} {r['ratio']:.2f}x {r['library']} (first {r['ratio_first']:.2f}, "
                         f"second {r['ratio_second']:.2f}{verdict})")
        if target is not None:
            verdicts.append(bool(g["ratio"].min() >= target))
    missing = [k for k, t in targets.items() if t is not None and k not in set(at["kernel"])]
    if missing:
        parts.append(f"not timed in pairs at N={largest}: {', '.join(missing)}")
    claim(text,
          f"at N={largest}, each kernel's rate / its library GEMM's, both timed alternately in one process "
          f"(paired.csv: the geometric mean of the ratios with both run first and with both run second) >= "
          f"{TUNED_TARGET['fp16']:.2f} (fp16 tuned mma.sync), {TUNED_TARGET['int8']:.2f} (int8 tuned mma.sync), "
          f"{WGMMA_TARGET:.2f} (wgmma)",
          "; ".join(parts), None if missing or not verdicts else all(verdicts),
          f"paired.csv of this set ({_span(at['rounds'])} rounds per kernel); the library rows above judge the same "
          "targets against references.csv, whose library GEMMs were timed at another moment of the run")


def _span(v: pd.Series) -> str:
    """``lo-hi`` of integer values, or the one value where they agree."""
    lo, hi = int(v.min()), int(v.max())
    return str(lo) if lo == hi else f"{lo}-{hi}"


def to_markdown(df: pd.DataFrame) -> str:
    """A pipe table of ``df`` (cells as text, '|' escaped), for the Markdown tables."""
    def cell(v):
        if v is None or (isinstance(v, float) and np.isnan(v)):
            return ""
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v).replace("|", "\\|")
    head = "| " + " | ".join(df.columns) + " |\n|" + "---|" * len(df.columns) + "\n"
    return head + "".join("| " + " | ".join(cell(v) for v in row) + " |\n" for row in df.itertuples(index=False))
