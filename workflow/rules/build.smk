# Build every kernel for every configured architecture and disassemble it (no GPU needed).


rule build_cubin:
    input:
        source="kernels/{kernel}.cu",
        headers=["kernels/gemm_common.cuh", "kernels/ptx.cuh", "kernels/wmma_gemm.cuh", "kernels/mma_gemm.cuh"],
    output:
        cubin="results/build/{arch}/{kernel}.cubin",
        resources="results/build/{arch}/{kernel}.resources.json",
    params:
        defines=lambda w: tiling_from_config(config, w.kernel).defines(),
        nvcc=TOOLS.get("nvcc"),
    log:
        "logs/build_cubin/{arch}/{kernel}.log",
    benchmark:
        "benchmarks/build_cubin/{arch}/{kernel}.tsv"
    script:
        "../scripts/build_cubin.py"


# The register-only mma.sync loops whose rates are the tensor ceilings (rule references).
use rule build_cubin as build_ceilings with:
    input:
        source="kernels/ceilings/mma_peak.cu",
        headers=["kernels/ptx.cuh"],
    output:
        cubin="results/build/{arch}/ceilings/mma_peak.cubin",
        resources="results/build/{arch}/ceilings/mma_peak.resources.json",
    params:
        defines=[],
        nvcc=TOOLS.get("nvcc"),
        kernel="peak_mma_m16n8k16_f16_f32",
    log:
        "logs/build_ceilings/{arch}.log",
    benchmark:
        "benchmarks/build_ceilings/{arch}.tsv"


rule disassemble:
    input:
        cubin="results/build/{arch}/{kernel}.cubin",
    output:
        sass="results/build/{arch}/{kernel}.sass",
    params:
        cuobjdump=TOOLS.get("cuobjdump"),
    log:
        "logs/disassemble/{arch}/{kernel}.log",
    benchmark:
        "benchmarks/disassemble/{arch}/{kernel}.tsv"
    script:
        "../scripts/disassemble.py"


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
