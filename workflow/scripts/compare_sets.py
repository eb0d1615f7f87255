"""Rule compare_sets: diff two profile sets, flag changes beyond the noise, draw the headline."""
import pandas as pd

from analysis.compare.diff import (REPORT_FIELDS, Thresholds, compare_metric_tables, device_attributes,
                                   metadata_side_by_side, read_metric_table, status_counts, versions_from_table)
from analysis.compare.renames import one_sided_reasons, reason_counts
from analysis.compare.figures import headline_figure
from analysis.study.figures import save
from analysis.io import atomic_path, write_csv
from analysis.logged import logged, warn
from analysis.reports.noise import read_noise_model
from analysis.reports.tables import read_metadata
from analysis.compare.explain import noise_caveat, unmatched_warning, write_comparison_explanations
from analysis.study.evidence import load_set_evidence

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    a, b = sm.wildcards.a, sm.wildcards.b
    model = read_noise_model(sm.input.model[0]) if sm.input.model else None
    tables = read_metric_table(sm.input.baseline), read_metric_table(sm.input.candidate)
    diff = compare_metric_tables(*tables, Thresholds(**sm.params.thresholds), model, sm.params.model_name)
    own = [read_metadata(m[0] if m else None) for m in (sm.input.meta_baseline, sm.input.meta_candidate)]
    from_reports = tuple(versions_from_table(pd.read_parquet(t, columns=list(REPORT_FIELDS)))
                         for t in (sm.input.table_baseline, sm.input.table_candidate))
    meta = metadata_side_by_side(own[0], own[1], (a, b), from_reports, tuple(map(device_attributes, tables)))
    write_csv(meta, sm.output.metadata)
    # one Nsight Compute version per side (metadata.json's, else the reports' if they agree)
    versions = [m.get("ncu_version") or (r["ncu_version"] if r["ncu_version"] and "," not in r["ncu_version"]
                                          else None) for m, r in zip(own, from_reports)]
    diff["reason"] = one_sided_reasons(diff, *versions)
    if said := unmatched_warning(diff, a, b):
        warn(said)
    with atomic_path(sm.output.diff) as tmp:
        diff.to_parquet(tmp, index=False)
    write_csv(diff[diff["flagged"]], sm.output.changes)
    save(headline_figure(diff, f"{b}\nagainst {a}", min_rel=Thresholds(**sm.params.thresholds).min_rel),
         sm.output.png, sm.output.pdf)
    counts = status_counts(diff, reason_counts(diff, diff["reason"]))
    write_csv(counts, sm.output.statuses)
    print(counts.to_string(index=False))
    inp = sm.input
    sides = [load_set_evidence(name, per_metric, inst, f, h, t[0] if t else None, s[0] if s else None,
                               inp.model[0] if inp.model else None, sm.params.model_name, table=full)
             for name, per_metric, full, inst, f, h, t, s in (
                 (a, inp.baseline, inp.table_baseline, inp.instances_baseline, inp.findings_baseline,
                  inp.hotspots_baseline, inp.timings_baseline, inp.samples_baseline),
                 (b, inp.candidate, inp.table_candidate, inp.instances_candidate, inp.findings_candidate,
                  inp.hotspots_candidate, inp.timings_candidate, inp.samples_candidate))]
    model_gpu = str(read_metadata(sm.input.model_meta[0]).get("gpu") or "") if sm.input.model_meta else ""
    caveat = noise_caveat(sm.params.model_name if model is not None else "", model_gpu,
                          tuple(r["gpu"] for r in from_reports))
    explained = write_comparison_explanations(diff, *sides, sm.output.explanations, sm.output.explanations_csv,
                                              sm.output.waterfalls_png, None,
                                              sm.params.thresholds.get("noise_factor", 3.0), caveat)
    print(f"explanations: {explained[['kernel_a', 'n']].drop_duplicates().shape[0]} launch pairs")
