"""Rule build_cubin: nvcc -> cubin + ptxas resource report."""
from pathlib import Path

from analysis.build import compile_cubin
from analysis.logged import logged

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    compile_cubin(Path(sm.input.source), sm.params.get("kernel", sm.wildcards.get("kernel")), sm.wildcards.arch, sm.params.defines,
                  Path(sm.output.cubin), Path(sm.output.resources), nvcc=sm.params.nvcc)
