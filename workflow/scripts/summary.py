"""Rule summary: set table + instances + event timings -> one row per (kernel, N)."""
import pandas as pd

from analysis.io import write_csv
from analysis.logged import logged
from analysis.schemas import validate_set, validate_summary
from analysis.setfiles import read_timings
from analysis.tables import summary

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    metrics = validate_set(pd.read_parquet(sm.input.metrics), sm.input.metrics)
    instances = pd.read_parquet(sm.input.instances)
    timings = read_timings(sm.input.timings[0]) if sm.input.timings else None
    table = validate_summary(summary(metrics, instances, timings), sm.output.csv)
    write_csv(table, sm.output.csv)
