"""Rule profile: ncu --set full on one launch of a kernel per N, in one ncu process."""
from pathlib import Path

from analysis.gpu.cluster import check_node
from analysis.logged import logged
from analysis.gpu.profile import profile_kernel

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    if sm.params.expect_set:  # on a cluster: this node must make the set the report goes to
        check_node(sm.params.expect_set, sm.params.suffix, sm.params.ncu)
    profile_kernel(Path(sm.input.cubin), sm.wildcards.kernel, sm.params.precision, list(sm.params.sizes),
                   sm.params.tiling, Path(sm.output.report), section_set=sm.params.section_set,
                   warmups=sm.params.warmups, ncu=sm.params.ncu, options=sm.params.options)
