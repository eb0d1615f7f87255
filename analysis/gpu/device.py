"""What GPU (if any) this machine has, read through the CUDA driver and nvidia-smi."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuInfo:
    """The GPU a profile set was (or would be) measured on.

    Attributes:
        name: the driver's device name, e.g. ``NVIDIA H200``.
        cc: compute capability as ``major.minor``, e.g. ``9.0``.
        arch: the nvcc target, e.g. ``sm_90``.
        driver: the display-driver version, e.g. ``580.159.04``.
        cuda_driver: the CUDA version the driver supports, e.g. ``13.0``.
    """

    name: str
    cc: str
    arch: str
    driver: str
    cuda_driver: str

    @property
    def slug(self) -> str:
        """Short file-name form of the GPU name: ``NVIDIA H200`` -> ``h200``."""
        s = re.sub(r"^(nvidia|geforce|tesla)\s+", "", self.name.strip(), flags=re.I)
        s = re.sub(r"^(geforce|tesla)\s+", "", s, flags=re.I)
        return re.sub(r"[^a-z0-9.]+", "-", s.lower()).strip("-")


def _driver_string() -> str | None:
    exe = shutil.which("nvidia-smi")
    if exe:
        out = subprocess.run([exe, "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, check=False)
        line = out.stdout.strip().splitlines()
        if out.returncode == 0 and line:
            return line[0].strip()
    try:
        text = open("/proc/driver/nvidia/version", encoding="utf-8").read()
    except OSError:
        return None
    m = re.search(r"Kernel Module\s+(?:for\s+\S+\s+)?(\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None


def detect_gpu(ordinal: int = 0) -> GpuInfo | None:
    """The CUDA device ``ordinal`` of this machine, or None where there is none.

    No GPU, no driver or no cuda-python is not an error: it returns None.
    """
    try:
        from cuda.bindings import driver as cu
    except ImportError:
        return None
    try:
        (err,) = cu.cuInit(0)
        if err != cu.CUresult.CUDA_SUCCESS:
            return None
        err, count = cu.cuDeviceGetCount()
        if err != cu.CUresult.CUDA_SUCCESS or count <= ordinal:
            return None
        err, dev = cu.cuDeviceGet(ordinal)
        err, raw = cu.cuDeviceGetName(256, dev)
        name = raw.split(b"\0", 1)[0].decode()
        attr = cu.CUdevice_attribute
        _, major = cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
        _, minor = cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
        _, ver = cu.cuDriverGetVersion()
    except Exception:  # a broken driver install behaves like no GPU
        return None
    return GpuInfo(
        name=name,
        cc=f"{major}.{minor}",
        arch=f"sm_{major}{minor}",
        driver=_driver_string() or f"cuda{ver // 1000}.{ver % 1000 // 10}",
        cuda_driver=f"{ver // 1000}.{ver % 1000 // 10}",
    )


def profile_set_name(gpu: GpuInfo, ncu_version: str, suffix: str = "") -> str:
    """Name of the profile set for this GPU, driver and Nsight Compute version.

    Example: ``h200_580.159.04_ncu2025.3.1``; ``suffix`` (e.g. ``_nvcc13.5``) tells
    apart sets that differ in another factor.
    """
    return f"{gpu.slug}_{gpu.driver}_ncu{ncu_version}{suffix}"


@dataclass(frozen=True)
class LocalGpu:
    """The GPU this run profiles, and the profile set its reports go to."""

    info: GpuInfo
    set_name: str
