# The per-set figures, all drawn in one job from the set's summary table alone.


rule set_figures:
    input:
        summary="results/tables/{set}/summary.csv",
    output:
        **figure_outputs("figures/{set}", FIGURE_NAMES),
    params:
        names=FIGURE_NAMES,
    log:
        "logs/set_figures/{set}.log",
    benchmark:
        "benchmarks/set_figures/{set}.tsv"
    script:
        "../scripts/set_figures.py"
