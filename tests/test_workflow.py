"""The main job, `snakemake --cores N`, on the committed profile set in a scratch copy."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from .conftest import DEFAULT_SET, REPO

COPY = ["Snakefile", "config", "workflow", "kernels", "profiles", "figures", ".gitignore"]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("wf")
    for item in COPY:
        src = REPO / item
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, root / item)
    # A fresh clone gives every file the checkout time, in any order: make the inputs
    # (reports) newer than everything else to show no GPU rule is triggered by it.
    for p in (root / "profiles").rglob("*"):
        os.utime(p)
    # a repository of its own, so that the main job's changes to tracked files show in git status
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "as committed"], cwd=root, check=True)
    return root


def _bare_workflow(tmp_path: Path) -> Path:
    """A scratch copy of the workflow without profile sets (Snakefile, config, rules, kernels)."""
    root = tmp_path / "wf"
    root.mkdir()
    for item in ("Snakefile", "config", "workflow", "kernels"):
        src = REPO / item
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, root / item)
    return root


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("snakemake")
    return subprocess.run([str(exe), "--cores", "2", *args], cwd=workdir, capture_output=True, text=True,
                          timeout=1800)


@pytest.mark.workflow
def test_main_job_from_committed_set(workdir):
    proc = snakemake(workdir, "--config", "gpu=off")
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = pd.read_csv(workdir / "results" / "tables" / DEFAULT_SET / "summary.csv")
    timings = pd.read_csv(workdir / "profiles" / DEFAULT_SET / "timings.csv")
    kernels = yaml.safe_load((workdir / "config" / "config.yaml").read_text())["kernels"]
    # every study kernel; kernels beyond the study once they are profiled into the set
    measured = set(timings["kernel"])
    assert {k for k, spec in kernels.items() if spec.get("study", True)} <= measured <= set(kernels)
    assert len(summary) == len(timings) == 5 * len(measured) and summary["throughput"].gt(0).all()
    metrics = pd.read_parquet(workdir / "results" / "tables" / DEFAULT_SET / "metrics.parquet")
    assert metrics.groupby(["kernel", "n"])["metric"].nunique().min() > 1000
    for fig in ("occupancy_vs_throughput", "coalescing", "dram_active"):
        for ext in ("png", "pdf"):
            assert (workdir / "figures" / DEFAULT_SET / f"{fig}.{ext}").stat().st_size > 10_000
    for arch in ("sm_89", "sm_90"):
        assert (workdir / "results" / "build" / arch / "int4_wmma.sass").stat().st_size > 0
    # nothing was profiled or timed on this machine
    assert not (workdir / "results" / "gpu").exists()
    # the committed figures and tables are what the main job writes, to the byte
    status = subprocess.run(["git", "status", "--porcelain"], cwd=workdir, capture_output=True, text=True,
                            check=True).stdout
    assert status == "", f"the main job changed committed files:\n{status[:3000]}"
    # a second run has nothing to do
    again = snakemake(workdir, "--config", "gpu=off", "-n")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.workflow
def test_invalid_config_is_refused_before_work(workdir):
    bad = workdir / "bad_sizes.yaml"
    bad.write_text("sizes: [1024, 1000]\n")
    proc = snakemake(workdir, "-n", "--configfile", str(bad))
    assert proc.returncode != 0
    assert "config sizes: N=1000 (M = N = K) cannot run" in proc.stderr + proc.stdout
    proc = snakemake(workdir, "-n", "--config", "gpu=sometimes")
    assert proc.returncode != 0 and "gpu" in proc.stderr + proc.stdout


def test_parse_jobs_ask_for_readers_by_set_size(workdir):
    """Each set's parse job asks for one reader per 60 reports (1 to 4), as Snakemake plans
    them (forced, so that the test holds after the main job ran here): the default set
    (120 reports) gets two, the others (20-45 reports) one."""
    import re

    from analysis.workflow import committed_sets, parse_readers, set_reports

    proc = snakemake(workdir, "-n", "--cores", "8", "--config", "gpu=off", "--forcerun", "parse_set")
    assert proc.returncode == 0, proc.stderr[-3000:]
    planned = {}  # set -> threads, from each parse_set job's block (threads shown when > 1)
    for block in re.split(r"(?:rule|checkpoint) parse_set:", proc.stdout)[1:]:
        block = re.split(r"\n(?:local)?rule |\n\[", block)[0]
        threads = re.search(r"^\s+threads: (\d+)$", block, flags=re.M)
        planned[re.search(r"wildcards: set=(\S+)", block).group(1)] = int(threads.group(1)) if threads else 1
    sets = committed_sets(workdir / "profiles", warn=lambda m: None)  # the workflow's own list
    want = {s: parse_readers(len(set_reports(workdir / "profiles", s, warn=lambda m: None))) for s in sets}
    assert planned == want
    assert want[DEFAULT_SET] == 2 and min(want.values()) == 1
    assert parse_readers(0) == 1 and parse_readers(10_000) == 4


@pytest.mark.workflow
def test_compare_target(workdir):
    a, b = DEFAULT_SET, f"{DEFAULT_SET}_nvcc13.5"
    proc = snakemake(workdir, "compare", "--config", "gpu=off", f"baseline={a}", f"candidate={b}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = workdir / "figures" / "compare" / f"{a}__vs__{b}"
    changes = pd.read_csv(out / "changes.csv")
    inst = changes[changes["metric"] == "smsp__inst_executed.sum"]
    assert set(inst["kernel"]) == {"int8_wmma", "int8_ptx_mma_k32", "int4_wmma"}
    assert (out / "headline.png").stat().st_size > 10_000
    meta = pd.read_csv(out / "metadata.csv").set_index("field")
    assert bool(meta.loc["nvcc_version", "differs"])
    apart = "a10g_ncu2023.1.1_esmm"  # an imported set of other kernels: no launch in common
    none = snakemake(workdir, "compare", "--config", "gpu=off", f"baseline={a}", f"candidate={apart}")
    assert none.returncode == 0, none.stderr[-3000:]
    assert f"warning: {apart} against {a}: no launch of either set is matched in the other" in none.stderr
    bad = snakemake(workdir, "-n", "compare", "--config", "gpu=off", f"baseline={a}", "candidate=nowhere")
    assert bad.returncode != 0 and "profile set nowhere not found" in bad.stdout + bad.stderr
    half = snakemake(workdir, "-n", "compare", "--config", "gpu=off", f"baseline={a}")
    assert half.returncode != 0 and "give both baseline and candidate" in half.stdout + half.stderr


@pytest.mark.workflow
def test_bad_report_fails_its_job_not_the_workflow(tmp_path):
    """One truncated report in a set: its parse job fails with the file and the cause, and
    with --keep-going every other set is still analysed and plotted."""
    root = _bare_workflow(tmp_path)
    good = REPO / "profiles" / f"{DEFAULT_SET}_nvcc13.5"  # the smaller committed set
    shutil.copytree(good, root / "profiles" / good.name)
    bad = root / "profiles" / "broken_set" / "reports"
    bad.mkdir(parents=True)
    shutil.copy(good / "reports" / "int8_wmma_n1024.ncu-rep.xz", bad)
    data = (good / "reports" / "int8_wmma_n512.ncu-rep.xz").read_bytes()
    (bad / "int8_wmma_n512.ncu-rep.xz").write_bytes(data[: len(data) // 2])
    proc = snakemake(root, "--keep-going", "--omit-from", "build", "--config", "gpu=off")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "broken_set/reports/int8_wmma_n512.ncu-rep.xz: not a complete xz stream" in out
    assert (root / "figures" / good.name / "dram_active.png").exists()
    assert not (root / "results" / "tidy" / "broken_set" / "int8_wmma_n512.parquet").exists()
    assert (root / "results" / "tidy" / "broken_set" / "int8_wmma_n1024.parquet").exists()


#: What a reader of the HTML report must find: every figure and table, per set.
STUDY_FIGURES = ["ablation", "coalescing", "dram_active", "instructions", "occupancy_vs_throughput",
                 "roofline", "speedup", "throughput"]
STUDY_TABLES = ["claims", "kernel summary", "speedups"]


@pytest.mark.workflow
def test_html_report_lists_every_figure(workdir):
    """`snakemake --report report.html` after the main job; opened in headless Chromium, each
    category lists every figure and table (clicked through as a reader would)."""
    chromium = shutil.which("chromium")
    if chromium is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (.ci/run installs Debian's chromium package)")
        pytest.skip("chromium not installed")
    from .chromium import report_listing

    main = snakemake(workdir, "--config", "gpu=off")
    assert main.returncode == 0, main.stderr[-3000:]
    proc = snakemake(workdir, "--config", "gpu=off", "--report", "report.html")
    assert proc.returncode == 0, proc.stderr[-3000:]
    listing = report_listing(workdir / "report.html", chromium)
    sets = sorted(p.parent.name for p in (workdir / "profiles").glob("*/timings.csv"))
    assert {DEFAULT_SET, f"{DEFAULT_SET}_nvcc13.5"} <= set(sets)
    for s in sets:
        assert listing[f"Figures / {s}"] == STUDY_FIGURES
        assert listing[f"Tables / {s}"] == STUDY_TABLES
    assert listing["Figures / static SASS"] == ["static instruction mix"]
    assert listing["Tables / static SASS"] == ["static SASS summary"]
    assert listing["Tables / quantization"] == ["quantization error"]
    # one subcategory per pair of sets that share a kernel, each with its table and figure
    pairs = [k for k in listing if k.startswith("Set comparison / ")]
    assert f"Set comparison / {DEFAULT_SET} vs {DEFAULT_SET}_nvcc13.5" in pairs
    assert all(sorted(listing[k]) == ["changes", "explanations", "headline", "waterfalls"] for k in pairs)
    # per set its explanations: the pages, the stall stacks, and a page and a waterfall per
    # kernel pair with the list of pairs (the pages were left out at first)
    for s in sorted(p.name for p in (workdir / "profiles").iterdir() if (p / "reports").is_dir()):
        pairs = workdir / "figures" / s / "explain" / "pairs"
        waterfalls = [f"waterfall {f.stem}" for f in pairs.glob("*.png")]
        pages = [f"pair {f.stem}" for f in pairs.glob("*.md") if f.stem != "index"]
        assert len(pages) == len(waterfalls)
        assert sorted(listing[f"Explanations / {s}"]) == sorted(
            ["explanations", "findings", "source hot spots", "stall stacks", "kernel pairs", *waterfalls, *pages])
    assert listing["Explanations / noise"] == ["noise model"]



@pytest.mark.workflow
def test_import_target_makes_a_set_of_foreign_reports(tmp_path):
    """`snakemake import_set --config source=DIR set=NAME`: reports with any names, plain or
    xz, several launches, kernels of no known precision -> a set with tables and figures."""
    import lzma

    root = _bare_workflow(tmp_path)
    source = tmp_path / "from elsewhere"
    source.mkdir()
    data = REPO / "tests" / "data"
    shutil.copy(data / "add_n1024.ncu-rep.xz", source)
    (source / "my app.ncu-rep").write_bytes(lzma.decompress((data / "several_full.ncu-rep.xz").read_bytes()))
    proc = snakemake(root, "import_set", "--config", "gpu=off", f"source={source}", "set=elsewhere")
    assert proc.returncode == 0, proc.stderr[-3000:]
    reports = sorted(p.name for p in (root / "profiles" / "elsewhere" / "reports").iterdir())
    assert reports == ["add_n1024.ncu-rep.xz", "my_app.ncu-rep.xz"]
    s = pd.read_csv(root / "results" / "tables" / "elsewhere" / "summary.csv")
    assert len(s) == 9 and s["precision"].isna().all() and s["throughput"].isna().all()
    assert sorted(s.loc[s["report"] == "my_app", "occurrence"]) == [0, 0, 0, 0, 0, 0, 1, 2]
    assert (root / "figures" / "elsewhere" / "dram_active.png").stat().st_size > 10_000
    # and its explanations: findings, hot spots, stall stacks (so that --report finds them after an import)
    explained = root / "figures" / "elsewhere" / "explain"
    assert {"explanations.csv", "findings.md", "hotspots.md", "stalls.csv"} <= {p.name for p in explained.iterdir()}
    # set= alone names no import: the message says what it is for and how to make one set's files
    proc = snakemake(root, "-n", "--config", "gpu=off", "set=elsewhere")
    assert proc.returncode != 0
    assert "figures/elsewhere/explain/explanations.csv" in proc.stdout + proc.stderr


@pytest.mark.workflow
def test_skipped_and_plain_reports_are_announced_by_snakemake(tmp_path):
    """set_reports' warnings (a name the main job does not read, a plain report) appear in
    Snakemake's output, where Python warnings raised while it reads the workflow do not."""
    import lzma

    root = _bare_workflow(tmp_path)
    reports = root / "profiles" / "elsewhere" / "reports"
    reports.mkdir(parents=True)
    data = REPO / "tests" / "data"
    shutil.copy(data / "add_n1024.ncu-rep.xz", reports / "has space.ncu-rep.xz")
    (reports / "add_n1024.ncu-rep").write_bytes(lzma.decompress((data / "add_n1024.ncu-rep.xz").read_bytes()))
    proc = snakemake(root, "-n", "--config", "gpu=off")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "has space.ncu-rep.xz: skipped: a report file name must start with" in out
    assert "1 plain .ncu-rep file(s) read as they are (add_n1024.ncu-rep)" in out


