"""Helpers the Snakemake rules call: config checks, set discovery, GPU detection, each kernel's profiled N."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from analysis.errors import ConfigError, ToolNotFoundError
from analysis.gpu.config import kernel_options, tiling_from_config  # noqa: F401 (the rules call them here)
from analysis.gpu.device import GpuInfo, LocalGpu, detect_gpu, profile_set_name  # noqa: F401
from analysis.gpu.harness import TMA_SWIZZLES, Tiling
from analysis.names import MAX_NAME_NUMBER, ReportName, report_stem, set_name_problem
from analysis.precision import precision_of
from analysis.tools import find_tool, ncu_version
from analysis.versions import version_numbers


def arch_family(arch: str) -> str:
    """The architecture an architecture-specific target belongs to: ``sm_90a`` -> ``sm_90``."""
    return arch.removesuffix("a")


def kernel_target(arch: str, kernel_archs: list[str]) -> str | None:
    """The nvcc target a kernel is built for where ``arch`` is configured (or the GPU is):
    ``arch`` itself when the kernel lists it, else its architecture-specific form (``sm_90``
    -> ``sm_90a``) when the kernel lists that, else None (not built, not run).

    Deliberately, an sm_90 GPU (H100, H200: compute capability 9.0, which ``GpuInfo.arch``
    reports as ``sm_90``) runs the sm_90a kernels: sm_90a code runs on compute capability
    9.0 and on nothing else (CUDA C++ Programming Guide, "Feature Availability":
    architecture-specific features), so the two name the same chips. Their cubins are built
    with ``-arch=sm_90a`` into results/build/sm_90/, where the GPU rules look."""
    if arch in kernel_archs:
        return arch
    specific = f"{arch_family(arch)}a"
    return specific if specific in kernel_archs else None


def skipped_for_arch(kernels: dict, gpu_arch: str) -> list[str]:
    """One line per kernel the GPU of ``gpu_arch`` skips because it lacks the kernel's
    architecture-specific target (e.g. the sm_90a wgmma kernels on an sm_89 GPU)."""
    return [f"{name}: skipped on this {gpu_arch} GPU, its code needs {' or '.join(spec['archs'])} "
            "(wgmma/setmaxnreg exist on compute capability 9.0 only)"
            for name, spec in kernels.items()
            if kernel_target(gpu_arch, spec["archs"]) is None and any(a.endswith("a") for a in spec["archs"])]


#: The kernel headers (kernels/) whose code reads the tiling's build parameters cluster_m
#: (CLUSTER_M) and persistent (PERSISTENT); a kernel given either must include one of them.
READS_CLUSTER_M = ("wgmma_gemm.cuh", "int4_wgmma.cuh")
READS_PERSISTENT = ("wgmma_gemm.cuh", "int4_wgmma.cuh")
#: A kernel source's own #include "..." lines (not one in a comment or a string).
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.MULTILINE)

#: Most shared memory one block may use, static plus dynamic, in bytes, per architecture
#: (CUDA C++ Programming Guide, "Technical Specifications per Compute Capability": maximum
#: shared memory per thread block, 163 KB on 8.0 and 8.7, 99 KB on 8.6 and 8.9, 227 KB on 9.0).
SMEM_PER_BLOCK = {80: 163 * 1024, 86: 99 * 1024, 87: 163 * 1024, 89: 99 * 1024, 90: 227 * 1024}

#: Oldest architecture the kernels build for: every one loads tiles with cp.async, which
#: PTX ISA requires sm_80 or newer for ("cp.async" target ISA notes).
MIN_SM = 80


def _sm(arch: str) -> int:
    return int(arch.removeprefix("sm_").rstrip("a"))


def non_finite_values(value, where: str = "config") -> list[str]:
    """The places (``config compare.min_rel``, ``config sizes[2]``) of every NaN or infinite
    number in a config, nested dicts and lists included. JSON Schema's ``minimum`` and
    ``exclusiveMinimum`` let NaN through (every comparison with NaN is false), and YAML
    reads ``.nan`` and ``.inf`` as numbers; a NaN threshold would hide every change."""
    import math

    if isinstance(value, float) and not math.isfinite(value):
        return [f"{where} = {value}"]
    if isinstance(value, dict):
        return [w for k, v in value.items() for w in non_finite_values(v, f"{where}.{k}" if where != "config"
                                                                        else f"config {k}")]
    if isinstance(value, (list, tuple)):
        return [w for i, v in enumerate(value) for w in non_finite_values(v, f"{where}[{i}]")]
    return []


#: Config keys that hold a set name or a folder, never a number.
NAME_KEYS = ("set", "source", "baseline", "candidate", "compare_baseline", "noise_set")


def _named(config: dict, keys: tuple[str, ...] = NAME_KEYS) -> list[tuple[str, object]]:
    """(key, value) of ``keys`` and of each entry of ``profile_sets`` where it is a list."""
    sets = config.get("profile_sets")
    return [(key, config.get(key)) for key in keys] + (
        [("profile_sets", v) for v in sets] if isinstance(sets, list) else [])


#: The workflow config's JSON schema, from the project's root (workflow/rules/common.smk validates
#: the config with it through Snakemake's ``validate``).
CONFIG_SCHEMA = "workflow/schemas/config.schema.yaml"


def _config_place(path) -> str:
    """A place in the config as the messages write it: ``kernels.int8_wmma.tiling.stages``,
    ``sizes[0]``; empty for the config as a whole."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def config_schema_error(exc: BaseException, schema_file: str = CONFIG_SCHEMA) -> str | None:
    """The one-line message for a config the JSON schema refused, or None where ``exc`` (what
    Snakemake's ``validate`` raised: a ``WorkflowError`` whose context is jsonschema's
    ``ValidationError``) holds no such error.

    The message names the config key (its place, ``compare.min_rel``, ``sizes[0]``), gives
    jsonschema's own one-line message (the value and what it breaks: ``'bad name' does not
    match '^[A-Za-z0-9._-]*$'``), the rule's place in ``schema_file`` and the key's
    description there. A key the schema does not know is named with the keys of that level
    whose names are close to it. Left out: the sub-schema (for an unknown key, the whole
    schema) and the instance that ``str()`` of a ``ValidationError`` appends, which is what
    Snakemake prints.
    """
    import difflib

    import jsonschema

    seen, error = exc, None
    while seen is not None and error is None:
        if isinstance(seen, jsonschema.ValidationError):
            error = seen
        seen = seen.__cause__ or seen.__context__
    if error is None:
        return None
    place = _config_place(error.absolute_path)
    rule = ".".join(map(str, error.absolute_schema_path))
    where = f"rule {rule} of {schema_file}"
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = sorted(error.schema.get("properties") or {})
        extra = [k for k in error.instance if k not in known]
        parts = []
        for key in extra:
            close = difflib.get_close_matches(str(key), known, n=3)
            hint = f"; did you mean {' or '.join(close)}?" if close else ""
            parts.append(f"config {place + '.' if place else ''}{key}: not a key the schema allows ({where}){hint}")
        if parts:
            return "; ".join(parts)
    message = error.message if len(error.message) <= 300 else error.message[:297] + "..."
    if "propertyNames" in error.absolute_schema_path:
        return f"config {place}: a key {message} ({where})"
    about = error.schema.get("description") if isinstance(error.schema, dict) else None
    described = f"; {place or 'config'}: {' '.join(str(about).split())}" if about else ""
    return f"config{' ' + place if place else ''}: {message} ({where}{described})"


