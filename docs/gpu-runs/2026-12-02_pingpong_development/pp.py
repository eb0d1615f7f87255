"""Development call: ping-pong consumers (PINGPONG of kernels/wgmma_gemm.cuh), streaming C stores (STORE_CS),
and cuBLAS FP16 writing C in FP32 (torch.mm out_dtype=torch.float32), for the FP16 and INT8 wgmma kernels."""
import dataclasses, json, os, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import numpy as np
import yaml
sys.path.insert(0, os.getcwd())
from analysis.gpu.build import build_kernel
from analysis.gpu.config import tiling_from_config, kernel_options
from analysis.gpu.harness import command as hcmd, make_inputs, sample_rows
from analysis.gpu.harness.runner import check_and_time
from analysis.gpu.paired import PairedKernel, pair_rounds
from analysis.gpu.references import cuda_torch, library_gemm, _check_library
from analysis.precision import precision_of
from analysis.tools import find_tool

OUT = Path(os.environ["OUT"]); W = Path("/tmp/w"); W.mkdir(exist_ok=True)
cfg = yaml.safe_load(open("config/config.yaml")); K = cfg["kernels"]; SIZES = cfg["sizes"]
T0 = time.time()
def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active",
                        "--format=csv,noheader", "-lms", "200"], stdout=open(OUT / "pp_smi.csv", "w"), stderr=subprocess.STDOUT)
log("t0", time.strftime("%H:%M:%S"))

def v(kernel, extra=(), **changes):
    t = dataclasses.replace(tiling_from_config(cfg, kernel), **changes)
    return kernel, t, list(extra)
PP = dict(block_m=64, stages=5, smem_bytes=5 * 40960 + 1024, raster=16)
builds = {
    "fp16_wgmma": v("fp16_wgmma"),
    "fp16_wgmma_cluster": v("fp16_wgmma_cluster"),
    "f_cl_cs": v("fp16_wgmma_cluster", ["-DSTORE_CS=1"]),
    "f_pp_cl": v("fp16_wgmma_cluster", ["-DPINGPONG=1"], **PP),
    "f_pp_cl_r8": v("fp16_wgmma_cluster", ["-DPINGPONG=1"], **{**PP, "raster": 8}),
    "f_pp": v("fp16_wgmma", ["-DPINGPONG=1"], persistent=1, **PP),
    "f_pp_cl_cs": v("fp16_wgmma_cluster", ["-DPINGPONG=1", "-DSTORE_CS=1"], **PP),
    "int8_wgmma_cluster": v("int8_wgmma_cluster"),
    "i_cl_cs": v("int8_wgmma_cluster", ["-DSTORE_CS=1"]),
    "i_pp_cl": v("int8_wgmma_cluster", ["-DPINGPONG=1"], **PP),
    "i_pp": v("int8_wgmma", ["-DPINGPONG=1"], persistent=1, **PP),
    "i_pp_cl_cs": v("int8_wgmma_cluster", ["-DPINGPONG=1", "-DSTORE_CS=1"], **PP),
}
def b(tag):
    k, t, extra = builds[tag]
    build_kernel(Path(f"kernels/{k}.cu"), k, "sm_90", t.defines() + extra, W / f"{tag}.cubin", W / f"{tag}.json", W / f"{tag}.sass", W / f"{tag}.log")
    return tag
with ThreadPoolExecutor(12) as ex:
    list(ex.map(b, builds))
log("built", len(builds))
(OUT / "pp_builds.json").write_text(json.dumps({tag: json.loads((W / f"{tag}.json").read_text()) for tag in builds}, indent=1))

# every build checked at every N in its own process first (a failed launch ends a process's context):
# only builds that pass are timed and paired
passed = {}
def chk(tag):
    k, t, _ = builds[tag]
    cmd = hcmd("check-time", W / f"{tag}.cubin", k, K[k]["precision"], SIZES + [1536, 2304], t, warmups=1, repeats=3,
               out=f"/tmp/w/chk_{tag}_{{n}}.json", **kernel_options(K[k]))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=90); rc = p.returncode; txt = p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        rc = "timeout"; txt = str(e)
    passed[tag] = {"rc": rc, "tail": txt[-600:]}
    log("check", tag, rc)
