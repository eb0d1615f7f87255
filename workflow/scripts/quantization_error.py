"""Rule quantization_error: the study's accuracy appendix for INT8 and INT4."""
from analysis.io import write_csv
from analysis.logged import logged
from analysis.study.quant import quantization_table

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    table = quantization_table([tuple(s) for s in sm.params.sizes], sm.params.seed)
    write_csv(table, sm.output.csv)
    print(table.to_string())
