# Build every kernel for every configured architecture and disassemble it (no GPU needed).


# One job per kernel and architecture: nvcc, then cuobjdump -sass. A shell job running
# `python -m analysis.gpu.build` (light imports) rather than script: or run:, which start an
# interpreter with Snakemake in it per job (docs/benchmarks.md).
rule build:
    input:
        source="kernels/{kernel}.cu",
        headers=KERNEL_HEADERS,
    output:
        cubin="results/build/{arch}/{kernel}.cubin",
        resources="results/build/{arch}/{kernel}.resources.json",
        sass="results/build/{arch}/{kernel}.sass",
    params:
        defines=lambda w: shlex.join(tiling_from_config(config, w.kernel).defines()),
        tools=tool_options("nvcc", "cuobjdump"),
    log:
        "logs/build/{arch}/{kernel}.log",
    benchmark:
        "benchmarks/build/{arch}/{kernel}.tsv"
    shell:
        "{PYTHON} -m analysis.gpu.build --source {input.source} --kernel {wildcards.kernel} --arch {wildcards.arch}"
        " --cubin {output.cubin} --resources {output.resources} --sass {output.sass} --log {log}"
        " {params.tools} -- {params.defines}"


# The register-only mma.sync loops whose rates are the tensor ceilings (rule references).
rule build_ceilings:
    input:
        source="kernels/ceilings/mma_peak.cu",
        headers=["kernels/ptx.cuh"],
    output:
        cubin="results/build/{arch}/ceilings/mma_peak.cubin",
        resources="results/build/{arch}/ceilings/mma_peak.resources.json",
    params:
        tools=tool_options("nvcc"),
    log:
        "logs/build_ceilings/{arch}.log",
    benchmark:
        "benchmarks/build_ceilings/{arch}.tsv"
    shell:
        "{PYTHON} -m analysis.gpu.build --source {input.source} --kernel peak_mma_m16n8k16_f16_f32"
        " --arch {wildcards.arch} --cubin {output.cubin} --resources {output.resources} --log {log} {params.tools}"


# The warpgroup-MMA loops whose rates are Hopper's tensor ceilings (sm_90a; rule references
# on a Hopper GPU).
rule build_wgmma_ceilings:
    input:
        source="kernels/ceilings/wgmma_peak.cu",
        headers=["kernels/hopper.cuh", "kernels/ceilings/operand_fill.cuh"],
    output:
        cubin="results/build/{arch}/ceilings/wgmma_peak.cubin",
        resources="results/build/{arch}/ceilings/wgmma_peak.resources.json",
        sass="results/build/{arch}/ceilings/wgmma_peak.sass",
    wildcard_constraints:
        arch="sm_90",
    params:
        tools=tool_options("nvcc", "cuobjdump"),
    log:
        "logs/build_wgmma_ceilings/{arch}.log",
    benchmark:
        "benchmarks/build_wgmma_ceilings/{arch}.tsv"
    shell:
        "{PYTHON} -m analysis.gpu.build --source {input.source} --kernel peak_wgmma_m64n256k16_f16_f32"
        " --arch {wildcards.arch} --cubin {output.cubin} --resources {output.resources} --sass {output.sass}"
        " --log {log} {params.tools} -- -arch=sm_90a"


rule sass_table:
    input:
        sass=lambda w: [p for p in build_outputs() if p.endswith(".sass")],
        resources=lambda w: [p for p in build_outputs() if p.endswith(".resources.json")],
    output:
        mix="results/tables/sass/static_mix.parquet",
        summary=report("figures/sass/static_summary.csv", caption="../report/static_summary.rst",
                       category="Tables", subcategory="static SASS", labels={"table": "static SASS summary"}),
        png=report("figures/sass/static_mix.png", caption="../report/static_mix.rst", category="Figures",
                   subcategory="static SASS", labels={"figure": "static instruction mix"}),
        pdf="figures/sass/static_mix.pdf",
    params:
        kernels=KERNELS,
    log:
        "logs/sass_table/sass_table.log",
    benchmark:
        "benchmarks/sass_table/sass_table.tsv"
    script:
        "../scripts/sass_table.py"
