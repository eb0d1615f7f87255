"""Rule compare_sets: diff two profile sets, flag changes beyond the noise, draw the headline."""
import pandas as pd

from analysis.compare import (REPORT_FIELDS, Thresholds, compare_metric_tables, metadata_side_by_side,
                              read_metric_table, status_counts, versions_from_table)
from analysis.compare_figures import headline_figure
from analysis.figures import save
from analysis.io import atomic_path, write_csv
from analysis.logged import logged
from analysis.tables import read_metadata

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    a, b = sm.wildcards.a, sm.wildcards.b
    diff = compare_metric_tables(read_metric_table(sm.input.baseline), read_metric_table(sm.input.candidate),
                                 Thresholds(**sm.params.thresholds))
    with atomic_path(sm.output.diff) as tmp:
        diff.to_parquet(tmp, index=False)
    write_csv(diff[diff["flagged"]], sm.output.changes)
    meta = metadata_side_by_side(read_metadata(sm.input.meta_baseline[0] if sm.input.meta_baseline else None),
                                 read_metadata(sm.input.meta_candidate[0] if sm.input.meta_candidate else None),
                                 (a, b),
                                 tuple(versions_from_table(pd.read_parquet(t, columns=list(REPORT_FIELDS)))
                                       for t in (sm.input.table_baseline, sm.input.table_candidate)))
    write_csv(meta, sm.output.metadata)
    save(headline_figure(diff, f"{b}\nagainst {a}"), sm.output.png, sm.output.pdf)
    counts = status_counts(diff)
    write_csv(counts, sm.output.statuses)
    print(counts.to_string(index=False))
