"""One style per kernel for every figure: colour by family (precision x path), marker by
kernel within its family, baselines drawn alike.

Families come from the kernel registry (``config/config.yaml``): the path is WMMA, mma.sync
or no tensor cores (dp4a) from each kernel's ``mma``; the INT4 k64 ablation (baseline
``int4_ptx_mma_k64``) and the kernels beyond the study (``study: false``) are families of
their own. Colours are Okabe & Ito's eight ("Color Universal Design", 2008), which stay
apart for readers with any colour-vision deficiency, plus a light grey for the ablation
(a ninth family) and a dark grey for kernels outside the registry (reports from elsewhere).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

#: Family -> colour (Okabe-Ito).
FAMILY_COLOURS = {
    "FP16 WMMA": "#56B4E9",
    "FP16 mma.sync": "#0072B2",
    "INT8 WMMA": "#E69F00",
    "INT8 mma.sync": "#D55E00",
    "INT8 no tensor cores": "#F0E442",
    "INT4 WMMA": "#CC79A7",
    "INT4 mma.sync": "#009E73",
    "INT4 k64 ablation": "#999999",
    "beyond the study": "#000000",
    "other": "#666666",
}
#: Markers of a family's members, in registry order; the baseline (WMMA) takes the square.
MARKERS = ["o", "^", "D", "v", "P", "X", "<", ">", "h", "*"]
BASELINE = {"marker": "s", "linestyle": "--", "markerfacecolor": "white"}

REGISTRY = Path(__file__).resolve().parents[1] / "config" / "config.yaml"


@lru_cache(maxsize=None)
def registry() -> dict:
    """The kernel registry of config/config.yaml ({} where the file is absent)."""
    import yaml

    if not REGISTRY.exists():
        return {}
    return (yaml.safe_load(REGISTRY.read_text(encoding="utf-8")) or {}).get("kernels", {})


def family(kernel: str) -> str:
    """The family of a registry kernel (see the module docstring); ``other`` elsewhere."""
    spec = registry().get(kernel)
    if spec is None:
        return "other"
    if spec.get("study") is False:
        return "beyond the study"
    prec = spec["precision"].upper()
    mma = spec.get("mma", "")
    if spec.get("baseline") == "int4_ptx_mma_k64":
        return "INT4 k64 ablation"
    if mma.startswith("wmma"):
        return f"{prec} WMMA"
    if mma.startswith("mma.sync"):
        return f"{prec} mma.sync"
    return f"{prec} no tensor cores"


def is_ablation(kernel: str) -> bool:
    """A single-knob variant of int4_ptx_mma_k64 (drawn in a panel of its own)."""
    return family(kernel) == "INT4 k64 ablation"


def kernel_styles(kernels: list[str]) -> dict[str, dict]:
    """Matplotlib line and marker keywords per kernel: ``color`` of its family, ``marker``
    by its place in the family (registry order), WMMA baselines a dashed line and a hollow
    square. The same kernel gets the same style in every figure, whatever else is drawn."""
    reg = list(registry())
    out = {}
    for k in kernels:
        fam = family(k)
        members = [m for m in reg if family(m) == fam and not registry()[m].get("mma", "").startswith("wmma")]
        style = {"color": FAMILY_COLOURS[fam]}
        if fam.endswith("WMMA"):
            style.update(BASELINE)
        else:
            i = members.index(k) if k in members else sorted(kernels).index(k)
            style["marker"] = MARKERS[i % len(MARKERS)]
        if fam == "INT8 no tensor cores":
            style["markeredgecolor"] = "#000000"
        out[k] = style
    return out