_NUMBER_TEXT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
#: Text YAML would read as null or a boolean (its core schema's words), as --config keeps it
_YAML_WORD_TEXT = re.compile(r"~|null|Null|NULL|true|True|TRUE|false|False|FALSE")


def numbers_read_as_text(config: dict) -> list[str]:
    """Values inside the config's lists and mappings that are text spelling a number (or
    YAML's null, true or false), as ``key.path='text'``: what Snakemake's ``--config`` makes
    of them (it reads a value that
    is a list or mapping with YAML's BaseLoader, which keeps every scalar as text, so
    ``kernels={k: {tiling: {stages: 4}}}`` gives ``'4'``). Top-level values are not looked at
    (``--config`` reads those as YAML, :func:`check_names_are_text`). The workflow shows them
    only when the schema has refused the config, as the likely cause."""
    found = []

    def walk(value, path):
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                walk(item, f"{path}[{i}]")
        elif isinstance(value, str) and (_NUMBER_TEXT.fullmatch(value.strip())
                                         or _YAML_WORD_TEXT.fullmatch(value.strip())):
            found.append(f"{path}={value!r}")

    for key, value in config.items():
        if isinstance(value, (dict, list)):
            walk(value, key)
    return found


def check_names_are_text(config: dict) -> None:
    """Refuse, before the schema does, a set name or folder that Snakemake read as a number:
    ``--config`` reads each top-level value as YAML, so ``set=2024``, ``set=nan`` or ``set=1e3`` arrive
    as 2024, NaN or 1000.0 (shell quotes do not help), and the schema's message ("is not of
    type 'string'") would not say why; a ``--configfile`` keeps a quoted name as text.

    Raises:
        ConfigError: naming the key, the value as read and how to pass the text.
    """
    for key, value in _named(config):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            raise ConfigError(f"config {key}: {value!r} was read as a number (--config reads values as YAML, "
                              f"quoted or not); a name must be text: give it quoted in a --configfile "
                              f"({key}: \"{value}\") or choose a name with a letter in it")


