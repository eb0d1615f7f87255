"""GPU nodes of a cluster: what GPU a node has, and whether a GPU job landed on such a node.

On a cluster the machine that plans the workflow usually has no GPU, so the profile set a
partition's GPU jobs write to cannot be read from the local GPU. One job on a node of the
partition (rule ``gpu_node``) writes a node description, ``results/gpu/nodes/{partition}.json``;
every later run reads the set's name and architecture from it, and each GPU job first checks
that its own node matches (:func:`check_node`), so reports of two different GPUs or drivers
never land in one set.
"""

from __future__ import annotations

import json
import re
import socket
import sys
from dataclasses import asdict, fields
from pathlib import Path

from analysis.errors import AnalysisError, ToolNotFoundError
from analysis.gpu.device import GpuInfo, detect_gpu, profile_set_name
from analysis.io import write_json
from analysis.names import set_name_problem
from analysis.tools import find_tool, ncu_version

#: Where rule gpu_node writes the description of a partition's nodes.
NODE_FOLDER = Path("results/gpu/nodes")
#: What a node description's set and arch must look like (the config schema's patterns).
SET_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
ARCH = re.compile(r"sm_[0-9]+a?")


def describe_node(suffix: str = "", ncu: str | None = None) -> dict:
    """This node's GPU 0, Nsight Compute version and the profile set its reports go to.

    Returns a dict with ``host``, ``gpu`` (the :class:`analysis.gpu.device.GpuInfo` fields),
    ``ncu_version`` and ``set`` (:func:`analysis.gpu.device.profile_set_name` with ``suffix``).

    Raises:
        AnalysisError: no NVIDIA GPU or driver on this node, or no ncu (message names the host).
    """
    host = socket.gethostname()
    info = detect_gpu()
    if info is None:
        raise AnalysisError(f"node {host}: no NVIDIA GPU with a working driver (a GPU job landed on a node "
                            "without one: check the partition and the GPU request, e.g. slurm's --gpus)")
    try:
        version = ncu_version(find_tool("ncu", ncu))
    except ToolNotFoundError as exc:
        raise AnalysisError(f"node {host}: GPU {info.name} but {exc}") from None
    return {"host": host, "gpu": asdict(info), "ncu_version": version,
            "set": profile_set_name(info, version, suffix)}


def read_node(path: str | Path) -> tuple[GpuInfo, str]:
    """(GPU, set name) from a node description written by :func:`describe_node`.

    Raises:
        AnalysisError: the file is not JSON, or lacks a field (message names the file and
        says how to write it again).
    """
    path = Path(path)
    again = "delete it and run the gpu_node target again"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AnalysisError(f"{path}: not a node description ({exc}); {again}") from None
    if not isinstance(data, dict) or not isinstance(data.get("gpu"), dict):
        raise AnalysisError(f"{path}: not a node description (an object with an object 'gpu' expected); {again}")
    try:
        gpu = GpuInfo(**{f.name: str(data["gpu"][f.name]) for f in fields(GpuInfo)})
        set_name = str(data["set"])
    except KeyError as exc:
        raise AnalysisError(f"{path}: node description without field {exc}; {again}") from None
    if not SET_NAME.fullmatch(set_name) or set_name_problem(set_name):
        raise AnalysisError(f"{path}: set {set_name!r} is not a profile-set name (ASCII letters, digits, '.', "
                            f"'_', '-'; {set_name_problem(set_name) or 'not default'}); {again}")
    if not ARCH.fullmatch(gpu.arch):
        raise AnalysisError(f"{path}: arch {gpu.arch!r} is not an nvcc target like sm_90; {again}")
    return gpu, set_name


def node_gpu(config: dict, folder: Path = NODE_FOLDER):
    """(GPU and its set, or None; a one-line note) for config ``gpu_partition``: read from
    the partition's node description, or None with a note saying how to write it.

    Raises:
        AnalysisError: the description exists but cannot be read (see :func:`read_node`).
    """
    from analysis.gpu.device import LocalGpu

    partition = config["gpu_partition"]
    path = folder / f"{partition}.json"
    if not path.exists():
        return None, (f"config gpu_partition={partition}: {path} not written yet; this run describes a node "
                      "of that partition (rule gpu_node) and the next run checks, times and profiles there")
    gpu, set_name = read_node(path)
    return LocalGpu(gpu, set_name), None


def check_node(expected_set: str, suffix: str = "", ncu: str | None = None) -> dict:
    """Check that this node would write to ``expected_set``; return its description.

    Raises:
        AnalysisError: another GPU, driver or Nsight Compute version than the set was named
        after (message names the host, the set expected and the set this node makes), or
        no GPU at all.
    """
    node = describe_node(suffix, ncu)
    if node["set"] != expected_set:
        raise AnalysisError(f"node {node['host']}: its GPU, driver and ncu make profile set {node['set']!r}, "
                            f"but this job writes to {expected_set!r}: the partition holds nodes of more than "
                            "one kind (give a partition of one kind of GPU node), or its nodes changed since "
                            "the description was written (driver or ncu upgrade: delete "
                            "results/gpu/nodes/<partition>.json and run again)")
    return node


def main(argv: list[str] | None = None) -> int:
    """``python -m analysis.gpu.cluster``: describe this node (rule gpu_node) or check it
    before a GPU job (``--expect SET``)."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m analysis.gpu.cluster",
                                 description="Describe this GPU node (rule gpu_node) or check it before a GPU job.")
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--describe", type=Path, metavar="JSON", help="write this node's description here")
    what.add_argument("--expect", metavar="SET", help="fail unless this node makes profile set SET")
    ap.add_argument("--suffix", default="", help="config set_suffix")
    ap.add_argument("--ncu", help="ncu to use (default: found as analysis.tools.find_tool says)")
    args = ap.parse_args(argv)
    try:
        if args.describe:
            node = describe_node(args.suffix, args.ncu)
            write_json(args.describe, node)
        else:
            node = check_node(args.expect, args.suffix, args.ncu)
    except AnalysisError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"node {node['host']}: {node['gpu']['name']}, driver {node['gpu']['driver']}, "
          f"ncu {node['ncu_version']} -> profile set {node['set']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
