"""A one-node SLURM cluster on this machine, for the cluster test (loopback only).

munged runs on a private key and socket; slurmctld and slurmd read /etc/slurm/slurm.conf
(jobs' own srun calls find the configuration only there). The node has this machine's
CPUs and memory and one GPU in name only (``Gres=gpu:1`` on /dev/null): SLURM schedules
jobs that ask for a GPU, and the job itself finds none. Needs root and Debian's
``slurm-wlm`` and ``munge`` packages (.ci/run installs them).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

CONF_DIR = Path("/etc/slurm")
MARK = "# one-node test cluster of tests/slurm_cluster.py"
DAEMONS = ("slurmctld", "slurmd", "munged", "sbatch", "squeue", "sinfo")


class ClusterError(RuntimeError):
    """The cluster could not be started; the message holds the daemons' logs."""


def missing() -> str | None:
    """Why no cluster can be started here, or None."""
    if os.geteuid() != 0:
        return "not root (slurmd and munged run as root here)"
    gone = [d for d in DAEMONS if shutil.which(d) is None and not Path("/usr/sbin", d).exists()]
    if gone:
        return f"{', '.join(gone)} not installed (apt-get install slurm-wlm munge)"
    conf = CONF_DIR / "slurm.conf"
    if conf.exists() and MARK not in conf.read_text(encoding="utf-8", errors="replace"):
        return f"{conf} exists and is not this test's: not touching a real cluster's configuration"
    return None


def _exe(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


def _conf(root: Path, host: str) -> str:
    mem = int(int(Path("/proc/meminfo").read_text().split()[1]) / 1024 * 0.8)
    return "\n".join([
        MARK, "ClusterName=testcluster", f"SlurmctldHost={host}", "SlurmUser=root",
        "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={root}/munge.socket",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "MpiDefault=none",
        "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core", "GresTypes=gpu",
        "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
        "ReturnToService=2", "SlurmctldPort=16817", "SlurmdPort=16818", "MinJobAge=600",
        f"StateSaveLocation={root}/state", f"SlurmdSpoolDir={root}/spool",
        f"SlurmctldPidFile={root}/slurmctld.pid", f"SlurmdPidFile={root}/slurmd.pid",
        f"SlurmctldLogFile={root}/slurmctld.log", f"SlurmdLogFile={root}/slurmd.log",
        f"NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} RealMemory={mem} Gres=gpu:1 State=UNKNOWN",
        f"PartitionName=main Nodes={host} Default=YES MaxTime=INFINITE State=UP", ""])


def logs(root: Path) -> str:
    """The tail of each daemon's log, for an error message."""
    out = []
    for name in ("munged.log", "slurmctld.log", "slurmd.log"):
        p = root / name
        text = p.read_text(errors="replace").splitlines()[-20:] if p.exists() else ["(no log)"]
        out.append(f"--- {p}\n" + "\n".join(text))
    return "\n".join(out)


def _stop(root: Path) -> None:
    for name in ("slurmd", "slurmctld", "munged"):
        pid_file = root / f"{name}.pid"
        try:
            pid = int(pid_file.read_text().strip())
            os.kill(pid, signal.SIGTERM)
        except (OSError, ValueError):
            continue
        for _ in range(50):
            try:
                os.kill(pid, 0)
            except OSError:
                break
            time.sleep(0.1)
    for name in ("slurm.conf", "gres.conf"):
        p = CONF_DIR / name
        if p.exists() and MARK in p.read_text(errors="replace"):
            p.unlink()


@contextmanager
def one_node_cluster(root: Path, timeout: float = 30.0):
    """Start munged, slurmctld and slurmd with state under ``root``; yield the node name;
    stop them all and remove the configuration on exit.

    Raises:
        ClusterError: a daemon did not start or the node did not come up idle within
        ``timeout`` seconds (the message holds the daemons' logs).
    """
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)
    (root / "state").mkdir(exist_ok=True)
    (root / "spool").mkdir(exist_ok=True)
    host = socket.gethostname().split(".")[0]
    key = root / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    CONF_DIR.mkdir(parents=True, exist_ok=True)
    (CONF_DIR / "slurm.conf").write_text(_conf(root, host), encoding="utf-8")
    (CONF_DIR / "gres.conf").write_text(f"{MARK}\nName=gpu File=/dev/null\n", encoding="utf-8")
    try:
        for cmd in ([_exe("munged"), "--force", f"--key-file={key}", f"--socket={root}/munge.socket",
                     f"--log-file={root}/munged.log", f"--pid-file={root}/munged.pid",
                     f"--seed-file={root}/munged.seed"],
                    [_exe("slurmctld")], [_exe("slurmd")]):
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=timeout)
            if proc.returncode != 0:
                raise ClusterError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}\n{logs(root)}")
        deadline = time.monotonic() + timeout
        state = ""
        while time.monotonic() < deadline:
            out = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True, text=True, check=False)
            state = out.stdout.strip()
            if state == "idle":
                break
            time.sleep(0.5)
        else:
            raise ClusterError(f"node {host} not idle after {timeout} s (sinfo: {state!r})\n{logs(root)}")
        yield host
    finally:
        _stop(root)