def check_config(config: dict, kernel_dir: Path) -> None:
    """Refuse a config the schema cannot judge, before any build or GPU work.

    Raises:
        ConfigError: a NaN or infinite number anywhere (:func:`non_finite_values`), a set
        name (``set``, ``baseline``, ``candidate``, ``compare_baseline``, ``noise_set``,
        ``profile_sets``) that cannot name a set (:func:`set_name_problem`), a kernel
        without a source file, a baseline that is not a kernel of the
        same precision, an N that is not a multiple of a kernel's tiles, an architecture
        older than sm_80 (no cp.async), FP16 accumulation declared for integer inputs,
        ``stages`` given both beside and inside a kernel's ``tiling``, dynamic shared
        memory beyond what one of the kernel's architectures allows a block, an
        architecture-specific target (``sm_90a``) beside other archs, a ``tma`` kernel
        without the 128-byte K tile or a producer warpgroup, a tiling value no kernel can
        use (:class:`analysis.gpu.harness.Tiling`), a ``tma`` kernel without ``smem_bytes``,
        ``profile.sizes_beyond_study`` holding an N outside ``sizes``,
        ``cluster_m`` on a kernel not built on
        kernels/wgmma_gemm.cuh, or ``persistent`` on one built on neither it nor
        kernels/int4_wgmma.cuh (the headers that read them: :data:`READS_CLUSTER_M`,
        :data:`READS_PERSISTENT`).
    """
    bad = non_finite_values(config)
    if bad:
        raise ConfigError(f"{'; '.join(bad)}: not a finite number (thresholds and sizes must be numbers)")
    for key, name in _named(config, tuple(k for k in NAME_KEYS if k != "source")):
        why = set_name_problem(name) if isinstance(name, str) else None
        if why:
            raise ConfigError(f"config {key}: {name!r} cannot name a profile set ({why}); choose another name")
    kernels = config["kernels"]
    for arch in config["archs"]:
        if _sm(arch) < MIN_SM:
            raise ConfigError(f"config archs: {arch} cannot run these kernels (cp.async needs sm_{MIN_SM} or newer)")
    for name, spec in kernels.items():
        src = kernel_dir / f"{name}.cu"
        if not src.exists():
            raise ConfigError(f"config kernels.{name}: no source file {src}")
        base = spec.get("baseline")
        if base is not None:
            if base not in kernels:
                raise ConfigError(f"config kernels.{name}: baseline {base!r} is not a configured kernel")
            if kernels[base]["precision"] != spec["precision"]:
                raise ConfigError(f"config kernels.{name}: baseline {base!r} has another precision")
        for arch in spec["archs"]:
            if _sm(arch) < MIN_SM:
                raise ConfigError(f"config kernels.{name}.archs: {arch} is not supported "
                                  f"(cp.async needs sm_{MIN_SM} or newer)")
        if spec.get("accumulator") == "f16" and spec["precision"] != "fp16":
            raise ConfigError(f"config kernels.{name}: accumulator f16 needs precision fp16, "
                              f"not {spec['precision']}")
        if spec.get("c_dtype") == "float16" and (spec["precision"] != "fp16" or spec.get("accumulator")):
            raise ConfigError(f"config kernels.{name}: c_dtype float16 needs precision fp16 with FP32 "
                              f"accumulators, not {spec['precision']} with accumulator {spec.get('accumulator')}")
        if "stages" in spec and "stages" in (spec.get("tiling") or {}):
            raise ConfigError(f"config kernels.{name}: stages given twice (beside and inside tiling); keep one")
        specific = [a for a in spec["archs"] if a.endswith("a")]
        if specific and len(spec["archs"]) > 1:
            raise ConfigError(f"config kernels.{name}.archs: an architecture-specific target ({specific[0]}) "
                              "must be the kernel's only one (its source needs that target's instructions)")
        try:
            tiling = tiling_from_config(config, name)
        except ConfigError as exc:
            raise ConfigError(f"config kernels.{name}: {exc}") from None
        included = set(_INCLUDE.findall(src.read_text()))
        for key, headers in (("cluster_m", READS_CLUSTER_M), ("persistent", READS_PERSISTENT)):
            if getattr(tiling, key) != getattr(Tiling(), key) and not (
                    spec.get("tma") and included & set(headers)):
                why = (f"{src} does not include {'it' if len(headers) == 1 else 'either'}" if spec.get("tma")
                       else "the kernel is not tma: true")
                raise ConfigError(f"config kernels.{name}.tiling: {key} is a build parameter of "
                                  f"{' and '.join('kernels/' + h for h in headers)} (tma kernels that include "
                                  f"{'it' if len(headers) == 1 else 'one'}); {why}, so its launch would "
                                  "not match its code")
        if tiling.block_n % tiling.cluster_m:
            raise ConfigError(f"config kernels.{name}.tiling: block_n {tiling.block_n} does not split among "
                              f"cluster_m={tiling.cluster_m} CTAs")
        if spec.get("tma") and not tiling.smem_bytes:
            raise ConfigError(f"config kernels.{name}.tiling: a tma kernel lays out its stages in dynamic shared "
                              "memory, so smem_bytes must give their size (it is 0: the build would not check it "
                              "and the launch would give the kernel none)")
        if spec.get("tma") and (tiling.block_k_bytes not in TMA_SWIZZLES or not tiling.producer_warps):
            raise ConfigError(f"config kernels.{name}: tma kernels need tiling.block_k_bytes "
                              f"{' or '.join(map(str, TMA_SWIZZLES))} (a swizzle's span) and a producer warpgroup "
                              "(tiling.producer_warps)")
        for arch in spec["archs"]:
            limit = SMEM_PER_BLOCK.get(_sm(arch))
            if limit is not None and tiling.smem_bytes > limit:
                raise ConfigError(f"config kernels.{name}.tiling: smem_bytes {tiling.smem_bytes} exceeds the "
                                  f"{limit} bytes a block may use on {arch}; lower stages or the tiles, "
                                  f"or drop {arch} from its archs")
        prec = precision_of(spec["precision"])
        for n in config["sizes"]:
            try:
                tiling.check_shape(name, prec, n, n, n)
            except ConfigError as exc:
                raise ConfigError(f"config sizes: N={n} (M = N = K) cannot run: {exc}") from None
    beyond = (config.get("profile") or {}).get("sizes_beyond_study")
    if beyond is not None and not set(beyond) <= set(config["sizes"]):
        outside = ", ".join(map(str, sorted(set(beyond) - set(config["sizes"]))))
        raise ConfigError(f"config profile.sizes_beyond_study: N={outside} is not among config sizes "
                          f"{config['sizes']} (kernels are checked and timed only there, so a profile at "
                          "another N would have no check or timing beside it); where sizes changes, give "
                          "profile.sizes_beyond_study some of them, or null for every size, beside it")


