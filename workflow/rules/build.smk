# Build every kernel for every configured architecture and disassemble it (no GPU needed).


rule build_cubin:
    input:
        source="kernels/{kernel}.cu",
        headers=["kernels/gemm_common.cuh", "kernels/ptx.cuh", "kernels/wmma_gemm.cuh"],
    output:
        cubin="results/build/{arch}/{kernel}.cubin",
        resources="results/build/{arch}/{kernel}.resources.json",
    params:
        defines=TILING.defines(),
        nvcc=TOOLS.get("nvcc"),
    log:
        "logs/build_cubin/{arch}/{kernel}.log",
    benchmark:
        "benchmarks/build_cubin/{arch}/{kernel}.tsv"
    script:
        "../scripts/build_cubin.py"


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
