"""Development call after the registry run of 2026-12-05: where the consumer warpgroups' C stores
fall in time, with and without CONSUMER_LAG. epi_clocks.patch (not applied to the repository)
adds the build parameter EPI_CLOCKS to kernels/wgmma_gemm.cuh: warp 0 of each consumer warpgroup
writes clock64() at each block's start, at its last wgmma's completion and after its C stores
were issued, into a __device__ array the host reads back (cuModuleGetGlobal).

Builds: int8_wgmma_lag with CONSUMER_LAG 0 (int8_wgmma_serpentine's code) and 2 (as registered),
both with EPI_CLOCKS 1; each checked at N = 8192 (256 sampled rows, exact), launched 3 times, then
once with the array zeroed, and read back. Per CTA and block it gives, in SM cycles, each
warpgroup's K loop (start to last wgmma done) and store issue (last wgmma done to stores issued),
and the second warpgroup's lag behind the first at the block's start and at its end. Also each
build's event-timed rate (10 warm-ups, 50 launches, 3 rounds). Writes $OUT/epi.json.

Run from the repository root after `patch -p1 < docs/gpu-runs/2026-12-05_consumer_lag/epi_clocks.patch`."""
import json, os, sys, time
from pathlib import Path
import numpy as np
import yaml
sys.path.insert(0, os.getcwd())
from analysis.gpu.build import build_kernel
from analysis.gpu.config import tiling_from_config
from analysis.gpu.harness import make_inputs, sample_rows
from analysis.gpu.harness.driver import _check
from analysis.gpu.harness.runner import GemmRunner
from analysis.precision import gemm_ops, precision_of

W = Path("/tmp/wepi"); W.mkdir(exist_ok=True)
OUT = Path(os.environ["OUT"])
CFG = yaml.safe_load(open("config/config.yaml"))
KERNEL = "int8_wgmma_lag"
N = 8192
T0 = time.time()
res = {}
inputs = make_inputs(precision_of("int8"), N, N, N, np.random.default_rng(17))
for lag in (0, 2):
    tag = f"lag{lag}"
    build_kernel(Path("kernels") / f"{KERNEL}.cu", KERNEL, "sm_90", tiling_from_config(CFG, KERNEL).defines() +
                 [f"-DCONSUMER_LAG={lag}", "-DEPI_CLOCKS=1"], W / f"{tag}.cubin", W / f"{tag}.json",
                 W / f"{tag}.sass", W / f"{tag}.log")
    run = GemmRunner(W / f"{tag}.cubin", KERNEL, "int8", tiling_from_config(CFG, KERNEL), N, N, N, 7, tma=True,
                     inputs=inputs)
    try:
        chk = run.check(sample_rows(N, 256, np.random.default_rng(3)))
        rates = [gemm_ops(N, N, N) / run.time(10, 50).median_ns / 1e3 for _ in range(3)]
        cu = run.cu
        dptr, size = _check(cu.cuModuleGetGlobal(run.module, b"wgmma_epi_clocks"), "cuModuleGetGlobal")
        for _ in range(3):
            run.launch()
        run.sync()
        _check(cu.cuMemsetD8(dptr, 0, size), "cuMemsetD8")
        run.launch(); run.sync()
        host = np.zeros(size // 8, np.uint64)
        _check(cu.cuMemcpyDtoH(host.ctypes.data, dptr, size), "cuMemcpyDtoH")
    finally:
        run.close()
    rec = host.reshape(132, 2, 32, 3).astype(np.int64)
    seen = (rec[:, :, :, 0] > 0) & (rec[:, :, :, 1] > 0) & (rec[:, :, :, 2] > 0)
    both = seen[:, 0, :] & seen[:, 1, :]
    kloop = rec[:, :, :, 1] - rec[:, :, :, 0]
    store = rec[:, :, :, 2] - rec[:, :, :, 1]
    lag_start = (rec[:, 1, :, 0] - rec[:, 0, :, 0])[both]
    lag_end = (rec[:, 1, :, 1] - rec[:, 0, :, 1])[both]
    # the other warpgroup still in its K loop while this one issues its stores
    wg0_alone = np.clip(np.minimum(rec[:, 0, :, 2], rec[:, 1, :, 1]) - rec[:, 0, :, 1], 0, None)[both]

    def q(x):
        x = np.asarray(x, float)
        return {p: float(np.percentile(x, p)) for p in (5, 25, 50, 75, 95)} if x.size else {}

    res[tag] = {"CONSUMER_LAG": lag, "check_passed": bool(chk.passed), "rates_top_s": rates,
                "blocks_recorded": int(both.sum()), "kloop_cycles_wg0": q(kloop[:, 0][seen[:, 0]]),
                "kloop_cycles_wg1": q(kloop[:, 1][seen[:, 1]]), "store_issue_cycles_wg0": q(store[:, 0][seen[:, 0]]),
                "store_issue_cycles_wg1": q(store[:, 1][seen[:, 1]]), "wg1_behind_at_block_start": q(lag_start),
                "wg1_behind_at_last_wgmma": q(lag_end), "wg1_still_in_k_loop_during_wg0_stores": q(wg0_alone),
                "block_period_cycles": q(np.diff(rec[:, 0, :, 0], axis=1)[both[:, 1:] & both[:, :-1]])}
    print(f"[{time.time()-T0:5.1f}s]", tag, json.dumps({k: (v if not isinstance(v, dict) else v.get(50))
                                                        for k, v in res[tag].items()}), flush=True)
(OUT / "epi.json").write_text(json.dumps(res, indent=1))