def profile_sizes(config: dict, kernel: str) -> tuple[int, ...]:
    """The N at which ``kernel`` is profiled, in ``config sizes`` order: every size for the
    study's kernels; for a kernel marked ``study: false``, those of ``config
    profile.sizes_beyond_study`` (every size where it is null or absent). Every kernel is
    checked and event-timed at every size either way; this only bounds its ``ncu --set
    full`` launches, about 2.2 s of replay passes each on the H200 (docs/gpu-benchmarks.md).

    Args:
        config: the validated workflow config (``sizes``, ``kernels``, ``profile``).
        kernel: a name in ``config kernels``.

    Returns:
        M = N = K of each profiled launch, e.g. ``(8192,)`` or ``(512, 1024, 2048, 4096, 8192)``.

    Raises:
        ConfigError: ``kernel`` is not in the registry.
    """
    if kernel not in config["kernels"]:
        raise ConfigError(f"{kernel}: not in the kernel registry (config kernels)")
    beyond = (config.get("profile") or {}).get("sizes_beyond_study")
    if beyond is None or config["kernels"][kernel].get("study", True) is not False:
        return tuple(config["sizes"])
    return tuple(n for n in config["sizes"] if n in beyond)


def local_gpu(config: dict) -> tuple[LocalGpu | None, str | None]:
    """(GPU and its set, or None; a one-line reason when a GPU is present but unusable)."""
    if config.get("gpu", "auto") == "off":
        return None, None
    info = detect_gpu()
    if info is None:
        return None, None
    try:
        ncu = find_tool("ncu", (config.get("tools") or {}).get("ncu"))
        version = ncu_version(ncu)
    except ToolNotFoundError as exc:
        return None, (f"GPU {info.name} found but {exc}; skipping check/time/profile "
                      "and analysing the committed profile sets only")
    return LocalGpu(info, profile_set_name(info, version, config.get("set_suffix", ""))), None


