"""Rule noise_model: the noise set's repeated profiles -> the per-metric noise model."""
import pandas as pd

from analysis.io import atomic_path, write_csv
from analysis.logged import logged
from analysis.reports.noise import noise_model, noise_model_page

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    table = pd.read_parquet(sm.input.metrics)
    model = noise_model(table)
    write_csv(model, sm.output.csv)
    with atomic_path(sm.output.md) as tmp:
        tmp.write_text(noise_model_page(model, table, sm.params.set), encoding="utf-8")
    print(f"noise model of {sm.params.set}: {len(model)} metric and N rows")
