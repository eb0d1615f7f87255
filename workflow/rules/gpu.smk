# GPU rules: check and time with CUDA events, then profile with ncu. Defined only when
# this machine has a GPU and ncu, or on a cluster once a node of config gpu_partition was
# described (rule gpu_node); their outputs go to that GPU's own profile set.
# GPU_RESOURCES: gpu=1 keeps two GPU jobs from overlapping under --cores N, and on a
# cluster asks for one GPU on the GPU partition.

# One job on a node of the GPU partition writes what GPU, driver and ncu it has, hence the
# profile set that partition's jobs write to (analysis.gpu.cluster).
if GPU_PARTITION:

    rule gpu_node:
        output:
            node=f"results/gpu/nodes/{GPU_PARTITION}.json",
        params:
            suffix=shlex.quote(config.get("set_suffix", "")),
            ncu=f"--ncu {shlex.quote(TOOLS['ncu'])}" if TOOLS.get("ncu") else "",
        resources:
            **GPU_RESOURCES,
        log:
            f"logs/gpu_node/{GPU_PARTITION}.log",
        benchmark:
            f"benchmarks/gpu_node/{GPU_PARTITION}.tsv"
        shell:
            "{PYTHON} -m analysis.gpu.cluster --describe {output.node} --suffix {params.suffix} {params.ncu} > {log} 2>&1"


