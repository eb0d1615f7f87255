"""Rule set_metadata: metadata.json of the local GPU's profile set."""
from pathlib import Path

from analysis.logged import logged
from analysis.gpu.profile import write_set_metadata

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    write_set_metadata(Path(sm.output.meta), sm.wildcards.set, sm.params.gpu, sm.params.tiling,
                       section_set=sm.params.section_set, ncu=sm.params.ncu, kernel_tilings=sm.params.kernel_tilings,
                       build_records=[Path(p) for p in sm.input.builds])
