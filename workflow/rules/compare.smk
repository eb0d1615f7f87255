# Compare profile sets: `snakemake --cores 1 compare --config baseline=SET candidate=SET`.
# With no sets named, each set against config compare_baseline, or against the oldest set it
# shares kernels with (analysis.workflow.comparison_pairs; also part of the default target).


rule compare_sets:
    input:
        baseline="results/tables/{a}/per_metric.parquet",
        candidate="results/tables/{b}/per_metric.parquet",
        # GPU and versions the reports themselves give, for sets without a metadata.json
        table_baseline="results/tables/{a}/metrics.parquet",
        table_candidate="results/tables/{b}/metrics.parquet",
        meta_baseline=lambda w: metadata_of(w.a),
        meta_candidate=lambda w: metadata_of(w.b),
    output:
        diff="results/compare/{a}__vs__{b}/diff.parquet",
        changes=report("figures/compare/{a}__vs__{b}/changes.csv", caption="../report/changes.rst",
                       category="Set comparison", subcategory="{a} vs {b}", labels={"table": "changes"}),
        metadata="figures/compare/{a}__vs__{b}/metadata.csv",
        statuses="figures/compare/{a}__vs__{b}/statuses.csv",
        png=report("figures/compare/{a}__vs__{b}/headline.png", caption="../report/headline.rst",
                   category="Set comparison", subcategory="{a} vs {b}", labels={"figure": "headline"}),
        pdf="figures/compare/{a}__vs__{b}/headline.pdf",
    params:
        thresholds=config.get("compare", {}),
    log:
        "logs/compare_sets/{a}__vs__{b}.log",
    benchmark:
        "benchmarks/compare_sets/{a}__vs__{b}.tsv"
    script:
        "../scripts/compare_sets.py"


rule compare:
    input:
        compare_outputs,
