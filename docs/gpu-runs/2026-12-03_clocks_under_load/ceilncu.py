"""Launch each wgmma ceiling (f16 and s8, 2 and 3 warpgroups per SM) three times, directly
(no stream gate, a synchronize after each), for ncu to profile with --clock-control none.
Usage: python ceilncu.py CUBIN"""
import sys
from pathlib import Path

import numpy as np
from cuda.bindings import driver as cu

from analysis.gpu.harness.driver import _check, primary_context
from analysis.gpu.references import WGMMA_PEAK_KERNELS

dev = primary_context(cu)
sms = _check(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "sms")
stream = _check(cu.cuStreamCreate(0), "cuStreamCreate")
module = _check(cu.cuModuleLoadData(Path(sys.argv[1]).read_bytes()), "load")
buf = _check(cu.cuMemAlloc(sms * 128 * 3 * 4), "cuMemAlloc")
argv = [np.array([2048], np.int32), np.array([int(buf)], np.uint64)]
params = np.array([v.ctypes.data for v in argv], dtype=np.uint64)
for prec, (fname, k) in WGMMA_PEAK_KERNELS.items():
    func = _check(cu.cuModuleGetFunction(module, fname.encode()), fname)
    for wg in (2, 3):
        for rep in range(3):
            _check(cu.cuLaunchKernel(func, sms, 1, 1, 128 * wg, 1, 1, 0, stream, params.ctypes.data, 0), "launch")
            _check(cu.cuStreamSynchronize(stream), "sync")
        print(prec, wg, "launched 3", flush=True)
