"""Rule set_table: per-report tables -> one tidy table for the profile set."""
import pandas as pd

from analysis.io import atomic_path
from analysis.logged import logged
from analysis.schemas import validate_set, validate_tidy
from analysis.tables import read_metadata, set_table

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    meta = read_metadata(sm.input.metadata[0] if sm.input.metadata else None)
    table = set_table([validate_tidy(pd.read_parquet(p), p) for p in sm.input.reports], sm.wildcards.set, meta)
    validate_set(table, sm.output.metrics)
    with atomic_path(sm.output.metrics) as tmp:
        table.to_parquet(tmp, index=False)
    print(f"{sm.wildcards.set}: {len(table)} rows from {len(sm.input.reports)} reports")
