"""Rule study_figures: the study's figures of a set from its study tables, in one process."""
import json

import pandas as pd

from analysis import study_figures as sf
from analysis.figures import save
from analysis.logged import logged
from analysis.schemas import validate_references, validate_summary

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    title = sm.wildcards.set
    summary = validate_summary(pd.read_csv(sm.input.summary), sm.input.summary)
    refs = (validate_references(pd.read_csv(sm.input.references[0]), sm.input.references[0])
            if sm.input.references else None)
    static = pd.read_csv(sm.input.static[0]) if sm.input.static else None
    arch = json.load(open(sm.input.metadata[0], encoding="utf-8"))["arch"] if sm.input.metadata else None
    speedups = pd.read_csv(sm.input.speedups)
    draw = {
        "throughput": lambda: sf.throughput(summary, refs, title),
        "speedup": lambda: sf.speedup(speedups, title),
        "instructions": lambda: sf.instructions(pd.read_csv(sm.input.instructions), static, arch, title),
        "ablation": lambda: sf.ablation(speedups, title),
        "roofline": lambda: sf.roofline(pd.read_csv(sm.input.roofline), refs, title),
    }
    for name in sm.params.names:
        save(draw[name](), sm.output[f"{name}_png"], sm.output[f"{name}_pdf"])