if GPU_SET:

    # One job per kernel checks and times it at every N in one process: one interpreter
    # start and CUDA context instead of one per N (docs/gpu-benchmarks.md).
    rule check_time:
        input:
            cubin=f"results/build/{GPU.info.arch}/{{kernel}}.cubin",
        output:
            records=expand("results/gpu/{{set}}/check/{{kernel}}_n{n}.json", n=SIZES),
        wildcard_constraints:
            set=re.escape(GPU_SET),
        params:
            cmd=lambda w, input: harness_cmd(w, input, sizes=SIZES, warmups=config["timing"]["warmups"],
                                             repeats=config["timing"]["repeats"],
                                             out=f"results/gpu/{w.set}/check/{w.kernel}_n{{n}}.json"),
        resources:
            **GPU_RESOURCES,
        log:
            "logs/check_time/{set}/{kernel}.log",
        benchmark:
            "benchmarks/check_time/{set}/{kernel}.tsv"
        shell:
            "({NODE_CHECK}{params.cmd}) > {log} 2>&1"

    # One ncu process per kernel profiles it at each of its N (one launch each, in SIZES order;
    # every N for the study's kernels, config profile.sizes_beyond_study for the others:
    # analysis.workflow.profile_sizes): ncu's and the harness's start-up once per kernel, not
    # once per N (about 5 s each; docs/gpu-benchmarks.md). The report is named
    # {kernel}_n{N1}-{N2}-... (analysis.names) after the N it holds.
    rule profile:
        input:
            cubin=f"results/build/{GPU.info.arch}/{{kernel}}.cubin",
            checked=expand("results/gpu/{{set}}/check/{{kernel}}_n{n}.json", n=SIZES),
        output:
            report=temp("results/gpu/{set}/plain/{kernel}_n{sizes}.ncu-rep"),
        wildcard_constraints:
            set=re.escape(GPU_SET),
            kernel=r"[A-Za-z0-9_]+",
            sizes=PROFILE_STEMS_RE,
        params:
            precision=lambda w: KERNELS[w.kernel]["precision"],
            options=lambda w: kernel_options(KERNELS[w.kernel]),
            tiling=lambda w: tiling_from_config(config, w.kernel),
            section_set=config["profile"]["section_set"],
            warmups=config["profile"]["warmups"],
            sizes=lambda w: [int(n) for n in w.sizes.split("-")],
            ncu=TOOLS.get("ncu"),
            expect_set=GPU_SET if GPU_PARTITION else None,
            suffix=config.get("set_suffix", ""),
        resources:
            **GPU_RESOURCES,
        log:
            "logs/profile/{set}/{kernel}_n{sizes}.log",
        benchmark:
            "benchmarks/profile/{set}/{kernel}_n{sizes}.tsv"
        script:
            "../scripts/profile.py"

    # Repeats of a profile (config profile.repeats > 1), for the run-to-run noise floor.
    use rule profile as profile_repeat with:
        output:
            report=temp("results/gpu/{set}/plain/{kernel}_n{sizes}_r{r}.ncu-rep"),
        log:
            "logs/profile/{set}/{kernel}_n{sizes}_r{r}.log",
        benchmark:
            "benchmarks/profile/{set}/{kernel}_n{sizes}_r{r}.tsv"

    # xz (preset 9) took 0.6-3.0 s per report (mean 1.0 s) in the _paths run: a CPU job,
    # run while the GPU profiles the next kernel, instead of inside the GPU job
    # (docs/gpu-benchmarks.md).
    rule compress_report:
        input:
            plain="results/gpu/{set}/plain/{stem}.ncu-rep",
        output:
            report="profiles/{set}/reports/{stem}.ncu-rep.xz",
        wildcard_constraints:
            set=re.escape(GPU_SET),
        log:
            "logs/compress_report/{set}/{stem}.log",
        benchmark:
            "benchmarks/compress_report/{set}/{stem}.tsv"
        shell:
            "{PYTHON} -m analysis.gpu.profile compress {input.plain:q} {output.report:q} > {log} 2>&1"

    rule timings:
        input:
            records=lambda w: [f"results/gpu/{w.set}/check/{k}_n{n}.json" for k in gpu_kernels() for n in SIZES],
        output:
            csv="profiles/{set}/timings.csv",
            # every timed launch: the duration intervals of explanations (analysis.reports.noise)
            samples="profiles/{set}/timing_samples.csv",
        wildcard_constraints:
            set=re.escape(GPU_SET),
        log:
            "logs/timings/{set}.log",
        benchmark:
            "benchmarks/timings/{set}.tsv"
        script:
            "../scripts/timings.py"

    # compute-sanitizer memcheck and racecheck on every kernel at a small N:
    # `snakemake --cores 1 sanitize`. A report of any error fails the job.
    rule sanitize_kernel:
        input:
            cubin=f"results/build/{GPU.info.arch}/{{kernel}}.cubin",
        output:
            report="results/gpu/{set}/sanitize/{tool}/{kernel}_n{n}.txt",
        wildcard_constraints:
            set=re.escape(GPU_SET),
            tool="memcheck|racecheck",
        params:
            cmd=lambda w, input: harness_cmd(w, input, warmups=0, repeats=1),
            sanitizer=lambda w: find_tool("compute-sanitizer", TOOLS.get("compute_sanitizer")),
        resources:
            **GPU_RESOURCES,
        log:
            "logs/sanitize/{set}/{tool}/{kernel}_n{n}.log",
        benchmark:
            "benchmarks/sanitize/{set}/{tool}/{kernel}_n{n}.tsv"
        shell:
            "({NODE_CHECK}{params.sanitizer} --tool {wildcards.tool} --error-exitcode 1 --log-file {output.report}.tmp"
            " {params.cmd}) > {log} 2>&1 && mv {output.report}.tmp {output.report}"

    rule sanitize:
        input:
            [f"results/gpu/{GPU_SET}/sanitize/{t}/{k}_n{config['sanitize']['n']}.txt"
             for t in ("memcheck", "racecheck") for k in gpu_kernels()],

    # Reference rates measured in the same run: tensor-instruction and DRAM-copy ceilings,
    # and the vendor library GEMMs at every N (analysis.gpu.references); right after each
    # library timing, the kernels beyond the study of its precision timed in pairs with it,
    # alternating which runs first (paired.csv; analysis.gpu.paired): a ratio that does not
    # depend on the moment of the run each was timed at (docs/perf-notes.md, "Timed alternately").
    rule references:
        input:
            cubin=f"results/build/{GPU.info.arch}/ceilings/mma_peak.cubin",
            # Hopper's wgmma ceilings, on an sm_90 GPU
            wgmma_cubin=[f"results/build/{GPU.info.arch}/ceilings/wgmma_peak.cubin"] if GPU.info.arch == "sm_90" else [],
            paired_cubins=[f"results/build/{GPU.info.arch}/{k}.cubin" for k in paired_kernels()],
            checked=lambda w: [f"results/gpu/{w.set}/check/{k}_n{n}.json" for k in paired_kernels() for n in SIZES],
        output:
            csv="profiles/{set}/references.csv",
            paired="profiles/{set}/paired.csv",
        wildcard_constraints:
            set=re.escape(GPU_SET),
        params:
            sizes=SIZES,
            warmups=config["timing"]["warmups"],
            repeats=config["timing"]["repeats"],
            paired_kernels=paired_kernels(),
            precisions={k: KERNELS[k]["precision"] for k in paired_kernels()},
            tilings={k: tiling_from_config(config, k) for k in paired_kernels()},
            options={k: kernel_options(KERNELS[k]) for k in paired_kernels()},
            rounds=config["timing"]["paired_rounds"],
            expect_set=GPU_SET if GPU_PARTITION else None,
            suffix=config.get("set_suffix", ""),
            ncu=TOOLS.get("ncu"),
        resources:
            **GPU_RESOURCES,
        log:
            "logs/references/{set}.log",
        benchmark:
            "benchmarks/references/{set}.tsv"
        script:
            "../scripts/references.py"

    rule set_metadata:
        input:
            reports=set_report_files,
            builds=gpu_build_records,
        output:
            meta="profiles/{set}/metadata.json",
        wildcard_constraints:
            set=re.escape(GPU_SET),
        params:
            gpu=GPU.info,
            tiling=TILING,
            kernel_tilings=lambda w: {k: tiling_from_config(config, k) for k in gpu_kernels()},
            section_set=config["profile"]["section_set"],
            ncu=TOOLS.get("ncu"),
        resources:
            **GPU_RESOURCES,
        log:
            "logs/set_metadata/{set}.log",
        benchmark:
            "benchmarks/set_metadata/{set}.tsv"
        script:
            "../scripts/set_metadata.py"
