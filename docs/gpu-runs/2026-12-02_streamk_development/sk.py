"""Development call: a stream-K tail (STREAM_K of kernels/wgmma_gemm.cuh) for the persistent FP16 and INT8
wgmma kernels: the last partial wave's K tiles spread over every cluster, parts summed in C in turn
(load in batches, add, store; the first call's atomicAdd fixup and the second's unbatched loads ran slower)."""
import dataclasses, json, os, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import numpy as np
import yaml
sys.path.insert(0, os.getcwd())
from analysis.gpu.build import build_kernel
from analysis.gpu.config import tiling_from_config, kernel_options
from analysis.gpu.harness import command as hcmd, make_inputs, sample_rows
from analysis.gpu.harness.runner import check_and_time, GemmRunner
from analysis.gpu.paired import PairedKernel, pair_rounds
from analysis.gpu.references import cuda_torch, library_gemm, same_output_gemm
from analysis.precision import precision_of
from analysis.tools import find_tool

OUT = Path(os.environ["OUT"]); W = Path("/tmp/w"); W.mkdir(exist_ok=True)
cfg = yaml.safe_load(open("config/config.yaml")); K = cfg["kernels"]; SIZES = cfg["sizes"]
EXTRA_N = [1536, 2304, 3072, 6144]
T0 = time.time()
def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active",
                        "--format=csv,noheader", "-lms", "200"], stdout=open(OUT / "sk_smi.csv", "w"), stderr=subprocess.STDOUT)
log("t0", time.strftime("%H:%M:%S"))

def v(kernel, extra=(), **changes):
    t = dataclasses.replace(tiling_from_config(cfg, kernel), **changes)
    return kernel, t, list(extra)
SK = ["-DSTREAM_K=1"]
builds = {
    "fp16_wgmma_cluster": v("fp16_wgmma_cluster"),
    "f_cl_sk": v("fp16_wgmma_cluster", SK),
    "int8_wgmma_cluster": v("int8_wgmma_cluster"),
    "i_cl_sk": v("int8_wgmma_cluster", SK),
    "i_p_sk": v("int8_wgmma", SK, persistent=1),
    "i_p": v("int8_wgmma", persistent=1),
}
def b(tag):
    k, t, extra = builds[tag]
    build_kernel(Path(f"kernels/{k}.cu"), k, "sm_90", t.defines() + extra, W / f"{tag}.cubin", W / f"{tag}.json", W / f"{tag}.sass", W / f"{tag}.log")
    return tag
with ThreadPoolExecutor(12) as ex:
    list(ex.map(b, builds))
log("built", len(builds))
(OUT / "sk_builds.json").write_text(json.dumps({tag: json.loads((W / f"{tag}.json").read_text()) for tag in builds}, indent=1))

# every build checked at every N in its own process first (a failed launch ends a process's context):
# only builds that pass are timed and paired
passed = {}
def chk(tag):
    k, t, _ = builds[tag]
    cmd = hcmd("check-time", W / f"{tag}.cubin", k, K[k]["precision"], SIZES + EXTRA_N, t, warmups=1, repeats=3,
               out=f"/tmp/w/chk_{tag}_{{n}}.json", **kernel_options(K[k]))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=90); rc = p.returncode; txt = p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        rc = "timeout"; txt = str(e)
    passed[tag] = {"rc": rc, "tail": txt[-600:]}
    log("check", tag, rc)
with ThreadPoolExecutor(1) as ex:
    list(ex.map(chk, builds))
(OUT / "sk_checks.json").write_text(json.dumps(passed, indent=1))
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
    for n in SIZES + EXTRA_N:
        one(tag, n, 0)
tags = list(builds)
for rnd in range(1, 9):  # 8 more rounds at 8192 in rotating order
    for tag in tags[rnd % len(tags):] + tags[:rnd % len(tags)]:
        one(tag, 8192, rnd)
(OUT / "sk_variants.json").write_text(json.dumps(recs, indent=1))

# the fixup counters return to 0 at the end of every launch: check, 30 launches, check again, in one module
rel = []
for tag in [t for t in builds if "_sk" in t]:
    k, t, _ = builds[tag]
    for n in (2304, 4096, 8192):
        run = GemmRunner(W / f"{tag}.cubin", k, K[k]["precision"], t, n, n, n, 99 + n, tma=True, **{kk: vv for kk, vv in kernel_options(K[k]).items() if kk != "tma"})
        try:
            c1 = run.check(); run.time(5, 25); c2 = run.check()
            rec = {"tag": tag, "n": n, "first": c1.passed, "after_30_launches": c2.passed, "max_abs_error": [c1.max_abs_error, c2.max_abs_error]}
        except Exception as exc:
            rec = {"tag": tag, "n": n, "error": f"{type(exc).__name__}: {exc}"[:500]}
        finally:
            run.close()
        rel.append(rec); log(json.dumps(rec))
(OUT / "sk_relaunch.json").write_text(json.dumps(rel, indent=1))

torch, note = cuda_torch(); stream = torch.cuda.current_stream().cuda_stream
n = 8192; pairs = []
for prec in ("fp16", "int8"):
    rng = np.random.default_rng(7 + n)
    inputs = make_inputs(precision_of(prec), n, n, n, rng)
    libs = [library_gemm(torch, prec, n, rng, inputs)]
    if prec == "fp16":
        try:
            libs.append(same_output_gemm(torch, prec, n, rng, inputs))
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
        (OUT / "sk_pairs.json").write_text(json.dumps(pairs, indent=1))
    del inputs, libs; torch.cuda.empty_cache()

san = str(find_tool("compute-sanitizer")); res = []
for tag, tool, n, limit in (x for x in (("f_cl_sk", "memcheck", 2304, 60), ("i_cl_sk", "memcheck", 2304, 60), ("i_p_sk", "memcheck", 2304, 60),
                             ("i_cl_sk", "racecheck", 2304, 90)) if x[0] in builds):
    k, t, extra = builds[tag]
    cmd = [san, "--tool", tool, "--error-exitcode", "1"] + hcmd("check-time", W / f"{tag}.cubin", k, K[k]["precision"], [n], t, warmups=0, repeats=1, out=f"/tmp/w/san_{tag}_{tool}_{n}.json", **kernel_options(K[k]))
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=limit); rc = p.returncode; txt = p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        rc = "timeout"; txt = str(e)
    res.append({"tag": tag, "tool": tool, "n": n, "rc": rc, "wall_s": time.time() - t0, "tail": txt[-800:]}); log(tag, tool, n, rc, f"{time.time()-t0:.1f}s")
    (OUT / "sk_sanitize.json").write_text(json.dumps(res, indent=1))
smi.terminate()
log("done")
