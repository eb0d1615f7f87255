# The per-set figures, all drawn in one job from the set's summary table alone.


rule set_figures:
    input:
        summary="results/tables/{set}/summary.csv",
    output:
        **figure_outputs("figures/{set}", FIGURE_NAMES),
    params:
        names=FIGURE_NAMES,
        # each kernel's colour and marker come from the registry (analysis.style): a kernel
        # registered or renamed redraws every set's figures
        kernels=KERNELS,
    log:
        "logs/set_figures/{set}.log",
    benchmark:
        "benchmarks/set_figures/{set}.tsv"
    script:
        "../scripts/set_figures.py"
