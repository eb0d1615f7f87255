# Tensor-core GEMM kernels: build, check, time, profile with Nsight Compute, then
# tidy tables and figures. `snakemake --cores 1`; see README.md.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/build.smk"
include: "workflow/rules/gpu.smk"
include: "workflow/rules/tables.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/compare.smk"
include: "workflow/rules/study.smk"
include: "workflow/rules/explain.smk"
include: "workflow/rules/import.smk"


report: "workflow/report/workflow.rst"


rule all:
    input:
        final_outputs,
    default_target: True
