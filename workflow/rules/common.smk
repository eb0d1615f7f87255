# Config validation, profile-set discovery and the input functions of the rules.
import re
import shlex
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

import analysis

from analysis.gpu.cluster import node_gpu
from analysis.errors import ConfigError, ReportError
from analysis.gpu.harness import command as harness_command
from analysis.reports.importing import check_import_target, check_sources, import_plan, read_import_record
from analysis.names import ReportName
from analysis.precision import LIBRARY_NAMES
from analysis.tools import find_tool
from analysis.workflow import (CONFIG_SCHEMA, build_tools, check_config, check_names_are_text, committed_sets,
                               config_schema_error, kernel_options,
                               kernel_target, local_gpu, numbers_read_as_text, parse_readers, profile_sizes,
                               SetIdentity,
                               comparison_pairs, set_reports, skipped_for_arch, tiling_from_config, unpaired_sets)


check_names_are_text(config)  # before the schema, whose message would not say why
try:
    validate(config, schema="../schemas/config.schema.yaml")
except WorkflowError as exc:
    # one line naming the key, the value and the rule, not the schema dump jsonschema appends
    _why = config_schema_error(exc, CONFIG_SCHEMA)
    if _why is None:
        raise
    _texts = numbers_read_as_text(config)
    if not _texts:
        raise ConfigError(_why) from None
    raise ConfigError(f"{_why}; these values are text that "
                      f"spells a number, null, true or false: {', '.join(_texts[:6])}{' ...' if len(_texts) > 6 else ''}. Snakemake's "
                      "--config reads the values inside a list or mapping as text: give such values in a "
                      "--configfile; in a --configfile, write them without quotes") from None
check_config(config, Path("kernels"))

KERNELS = config["kernels"]
_unknown = sorted(set(config.get("profile_kernels") or []) - set(KERNELS))
if _unknown:
    raise ConfigError(f"config profile_kernels: {', '.join(_unknown)} not in the kernel registry (config kernels)")
SIZES = config["sizes"]
#: The N part of the name of each report the GPU profiles (analysis.names.ReportName): every
#: size (512-1024-...) for the study's kernels, config profile.sizes_beyond_study for the others
#: (analysis.workflow.profile_sizes); the profile rules' `sizes` wildcard is one of these.
PROFILE_STEMS = sorted({"-".join(map(str, profile_sizes(config, k))) for k in KERNELS})
PROFILE_STEMS_RE = "|".join(map(re.escape, PROFILE_STEMS))
ARCHS = sorted(set(config["archs"]))
TILING = tiling_from_config(config)
TOOLS = config.get("tools") or {}
PYTHON = sys.executable
#: Metrics renamed between Nsight Compute versions (analysis.compare.diff.canonical_names), where
#: the installed package keeps them.
ALIASES = str(Path(analysis.__file__).parent / "data" / "metric_aliases.csv")
FIGURE_NAMES = ["occupancy_vs_throughput", "coalescing", "dram_active"]
STUDY_FIGURES = ["throughput", "speedup", "instructions", "ablation", "roofline"]
KERNEL_HEADERS = ["kernels/gemm_common.cuh", "kernels/ptx.cuh", "kernels/wmma_gemm.cuh", "kernels/mma_gemm.cuh",
                  "kernels/tuned_gemm.cuh", "kernels/hopper.cuh", "kernels/wgmma_gemm.cuh",
                  "kernels/int4_wgmma.cuh"]

# One GPU job at a time unless the command line grants more (--resources gpu=N); rules
# that use the GPU declare resources: gpu=1. Snakemake leaves a resource nobody
# declared unlimited, and a workflow profile cannot set it here (profiles/ holds the
# Nsight Compute sets), so it is registered with the workflow directly.
if "gpu" not in workflow.global_resources:
    workflow.register_resource("gpu", 1)

_build_note = build_tools(config)
if _build_note:
    logger.warning(_build_note)

# The GPU whose profile set this run writes: this machine's, or on a cluster (config
# gpu_partition) the one a job on that partition described (rule gpu_node, analysis.gpu.cluster).
GPU_PARTITION = config.get("gpu_partition") or None
if GPU_PARTITION and config.get("gpu") == "off":
    raise ConfigError("config: gpu=off and gpu_partition given; drop one (gpu=off never checks, times or profiles)")
