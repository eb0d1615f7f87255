"""The workflow through Snakemake's SLURM executor on a real one-node SLURM cluster.

The cluster (tests/slurm_cluster.py) runs on this machine; in CI (.ci/run installs
slurm-wlm and munge) a cluster that does not start is a failure showing the daemons'
logs. Outputs are compared with the committed ones, which a local `snakemake` run
writes byte for byte (docs/benchmarks.md: `git status` clean after the main job).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import DEFAULT_SET, REPO
from .slurm_cluster import ClusterError, logs, missing, one_node_cluster

pytestmark = pytest.mark.slurm

SETS = [DEFAULT_SET, f"{DEFAULT_SET}_nvcc13.5"]
COPY = ["Snakefile", "config", "workflow", "kernels", "profiles"]
#: Site settings of the test cluster: no accounts, no accounting database (so squeue, not
#: sacct, reports job states), and status checks every 2 s instead of the default 10 s.
SITE = ["--slurm-no-account", "--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "1",
        "--seconds-between-status-checks", "2", "--slurm-keep-successful-logs"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    why = missing()
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"no SLURM cluster can be started: {why}")
        pytest.skip(why)
    root = tmp_path_factory.mktemp("slurm")
    try:
        with one_node_cluster(root) as node:
            yield node
    except ClusterError as exc:
        pytest.fail(f"the one-node SLURM cluster did not start:\n{exc}")


@pytest.fixture
def workdir(tmp_path) -> Path:
    for item in COPY:
        src = REPO / item
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, tmp_path / item)
    return tmp_path


#: A guard against a hung run (a status command that never answers), not a speed target: the
#: CPU part took 98 s alone on a 2-core machine and more than 170 s in CI beside other tests.
HANG_S = 600


def slurm_snakemake(workdir: Path, *args: str, timeout: float = HANG_S) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("snakemake")
    cmd = [str(exe), "--workflow-profile", "workflow/profiles/slurm", *SITE, "--max-threads", str(os.cpu_count()),
           *args]
    return subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=timeout, check=False)


def cpu_targets() -> list[str]:
    """The CPU part on the committed sets: per-set figures, the comparison, quantization."""
    out = [f"figures/{s}/{f}.{ext}" for s in SETS for f in ("occupancy_vs_throughput", "coalescing", "dram_active")
           for ext in ("png", "pdf")]
    pair = f"figures/compare/{SETS[0]}__vs__{SETS[1]}"
    out += [f"{pair}/{f}" for f in ("changes.csv", "metadata.csv", "statuses.csv", "headline.png", "headline.pdf")]
    return out + ["figures/quant/quantization_error.csv"]


def test_cpu_part_runs_through_slurm_with_the_local_outputs(cluster, workdir):
    targets = cpu_targets()
    proc = slurm_snakemake(workdir, "--config", "gpu=off", "--", *targets)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    # every job went through SLURM: one submission and one kept SLURM log per job
    stats = re.search(r"Job stats:.*?\ntotal\s+(\d+)", out, flags=re.DOTALL)
    assert stats, out[-3000:]
    jobs = int(stats.group(1))
    submitted = re.findall(r"has been submitted with SLURM jobid (\d+)", out)
    # two parse jobs (each writing its set's summary), two figure jobs, a comparison, quantization
    assert jobs >= 6 and len(submitted) == jobs
    slurm_logs = list((workdir / ".snakemake" / "slurm_logs").rglob("*.log"))
    assert sorted(p.stem for p in slurm_logs) == sorted(submitted)
    assert {p.relative_to(workdir / ".snakemake" / "slurm_logs").parts[0] for p in slurm_logs} >= {
        "rule_parse_set", "rule_set_figures", "rule_compare_sets", "rule_quantization_error"}
    # the same bytes as the local run
    differ = [t for t in targets if (workdir / t).read_bytes() != (REPO / t).read_bytes()]
    assert not differ, differ


def test_gpu_jobs_ask_slurm_for_a_gpu_on_the_gpu_partition(cluster, workdir):
    """No GPU node exists here: the node has a GPU in SLURM's books only. The job that
    describes a GPU node is submitted with --gpus=1 to the GPU partition, scheduled on the
    node, and fails there saying that the node has no GPU."""
    proc = slurm_snakemake(workdir, "--verbose", "--config", "gpu_partition=main", "--", "gpu_node")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    calls = [line for line in out.splitlines() if "sbatch call:" in line]
    assert len(calls) == 1, out[-3000:]
    assert "--gpus=1" in calls[0] and re.search(r"(-p|--partition)[ =]'?main", calls[0]), calls[0]
    assert len(list((workdir / ".snakemake" / "slurm_logs" / "rule_gpu_node").rglob("*.log"))) == 1
    assert "no NVIDIA GPU with a working driver" in (workdir / "logs" / "gpu_node" / "main.log").read_text()
    assert not (workdir / "results" / "gpu" / "nodes" / "main.json").exists()


def test_gpu_rules_of_a_described_node_ask_for_a_gpu(cluster, workdir):
    """With a node description as the gpu_node job writes on a GPU node (here an H100's,
    written by hand), the check/time job of that set is submitted with --gpus=1 to the GPU
    partition after its cubin was built through SLURM, and on this GPU-less node its node
    check fails before any measurement."""
    node = workdir / "results" / "gpu" / "nodes" / "main.json"
    node.parent.mkdir(parents=True)
    node.write_text('{"host": "gpu01", "gpu": {"name": "NVIDIA H100 80GB HBM3", "cc": "9.0", "arch": "sm_90", '
                    '"driver": "570.86.15", "cuda_driver": "12.8"}, "ncu_version": "2025.1.0", '
                    '"set": "h100-80gb-hbm3_570.86.15_ncu2025.1.0"}')
    target = "results/gpu/h100-80gb-hbm3_570.86.15_ncu2025.1.0/check/int8_wmma_n512.json"
    proc = slurm_snakemake(workdir, "--verbose", "--config", "gpu_partition=main", "--", target)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    calls = {m.group(1): m.group(0) for m in re.finditer(r"sbatch call:.*?rule_(build|check_time)\S*.*", out)}
    assert set(calls) == {"build", "check_time"}, out[-3000:]
    assert "--gpus" not in calls["build"]
    assert "--gpus=1" in calls["check_time"] and re.search(r"(-p|--partition)[ =]'?main", calls["check_time"])
    assert (workdir / "results" / "build" / "sm_90" / "int8_wmma.cubin").exists()
    assert len(list((workdir / ".snakemake" / "slurm_logs" / "rule_check_time").rglob("*.log"))) == 1
    log = workdir / "logs" / "check_time" / "h100-80gb-hbm3_570.86.15_ncu2025.1.0" / "int8_wmma.log"
    assert "no NVIDIA GPU with a working driver" in log.read_text()
    assert not (workdir / target).exists()


def test_a_cluster_that_cannot_start_shows_the_daemon_logs(tmp_path):
    """logs() is what a failed start shows: each daemon's log tail, or that it has none."""
    (tmp_path / "slurmd.log").write_text("error: something\n")
    text = logs(tmp_path)
    assert "slurmd.log\nerror: something" in text and "munged.log\n(no log)" in text