def build_tools(config: dict) -> str | None:
    """None when nvcc and cuobjdump are found; else a one-line reason and the fix.

    Raises:
        ToolNotFoundError: a path given explicitly in the config does not exist.
    """
    tools = config.get("tools") or {}
    for name in ("nvcc", "cuobjdump"):
        try:
            find_tool(name, tools.get(name))
        except ToolNotFoundError as exc:
            if tools.get(name):
                raise
            return f"{exc}; skipping the kernel builds (tables and figures still come from profiles/)"
    return None


#: A report file a set may hold: its name appears in shell commands, so letters, digits,
#: ``.``, ``_`` and ``-`` only, starting with a letter, digit or ``_`` (the import target
#: renames other files so).
SAFE_REPORT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*\.ncu-rep(?:\.xz)?$")
REPORT_SUFFIXES = (".ncu-rep", ".ncu-rep.xz")


def committed_sets(profiles: Path, wanted: list[str] | None = None,
                   warn: Callable[[str], None] | None = None) -> list[str]:
    """Profile sets under ``profiles/``: folders whose ``reports/`` hold a report
    :func:`set_reports` reads (a file named ``*.ncu-rep[.xz]`` of a safe name). A folder
    whose ``*.ncu-rep[.xz]`` entries are all skipped (other characters in the name, or not
    a file), or whose own name cannot name a set (:func:`analysis.names.set_name_problem`),
    is no set: ``warn`` (default :func:`warnings.warn`) receives one message naming it, so
    that no job runs for it.

    Returns:
        The sets, sorted; with ``wanted``, its sets in its order, each once.

    Raises:
        ConfigError: a set named in ``wanted`` does not exist, or holds no readable report;
            one report stored both plain and xz-compressed (:func:`set_reports`).
    """
    if warn is None:
        def warn(message: str) -> None:
            warnings.warn(message, stacklevel=3)
    named = sorted({p.parent.parent.name for p in profiles.glob("*/reports/*")
                    if p.name.endswith(REPORT_SUFFIXES)} - {"default"})
    for name in [n for n in named if set_name_problem(n)]:
        named.remove(name)
        warn(f"{profiles / name}: skipped, not a profile set: {set_name_problem(name)} (rename the folder)")
    found, unread = [], {}
    for name in named:
        if set_reports(profiles, name, warn=lambda m: None):  # its warnings come when the set is listed
            found.append(name)
        else:
            unread[name] = sorted(p.name for p in (profiles / name / "reports").iterdir()
                                  if p.name.endswith(REPORT_SUFFIXES))

    def unread_text(name: str) -> str:
        shown = unread[name]
        return (f"{profiles / name / 'reports'} holds no report it can read: {', '.join(shown[:3])}"
                f"{', ...' if len(shown) > 3 else ''} (a report is a file whose name starts with an ASCII letter, "
                "digit or '_' and holds only ASCII letters, digits, '.', '_' and '-'; `snakemake --cores 1 import_set "
                "--config source=DIR set=NAME` renames reports so)")
    if wanted:
        for w in wanted:
            if w in unread:
                raise ConfigError(f"config profile_sets: {unread_text(w)}")
            if w not in found:
                raise ConfigError(f"config profile_sets: no .ncu-rep or .ncu-rep.xz file under "
                                  f"{profiles / w / 'reports'}")
        return list(dict.fromkeys(wanted))  # each set once, in the order given
    for name in unread:
        warn(f"{unread_text(name)}: not a profile set")
    return found


