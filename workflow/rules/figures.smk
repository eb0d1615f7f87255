# The study's figures, each drawn from the set's summary table alone.


rule figure:
    input:
        summary="results/tables/{set}/summary.csv",
    output:
        png="figures/{set}/{figure}.png",
        pdf="figures/{set}/{figure}.pdf",
    log:
        "logs/figure/{set}/{figure}.log",
    benchmark:
        "benchmarks/figure/{set}/{figure}.tsv"
    script:
        "../scripts/figure.py"
