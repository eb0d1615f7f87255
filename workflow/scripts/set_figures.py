"""Rule set_figures: every per-set figure from the set's summary table, in one process. A
figure with nothing to draw (analysis.study.figures.why_not_drawn) is written as a placeholder
saying why, and the log says it in one line."""
import pandas as pd

from analysis.study.figures import FIGURES, placeholder, save, why_not_drawn
from analysis.logged import logged
from analysis.reports.schemas import read_summary

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    summary = read_summary(sm.input.summary)
    for name in sm.params.names:
        reason = why_not_drawn(name, summary)
        if reason is None:
            fig = FIGURES[name](summary, sm.wildcards.set)
        else:
            print(f"{sm.wildcards.set}: {name} not drawn: {reason}")
            fig = placeholder(name, sm.wildcards.set, reason)
        save(fig, sm.output[f"{name}_png"], sm.output[f"{name}_pdf"])
