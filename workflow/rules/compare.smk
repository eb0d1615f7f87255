# Compare profile sets: `snakemake --cores 1 compare --config baseline=SET candidate=SET`.
# With no sets named, each set against config compare_baseline, or against the oldest set it
# shares kernels with (analysis.workflow.comparison_pairs; also part of the default target).


rule compare_sets:
    input:
        baseline="results/tables/{a}/per_metric.parquet",
        candidate="results/tables/{b}/per_metric.parquet",
        # GPU and versions the reports themselves give, for sets without a metadata.json; and
        # each launch's position in its report, which keys the explanations' evidence
        table_baseline="results/tables/{a}/metrics.parquet",
        table_candidate="results/tables/{b}/metrics.parquet",
        meta_baseline=lambda w: metadata_of(w.a),
        meta_candidate=lambda w: metadata_of(w.b),
        # the evidence the explanations read (analysis.compare.explain)
        instances_baseline="results/tables/{a}/instances.parquet",
        instances_candidate="results/tables/{b}/instances.parquet",
        findings_baseline="results/tables/{a}/findings.parquet",
        findings_candidate="results/tables/{b}/findings.parquet",
        hotspots_baseline="results/tables/{a}/hotspots.parquet",
        hotspots_candidate="results/tables/{b}/hotspots.parquet",
        timings_baseline=lambda w: timings_of(w.a),
        timings_candidate=lambda w: timings_of(w.b),
        samples_baseline=lambda w: samples_of(w.a),
        samples_candidate=lambda w: samples_of(w.b),
        model=noise_model_input,
        # the noise set's GPU: the pages say where the model was measured on another
        model_meta=lambda w: metadata_of(NOISE_SET) if NOISE_SET else [],
    output:
        diff="results/compare/{a}__vs__{b}/diff.parquet",
        changes=report("figures/compare/{a}__vs__{b}/changes.csv", caption="../report/changes.rst",
                       category="Set comparison", subcategory="{a} vs {b}", labels={"table": "changes"}),
        metadata="figures/compare/{a}__vs__{b}/metadata.csv",
        statuses="figures/compare/{a}__vs__{b}/statuses.csv",
        png=report("figures/compare/{a}__vs__{b}/headline.png", caption="../report/headline.rst",
                   category="Set comparison", subcategory="{a} vs {b}", labels={"figure": "headline"}),
        pdf="figures/compare/{a}__vs__{b}/headline.pdf",
        explanations=report("figures/compare/{a}__vs__{b}/explanations.md", caption="../report/set_explanations.rst",
                            category="Set comparison", subcategory="{a} vs {b}", labels={"page": "explanations"}),
        explanations_csv="figures/compare/{a}__vs__{b}/explanations.csv",
        waterfalls_png=report("figures/compare/{a}__vs__{b}/waterfalls.png", caption="../report/waterfall.rst",
                              category="Set comparison", subcategory="{a} vs {b}", labels={"figure": "waterfalls"}),
    params:
        thresholds=config.get("compare", {}),
        model_name=NOISE_MODEL_NAME,
    log:
        "logs/compare_sets/{a}__vs__{b}.log",
    benchmark:
        "benchmarks/compare_sets/{a}__vs__{b}.tsv"
    script:
        "../scripts/compare_sets.py"


rule compare:
    input:
        compare_outputs,
