"""Rule sass_table: static SASS instruction mix and resources of every build."""
from pathlib import Path

import pandas as pd

from analysis.study.figures import save
from analysis.io import atomic_path, write_csv
from analysis.logged import logged
from analysis.study.sass import mix_figure, operand_type, read_build

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    mixes, rows = [], []
    for sass in map(Path, sorted(sm.input.sass)):
        arch, kernel = sass.parent.name, sass.stem
        res = sass.with_suffix(".resources.json")  # written beside it by the build rule
        spec = sm.params.kernels[kernel]
        mix, row = read_build(sass, res, kernel, arch, spec["precision"], operand_type(spec["mma"]))
        mixes.append(mix)
        rows.append(row)
    summary = pd.DataFrame(rows).sort_values(["precision", "kernel", "arch"])
    with atomic_path(sm.output.mix) as tmp:
        pd.concat(mixes, ignore_index=True).to_parquet(tmp, index=False)
    write_csv(summary, sm.output.summary)
    save(mix_figure(summary), sm.output.png, sm.output.pdf)
