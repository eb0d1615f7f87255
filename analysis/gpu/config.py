"""What a kernel's registry entry (config ``kernels:``) means for building and launching it:
its tiling and its harness options."""

from __future__ import annotations

from analysis.gpu.harness import Tiling


def tiling_from_config(config: dict, kernel: str | None = None) -> Tiling:
    """The Tiling a kernel is built and launched with: the config's ``tiling`` block,
    overridden by ``kernel``'s own registry entry where it sets ``stages`` or a ``tiling``
    block of its own (any of block_m, block_n, block_k_bytes, warps_m, warps_n, stages,
    raster, smem_bytes, producer_warps, cluster_m, persistent); with no kernel, the config's
    ``tiling`` block alone.

    Its ``defines()`` are the kernel's nvcc flags (rule build); its ``grid()``,
    ``threads`` and ``smem_bytes`` the launch the harness makes (rules check_time,
    sanitize_kernel and profile)."""
    t = dict(config["tiling"])
    if kernel is not None:
        spec = config["kernels"][kernel]
        if "stages" in spec:
            t["stages"] = spec["stages"]
        t.update(spec.get("tiling") or {})
        specific = [a for a in spec["archs"] if a.endswith("a")]
        if specific:
            t["arch"] = specific[0]
    return Tiling(**t)


def kernel_options(spec: dict) -> dict:
    """The harness options a registry entry sets beyond precision and tiling:
    ``accumulator``, ``b_layout``, ``tma`` and ``c_dtype`` where the entry gives them other
    than the defaults (None, ``col``, False, None), as keyword arguments of :func:`analysis.gpu.harness.command` and
    :func:`analysis.gpu.harness.check_and_time`."""
    defaults = {"accumulator": None, "b_layout": "col", "tma": False, "c_dtype": None}
    return {key: spec[key] for key in defaults if spec.get(key, defaults[key]) != defaults[key]}
