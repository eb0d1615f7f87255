# Reports -> tidy tables: one per report, one per profile set, and the summary.


rule tidy_report:
    input:
        report="profiles/{set}/reports/{report}.ncu-rep.xz",
    output:
        metrics="results/tidy/{set}/{report}.parquet",
        instances="results/tidy/{set}/{report}.instances.parquet",
    log:
        "logs/tidy_report/{set}/{report}.log",
    benchmark:
        "benchmarks/tidy_report/{set}/{report}.tsv"
    script:
        "../scripts/tidy_report.py"


rule set_table:
    input:
        reports=tidy_inputs,
        metadata=metadata_input,
    output:
        metrics="results/tables/{set}/metrics.parquet",
    log:
        "logs/set_table/{set}.log",
    benchmark:
        "benchmarks/set_table/{set}.tsv"
    script:
        "../scripts/set_table.py"


rule summary:
    input:
        metrics="results/tables/{set}/metrics.parquet",
        instances=instance_inputs,
        timings=timings_input,
    output:
        csv="results/tables/{set}/summary.csv",
    log:
        "logs/summary/{set}.log",
    benchmark:
        "benchmarks/summary/{set}.tsv"
    script:
        "../scripts/summary.py"


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
