"""Rule references: ceilings and library GEMMs (references.csv), and the kernels beyond the
study timed in pairs with their library GEMM (paired.csv); analysis.gpu.references.measure."""
import os
from pathlib import Path

from analysis.gpu.cluster import check_node
from analysis.logged import logged
from analysis.gpu.paired import PairedKernel
from analysis.gpu.references import measure

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    if sm.params.expect_set:  # on a cluster: this node must make the set the files go to
        check_node(sm.params.expect_set, sm.params.suffix, sm.params.ncu)
    pairs = [PairedKernel(k, Path(cubin), sm.params.precisions[k], sm.params.tilings[k], sm.params.options[k])
             for k, cubin in zip(sm.params.paired_kernels, sm.input.paired_cubins, strict=True)]
    measure(Path(sm.input.cubin), list(sm.params.sizes), sm.params.warmups, sm.params.repeats,
            int.from_bytes(os.urandom(4), "little"), Path(sm.output.csv), pairs, sm.params.rounds,
            Path(sm.output.paired), Path(sm.input.wgmma_cubin[0]) if sm.input.wgmma_cubin else None)
