"""Rule summary: set table + instances + event timings -> one row per launch (per kernel and N for
this workflow's reports); event timings far from ncu's duration are flagged on the console."""
import pandas as pd

from analysis.io import write_csv
from analysis.logged import logged, warn
from analysis.schemas import validate_set, validate_summary
from analysis.setfiles import read_timings
from analysis.tables import check_timings, summary

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    metrics = validate_set(pd.read_parquet(sm.input.metrics), sm.input.metrics)
    instances = pd.read_parquet(sm.input.instances)
    timings = read_timings(sm.input.timings[0]) if sm.input.timings else None
    table = validate_summary(summary(metrics, instances, timings), sm.output.csv)
    for msg in check_timings(table, sm.input.timings[0]) if sm.input.timings else []:
        warn(msg)
    write_csv(table, sm.output.csv)
