"""Static SASS analysis of the built cubins (``cuobjdump -sass`` text), no GPU needed.

Counts are static: instructions in the binary, not executed instructions (those come
from Nsight Compute's ``sass__inst_executed_per_opcode``). Instructions guarded by
``@!PT`` (a predicate that is always false: fillers the compiler places after LDGSTS)
never execute and are counted apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.gpu.build import wgmma_serialized

# "        /*0070*/   @!P0 IMAD.WIDE.U32 R2, R3, 0x4, R4 ;   /* 0x... */"
_LINE = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?P<pred>@!?U?P[T0-9]+\s+)?(?P<op>[A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)")

#: Instruction classes, first match wins; the pattern is matched against the opcode
#: without modifiers (the part before the first dot).
CLASSES: list[tuple[str, str]] = [
    ("tensor", r"HMMA|IMMA|HGMMA|IGMMA|QGMMA|BMMA|DMMA"),
    ("ldmatrix", r"LDSM"),
    ("cp.async", r"LDGSTS|LDGDEPBAR|DEPBAR"),
    ("global load", r"LDG"),
    ("global store", r"STG"),
    ("shared load/store", r"LDS|STS"),
    ("integer ALU", r"LOP3|SHF|IMAD|PRMT|IADD3|LEA|SHL|SHR|I2I|I2IP|VIADD|IABS|IMNMX|VIMNMX|BMSK|SGXT|POPC|FLO"),
    ("branch/sync", r"BRA|BSSY|BSYNC|BAR|WARPSYNC|EXIT|RET|CALL"),
]

#: Tensor-core instructions (mnemonic prefixes) each precision uses natively: the warp's
#: mma.sync/WMMA form, or the warpgroup (wgmma, sm_90a) form.
NATIVE = {"fp16": ("HMMA", "HGMMA"), "int8": ("IMMA", "IGMMA"), "int4": ("IMMA", "IGMMA")}


@dataclass(frozen=True)
class Instruction:
    """One SASS instruction: full mnemonic (with modifiers) and whether it can execute."""

    mnemonic: str
    live: bool

    @property
    def opcode(self) -> str:
        return self.mnemonic.split(".", 1)[0]

    @property
    def cls(self) -> str:
        for name, pat in CLASSES:
            if re.fullmatch(pat, self.opcode):
                return name
        return "other"


def parse_sass(text: str) -> list[Instruction]:
    """Instructions of a ``cuobjdump -sass`` listing, in order (all functions)."""
    out = []
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            pred = (m["pred"] or "").strip()
            out.append(Instruction(m["op"], live=pred != "@!PT"))
    return out


def instruction_mix(text: str, kernel: str, arch: str, precision: str | None) -> pd.DataFrame:
    """Tidy static instruction counts of one listing: one row per (kernel, arch, class,
    mnemonic) with ``count`` (live instructions) and ``dead`` (``@!PT`` ones)."""
    ins = parse_sass(text)
    df = pd.DataFrame({"mnemonic": [i.mnemonic for i in ins], "cls": [i.cls for i in ins],
                       "live": [i.live for i in ins]})
    if df.empty:
        raise ValueError(f"{kernel} ({arch}): no SASS instructions in the listing")
    g = df.groupby(["cls", "mnemonic"])["live"].agg(count="sum", total="size").reset_index()
    g["dead"] = g["total"] - g["count"]
    g.insert(0, "kernel", kernel)
    g.insert(1, "arch", arch)
    g.insert(2, "precision", precision)
    return g.rename(columns={"cls": "class"}).drop(columns="total")


def operand_type(mma: str) -> str | None:
    """The input type of a registry ``mma`` entry: ``mma.sync.m16n8k64.s32.s4`` -> ``s4``,
    ``wmma.m16n16k16.f32.f16`` -> ``f16``, ``wgmma.mma_async.m64n256k32.s32.s8.s8`` -> ``s8``;
    None for a kernel without MMA (``dp4a ...``)."""
    parts = mma.split()[0].split(".")
    return parts[-1] if parts[0] in ("mma", "wmma", "wgmma") else None


def tensor_summary(mix: pd.DataFrame, resources: dict, operand: str | None = None) -> dict:
    """Per (kernel, arch): tensor mnemonics, class totals, registers, shared memory, spills,
    and ``emulated``: a kernel that issues tensor instructions but not those of the
    operand type its PTX asks for (``operand``, e.g. ``s4``; default: the precision's own).
    An s4 mma without an S4 instruction is emulated (sm_90 lowers it to IMMA ... S8 plus
    unpacking); an INT4 kernel that unpacks to s8 itself and asks for s8 mma is not.
    A kernel without tensor instructions (dp4a) is not emulated.

    ``wgmma_serialized``: whether ptxas serialized the kernel's warpgroup MMAs, as one of its
    advisories in ``resources["ptxas_advisories"]`` says (for lack of registers, C7512; in a debug
    build, C7519; :func:`analysis.gpu.build.wgmma_serialized`): the SASS then waits for every
    wgmma before the next, ``WARPGROUP.DEPBAR.LE gsb0, 0x0`` after each. None where the resource
    report predates the advisories (no ``ptxas_advisories`` key), never False for it; a reader
    of the CSV gets None as an empty cell (NaN), which ``astype(bool)`` would turn into True."""
    live = mix[mix["count"] > 0]
    tensor = sorted(live.loc[live["class"] == "tensor", "mnemonic"].unique())
    prec = mix["precision"].iloc[0]
    # a kernel without tensor instructions (dp4a) is not emulating one
    if not tensor:
        emulated = False
    elif (operand or {"int4": "s4"}.get(prec)) == "s4":
        emulated = not any(".S4" in t for t in tensor)
    else:
        emulated = not any(t.startswith(NATIVE[prec]) for t in tensor) if prec in NATIVE else False
    totals = live.groupby("class")["count"].sum().to_dict()
    return {
        "kernel": mix["kernel"].iloc[0], "arch": mix["arch"].iloc[0], "precision": prec,
        "tensor_instructions": " ".join(tensor), "emulated": emulated,
        "wgmma_serialized": (wgmma_serialized(resources["ptxas_advisories"]) if "ptxas_advisories" in resources
                             else None),
        **{f"static_{c.replace(' ', '_').replace('/', '_').replace('.', '_')}": int(totals.get(c, 0))
           for c, _ in [*CLASSES, ("other", "")]},
        "static_total": int(live["count"].sum()), "never_executed_@!PT": int(mix["dead"].sum()),
        "registers": resources["registers"], "shared_bytes": resources["shared_bytes"],
        "spill_store_bytes": resources["spill_store_bytes"], "spill_load_bytes": resources["spill_load_bytes"],
        "nvcc": resources.get("nvcc"),
    }


def read_build(sass: Path, resources: Path, kernel: str, arch: str, precision: str | None,
               operand: str | None = None) -> tuple[pd.DataFrame, dict]:
    """The mix table and summary row of one build (its .sass and .resources.json);
    ``operand``: the MMA input type the kernel asks for (see :func:`tensor_summary`)."""
    import json

    mix = instruction_mix(Path(sass).read_text(encoding="utf-8"), kernel, arch, precision)
    return mix, tensor_summary(mix, json.loads(Path(resources).read_text(encoding="utf-8")), operand)


def mix_figure(summary: pd.DataFrame):
    """Static instruction classes per kernel and architecture (stacked bars, instructions)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from analysis.study.figures import OKABE_ITO, STYLE

    cols = [c for c in summary.columns if c.startswith("static_") and c != "static_total"]
    s = summary.sort_values(["precision", "kernel", "arch"]).reset_index(drop=True)
    labels = [f"{k} {a}" + (" (emulated)" if e else "") for k, a, e in zip(s["kernel"], s["arch"], s["emulated"])]
    with plt.rc_context(STYLE):
        # horizontal bars: one readable row per kernel and architecture
        fig, ax = plt.subplots(figsize=(8.5, 0.17 * len(s) + 1.4), layout="constrained")
        left = np.zeros(len(s))
        for i, c in enumerate(cols):
            ax.barh(range(len(s)), s[c], left=left, color=OKABE_ITO[i % len(OKABE_ITO)],
                    label=c.removeprefix("static_").replace("_", " "), hatch="//" if i >= len(OKABE_ITO) else None)
            left += s[c].to_numpy()
        ax.set_yticks(range(len(s)), labels, fontsize=6)
        ax.invert_yaxis()
        ax.set_xlabel("static SASS instructions (instruction)")
        ax.set_title("Static instruction mix per kernel and architecture (cuobjdump -sass)", fontsize=9)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
    return fig
