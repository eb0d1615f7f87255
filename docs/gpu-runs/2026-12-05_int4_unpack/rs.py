"""Development call: the s8 wgmma loops of rs_peak.cu (the INT4 consumer's issue forms: A from
registers or shared memory, m64n256 or two m64n128 halves, and the consumer's own A reads and
conversion), each on one block of 2 warpgroups per SM, event-timed in 3 rotating rounds (10
warm-ups, 50 launches each, 0.5 s idle before each) while nvidia-smi samples every 50 ms, then
one launch of each under ncu (clock control none). Files into $OUT: rs_rates.json, rs_ncu.csv,
rs_extra.tar.xz (SASS, build logs, nvidia-smi samples, ncu report). Run from the repository
root: `python3 docs/gpu-runs/2026-12-05_int4_unpack/rs.py`; `... rs.py profile` is what ncu runs."""
import json, os, subprocess, sys, time
from pathlib import Path
import numpy as np
sys.path.insert(0, os.getcwd())
from analysis.gpu.build import build_kernel
from analysis.gpu.harness.timing import time_launches
from analysis.tools import find_tool

HERE = Path(__file__).resolve().parent
W = Path("/tmp/wrs"); W.mkdir(exist_ok=True)
KERNELS = ["rs_peak_ss_n256", "rs_peak_ss_n128x2", "rs_peak_rs_n256", "rs_peak_rs_n128x2", "rs_peak_rs_n128x2_lds"]
ITERS, THREADS = 2048, 256
OPS = 2 * 64 * 256 * 128  # one loop iteration of one warpgroup


def module():
    from cuda.bindings import driver as cu
    from analysis.gpu.harness import _check, primary_context
    dev = primary_context(cu)
    sms = _check(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "attr")
    mod = _check(cu.cuModuleLoadData((W / "rs.cubin").read_bytes()), "cuModuleLoadData")
    out = _check(cu.cuMemAlloc(sms * THREADS * 4), "cuMemAlloc")
    stream = _check(cu.cuStreamCreate(0), "cuStreamCreate")
    argv = [np.array([ITERS], np.int32), np.array([int(out)], np.uint64)]
    params = np.array([v.ctypes.data for v in argv], dtype=np.uint64)
    funcs = {k: _check(cu.cuModuleGetFunction(mod, k.encode()), k) for k in KERNELS}

    def launcher(k):
        return lambda: _check(cu.cuLaunchKernel(funcs[k], sms, 1, 1, THREADS, 1, 1, 0, stream, params.ctypes.data, 0),
                              "cuLaunchKernel")
    return cu, sms, stream, launcher, (argv, params)


if len(sys.argv) > 1:  # what ncu profiles: one launch of each
    cu, sms, stream, launcher, keep = module()
    for k in KERNELS:
        launcher(k)(); cu.cuStreamSynchronize(stream)
        cu.cuProfilerStart(); launcher(k)(); cu.cuStreamSynchronize(stream); cu.cuProfilerStop()
    sys.exit(0)

OUT = Path(os.environ["OUT"])
build_kernel(HERE / "rs_peak.cu", KERNELS[0], "sm_90", ["-arch=sm_90a", f"-I{Path('kernels').resolve()}"],
             W / "rs.cubin", W / "rs.json", W / "rs.sass", W / "rs.log")
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.sw_power_cap",
                        "--format=csv,nounits", "-lms", "50"], stdout=open(W / "rs_smi.csv", "w"),
                       stderr=subprocess.DEVNULL, start_new_session=True)
cu, sms, stream, launcher, keep = module()
rates = []
for r in range(3):
    order = KERNELS[r % len(KERNELS):] + KERNELS[:r % len(KERNELS)]
    for k in order:
        time.sleep(0.5)
        tim = time_launches(stream, launcher(k), 10, 50)
        rates.append({"kernel": k, "round": r, "median_ns": tim.median_ns,
                      "rate_tops": sms * 2 * ITERS * OPS / tim.median_ns / 1e3})
smi.terminate()
summary = {k: round(float(np.median([x["rate_tops"] for x in rates if x["kernel"] == k])), 1) for k in KERNELS}
(OUT / "rs_rates.json").write_text(json.dumps({"sms": sms, "iters": ITERS, "threads": THREADS, "median_tops": summary,
                                               "rounds": rates}, indent=1))
print(summary, flush=True)
ncu = str(find_tool("ncu"))
M = ("gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,"
     "smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
p = subprocess.run([ncu, "--clock-control", "none", "--profile-from-start", "off", "--metrics", M, "--force-overwrite",
                    "--export", str(W / "rs_ncu"), sys.executable, str(Path(__file__).resolve()), "profile"],
                   capture_output=True, text=True, timeout=200)
(W / "rs_ncu.log").write_text(p.stdout[-4000:] + p.stderr[-4000:])
q = subprocess.run([ncu, "--import", str(W / "rs_ncu.ncu-rep"), "--csv", "--page", "raw", "--metrics", M],
                   capture_output=True, text=True)
(OUT / "rs_ncu.csv").write_text(q.stdout)
print(q.stdout[-3000:], flush=True)
subprocess.run(f"cd {W} && tar cJf {OUT}/rs_extra.tar.xz rs.sass rs.log rs_smi.csv rs_ncu.log $(ls rs_ncu.ncu-rep 2>/dev/null)",
               shell=True)