#: A report stem that looks meant to give N (``_n`` then a digit or ``-``, e.g. ``k_n0512``,
#: ``k_n512-512``, ``k_n512_r0``); :func:`set_reports` warns where ReportName does not read it.
NEAR_REPORT_NAME = re.compile(r"_n[\d-]+(?:_r\d+)?$")


def set_reports(profiles: Path, set_name: str, warn: Callable[[str], None] | None = None) -> list[Path]:
    """The report files of a set (``.ncu-rep.xz`` or plain ``.ncu-rep``, any stem), sorted.

    Entries that are not files, and files whose names hold other characters than ASCII
    letters, digits, ``.``, ``_``, ``-`` (or do not start with one of those letters, a digit or
    ``_``), are skipped with a warning (``snakemake import_set`` renames them); plain reports
    are read with a warning (no checksum guards them), and so are reports whose names come close to ``{kernel}_n{N...}[_r{R}]`` without
    being of that form (:data:`NEAR_REPORT_NAME`; they are read with N = NA). ``warn``
    receives each warning's text (default: :func:`warnings.warn`; the workflow passes
    Snakemake's logger).

    Raises:
        ConfigError: one report stored both plain and xz-compressed.
    """
    if warn is None:
        def warn(message: str) -> None:
            warnings.warn(message, stacklevel=3)
    out, stems = [], {}
    for p in sorted((profiles / set_name / "reports").iterdir()):
        if not p.name.endswith(REPORT_SUFFIXES):
            continue
        if not p.is_file():
            warn(f"{p}: skipped: named like a report, but not a file")
            continue
        if not SAFE_REPORT.match(p.name):
            warn(f"{p}: skipped: a report file name must start with an ASCII letter, digit or '_' and hold "
                 "only ASCII letters, digits, '.', '_' and '-' (`snakemake --cores 1 import_set --config "
                 "source=DIR set=NAME` renames reports so)")
            continue
        stem = report_stem(p)
        if stem in stems:
            raise ConfigError(f"{stems[stem]} and {p}: the same report twice (plain and xz); remove one")
        stems[stem] = p
        out.append(p)
    near = [p.name for p in out if NEAR_REPORT_NAME.search(report_stem(p)) and ReportName.parse(p) is None]
    if near:
        warn(f"{profiles / set_name / 'reports'}: {len(near)} file name(s) close to {{kernel}}_n{{N}}[_r{{R}}] or "
             f"{{kernel}}_n{{N1}}-{{N2}}-... but not of that form ({', '.join(near[:3])}"
             f"{', ...' if len(near) > 3 else ''}): read with N = NA (an N of 0, with a leading zero or given twice, "
             f"an empty N, an N or repeat above {MAX_NAME_NUMBER}, or _r0); rename them to give their N")
    plain = [p.name for p in out if p.name.endswith(".ncu-rep")]
    if plain:
        warn(f"{profiles / set_name / 'reports'}: {len(plain)} plain .ncu-rep file(s) read as they are "
             f"({', '.join(plain[:3])}{', ...' if len(plain) > 3 else ''}); a plain report has no "
             "checksum, xz -9 them (or import the folder with `snakemake import_set`)")
    return out


