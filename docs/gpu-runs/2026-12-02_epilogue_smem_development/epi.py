"""Development call: C through shared memory (EPI_COLS of kernels/wgmma_gemm.cuh) in the FP16 and INT8 wgmma kernels."""
import dataclasses, json, os, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import numpy as np
import yaml
sys.path.insert(0, os.getcwd())
from analysis.gpu.build import build_kernel
from analysis.gpu.config import tiling_from_config, kernel_options
from analysis.gpu.harness import command as hcmd, make_inputs
from analysis.gpu.harness.runner import check_and_time, GemmRunner
from analysis.gpu.paired import PairedKernel, pair_rounds
from analysis.gpu.references import cuda_torch, library_gemm
from analysis.precision import precision_of
from analysis.tools import find_tool

OUT = Path(os.environ["OUT"]); W = Path("/tmp/w"); W.mkdir(exist_ok=True)
cfg = yaml.safe_load(open("config/config.yaml")); K = cfg["kernels"]; SIZES = cfg["sizes"]
T0 = time.time()
def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active",
                        "--format=csv,noheader", "-lms", "200"], stdout=open(OUT / "epi_smi.csv", "w"), stderr=subprocess.STDOUT)
log("t0", time.strftime("%H:%M:%S"))

def v(kernel, epi=0, **changes):
    t = dataclasses.replace(tiling_from_config(cfg, kernel), **changes)
    return kernel, t, epi
S = lambda stages, epi: stages * 49152 + 128 * epi * 4 + 1024
builds = {
    "fp16_wgmma": v("fp16_wgmma"),
    "fp16_wgmma_cluster": v("fp16_wgmma_cluster"),
    "f_p": v("fp16_wgmma", persistent=1),
    "f_s3": v("fp16_wgmma", stages=3, smem_bytes=S(3, 0)),
    "f_p_e64": v("fp16_wgmma", 64, persistent=1, smem_bytes=S(4, 64)),
    "f_p_e128_s3": v("fp16_wgmma", 128, persistent=1, stages=3, smem_bytes=S(3, 128)),
    "f_p_e256_s2": v("fp16_wgmma", 256, persistent=1, stages=2, smem_bytes=S(2, 256)),
    "f_cl_e64": v("fp16_wgmma_cluster", 64, smem_bytes=S(4, 64)),
    "int8_wgmma": v("int8_wgmma"),
    "int8_wgmma_cluster": v("int8_wgmma_cluster"),
    "i_p_e64": v("int8_wgmma", 64, persistent=1, smem_bytes=S(4, 64)),
    "i_cl_e64": v("int8_wgmma_cluster", 64, smem_bytes=S(4, 64)),
    "i_cl_e128_s3": v("int8_wgmma_cluster", 128, stages=3, smem_bytes=S(3, 128)),
}
def b(tag):
    k, t, epi = builds[tag]
    d = t.defines() + ([f"-DEPI_COLS={epi}"] if epi else [])
    build_kernel(Path(f"kernels/{k}.cu"), k, "sm_90", d, W / f"{tag}.cubin", W / f"{tag}.json", W / f"{tag}.sass", W / f"{tag}.log")
    return tag
with ThreadPoolExecutor(13) as ex:
    list(ex.map(b, builds))
log("built", len(builds))
(OUT / "epi_builds.json").write_text(json.dumps({tag: json.loads((W / f"{tag}.json").read_text()) for tag in builds}, indent=1))

recs = []
def one(tag, n, rnd):
    k, t, _ = builds[tag]
    try:
        r = check_and_time(W / f"{tag}.cubin", k, K[k]["precision"], n, t, 10, 50, 1000 * rnd + n, tma=True)
        rec = {"tag": tag, "n": n, "round": rnd, "median_ns": r["median_ns"], "tput": r["throughput"], "ok": r["check"]["passed"],
               "max_abs_error": r["check"].get("max_abs_error")}
    except Exception as exc:  # a failed check: recorded, never timed
        rec = {"tag": tag, "n": n, "round": rnd, "ok": False, "error": f"{type(exc).__name__}: {exc}"[:500]}
    recs.append(rec); log(json.dumps(rec))
for tag in builds:
    for n in SIZES + [2304]:
        one(tag, n, 0)
# INT8: 6 more rounds at 8192 in rotating order
i8 = [t for t in builds if builds[t][0].startswith("int8")]
for rnd in range(1, 7):
    for tag in i8[rnd % len(i8):] + i8[:rnd % len(i8)]:
        one(tag, 8192, rnd)
(OUT / "epi_variants.json").write_text(json.dumps(recs, indent=1))

# pairs at N = 8192 with cuBLAS (FP16) and cuBLASLt (INT8), 6 rounds each, two passes (forward, reverse)
torch, note = cuda_torch(); stream = torch.cuda.current_stream().cuda_stream
n = 8192; pairs = []
for prec in ("fp16", "int8"):
    rng = np.random.default_rng(7 + n)
    inputs = make_inputs(precision_of(prec), n, n, n, rng)
    name, launch, what = library_gemm(torch, prec, n, rng, inputs)
    tags = [t for t in builds if K[builds[t][0]]["precision"] == prec]
    for p, order in enumerate((tags, tags[::-1])):
        for tag in order:
            k, t, _ = builds[tag]
            pk = PairedKernel(k, W / f"{tag}.cubin", prec, t, kernel_options(K[k]))
            try:
                for r in pair_rounds(pk, n, inputs, name, launch, stream, 6, 10, 50, 7 + n):
                    row = dataclasses.asdict(r); row.update(tag=tag, pass_=p, t=time.time() - T0); pairs.append(row)
                    log(tag, p, r.round, r.first, round(r.library_median_ns / r.kernel_median_ns, 4))
            except Exception as exc:
                pairs.append({"tag": tag, "pass_": p, "error": f"{type(exc).__name__}: {exc}"[:500]}); log(tag, "ERROR", exc)
    del inputs, launch; torch.cuda.empty_cache()
(OUT / "epi_pairs.json").write_text(json.dumps(pairs, indent=1))

san = str(find_tool("compute-sanitizer")); res = []
for tag, tool, n, limit in (("f_p_e64", "memcheck", 512, 60), ("f_p_e64", "racecheck", 512, 60), ("f_p_e64", "memcheck", 2304, 60),
                             ("f_cl_e64", "memcheck", 2304, 60), ("i_cl_e64", "memcheck", 2304, 60), ("f_p_e64", "racecheck", 2304, 120)):
    k, t, _ = builds[tag]
    cmd = [san, "--tool", tool, "--error-exitcode", "1"] + hcmd("check-time", W / f"{tag}.cubin", k, K[k]["precision"], [n], t, warmups=0, repeats=1, out=f"/tmp/w/san_{tag}_{tool}_{n}.json", **kernel_options(K[k]))
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=limit); rc = p.returncode; txt = p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        rc = "timeout"; txt = str(e)
    res.append({"tag": tag, "tool": tool, "n": n, "rc": rc, "wall_s": time.time() - t0, "tail": txt[-800:]}); log(tag, tool, n, rc, f"{time.time()-t0:.1f}s")
    (OUT / "epi_sanitize.json").write_text(json.dumps(res, indent=1))
smi.terminate()
log("done")
