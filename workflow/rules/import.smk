# Reports made elsewhere into a profile set, then its tables and figures:
# `snakemake --cores 1 import_set --config source=DIR set=NAME` (analysis.reports.importing).

if IMPORT:

    # The source file is a parameter, not an input: Snakemake reads <name> in an input path
    # as a path variable, and file names such as "scale<float> run 1.ncu-rep" are common.
    rule import_report:
        params:
            source=lambda w: str(IMPORT[w.stem]),
        output:
            report=f"profiles/{IMPORT_SET}/reports/{{stem}}.ncu-rep.xz",
        wildcard_constraints:
            stem="|".join(re.escape(s) for s in IMPORT),
        log:
            f"logs/import_report/{IMPORT_SET}/{{stem}}.log",
        benchmark:
            f"benchmarks/import_report/{IMPORT_SET}/{{stem}}.tsv"
        shell:
            "{PYTHON} -m analysis.reports.importing {params.source:q} {output.report:q} > {log:q} 2>&1"
            " || {{ tail -n 1 {log:q} >&2; exit 1; }}"

    # Which file each imported report came from (its original name, path and SHA-256).
    rule import_record:
        input:
            reports=[f"profiles/{IMPORT_SET}/reports/{stem}.ncu-rep.xz" for stem in IMPORT],
        output:
            record=f"profiles/{IMPORT_SET}/imported.csv",
        params:
            plan={stem: str(path) for stem, path in IMPORT.items()},
            # read when the job is planned: Snakemake removes the output before the job runs
            earlier=read_import_record(f"profiles/{IMPORT_SET}/imported.csv"),
        log:
            f"logs/import_record/{IMPORT_SET}.log",
        benchmark:
            f"benchmarks/import_record/{IMPORT_SET}.tsv"
        run:
            from analysis.reports.importing import write_import_record

            write_import_record(params.plan, output.record, params.earlier)

    rule import_set:
        input:
            reports=[f"profiles/{IMPORT_SET}/reports/{stem}.ncu-rep.xz" for stem in IMPORT],
            record=f"profiles/{IMPORT_SET}/imported.csv",
            summary=f"results/tables/{IMPORT_SET}/summary.csv",
            figures=expand("figures/{set}/{figure}.{ext}", set=IMPORT_SET, figure=FIGURE_NAMES, ext=["png", "pdf"]),
            # its findings, hot spots and stall stacks (rule explain_set; pairs only of registry kernels)
            explanations=f"figures/{IMPORT_SET}/explain/explanations.csv",
