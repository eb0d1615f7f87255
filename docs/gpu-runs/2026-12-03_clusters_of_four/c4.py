"""Development call: the cluster kernels in clusters of 2 x 2 CTAs (CLUSTER_N=2 of
kernels/wgmma_gemm.cuh: A multicast along N as B is along M), writing FP32/INT32 C and, for FP16,
FP16 C (STORE_WIDE=2), against the registered builds and the FP16-C build of clusters of two;
then ncu profiles (--set full, clock control none) of every build at N = 8192. Derived from
../2026-12-03_wide_stores/wide.py.

The harness reads C as FP32, so the FP16-C build is checked here: C seen as N x N FP16 on 64
sampled rows within the FP32-accumulation bound plus 2**-11 |ref|
(analysis.gpu.references._check_library), and the rest of the buffer still poisoned.

Modes (run from the repository root): `python wide.py` (the whole call, files into $OUT),
`python wide.py check TAG N,N,...` (one build in a process of its own), `python wide.py profile
TAG` and `python wide.py libs` (the programs ncu runs)."""
import json, os, shutil, subprocess, sys, time
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
BUILDS = {"f_cl": ("fp16_wgmma_cluster", []), "f_cl_h": ("fp16_wgmma_cluster", ["-DSTORE_WIDE=2"]),
          "f_c4": ("fp16_wgmma_cluster", ["-DCLUSTER_N=2"]),
          "f_c4_h": ("fp16_wgmma_cluster", ["-DCLUSTER_N=2", "-DSTORE_WIDE=2"]),
          "i_cl": ("int8_wgmma_cluster", []), "i_c4": ("int8_wgmma_cluster", ["-DCLUSTER_N=2"])}
F16C = {"f_cl_h", "f_c4_h"}
NEW = ["f_c4", "f_c4_h", "i_c4"]
T0 = time.time()


def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)


def prec_of(tag):
    return precision_of("fp16" if tag.startswith("f") else "int8")


def runner(tag, n, seed, inputs):
    k, _ = BUILDS[tag]
    return GemmRunner(W / f"{tag}.cubin", k, prec_of(tag).name, tiling_from_config(cfg, k), n, n, n, seed,
                      tma=True, inputs=inputs)


def check_f16c(run, tag, n, inputs, rows):
    """The FP16-C build's C after the launch that just ran (C poisoned before it)."""
    raw = run.result()
    words = raw.view(np.uint32).reshape(-1)
    untouched = words[n * n // 2:]
    if not np.all(untouched == untouched[0]):
        raise RuntimeError(f"{tag} N={n}: the kernel wrote past N x N FP16 values")
    c = raw.view(np.float16).reshape(-1)[: n * n].reshape(n, n)
    _check_library(tag, n, prec_of(tag), c, inputs[2], inputs[3], rows)
    ref = inputs[2][rows].astype(np.float64) @ inputs[3].astype(np.float64).T
    return float(np.max(np.abs(c[rows].astype(np.float64) - ref)))


def check(run, tag, n, inputs, rng):
    rows = sample_rows(n, 64, rng)
    if tag not in F16C:
        chk = run.check(rows)
        if not chk.passed:
            raise RuntimeError(f"{tag} N={n}: {chk}")
        return chk.max_abs_error
    run.poison(); run.launch(); run.sync()
    return check_f16c(run, tag, n, inputs, rows)


def mode_check(tag, sizes):
    for n in sizes:
        rng = np.random.default_rng(11 + n); inputs = make_inputs(prec_of(tag), n, n, n, rng)
        run = runner(tag, n, 11 + n, inputs)
        try:
            print(tag, n, "max_abs_error", check(run, tag, n, inputs, rng), flush=True)
        finally:
            run.close()


def mode_profile(tag, n=8192):
    """3 warm-ups, one launch between cuProfilerStart/Stop, then that launch's C checked."""
    rng = np.random.default_rng(5 + n); inputs = make_inputs(prec_of(tag), n, n, n, rng)
    run = runner(tag, n, 5 + n, inputs)
    try:
        for _ in range(3):
            run.launch()
        run.sync()
        if tag in F16C:
            run.poison(); run.sync()
            run.cu.cuProfilerStart(); run.launch(); run.sync(); run.cu.cuProfilerStop()
            print(tag, "profiled launch max_abs_error", check_f16c(run, tag, n, inputs, sample_rows(n, 64, rng)))
        else:
            chk = run.check(sample_rows(n, 64, rng), profiled=True)
            if not chk.passed:
                raise RuntimeError(f"{tag}: profiled launch wrong: {chk}")
            print(tag, "profiled launch max_abs_error", chk.max_abs_error)
    finally:
        run.close()


def mode_libs(n=8192):
    """cuBLAS FP16 (FP16 C, FP32 C) and cuBLASLt INT8, each checked, 5 warm-ups, one profiled call."""
    torch, note = cuda_torch()
    if torch is None:
        raise SystemExit(note)
    for prec_name, make in (("fp16", library_gemm), ("fp16", same_output_gemm), ("int8", library_gemm)):
        rng = np.random.default_rng(3 + n); inputs = make_inputs(precision_of(prec_name), n, n, n, rng)
        name, launch, what = make(torch, prec_name, n, rng, inputs)
        for _ in range(5):
            launch()
        torch.cuda.synchronize()
        torch.cuda.profiler.start(); launch(); torch.cuda.synchronize(); torch.cuda.profiler.stop()
        print("profiled", name, what, flush=True)


if len(sys.argv) > 1:
    {"check": lambda: mode_check(sys.argv[2], [int(x) for x in sys.argv[3].split(",")]),
     "profile": lambda: mode_profile(sys.argv[2]), "libs": mode_libs}[sys.argv[1]]()
    sys.exit(0)

OUT = Path(os.environ["OUT"])
me = str(Path(__file__).resolve())
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active",
                        "--format=csv,noheader", "-lms", "200"], stdout=open(OUT / "c4_smi.csv", "w"), stderr=subprocess.STDOUT)


