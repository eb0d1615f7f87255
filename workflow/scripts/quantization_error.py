"""Rule quantization_error: the study's accuracy appendix for INT8 and INT4."""
from analysis.io import atomic_path
from analysis.logged import logged
from analysis.quant import quantization_table

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    table = quantization_table([tuple(s) for s in sm.params.sizes], sm.params.seed)
    with atomic_path(sm.output.csv) as tmp:
        table.to_csv(tmp, index=False)
    print(table.to_string())
