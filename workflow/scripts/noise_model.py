"""Rule noise_model: the noise set's repeated profiles -> the per-metric noise model."""
import pandas as pd

from analysis.io import write_csv, write_text
from analysis.logged import logged
from analysis.reports.noise import noise_model, noise_model_page

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    table = pd.read_parquet(sm.input.metrics)
    model = noise_model(table)
    write_csv(model, sm.output.csv)
    write_text(sm.output.md, noise_model_page(model, table, sm.params.set))
    print(f"noise model of {sm.params.set}: {len(model)} metric and N rows")