def build(tag):
    k, extra = BUILDS[tag]; t = tiling_from_config(cfg, k)
    build_kernel(Path(f"kernels/{k}.cu"), k, "sm_90", t.defines() + extra, W / f"{tag}.cubin", W / f"{tag}.json",
                 W / f"{tag}.sass", W / f"{tag}.log")


with ThreadPoolExecutor(5) as ex:
    list(ex.map(build, BUILDS))
(OUT / "c4_builds.json").write_text(json.dumps({t: json.loads((W / f"{t}.json").read_text()) for t in BUILDS}, indent=1))
log("built")
sizes = cfg["sizes"] + [1536, 3072]  # clusters of 2 x 2 need M / 256 and N / 512 whole
checks = {}
builds = dict(BUILDS)
for tag in list(builds):
    p = subprocess.run([sys.executable, me, "check", tag, ",".join(map(str, sizes))], capture_output=True, text=True, timeout=150)
    checks[tag] = {"rc": p.returncode, "out": (p.stdout + p.stderr)[-1500:]}; log("check", tag, p.returncode)
    if p.returncode:
        builds.pop(tag)
(OUT / "c4_checks.json").write_text(json.dumps(checks, indent=1))

san = str(find_tool("compute-sanitizer")); res = []
for tag in [t for t in NEW if t in builds]:
    for tool, ns in (("memcheck", "512,1536"), ("racecheck", "512")):
        p = subprocess.run([san, "--tool", tool, "--error-exitcode", "1", sys.executable, me, "check", tag, ns],
                           capture_output=True, text=True, timeout=200)
        res.append({"tag": tag, "tool": tool, "n": ns, "rc": p.returncode, "tail": (p.stdout + p.stderr)[-600:]})
        log(tool, tag, p.returncode)
(OUT / "c4_sanitize.json").write_text(json.dumps(res, indent=1))

recs = []
tags = list(builds)
# one draw of inputs per precision and N, shared by every build and round (host draws take seconds at N = 8192)
INPUTS = {(p, n): make_inputs(precision_of(p), n, n, n, np.random.default_rng(17 + n)) for p in ("fp16", "int8") for n in (4096, 8192)}
for rnd in range(5):
    for tag in tags[rnd % len(tags):] + tags[:rnd % len(tags)]:
        for n in (4096, 8192):
            rng = np.random.default_rng(1000 * rnd + n); inputs = INPUTS[(prec_of(tag).name, n)]
            run = runner(tag, n, 1000 * rnd + n, inputs)
            try:
                err = check(run, tag, n, inputs, rng)
                tim = run.time(10, 50)
            finally:
                run.close()
            recs.append({"tag": tag, "n": n, "round": rnd, "median_ns": tim.median_ns, "rate": 2 * n**3 / tim.median_ns / 1e3,
                         "max_abs_error": err, "t": time.time() - T0})
    log("round", rnd)
(OUT / "c4_variants.json").write_text(json.dumps(recs, indent=1))
del INPUTS[("fp16", 4096)], INPUTS[("int8", 4096)]

torch, note = cuda_torch(); stream = torch.cuda.current_stream().cuda_stream
n = 8192
pairs = []
for prec_name in ("fp16", "int8"):
    rng = np.random.default_rng(7 + n); inputs = INPUTS[(prec_name, n)]
    libs = [library_gemm(torch, prec_name, n, rng, inputs)]
    same = same_output_gemm(torch, prec_name, n, rng, inputs)
    libs += [same] if same else []
    ptags = [t for t in tags if prec_of(t).name == prec_name]
    for name, launch, what in libs:
        for p_, order in enumerate((ptags, ptags[::-1])):
            for tag in order:
                run = runner(tag, n, 7 + n, inputs)
                try:
                    check(run, tag, n, inputs, np.random.default_rng(7 + n))
                    for r in range(8):
                        seq = ("kernel", "library") if r % 2 == 0 else ("library", "kernel")
                        med = {}
                        for who in seq:
                            med[who] = (run.time(10, 50) if who == "kernel" else time_launches(stream, launch, 10, 50)).median_ns
                        pairs.append({"tag": tag, "library": name, "pass_": p_, "round": r, "first": seq[0],
                                      "kernel_median_ns": med["kernel"], "library_median_ns": med["library"], "t": time.time() - T0})
                finally:
                    run.close()
            log("pairs", name, p_)
    (OUT / "c4_pairs.json").write_text(json.dumps(pairs, indent=1))
del torch

ncu = str(find_tool("ncu"))
prof = OUT / "prof"; prof.mkdir(exist_ok=True)
plog = open(prof / "c4_ncu.log", "w")
for what in tags:
    base = W / f"prof_{what}"
    args = ["libs"] if what == "libs" else ["profile", what]
    cmd = [ncu, "--set", "full", "--clock-control", "none", "--profile-from-start", "off", "--force-overwrite",
           "--export", str(base), sys.executable, me, *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    plog.write(f"$ {' '.join(cmd)}\nrc={p.returncode}\n{p.stdout[-3000:]}{p.stderr[-3000:]}\n"); plog.flush()
    log("ncu", what, p.returncode)
    rep = base.with_suffix(".ncu-rep")
    if p.returncode == 0 and rep.exists():
        shutil.move(rep, prof / rep.name)
smi.terminate()
subprocess.run(["tar", "-cJf", str(OUT / "c4_profiles.tar.xz"), "-C", str(prof), "."])
shutil.rmtree(prof)
log("done")
