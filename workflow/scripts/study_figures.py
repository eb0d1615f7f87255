"""Rule study_figures: the study's figures of a set from its study tables, in one process."""
import pandas as pd

from analysis import study_figures as sf
from analysis.figures import save
from analysis.logged import logged
from analysis.schemas import validate_summary
from analysis.setfiles import read_metadata, read_references

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    title = sm.wildcards.set
    summary = validate_summary(pd.read_csv(sm.input.summary), sm.input.summary)
    refs = read_references(sm.input.references[0]) if sm.input.references else None
    static = pd.read_csv(sm.input.static[0]) if sm.input.static else None
    arch = read_metadata(sm.input.metadata[0] if sm.input.metadata else None).get("arch")
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
