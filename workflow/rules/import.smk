# Reports made elsewhere into a profile set, then its tables and figures:
# `snakemake --cores 1 import_set --config source=DIR set=NAME` (analysis.importing).

if IMPORT:

    rule import_report:
        input:
            report=lambda w: str(IMPORT[w.stem]),
        output:
            report=f"profiles/{IMPORT_SET}/reports/{{stem}}.ncu-rep.xz",
        wildcard_constraints:
            stem="|".join(re.escape(s) for s in IMPORT),
        log:
            f"logs/import_report/{IMPORT_SET}/{{stem}}.log",
        benchmark:
            f"benchmarks/import_report/{IMPORT_SET}/{{stem}}.tsv"
        shell:
            "{PYTHON} -m analysis.importing {input.report:q} {output.report:q} > {log:q} 2>&1"

    rule import_set:
        input:
            reports=[f"profiles/{IMPORT_SET}/reports/{stem}.ncu-rep.xz" for stem in IMPORT],
            summary=f"results/tables/{IMPORT_SET}/summary.csv",
            figures=expand("figures/{set}/{figure}.{ext}", set=IMPORT_SET, figure=FIGURE_NAMES, ext=["png", "pdf"]),
