"""Rule profile: ncu --set full on one kernel launch, report stored xz-compressed."""
from pathlib import Path

from analysis.logged import logged
from analysis.profile import profile_kernel

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    profile_kernel(Path(sm.input.cubin), sm.wildcards.kernel, sm.params.precision, int(sm.wildcards.n),
                   sm.params.tiling, Path(sm.output.report), section_set=sm.params.section_set,
                   warmups=sm.params.warmups, ncu=sm.params.ncu, options=sm.params.options)
