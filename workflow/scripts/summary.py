"""Rule summary: set table + instances + event timings -> one row per launch (per kernel and N for
this workflow's reports); event timings far from ncu's duration are flagged on the console."""
import sys

import pandas as pd

from analysis.io import write_csv
from analysis.logged import logged
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
        print(f"warning: {msg}", file=sys.__stderr__)  # on the console; the next line puts it in the log
        print(f"warning: {msg}")
    write_csv(table, sm.output.csv)
