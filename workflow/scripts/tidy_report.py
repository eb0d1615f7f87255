"""Rule tidy_report: one report -> its tidy metric table and its instance table (parquet)."""
from analysis.io import atomic_path
from analysis.logged import logged
from analysis.ncu import load_report_isolated
from analysis.schemas import validate_tidy

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    metrics, instances = load_report_isolated(sm.input.report)
    validate_tidy(metrics, sm.input.report)
    with atomic_path(sm.output.metrics) as tmp:
        metrics.to_parquet(tmp, index=False)
    with atomic_path(sm.output.instances) as tmp:
        instances.to_parquet(tmp, index=False)
    print(f"{sm.input.report}: {len(metrics)} metrics, {len(instances)} instance values")
