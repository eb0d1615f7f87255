"""Locate the CUDA command-line tools and read their versions.

nvcc, cuobjdump and nvdisasm come from PyPI wheels (nvidia-cuda-nvcc,
nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm) found through
``cuda.pathfinder.find_nvidia_binary_utility``; a CUDA toolkit or Nsight Compute on
``PATH`` is the fallback. ``ncu`` is never a wheel: it comes with the driver's toolkit.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

from analysis.errors import ToolNotFoundError

_INSTALL_HINT = {
    "nvcc": "pip install nvidia-cuda-nvcc nvidia-cuda-crt nvidia-cuda-cccl nvidia-cuda-runtime",
    "cuobjdump": "pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm",
    "nvdisasm": "pip install nvidia-cuda-nvdisasm",
    "ncu": "install Nsight Compute (it ships with the CUDA toolkit) and put ncu on PATH",
    "compute-sanitizer": "install the CUDA toolkit's compute-sanitizer and put it on PATH",
}


@lru_cache(maxsize=None)
def find_tool(name: str, override: str | None = None) -> Path:
    """Absolute path of a CUDA tool.

    Args:
        name: ``nvcc``, ``cuobjdump``, ``nvdisasm`` or ``ncu``.
        override: an explicit path or command name (from the config); wins when set.

    Raises:
        ToolNotFoundError: the tool is nowhere we look; the message says how to install it.
    """
    if override:
        found = shutil.which(override)
        if found is None:
            raise ToolNotFoundError(f"{name}: configured path {override!r} is not an executable")
        return Path(found)
    candidates: list[str | None] = []
    try:
        from cuda.pathfinder import find_nvidia_binary_utility

        candidates.append(find_nvidia_binary_utility(name))
    except Exception:  # pathfinder missing or raising for an unknown utility
        candidates.append(None)
    candidates.append(shutil.which(name))
    for cand in candidates:
        if cand and os.access(cand, os.X_OK):
            return Path(cand)
    raise ToolNotFoundError(f"{name} not found: {_INSTALL_HINT.get(name, 'install it')}")


def tool_env(*tools: Path) -> dict[str, str]:
    """Environment with the tools' folders first on PATH (cuobjdump calls nvdisasm by name)."""
    env = dict(os.environ)
    dirs = [str(t.parent) for t in tools]
    env["PATH"] = os.pathsep.join([*dirs, env.get("PATH", "")])
    return env


def _version(exe: Path, pattern: str) -> str:
    out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, check=False)
    m = re.search(pattern, out.stdout + out.stderr)
    if not m:
        raise ToolNotFoundError(f"{exe}: cannot read a version from `{exe.name} --version`")
    return m.group(1)


@lru_cache(maxsize=None)
def nvcc_version(nvcc: Path) -> str:
    """Full nvcc version, e.g. ``13.0.88`` (from ``nvcc --version``, ``V13.0.88``)."""
    return _version(nvcc, r"\bV(\d+\.\d+\.\d+)")


def ncu_version(ncu: Path) -> str:
    """Nsight Compute version with three components, e.g. ``2025.3.1``."""
    return _version(ncu, r"Version (\d+\.\d+\.\d+)")
