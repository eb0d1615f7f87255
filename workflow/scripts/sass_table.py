"""Rule sass_table: static SASS instruction mix and resources of every build."""
from pathlib import Path

import pandas as pd

from analysis.figures import save
from analysis.io import atomic_path
from analysis.logged import logged
from analysis.sass import mix_figure, read_build

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    mixes, rows = [], []
    for sass, res in zip(sorted(sm.input.sass), sorted(sm.input.resources)):
        arch, kernel = Path(sass).parent.name, Path(sass).stem
        mix, row = read_build(Path(sass), Path(res), kernel, arch, sm.params.kernels[kernel]["precision"])
        mixes.append(mix)
        rows.append(row)
    summary = pd.DataFrame(rows).sort_values(["precision", "kernel", "arch"])
    with atomic_path(sm.output.mix) as tmp:
        pd.concat(mixes, ignore_index=True).to_parquet(tmp, index=False)
    with atomic_path(sm.output.summary) as tmp:
        summary.to_csv(tmp, index=False)
    save(mix_figure(summary), sm.output.png, sm.output.pdf)