GPU, _gpu_note = node_gpu(config) if GPU_PARTITION else local_gpu(config)
if _gpu_note:
    logger.warning(_gpu_note)
GPU_SET = GPU.set_name if GPU else None
for _line in skipped_for_arch(KERNELS, GPU.info.arch) if GPU else []:
    logger.warning(_line)
# Resources of every GPU job: one GPU (slurm --gpus=1 on a cluster), on the GPU partition.
GPU_RESOURCES = {"gpu": 1, **({"slurm_partition": GPU_PARTITION} if GPU_PARTITION else {})}
# On a cluster each GPU job first checks that its node makes the set it writes to.
NODE_CHECK = (f"{sys.executable} -m analysis.gpu.cluster --expect {shlex.quote(GPU_SET)}"
              f" --suffix {shlex.quote(config.get('set_suffix', ''))}"
              + (f" --ncu {shlex.quote(TOOLS['ncu'])}" if TOOLS.get("ncu") else "") + " && "
              if GPU_PARTITION and GPU_SET else "")


_WARNED = set()


def _warn_once(msg):
    """A warning to Snakemake's log, once per run (the functions calling this run more than once)."""
    if msg not in _WARNED:
        _WARNED.add(msg)
        logger.warning(f"warning: {msg}")


SETS = committed_sets(Path("profiles"), config.get("profile_sets"), warn=_warn_once)
if GPU_SET and GPU_SET not in SETS:
    SETS.append(GPU_SET)

# The set of repeated profiles the noise model is made from (config noise_set), where it is
# here: its parse job runs for the model whether or not config profile_sets names it (a
# machine without it has no model: the comparisons then say so per row).
NOISE_SET = config.get("noise_set")
if NOISE_SET and NOISE_SET != GPU_SET and not (Path("profiles") / NOISE_SET / "reports").is_dir():
    _warn_once(f"config noise_set: profile set {NOISE_SET} not found in profiles/: no noise model, so a set "
               "without repeats is compared with config compare.default_rel (each row says so in noise_source)")
    NOISE_SET = None
NOISE_MODEL_NAME = f"noise model of {NOISE_SET}" if NOISE_SET else ""

# Reports brought in from elsewhere (target import_set, config source=DIR set=NAME).
IMPORT_SET = config.get("set")
IMPORT = import_plan(config["source"]) if config.get("source") else {}
if IMPORT and not IMPORT_SET:
    raise ConfigError("config: the import target takes both source=DIR and set=NAME; set=NAME is missing")
if IMPORT_SET and not IMPORT:
    raise ConfigError(f"config: set={IMPORT_SET} names the set an import writes, and an import needs source=DIR "
                      "too; to make one set's tables, figures and explanations, name a file, e.g. "
                      f"`snakemake --cores 1 figures/{IMPORT_SET}/explain/explanations.csv`, or run the main job")
if IMPORT_SET:
    if IMPORT_SET == GPU_SET:  # the schema checks the characters, check_config 'default' and NA-like names
        raise ConfigError(f"config set: {IMPORT_SET!r} is taken (it is this GPU's own profile set); "
                          "choose another name")
    check_import_target(IMPORT, Path("profiles") / IMPORT_SET)
    for _line in check_sources(IMPORT, Path("profiles") / IMPORT_SET):  # whole reports, before any is written
        _warn_once(_line)
    if IMPORT_SET not in SETS:
        SETS.append(IMPORT_SET)


wildcard_constraints:
    kernel=r"[A-Za-z0-9_]+",
    n=r"\d+",
    arch=r"sm_\d+a?",
    set=r"[A-Za-z0-9._-]+",
    a=r"[A-Za-z0-9._-]+",
    b=r"[A-Za-z0-9._-]+",
    r=r"[1-9]\d*",


def tool_options(*names):
    """Command-line options naming the tools the config sets explicitly (tools: in the config)."""
    return shlex.join(f"--{name}={TOOLS[name]}" for name in names if TOOLS.get(name))


