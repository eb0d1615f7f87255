"""Rule compare_sets: diff two profile sets, flag changes beyond the noise, draw the headline."""
import pandas as pd

from analysis.compare.diff import (REPORT_FIELDS, Thresholds, compare_metric_tables, metadata_side_by_side,
                              read_metric_table, status_counts, versions_from_table)
from analysis.compare.renames import one_sided_reasons, reason_counts
from analysis.compare.figures import headline_figure
from analysis.study.figures import save
from analysis.io import atomic_path, write_csv
from analysis.logged import logged
from analysis.reports.tables import read_metadata

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    a, b = sm.wildcards.a, sm.wildcards.b
    diff = compare_metric_tables(read_metric_table(sm.input.baseline), read_metric_table(sm.input.candidate),
                                 Thresholds(**sm.params.thresholds))
    own = [read_metadata(m[0] if m else None) for m in (sm.input.meta_baseline, sm.input.meta_candidate)]
    from_reports = tuple(versions_from_table(pd.read_parquet(t, columns=list(REPORT_FIELDS)))
                         for t in (sm.input.table_baseline, sm.input.table_candidate))
    meta = metadata_side_by_side(own[0], own[1], (a, b), from_reports)
    write_csv(meta, sm.output.metadata)
    # one Nsight Compute version per side (metadata.json's, else the reports' if they agree)
    versions = [m.get("ncu_version") or (r["ncu_version"] if r["ncu_version"] and "," not in r["ncu_version"]
                                          else None) for m, r in zip(own, from_reports)]
    diff["reason"] = one_sided_reasons(diff, *versions)
    with atomic_path(sm.output.diff) as tmp:
        diff.to_parquet(tmp, index=False)
    write_csv(diff[diff["flagged"]], sm.output.changes)
    save(headline_figure(diff, f"{b}\nagainst {a}"), sm.output.png, sm.output.pdf)
    counts = status_counts(diff, reason_counts(diff, diff["reason"]))
    write_csv(counts, sm.output.statuses)
    print(counts.to_string(index=False))
