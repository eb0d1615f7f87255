"""Rule disassemble: cuobjdump -sass of a cubin."""
from pathlib import Path

from analysis.build import disassemble
from analysis.logged import logged

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    disassemble(Path(sm.input.cubin), Path(sm.output.sass), cuobjdump=sm.params.cuobjdump)