def figure_outputs(folder, names):
    """Named outputs ``{name}_png`` (in the HTML report, with the caption
    workflow/report/figures/{name}.rst) and ``{name}_pdf`` of each figure in ``folder``."""
    out = {}
    for name in names:
        out[f"{name}_png"] = report(f"{folder}/{name}.png", caption=f"../report/figures/{name}.rst",
                                    category="Figures", subcategory="{set}", labels={"figure": name})
        out[f"{name}_pdf"] = f"{folder}/{name}.pdf"
    return out


def harness_cmd(wildcards, input, sizes=None, **options):
    """Shell form of the harness command for a rule's kernel and N, or for ``sizes``
    (several N in one process; analysis.gpu.harness.command)."""
    return shlex.join(harness_command("check-time", input.cubin, wildcards.kernel,
                                      KERNELS[wildcards.kernel]["precision"], sizes or wildcards.n,
                                      tiling_from_config(config, wildcards.kernel),
                                      **kernel_options(KERNELS[wildcards.kernel]), **options))


def pair_item_labels(wildcards):
    """The HTML report's label of a file in figures/{set}/explain/pairs ({name}.{ext}): a kernel
    pair's waterfall (png) or its page (md; index.md is the list of pairs)."""
    if wildcards.ext == "png":
        return {"figure": f"waterfall {wildcards.name}"}
    return {"page": "kernel pairs" if wildcards.name == "index" else f"pair {wildcards.name}"}


def gpu_kernels():
    """Kernels this run's GPU checks, times and profiles: those whose archs hold its
    architecture or its architecture-specific form (an sm_90 GPU runs the sm_90a kernels;
    analysis.workflow.kernel_target), and of those only config profile_kernels' when given."""
    chosen = config.get("profile_kernels") or KERNELS
    return [k for k, spec in KERNELS.items()
            if GPU and kernel_target(GPU.info.arch, spec["archs"]) and k in chosen]


if GPU and not gpu_kernels():
    raise ConfigError(f"{GPU.info.name} ({GPU.info.arch}, profile set {GPU_SET}) runs no kernel of config kernels"
                      f"{' in profile_kernels' if config.get('profile_kernels') else ''}: add {GPU.info.arch} to a "
                      "kernel's archs if the kernel supports it, or run with --config gpu=off")


_ON_DISK = {}


def _reports_on_disk(set_name):
    """set_reports() of a set, once per run; its warnings (skipped names, plain reports)
    go to Snakemake's log (Python warnings raised while Snakemake reads the workflow are
    not shown)."""
    if set_name not in _ON_DISK:
        folder = Path("profiles") / set_name / "reports"
        _ON_DISK[set_name] = (set_reports(Path("profiles"), set_name, warn=_warn_once)
                              if folder.is_dir() else [])
    return _ON_DISK[set_name]


def reports_of(set_name):
    """The report files that make up a set: for this GPU's set those this run profiles
    (and repeats profiled earlier), for the import set those the import writes, else the
    files in profiles/{set}/reports/."""
    folder = Path("profiles") / set_name / "reports"
    on_disk = _reports_on_disk(set_name)
    if set_name == GPU_SET:
        repeats = config["profile"].get("repeats", 1)
        want = [folder / f"{ReportName(k, profile_sizes(config, k), r).stem}.ncu-rep.xz" for k in gpu_kernels()
                for r in range(repeats)]
        # reports profiled earlier stay part of the set: other kernels (a run with other
        # profile_kernels) and further repeats (a larger profile.repeats); a kernel and
        # repeat this run profiles replace earlier reports of them (one report per N before)
        ours = {(k, r) for k in gpu_kernels() for r in range(repeats)}
        named = {p: ReportName.parse(p) for p in on_disk}
        return want + [p for p, r in named.items()
                       if p not in want and r is not None and r.kernel in KERNELS
                       and set(r.sizes) <= set(SIZES) and (r.kernel, r.repeat) not in ours]
    if set_name == IMPORT_SET:
        want = [folder / f"{stem}.ncu-rep.xz" for stem in IMPORT]
        return want + [p for p in on_disk if p not in want]
    return on_disk