def _import(root: Path, source: Path, set_name: str) -> None:
    proc = snakemake(root, "import_set", "--config", "gpu=off", f"source={source}", f"set={set_name}")
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.workflow
def test_imported_sets_are_paired_by_the_kernels_they_share(tmp_path, foreign_dir):
    """Kind 3 (cross-version comparisons): sets were paired by report file name, so two sets
    of `profile.ncu-rep` holding other programs were compared, and two sets sharing
    AveryClapp's blocktiling kernels under other file names were not. A report named
    `scale<float> run 1.ncu-rep` (a template kernel's name) is imported under a safe stem,
    its name kept in the import record (Snakemake read `<float>` as a path variable)."""
    root = _bare_workflow(tmp_path)
    sources = {  # set -> (file name in the source folder, foreign report)
        "tiling_a": ("profile.ncu-rep.xz", "AveryClapp__ESMM-Research__profile__71fb9e58"),
        "tiling_b": ("profile_output.ncu-rep.xz", "AveryClapp__ESMM-Research__profile_output__32646786"),
        "render": ("profile.ncu-rep.xz", "Abhishek7204__raytracingCuda__profile__ca437891"),
        "adds": ("scale<float> run 1.ncu-rep.xz", "trevorgloe__GPUAcceleratedNetworkSim__profile__131b6e30"),
    }
    for set_name, (name, stem) in sources.items():
        folder = tmp_path / "src" / set_name
        folder.mkdir(parents=True)
        shutil.copy(foreign_dir / f"{stem}.ncu-rep.xz", folder / name)
        _import(root, folder, set_name)
    record = pd.read_csv(root / "profiles" / "adds" / "imported.csv")
    assert list(record["stem"]) == ["scale_float__run_1"] and list(record["original_name"]) == [
        "scale<float> run 1.ncu-rep.xz"]
    # a second import into the set keeps the first one's record (Snakemake removes a job's
    # output before it runs: the record was rewritten with the second import's rows only)
    more = tmp_path / "src" / "adds_more"
    more.mkdir()
    shutil.copy(foreign_dir / "LakshyaSingh354__CudaCode__stage1_reps_vec_add__7d4ec686.ncu-rep.xz",
                more / "vec add.ncu-rep.xz")
    _import(root, more, "adds")
    record = pd.read_csv(root / "profiles" / "adds" / "imported.csv")
    assert list(record["stem"]) == ["scale_float__run_1", "vec_add"]
    proc = snakemake(root, "-n", "compare", "--config", "gpu=off")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    planned = {line.strip() for line in out.splitlines() if "__vs__" in line and "changes.csv" in line}
    assert any("tiling_a__vs__tiling_b" in line for line in planned), out[-3000:]
    assert not any("render" in line for line in planned) and not any("adds" in line for line in planned)
    for lonely in ("render", "adds"):
        assert out.count(f"profile set {lonely} shares no kernel with another set") == 1


@pytest.mark.workflow
def test_an_import_with_a_damaged_report_writes_nothing(tmp_path, foreign_dir):
    """A cut-short plain report beside a good one: the import is refused before any job,
    naming the original file, and nothing lands in profiles/ (it used to store both and fail
    in the parse job, naming the stored copy, leaving a half-made set)."""
    import lzma

    root = _bare_workflow(tmp_path)
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(foreign_dir / "LakshyaSingh354__CudaCode__report__164f986e.ncu-rep.xz", source / "good.ncu-rep.xz")
    plain = lzma.decompress((REPO / "tests" / "data" / "add_n1024.ncu-rep.xz").read_bytes())
    (source / "run 3.ncu-rep").write_bytes(plain[: len(plain) // 2])
    proc = snakemake(root, "import_set", "--config", "gpu=off", f"source={source}", "set=cut")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "nothing imported" in out and "run 3.ncu-rep: ends inside" in out
    assert not (root / "profiles" / "cut").exists()
