"""Rule figure: one of the study's figures from the set's summary table."""
from analysis.figures import draw
from analysis.logged import logged

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    draw(sm.wildcards.figure, sm.input.summary, sm.output.png, sm.output.pdf, title=sm.wildcards.set)