def set_report_files(wildcards):
    """The set's report files (for the GPU's own set: those this run writes).

    Raises:
        ConfigError: the set has none (a target of a set that does not exist, or whose
            folder holds no report the workflow can read), before any job runs.
    """
    files = [str(p) for p in reports_of(wildcards.set)]
    if not files:
        folder = Path("profiles") / wildcards.set / "reports"
        why = "does not exist" if not folder.is_dir() else "holds no report it can read (see the warning above)"
        raise ConfigError(f"set {wildcards.set}: {folder} {why}, so there is nothing to parse; the sets there "
                          f"are: {', '.join(SETS) or 'none'}")
    return files


def parse_threads(wildcards):
    """Reader processes of a set's parse job, by its size (analysis.workflow.parse_readers);
    Snakemake caps them at --cores."""
    return parse_readers(len(reports_of(wildcards.set)))


def gpu_build_records(wildcards):
    return [f"results/build/{GPU.info.arch}/{k}.resources.json" for k in gpu_kernels()]


def timings_of(set_name):
    """The set's event timings, when it has (or will have) them."""
    path = f"profiles/{set_name}/timings.csv"
    return [path] if set_name == GPU_SET or Path(path).exists() else []


def timings_input(wildcards):
    return timings_of(wildcards.set)


def samples_of(set_name):
    """Every event-timed launch of the set (timing_samples.csv), when it has (or will have)
    them: sets timed before that file have only timings.csv's quantiles."""
    path = f"profiles/{set_name}/timing_samples.csv"
    return [path] if set_name == GPU_SET or Path(path).exists() else []


def samples_input(wildcards):
    return samples_of(wildcards.set)


def noise_model_input(wildcards):
    """The noise model, where config noise_set names a set that is here (or this run makes)."""
    return ["figures/noise/noise_model.csv"] if NOISE_SET else []


def metadata_of(set_name):
    """The set's metadata.json, when it has (or will have) one."""
    path = f"profiles/{set_name}/metadata.json"
    return [path] if set_name == GPU_SET or Path(path).exists() else []


def metadata_input(wildcards):
    return metadata_of(wildcards.set)


def references_input(wildcards):
    """The set's measured reference rates, when it has (or will have) them."""
    path = f"profiles/{wildcards.set}/references.csv"
    return [path] if wildcards.set == GPU_SET or Path(path).exists() else []


def paired_kernels():
    """Kernels this run times in pairs with their library GEMM (rule references): those of
    gpu_kernels() beyond the study (``study: false``) whose precision has a library GEMM."""
    return [k for k in gpu_kernels()
            if not KERNELS[k].get("study", True) and KERNELS[k]["precision"] in LIBRARY_NAMES]


def paired_input(wildcards):
    """The set's paired timings, when it has (or this run will write) them."""
    path = f"profiles/{wildcards.set}/paired.csv"
    return [path] if wildcards.set == GPU_SET or Path(path).exists() else []


def static_summary_input(wildcards):
    """The static SASS table, when this machine can build it."""
    return [] if _build_note else ["figures/sass/static_summary.csv"]


def study_sets():
    """Sets with event timings: the study's tables and figures are drawn for these."""
    return [s for s in SETS if s == GPU_SET or Path(f"profiles/{s}/timings.csv").exists()]


def build_outputs():
    if _build_note:
        return []
    out = []
    for kernel, spec in KERNELS.items():
        for arch in ARCHS:
            if kernel_target(arch, spec["archs"]):
                out += [f"results/build/{arch}/{kernel}.sass", f"results/build/{arch}/{kernel}.resources.json"]
    return out


def set_identity(set_name):
    """What the automatic comparisons know of a set (analysis.workflow.SetIdentity): for a
    set of reports named {kernel}_n{N} (the reader checks that every launch is of that
    kernel), its kernels from the names and its versions from metadata.json; for any other
    set (imported reports), ncu's function names and the versions read from the reports
    themselves before any job runs (analysis.reports.kernels, cached under results/kernels/)."""
    reports = reports_of(set_name)
    names = [ReportName.parse(p) for p in reports]
    if reports and all(names):
        from analysis.reports.setfiles import read_metadata

        meta = metadata_of(set_name)
        meta = read_metadata(meta[0]) if meta and Path(meta[0]).exists() else {}
        return SetIdentity(frozenset(n.kernel for n in names), meta.get("ncu_version"), meta.get("driver"),
                           meta.get("gpu"))
    from analysis.reports.kernels import set_kernels

    try:
        got = set_kernels([Path(p) for p in reports if Path(p).exists()],
                          Path("results") / "kernels" / f"{set_name}.json")
    except ReportError as exc:  # the set's parse job will fail naming it; pair what can be read
        _warn_once(f"{exc}: its kernels are unknown, so set {set_name} is in no automatic comparison")
        return SetIdentity(frozenset())
    return SetIdentity(frozenset(got["kernels"]), got["ncu_version"], got["driver"], got["gpu"])


