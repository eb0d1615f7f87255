# The study's tables, claims and figures (analysis.study): for every set with event timings.
# The figures of a set are drawn in one job (one interpreter start instead of five).


rule study_tables:
    input:
        summary="results/tables/{set}/summary.csv",
        timings=timings_input,
        references=references_input,
        paired=paired_input,
        static=static_summary_input,
        metadata=metadata_input,
    output:
        speedups=report("figures/{set}/study/speedups.csv", caption="../report/speedups.rst",
                        category="Tables", subcategory="{set}", labels={"table": "speedups"}),
        claims=report("figures/{set}/study/claims.csv", caption="../report/claims.rst",
                      category="Tables", subcategory="{set}", labels={"table": "claims"}),
        claims_md="figures/{set}/study/claims.md",
        kernel_summary=report("figures/{set}/study/kernel_summary.csv", caption="../report/kernel_summary.rst",
                              category="Tables", subcategory="{set}", labels={"table": "kernel summary"}),
        kernel_summary_md="figures/{set}/study/kernel_summary.md",
        occupancy="figures/{set}/study/occupancy_correlation.csv",
        instructions="figures/{set}/study/instruction_ratios.csv",
        roofline="figures/{set}/study/roofline.csv",
    params:
        kernels=KERNELS,
    log:
        "logs/study_tables/{set}.log",
    benchmark:
        "benchmarks/study_tables/{set}.tsv"
    script:
        "../scripts/study_tables.py"


rule study_figures:
    input:
        speedups="figures/{set}/study/speedups.csv",
        instructions="figures/{set}/study/instruction_ratios.csv",
        roofline="figures/{set}/study/roofline.csv",
        summary="results/tables/{set}/summary.csv",
        references=references_input,
        static=static_summary_input,
        metadata=metadata_input,
    output:
        **figure_outputs("figures/{set}/study", STUDY_FIGURES),
    params:
        names=STUDY_FIGURES,
    log:
        "logs/study_figures/{set}.log",
    benchmark:
        "benchmarks/study_figures/{set}.tsv"
    script:
        "../scripts/study_figures.py"
