# The study's tables, claims and figures (analysis.study.claims, analysis.study.plots): for every
# set with event timings, all in one job per set (one interpreter start instead of two;
# docs/benchmarks.md). The figures are drawn from the tables as written.


rule study:
    input:
        summary="results/tables/{set}/summary.csv",
        timings=timings_input,
        references=references_input,
        paired=paired_input,
        static=static_summary_input,
        metadata=metadata_input,
        # the claims about a cause quote the top parts of the set's explanations
        explanations="figures/{set}/explain/explanations.csv",
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
        **figure_outputs("figures/{set}/study", STUDY_FIGURES),
    params:
        kernels=KERNELS,
        names=STUDY_FIGURES,
    log:
        "logs/study/{set}.log",
    benchmark:
        "benchmarks/study/{set}.tsv"
    script:
        "../scripts/study.py"
