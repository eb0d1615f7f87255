"""Launches for ncu (--clock-control none): each wgmma ceiling of 3 warpgroups per SM with both
fills, then int8_wgmma_cluster and fp16_wgmma_cluster at N = 8192 on random inputs (checked) and
on zeroed ones; three launches of each, a synchronize after each launch.
Usage: python power_ncu.py"""
from pathlib import Path

import numpy as np
import yaml
from cuda.bindings import driver as cu

from analysis.gpu.config import kernel_options, tiling_from_config
from analysis.gpu.harness import GemmRunner
from analysis.gpu.harness.driver import _check, primary_context

N = 8192
dev = primary_context(cu)
sms = _check(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "sms")
stream = _check(cu.cuStreamCreate(0), "cuStreamCreate")
module = _check(cu.cuModuleLoadData(Path("results/build/sm_90/ceilings/wgmma_peak.cubin").read_bytes()), "load")
buf = _check(cu.cuMemAlloc(sms * 128 * 3 * 4), "cuMemAlloc")
argv = [np.array([2048], np.int32), np.array([int(buf)], np.uint64)]
params = np.array([v.ctypes.data for v in argv], dtype=np.uint64)
for fname in ("peak_wgmma_m64n256k32_s8_s32", "peak_wgmma_m64n256k32_s8_s32_random",
              "peak_wgmma_m64n256k16_f16_f32", "peak_wgmma_m64n256k16_f16_f32_random"):
    func = _check(cu.cuModuleGetFunction(module, fname.encode()), fname)
    for _ in range(3):
        _check(cu.cuLaunchKernel(func, sms, 1, 1, 384, 1, 1, 0, stream, params.ctypes.data, 0), "launch")
        _check(cu.cuStreamSynchronize(stream), "sync")
    print(fname, "launched 3", flush=True)
config = yaml.safe_load(open("config/config.yaml"))
for kernel in ("int8_wgmma_cluster", "fp16_wgmma_cluster"):
    spec = config["kernels"][kernel]
    r = GemmRunner(Path(f"results/build/sm_90a/{kernel}.cubin"), kernel, spec["precision"],
                   tiling_from_config(config, kernel), N, N, N, 0, **kernel_options(spec))
    assert r.check().passed, kernel
    for _ in range(3):
        r.launch()
        _check(cu.cuStreamSynchronize(r.stream), "sync")
    nbytes = N * N * r.prec.bits // 8
    _check(cu.cuMemsetD8(r.d_a, 0, nbytes), "memset A")
    _check(cu.cuMemsetD8(r.d_b, 0, nbytes), "memset B")
    _check(cu.cuCtxSynchronize(), "sync")
    for _ in range(3):
        r.launch()
        _check(cu.cuStreamSynchronize(r.stream), "sync")
    print(kernel, "launched 1 check + 3 random + 3 zeros", flush=True)
    r.close()
