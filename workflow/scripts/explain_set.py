"""Rule explain_set: a set's explanation pages, tables and figures (analysis.study.explain_set)."""
from pathlib import Path

from analysis.logged import logged
from analysis.study.evidence import load_set_evidence
from analysis.study.explain_set import write_set_explanations

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    ev = load_set_evidence(sm.wildcards.set, sm.input.metric_table, sm.input.instances, sm.input.findings,
                           sm.input.hotspots, sm.input.timings[0] if sm.input.timings else None,
                           sm.input.samples[0] if sm.input.samples else None,
                           sm.input.model[0] if sm.input.model else None, sm.params.model_name,
                           table=sm.input.table)
    table = write_set_explanations(ev, sm.params.kernels, Path(sm.output.explanations).parent, sm.params.factor)
    print(f"{sm.wildcards.set}: {table[['kernel_a', 'kernel_b']].drop_duplicates().shape[0]} kernel pairs, "
          f"{len(table)} rows of explanations")
