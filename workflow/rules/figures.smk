# The study's figures, each drawn from the set's summary table alone.


rule figure:
    input:
        summary="results/tables/{set}/summary.csv",
    output:
        png=report("figures/{set}/{figure}.png", caption="../report/figure.rst", category="Figures",
                   subcategory="{set}", labels={"figure": "{figure}"}),
        pdf="figures/{set}/{figure}.pdf",
    log:
        "logs/figure/{set}/{figure}.log",
    benchmark:
        "benchmarks/figure/{set}/{figure}.tsv"
    script:
        "../scripts/figure.py"