@pytest.mark.parametrize("config, node_arch, message", [
    (["gpu=off", "gpu_partition=main"], None, "gpu=off and gpu_partition given"),
    (["gpu_partition=main"], "sm_80", "(sm_80, profile set h100-80gb-hbm3_570.86.15_ncu2025.1.0) runs no kernel"),
])
def test_cluster_configs_that_cannot_work_are_refused_before_any_job(workdir, config, node_arch, message):
    """No cluster needed: the plan itself is refused, naming the cause."""
    if node_arch:
        node = workdir / "results" / "gpu" / "nodes" / "main.json"
        node.parent.mkdir(parents=True)
        node.write_text('{"host": "gpu01", "gpu": {"name": "NVIDIA H100 80GB HBM3", "cc": "8.0", '
                        f'"arch": "{node_arch}", "driver": "570.86.15", "cuda_driver": "12.8"}}, '
                        '"ncu_version": "2025.1.0", "set": "h100-80gb-hbm3_570.86.15_ncu2025.1.0"}')
    exe = Path(sys.executable).with_name("snakemake")
    proc = subprocess.run([str(exe), "-n", "--cores", "1", "--config", *config], cwd=workdir, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode != 0 and message in proc.stdout + proc.stderr, (proc.stdout + proc.stderr)[-2000:]

