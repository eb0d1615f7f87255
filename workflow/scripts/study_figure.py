"""Rule study_figure: one of the study's figures from the set's study tables."""
import json

import pandas as pd

from analysis import study_figures as sf
from analysis.figures import save
from analysis.logged import logged
from analysis.schemas import validate_references, validate_summary

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    name, title = sm.wildcards.study_figure, sm.wildcards.set
    summary = validate_summary(pd.read_csv(sm.input.summary), sm.input.summary)
    refs = (validate_references(pd.read_csv(sm.input.references[0]), sm.input.references[0])
            if sm.input.references else None)
    static = pd.read_csv(sm.input.static[0]) if sm.input.static else None
    arch = json.load(open(sm.input.metadata[0], encoding="utf-8"))["arch"] if sm.input.metadata else None
    sp = pd.read_csv(sm.input.speedups)
    if name == "throughput":
        fig = sf.throughput(summary, refs, title)
    elif name == "speedup":
        fig = sf.speedup(sp, title)
    elif name == "instructions":
        fig = sf.instructions(pd.read_csv(sm.input.instructions), static, arch, title)
    elif name == "ablation":
        fig = sf.ablation(sp, title)
    else:
        fig = sf.roofline(pd.read_csv(sm.input.roofline), refs, title)
    save(fig, sm.output.png, sm.output.pdf)