@dataclass(frozen=True)
class SetIdentity:
    """What the automatic comparisons know of a profile set before comparing it.

    Attributes:
        kernels: ncu's function names of the set's launches (for a report named
            ``{kernel}_n{N}``, its kernel: the reader checks that every launch is of it).
        ncu_version: the set's Nsight Compute version (e.g. ``2025.3.1.0``), None if unknown.
        driver: the set's driver version (e.g. ``580.159.04``), None if unknown.
        gpu: the set's GPU as metadata.json or the reports name it (e.g. ``NVIDIA H200``),
            None if unknown.
    """

    kernels: frozenset[str]
    ncu_version: str | None = None
    driver: str | None = None
    gpu: str | None = None


def version_key(version: str | None) -> tuple:
    """A version string as a sortable key: its leading dotted numbers
    (:func:`analysis.versions.version_numbers`: ``2025.3.1.0`` -> (0, 2025, 3, 1)); an unknown
    or unreadable version sorts after every known one."""
    nums = version_numbers(version)
    return (0, *nums) if nums else (1,)


def comparison_pairs(sets: dict[str, SetIdentity], baseline: str | None) -> list[tuple[str, str]]:
    """The automatic comparisons of profile sets, as (baseline, candidate) pairs in
    candidate name order; never every pair (their number grows with the square of the sets).

    Rule: every set that shares a kernel (:attr:`SetIdentity.kernels`) with the configured
    ``baseline`` set is compared against it. A set that shares none with it is compared
    against the oldest set among those it shares kernels with (itself included): the
    lowest Nsight Compute version, then driver version (:func:`version_key`; unknown
    versions last), then a set of the candidate's own GPU before one of another (a set's
    counters move with the GPU, so a baseline of another GPU only where the versions call for
    it), then name. The oldest set of such a group is the others' baseline and
    no candidate itself. A set sharing no kernel with any other is in no pair
    (:func:`unpaired_sets` names it).

    Args:
        sets: set name -> what is known of it.
        baseline: the configured baseline set (config ``compare_baseline``), or None; a name
            not in ``sets`` counts as None.
    """
    base = baseline if baseline in sets else None
    pairs = []
    for name in sorted(sets):
        if name == base:
            continue
        kernels = sets[name].kernels
        if base is not None and kernels & sets[base].kernels:
            pairs.append((base, name))
            continue
        peers = [s for s in sets if s == name or (s != base and kernels & sets[s].kernels)]
        oldest = min(peers, key=lambda s: (version_key(sets[s].ncu_version), version_key(sets[s].driver),
                                           sets[s].gpu != sets[name].gpu, s))
        if oldest != name:
            pairs.append((oldest, name))
    return pairs


def unpaired_sets(sets: dict[str, SetIdentity]) -> list[str]:
    """One warning per set, in name order, that shares no kernel with any other set, so
    that :func:`comparison_pairs` leaves it out of the automatic comparisons (with one set
    only, none), naming what its reports hold."""
    if len(sets) < 2:
        return []
    out = []
    for name in sorted(sets):
        kernels = sets[name].kernels
        if any(kernels & sets[s].kernels for s in sets if s != name):
            continue
        shown = sorted(kernels)
        listed = ", ".join(shown[:5]) + (f" and {len(shown) - 5} more" if len(shown) > 5 else "")
        out.append(f"profile set {name} shares no kernel with another set (its launches are of: {listed or 'none'}), "
                   "so no automatic comparison includes it; compare it with "
                   f"--config baseline={name} candidate=OTHER_SET")
    return out


#: Reports per reader process of a set's parse job, and the most readers it asks for.
REPORTS_PER_READER = 60
MAX_READERS = 4


def parse_readers(n_reports: int) -> int:
    """Reader processes (the threads rule parse_set asks for) for a set of ``n_reports``
    reports: one per :data:`REPORTS_PER_READER`, at least 1 and at most :data:`MAX_READERS`.

    A small set's job is mostly serial work (imports, the set's tables, its summary): a
    second reader would hold a core another job could use. Measured with ``snakemake
    --cores 2`` in fresh clones: 92.8-93.2 s with 4 asked for (capped at 2) by every set,
    82.2-92.3 s with this rule (docs/benchmarks.md). A set of few reports of many
    launches (one report per kernel, every N in it, as a GPU run writes) gets one reader
    too: on a machine with many cores its job is then slower than it could be.
    """
    return max(1, min(MAX_READERS, n_reports // REPORTS_PER_READER))