def not_found(set_name):
    """Why a set named in config is not among SETS: a folder config profile_sets leaves out, or
    no such set (the sets there are listed)."""
    if config.get("profile_sets") and (Path("profiles") / set_name / "reports").is_dir():
        return (f"profile set {set_name} is in profiles/ but not among config profile_sets ({', '.join(SETS)}): "
                "add it there, or leave profile_sets empty")
    return f"profile set {set_name} not found (sets: {', '.join(SETS) or 'none'})"


def compare_outputs(wildcards=None):
    """Comparison outputs: the pair config baseline/candidate names, if any, plus the
    automatic pairs (analysis.workflow.comparison_pairs: each set against config
    compare_baseline, or against the oldest set it shares kernels with), unless only the
    named pair is asked for (target compare with baseline/candidate given)."""
    base, cand = config.get("baseline"), config.get("candidate")
    if bool(base) != bool(cand):
        raise ConfigError("config: give both baseline and candidate, or neither")
    pairs = []
    chosen = config.get("compare_baseline")
    if base:
        for s in (base, cand):
            if s not in SETS:
                raise ConfigError(f"config: {not_found(s)}")
        pairs.append((base, cand))
        if base == cand:
            _warn_once(f"config baseline and candidate are both {base}: each launch is compared with itself "
                       "(a check of the comparison, not of a change)")
        if wildcards is not None and chosen and chosen not in SETS:  # the named pair alone: said, not used
            _warn_once(f"config compare_baseline: {not_found(chosen)}; it chooses the baseline of the automatic "
                       "comparisons, which this target does not make")
    if not base or wildcards is None:
        sets = {s: set_identity(s) for s in SETS}
        if chosen and chosen not in sets:
            _warn_once(f"config compare_baseline: {not_found(chosen)}; so each set is compared against the oldest "
                       "set it shares kernels with")
        pairs += [p for p in comparison_pairs(sets, chosen) if p not in pairs]
        for msg in unpaired_sets(sets):
            _warn_once(msg)
    return [f"figures/compare/{a}__vs__{b}/{f}" for a, b in pairs
            for f in ("changes.csv", "metadata.csv", "statuses.csv", "headline.png", "headline.pdf",
                      "explanations.md", "waterfalls.png")]


def final_outputs(wildcards=None):
    """Every output of the default target."""
    out = build_outputs()
    if out:
        out += ["figures/sass/static_summary.csv", "figures/sass/static_mix.png", "figures/sass/static_mix.pdf"]
    for s in SETS:
        out += [f"results/tables/{s}/metrics.parquet", f"results/tables/{s}/summary.csv",
                f"results/tables/{s}/summary_units.csv"]
        out += expand("figures/{set}/{figure}.{ext}", set=s, figure=FIGURE_NAMES, ext=["png", "pdf"])
        out += [f"figures/{s}/explain/explanations.csv", f"figures/{s}/explain/findings.md",
                f"figures/{s}/explain/hotspots.md", f"figures/{s}/explain/stalls.png"]
    if NOISE_SET:
        out.append("figures/noise/noise_model.csv")
    for s in study_sets():
        out += [f"figures/{s}/study/claims.csv", f"figures/{s}/study/kernel_summary.csv"]
        out += expand("figures/{set}/study/{f}.{ext}", set=s, f=STUDY_FIGURES, ext=["png", "pdf"])
    if GPU_SET:
        out.append(f"profiles/{GPU_SET}/references.csv")
    elif GPU_PARTITION:
        out.append(f"results/gpu/nodes/{GPU_PARTITION}.json")
    return out + compare_outputs(None) + ["figures/quant/quantization_error.csv"]
