"""Small helpers of the CUDA driver API (cuda-python): unwrap a call's result, make the primary context current."""

from __future__ import annotations


def _check(res: tuple, what: str):
    """Unwrap a cuda-python return tuple, raising RuntimeError with the CUDA error name."""
    from cuda.bindings import driver as cu

    err, *rest = res
    if err != cu.CUresult.CUDA_SUCCESS:
        _, name = cu.cuGetErrorName(err)
        raise RuntimeError(f"{what} failed: {name.decode() if name else err}")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)


def primary_context(cu):
    """Make device 0's primary context current (the one CuPy and PyTorch use too); returns
    the device. Raises RuntimeError naming the failed CUDA call."""
    _check(cu.cuInit(0), "cuInit")
    dev = _check(cu.cuDeviceGet(0), "cuDeviceGet")
    _check(cu.cuCtxSetCurrent(_check(cu.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")),
           "cuCtxSetCurrent")
    return dev
