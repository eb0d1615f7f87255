"""Rule set_figures: every per-set figure from the set's summary table, in one process."""
import pandas as pd

from analysis.figures import FIGURES, save
from analysis.logged import logged
from analysis.schemas import validate_summary

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    summary = validate_summary(pd.read_csv(sm.input.summary), sm.input.summary)
    for name in sm.params.names:
        save(FIGURES[name](summary, sm.wildcards.set), sm.output[f"{name}_png"], sm.output[f"{name}_pdf"])
