"""Rule timings: the harness's JSON records -> the set's timings.csv."""
import json

from analysis.io import write_csv
from analysis.logged import logged
from analysis.reports.tables import timing_samples_table, timings_table

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    records = [json.load(open(p, encoding="utf-8")) for p in sm.input.records]
    write_csv(timings_table(records), sm.output.csv)
    write_csv(timing_samples_table(records), sm.output.samples)