with ThreadPoolExecutor(1) as ex:
    list(ex.map(chk, builds))
(OUT / "pp_checks.json").write_text(json.dumps(passed, indent=1))
builds = {tag: builds[tag] for tag in builds if passed[tag]["rc"] == 0}
log("passed", list(builds))

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
    for n in SIZES + [1536, 2304]:
        one(tag, n, 0)
tags = list(builds)
for rnd in range(1, 5):  # 4 more rounds at 8192 in rotating order
    for tag in tags[rnd % len(tags):] + tags[:rnd % len(tags)]:
        one(tag, 8192, rnd)
(OUT / "pp_variants.json").write_text(json.dumps(recs, indent=1))

torch, note = cuda_torch(); stream = torch.cuda.current_stream().cuda_stream
n = 8192; pairs = []
def f32out(inputs, rng):
    a_host, b_host, a_ref, b_ref = inputs
    a = torch.from_numpy(a_host).cuda(); b_t = torch.from_numpy(b_host).cuda()
    def launch(a=a, b_t=b_t):
        torch.mm(a, b_t.t(), out_dtype=torch.float32)
    c = torch.mm(a, b_t.t(), out_dtype=torch.float32)
    assert c.dtype == torch.float32
    _check_library("cublas_fp16_f32out", n, precision_of("fp16"), c.cpu().numpy(), a_ref, b_ref, sample_rows(n, 64, rng))
    return "cublas_fp16_f32out", launch, "torch.mm(out_dtype=torch.float32) (cuBLAS), FP16 in, FP32 accumulate, FP32 out"
for prec in ("fp16", "int8"):
    rng = np.random.default_rng(7 + n)
    inputs = make_inputs(precision_of(prec), n, n, n, rng)
    libs = [library_gemm(torch, prec, n, rng, inputs)]
    if prec == "fp16":
        try:
            libs.append(f32out(inputs, rng))
        except Exception as exc:
            log("f32out failed", type(exc).__name__, exc)
    ptags = [t for t in builds if K[builds[t][0]]["precision"] == prec]
    for name, launch, what in libs:
        for p, order in enumerate((ptags, ptags[::-1])):
            for tag in order:
                k, t, _ = builds[tag]
                pk = PairedKernel(k, W / f"{tag}.cubin", prec, t, kernel_options(K[k]))
                try:
                    for r in pair_rounds(pk, n, inputs, name, launch, stream, 6, 10, 50, 7 + n):
                        row = dataclasses.asdict(r); row.update(tag=tag, pass_=p, t=time.time() - T0, what=what); pairs.append(row)
                        log(tag, name, p, r.round, r.first, round(r.library_median_ns / r.kernel_median_ns, 4))
                except Exception as exc:
                    pairs.append({"tag": tag, "pass_": p, "library": name, "error": f"{type(exc).__name__}: {exc}"[:500]}); log(tag, "ERROR", exc)
        (OUT / "pp_pairs.json").write_text(json.dumps(pairs, indent=1))
    del inputs, libs; torch.cuda.empty_cache()

san = str(find_tool("compute-sanitizer")); res = []
for tag, tool, n, limit in (x for x in (("f_pp_cl", "memcheck", 512, 60), ("f_pp_cl", "memcheck", 2304, 60), ("i_pp", "memcheck", 2304, 60),
                             ("i_pp_cl", "memcheck", 1536, 60), ("f_pp_cl", "racecheck", 512, 60), ("i_pp_cl", "racecheck", 1536, 90)) if x[0] in builds):
    k, t, extra = builds[tag]
    cmd = [san, "--tool", tool, "--error-exitcode", "1"] + hcmd("check-time", W / f"{tag}.cubin", k, K[k]["precision"], [n], t, warmups=0, repeats=1, out=f"/tmp/w/san_{tag}_{tool}_{n}.json", **kernel_options(K[k]))
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=limit); rc = p.returncode; txt = p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        rc = "timeout"; txt = str(e)
    res.append({"tag": tag, "tool": tool, "n": n, "rc": rc, "wall_s": time.time() - t0, "tail": txt[-800:]}); log(tag, tool, n, rc, f"{time.time()-t0:.1f}s")
    (OUT / "pp_sanitize.json").write_text(json.dumps(res, indent=1))
smi.terminate()
log("done")
