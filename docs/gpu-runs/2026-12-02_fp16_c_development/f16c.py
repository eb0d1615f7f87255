"""Development call: the FP16 wgmma kernels writing C in FP16 (STORE_F16 of kernels/wgmma_gemm.cuh: FP32
accumulators rounded to nearest FP16 when stored), as cuBLAS through torch.matmul does, against the registered
builds (FP32 C) and paired with cuBLAS writing FP16 C and FP32 C. The harness reads C as FP32, so this program
checks the FP16 builds itself: C seen as N x N FP16 on 64 sampled rows within the FP32-accumulation bound plus
2**-11 |ref| (analysis.gpu.references._check_library), and the rest of the buffer still poisoned."""
import dataclasses, json, os, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import numpy as np
import yaml
sys.path.insert(0, os.getcwd())
from analysis.gpu.build import build_kernel
from analysis.gpu.config import tiling_from_config
from analysis.gpu.harness import make_inputs, sample_rows, time_launches
from analysis.gpu.harness.runner import GemmRunner
from analysis.gpu.references import cuda_torch, library_gemm, same_output_gemm, _check_library
from analysis.precision import precision_of
from analysis.tools import find_tool

W = Path("/tmp/w"); W.mkdir(exist_ok=True)
cfg = yaml.safe_load(open("config/config.yaml"))
PREC = precision_of("fp16")
builds = {"fp16_wgmma_cluster": ("fp16_wgmma_cluster", []), "f_cl_h": ("fp16_wgmma_cluster", ["-DSTORE_F16=1"]),
          "fp16_wgmma": ("fp16_wgmma", []), "f_h": ("fp16_wgmma", ["-DSTORE_F16=1"])}
F16 = {"f_cl_h", "f_h"}
T0 = time.time()
def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)

def runner(tag, n, seed, inputs):
    k, extra = builds[tag]
    return GemmRunner(W / f"{tag}.cubin", k, "fp16", tiling_from_config(cfg, k), n, n, n, seed, tma=True, inputs=inputs)

def check(run, tag, n, inputs, rng):
    """Poison, launch once, check C (FP16 builds here, the others through the harness's own check)."""
    if tag not in F16:
        chk = run.check(sample_rows(n, 64, rng))
        if not chk.passed:
            raise RuntimeError(f"{tag} N={n}: {chk}")
        return chk.max_abs_error
    run.poison(); run.launch(); run.sync()
    raw = run.result()
    words = raw.view(np.uint32).reshape(-1)
    untouched = words[n * n // 2:]
    if not np.all(untouched == untouched[0]):
        raise RuntimeError(f"{tag} N={n}: the kernel wrote past N x N FP16 values")
    c = raw.view(np.float16).reshape(-1)[: n * n].reshape(n, n)
    rows = sample_rows(n, 64, rng)
    _check_library(tag, n, PREC, c, inputs[2], inputs[3], rows)
    ref = inputs[2][rows].astype(np.float64) @ inputs[3].astype(np.float64).T
    return float(np.max(np.abs(c[rows].astype(np.float64) - ref)))

if len(sys.argv) > 1 and sys.argv[1] == "check":  # one build, each N, in a process of its own
    tag = sys.argv[2]
    for n in [int(x) for x in sys.argv[3].split(",")]:
        rng = np.random.default_rng(11 + n); inputs = make_inputs(PREC, n, n, n, rng)
        run = runner(tag, n, 11 + n, inputs)
        try:
            print(tag, n, "max_abs_error", check(run, tag, n, inputs, rng), flush=True)
        finally:
            run.close()
    sys.exit(0)

OUT = Path(os.environ["OUT"])
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active",
                        "--format=csv,noheader", "-lms", "200"], stdout=open(OUT / "f16c_smi.csv", "w"), stderr=subprocess.STDOUT)
def b(tag):
    k, extra = builds[tag]; t = tiling_from_config(cfg, k)
    build_kernel(Path(f"kernels/{k}.cu"), k, "sm_90", t.defines() + extra, W / f"{tag}.cubin", W / f"{tag}.json", W / f"{tag}.sass", W / f"{tag}.log")
with ThreadPoolExecutor(4) as ex:
    list(ex.map(b, builds))
(OUT / "f16c_builds.json").write_text(json.dumps({tag: json.loads((W / f"{tag}.json").read_text()) for tag in builds}, indent=1))
SIZES = cfg["sizes"] + [1536, 2304]
checks = {}
for tag in list(builds):
    p = subprocess.run([sys.executable, __file__, "check", tag, ",".join(map(str, SIZES))], capture_output=True, text=True, timeout=120)
    checks[tag] = {"rc": p.returncode, "out": (p.stdout + p.stderr)[-1500:]}; log("check", tag, p.returncode)
    if p.returncode:
        builds.pop(tag)
(OUT / "f16c_checks.json").write_text(json.dumps(checks, indent=1))

san = str(find_tool("compute-sanitizer")); res = []
for tag in [t for t in ("f_cl_h", "f_h") if t in builds]:
    p = subprocess.run([san, "--tool", "memcheck", "--error-exitcode", "1", sys.executable, __file__, "check", tag, "512,2304"],
                       capture_output=True, text=True, timeout=120)
    res.append({"tag": tag, "tool": "memcheck", "n": [512, 2304], "rc": p.returncode, "tail": (p.stdout + p.stderr)[-800:]}); log("memcheck", tag, p.returncode)
(OUT / "f16c_sanitize.json").write_text(json.dumps(res, indent=1))

recs = []
tags = list(builds)
for rnd in range(5):
    for tag in tags[rnd % len(tags):] + tags[:rnd % len(tags)]:
        for n in (4096, 8192):
            rng = np.random.default_rng(1000 * rnd + n); inputs = make_inputs(PREC, n, n, n, rng)
            run = runner(tag, n, 1000 * rnd + n, inputs)
            try:
                err = check(run, tag, n, inputs, rng)
                tim = run.time(10, 50)
            finally:
                run.close()
            recs.append({"tag": tag, "n": n, "round": rnd, "median_ns": tim.median_ns, "tflops": 2 * n**3 / tim.median_ns / 1e3,
                         "max_abs_error": err}); log(json.dumps(recs[-1]))
(OUT / "f16c_variants.json").write_text(json.dumps(recs, indent=1))

torch, note = cuda_torch(); stream = torch.cuda.current_stream().cuda_stream
n = 8192; rng = np.random.default_rng(7 + n); inputs = make_inputs(PREC, n, n, n, rng)
libs = [library_gemm(torch, "fp16", n, rng, inputs), same_output_gemm(torch, "fp16", n, rng, inputs)]
pairs = []
for name, launch, what in libs:
    for p_, order in enumerate((tags, tags[::-1])):
        for tag in order:
            run = runner(tag, n, 7 + n, inputs)
            try:
                check(run, tag, n, inputs, np.random.default_rng(7 + n))
                for r in range(6):
                    seq = ("kernel", "library") if r % 2 == 0 else ("library", "kernel")
                    med = {}
                    for who in seq:
                        med[who] = (run.time(10, 50) if who == "kernel" else time_launches(stream, launch, 10, 50)).median_ns
                    pairs.append({"tag": tag, "library": name, "pass_": p_, "round": r, "first": seq[0], "kernel_median_ns": med["kernel"],
                                  "library_median_ns": med["library"], "t": time.time() - T0})
                    log(tag, name, p_, r, seq[0], round(med["library"] / med["kernel"], 4))
            finally:
                run.close()
    (OUT / "f16c_pairs.json").write_text(json.dumps(pairs, indent=1))
smi.terminate()
log("done")
