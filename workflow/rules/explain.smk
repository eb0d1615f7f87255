# Explanations: what limits each kernel and what accounts for each difference, from the
# reports' own evidence (analysis.study.explain, docs/explanations.md).


# The per-metric noise model, from the repeated profiles of config noise_set
# (config/noise.yaml; analysis.reports.noise): what comparisons and explanations take as
# the noise of a set without repeats.
if NOISE_SET:

    rule noise_model:
        input:
            metrics=f"results/tables/{NOISE_SET}/metrics.parquet",
        output:
            csv=report("figures/noise/noise_model.csv", caption="../report/noise_model.rst",
                       category="Explanations", subcategory="noise", labels={"table": "noise model"}),
            md="figures/noise/noise_model.md",
        params:
            set=NOISE_SET,
        log:
            "logs/noise_model/noise_model.log",
        benchmark:
            "benchmarks/noise_model/noise_model.tsv"
        script:
            "../scripts/noise_model.py"


# One job per set: every registry kernel against its baseline at every N (a page and a
# waterfall per pair at the largest N), the findings and hot-spot pages and the stall
# stacks, all from the set's tables (one interpreter start per set).
rule explain_set:
    input:
        metric_table="results/tables/{set}/per_metric.parquet",
        # the launches' positions in their reports, which key instances, findings and hot spots
        table="results/tables/{set}/metrics.parquet",
        instances="results/tables/{set}/instances.parquet",
        findings="results/tables/{set}/findings.parquet",
        hotspots="results/tables/{set}/hotspots.parquet",
        timings=timings_input,
        samples=samples_input,
        model=noise_model_input,
    output:
        explanations=report("figures/{set}/explain/explanations.csv", caption="../report/explanations.rst",
                            category="Explanations", subcategory="{set}", labels={"table": "explanations"}),
        # a page (.md) and a waterfall (.png) per kernel pair, {kernel}__vs__{baseline}, and index.md
        pairs=report(directory("figures/{set}/explain/pairs"), patterns=["{name}.{ext}"],
                     caption="../report/pair_page.rst", category="Explanations", subcategory="{set}",
                     labels=pair_item_labels),
        findings=report("figures/{set}/explain/findings.md", caption="../report/findings.rst",
                        category="Explanations", subcategory="{set}", labels={"page": "findings"}),
        hotspots=report("figures/{set}/explain/hotspots.md", caption="../report/hotspots.rst",
                        category="Explanations", subcategory="{set}", labels={"page": "source hot spots"}),
        stalls_csv="figures/{set}/explain/stalls.csv",
        stalls_png=report("figures/{set}/explain/stalls.png", caption="../report/stalls.rst",
                          category="Explanations", subcategory="{set}", labels={"figure": "stall stacks"}),
        stalls_pdf="figures/{set}/explain/stalls.pdf",
    params:
        kernels=KERNELS,
        factor=config.get("compare", {}).get("noise_factor", 3.0),
        model_name=NOISE_MODEL_NAME,
    log:
        "logs/explain_set/{set}.log",
    benchmark:
        "benchmarks/explain_set/{set}.tsv"
    script:
        "../scripts/explain_set.py"
