# Reports -> tidy tables: one per profile set, and the summary.


# One job per set reads every report in a pool of reader processes (analysis.reports.parse); the
# per-report tables are cached under results/tidy/{set}/ by content, so a set that gains
# a report re-reads only that one. A report that crashes or hangs the native reader fails
# the set's job naming that file; the other reports stay cached.
rule parse_set:
    input:
        reports=set_report_files,
        metadata=metadata_input,
        timings=timings_input,
        # canonical metric names of the per-metric table: a new alias re-makes it
        aliases=ALIASES,
    output:
        metrics="results/tables/{set}/metrics.parquet",
        instances="results/tables/{set}/instances.parquet",
        # what rule compare_sets reads: reduced once per set, not in every pair
        metric_table="results/tables/{set}/per_metric.parquet",
        # one row per kernel and N, with the event timings: made here, from the tables in
        # memory, rather than by a job of its own (docs/benchmarks.md)
        summary="results/tables/{set}/summary.csv",
        # the unit of each of its numeric columns (analysis.reports.tables.summary_units)
        summary_units="results/tables/{set}/summary_units.csv",
        # Nsight Compute's guided-analysis findings and the most-sampled SASS instructions of
        # every launch, read from the same opening of each report (analysis.reports.findings,
        # analysis.reports.hotspots)
        findings="results/tables/{set}/findings.parquet",
        hotspots="results/tables/{set}/hotspots.parquet",
    params:
        cache=lambda w: f"results/tidy/{w.set}",
        metadata=lambda w, input: f"--metadata {input.metadata[0]}" if input.metadata else "",
        timings=lambda w, input: f"--timings {input.timings[0]}" if input.timings else "",
    # Snakemake caps this at --cores (local) or --max-threads (cluster profiles).
    threads: parse_threads
    log:
        "logs/parse_set/{set}.log",
    benchmark:
        "benchmarks/parse_set/{set}.tsv"
    shell:
        "{PYTHON} -m analysis.reports.parse --set {wildcards.set} {params.metadata} {params.timings} --cache {params.cache}"
        " --workers {threads} --metrics {output.metrics} --instances {output.instances}"
        " --metric-table {output.metric_table} --summary {output.summary}"
        " --summary-units {output.summary_units}"
        " --findings {output.findings} --hotspots {output.hotspots}"
        " --log {log} {input.reports:q}"


rule quantization_error:
    output:
        csv=report("figures/quant/quantization_error.csv", caption="../report/quantization_error.rst",
                   category="Tables", subcategory="quantization", labels={"table": "quantization error"}),
    params:
        sizes=[(512, 512, k) for k in (512, 1024, 2048, 4096, 8192)],
        seed=config.get("quant_seed", 0),
    log:
        "logs/quantization_error/quantization_error.log",
    benchmark:
        "benchmarks/quantization_error/quantization_error.tsv"
    script:
        "../scripts/quantization_error.py"
