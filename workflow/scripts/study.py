"""Rule study: the study's tables (speedups, claims, kernel summary, ...) of a set, then its
figures drawn from those tables as written, in one process."""
import pandas as pd

from analysis.study import claims as study
from analysis.study import plots as sf
from analysis.study.figures import save
from analysis.io import atomic_path, write_csv
from analysis.logged import logged, warn
from analysis.gpu.paired import check_paired_kernels
from analysis.reports.schemas import read_summary
from analysis.reports.setfiles import read_metadata, read_paired, read_references
from analysis.reports.tables import check_rates, unbounded_kernels

sm = snakemake  # noqa: F821
with logged(sm.log[0]):
    summary = read_summary(sm.input.summary)
    static = pd.read_csv(sm.input.static[0]) if sm.input.static else None
    arch = read_metadata(sm.input.metadata[0] if sm.input.metadata else None).get("arch")
    kernels = sm.params.kernels
    refs = read_references(sm.input.references[0]) if sm.input.references else None
    paired = read_paired(sm.input.paired[0]) if sm.input.paired else None
    if paired is not None:
        check_paired_kernels(paired, kernels, set(summary["kernel"]), sm.input.paired[0])
    if sm.input.references and sm.input.timings:
        unbounded = [k for k in unbounded_kernels(kernels) if k in set(summary["kernel"])]
        for msg in check_rates(summary, refs, sm.input.timings[0], sm.input.references[0], unbounded):
            warn(msg)
        if unbounded:
            print(f"rates not checked against {sm.input.references[0]}: {', '.join(unbounded)} (wgmma; the "
                  "ceilings there are mma.sync loops)")
    tables = {
        "speedups": study.speedups(summary, kernels),
        "claims": study.claims(summary, kernels, static, arch, refs, paired,
                               pd.read_csv(sm.input.explanations, dtype={"beyond_noise": "string",
                                                                         "duration_beyond_noise": "string"})),
        "kernel_summary": study.kernel_summary(summary, static, arch, refs),
        "occupancy": study.occupancy_correlation(summary),
        "instructions": study.instruction_ratios(summary, kernels),
        "roofline": study.roofline(summary),
    }
    for name, df in tables.items():
        write_csv(df, sm.output[name])
    for name in ("claims", "kernel_summary"):
        with atomic_path(sm.output[f"{name}_md"]) as tmp:
            tmp.write_text(study.to_markdown(tables[name]), encoding="utf-8")

    # the figures read the tables back: they show the values as the CSV files hold them
    title = sm.wildcards.set
    speedups = pd.read_csv(sm.output.speedups)
    draw = {
        "throughput": lambda: sf.throughput(summary, refs, title),
        "speedup": lambda: sf.speedup(speedups, title),
        "instructions": lambda: sf.instructions(pd.read_csv(sm.output.instructions), static, arch, title),
        "ablation": lambda: sf.ablation(speedups, title),
        "roofline": lambda: sf.roofline(pd.read_csv(sm.output.roofline), refs, title),
    }
    for name in sm.params.names:
        save(draw[name](), sm.output[f"{name}_png"], sm.output[f"{name}_pdf"])
