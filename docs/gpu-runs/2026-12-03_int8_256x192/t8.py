"""Development call: int8_wgmma_cluster with 256 x 192 blocks of C (int8_256x192.patch: BLOCK_N=192
through m64n192k32 wgmma, each consumer warpgroup owning 128 rows as two m64 halves), against the
registered 128 x 256 build, at sizes both tilings divide (N = 1536, 3072, 6144, 9216: the harness
refuses partial tiles, and 192 divides no power of two); then the s8 wgmma ceilings and ncu profiles
(--set full, clock control none) of both tilings at N = 9216. Derived from
../2026-12-03_clusters_of_four/c4.py.

Why: per K tile of 128 bytes a 128 x 256 block copies 384 rows of A and B for 128 x 256 outputs, a
256 x 192 block 448 rows for 256 x 192: 22 % fewer bytes into shared memory and 17 % fewer from L2
per operation (B multicast between the two CTAs of a cluster in both). The ping-pong builds, which
moved 5/3 the bytes, ran 7-10 % slower (docs/perf-notes.md).

Modes (run from the repository root): `python t8.py` (the whole call, files into $OUT),
`python t8.py check TAG N,N,...` and `python t8.py check_mnk TAG M N K` (one build in a process of its own), and `python t8.py profile TAG N`
(the program ncu runs)."""
import dataclasses, json, os, shutil, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import numpy as np
import yaml
sys.path.insert(0, os.getcwd())
from analysis.gpu.build import build_kernel
from analysis.gpu.config import tiling_from_config
from analysis.gpu.harness import make_inputs, sample_rows
from analysis.gpu.harness.runner import GemmRunner
from analysis.precision import precision_of
from analysis.tools import find_tool

HERE = Path(__file__).resolve().parent
W = Path("/tmp/w8"); W.mkdir(exist_ok=True)
DEV = W / "dev"  # the repository's kernels/ with int8_256x192.patch applied
cfg = yaml.safe_load(open("config/config.yaml"))
K = "int8_wgmma_cluster"
REG = tiling_from_config(cfg, K)


def tile(bm, bn, stages):
    return dataclasses.replace(REG, block_m=bm, block_n=bn, stages=stages, smem_bytes=stages * (bm + bn) * 128 + 1024)


# tag: (kernels folder, tiling)
BUILDS = {"i_cl": (Path("kernels"), REG), "i_t": (DEV / "kernels", tile(256, 192, 4)),
          "i_t3": (DEV / "kernels", tile(256, 192, 3))}
NEW = ["i_t", "i_t3"]
SIZES = [1536, 3072, 6144, 9216]
SAN_MNK = ["3072", "3072", "256"]
PREC = precision_of("int8")
T0 = time.time()


def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)


def runner(tag, n, seed, inputs):
    return GemmRunner(W / f"{tag}.cubin", K, "int8", BUILDS[tag][1], n, n, n, seed, tma=True, inputs=inputs)


def check(run, tag, n, rng):
    """Exact check of rows from the first, the last and two random 256-row block rows (every
    residue of a row modulo both tilings' block heights)."""
    chk = run.check(sample_rows(n, 256, rng))
    if not chk.passed:
        raise RuntimeError(f"{tag} N={n}: {chk}")
    return chk.max_abs_error


def mode_check(tag, sizes):
    for n in sizes:
        rng = np.random.default_rng(11 + n); inputs = make_inputs(PREC, n, n, n, rng)
        run = runner(tag, n, 11 + n, inputs)
        try:
            print(tag, n, "max_abs_error", check(run, tag, n, rng), flush=True)
        finally:
            run.close()


def mode_check_mnk(tag, m, n, k):
    """One exact check at M x N x K (the sanitizers' size: 192 blocks of 256 x 192, more than one
    per CTA, with a short K)."""
    rng = np.random.default_rng(13); inputs = make_inputs(PREC, m, n, k, rng)
    run = GemmRunner(W / f"{tag}.cubin", K, "int8", BUILDS[tag][1], m, n, k, 13, tma=True, inputs=inputs)
    try:
        chk = run.check(sample_rows(m, 256, rng))
        if not chk.passed:
            raise RuntimeError(f"{tag} {m}x{n}x{k}: {chk}")
        print(tag, m, n, k, "max_abs_error", chk.max_abs_error, flush=True)
    finally:
        run.close()


def mode_profile(tag, n):
    """3 warm-ups, one launch between cuProfilerStart/Stop, then that launch's C checked."""
    rng = np.random.default_rng(5 + n); inputs = make_inputs(PREC, n, n, n, rng)
    run = runner(tag, n, 5 + n, inputs)
    try:
        for _ in range(3):
            run.launch()
        run.sync()
        chk = run.check(sample_rows(n, 256, rng), profiled=True)
        if not chk.passed:
            raise RuntimeError(f"{tag}: profiled launch wrong: {chk}")
        print(tag, "profiled launch max_abs_error", chk.max_abs_error)
    finally:
        run.close()


if len(sys.argv) > 1:
    {"check": lambda: mode_check(sys.argv[2], [int(x) for x in sys.argv[3].split(",")]),
     "check_mnk": lambda: mode_check_mnk(sys.argv[2], *map(int, sys.argv[3:6])),
     "profile": lambda: mode_profile(sys.argv[2], int(sys.argv[3]))}[sys.argv[1]]()
    sys.exit(0)

OUT = Path(os.environ["OUT"])
me = str(Path(__file__).resolve())
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active",
                        "--format=csv,noheader", "-lms", "200"], stdout=open(OUT / "t8_smi.csv", "w"), stderr=subprocess.STDOUT)
shutil.rmtree(DEV, ignore_errors=True); DEV.mkdir(parents=True)
shutil.copytree("kernels", DEV / "kernels")
subprocess.run(["patch", "-p1", "-d", str(DEV), "-i", str(HERE / "int8_256x192.patch")], check=True)
record = {"builds": {}, "checks": {}, "sanitize": []}


def build(tag):
    folder, t = BUILDS[tag]
    build_kernel(folder / f"{K}.cu", K, "sm_90", t.defines(), W / f"{tag}.cubin", W / f"{tag}.json",
                 W / f"{tag}.sass", W / f"{tag}.log")


with ThreadPoolExecutor(4) as ex:
    list(ex.map(build, BUILDS))
    ceil = ex.submit(build_kernel, Path("kernels/ceilings/wgmma_peak.cu"), "peak_wgmma_m64n256k16_f16_f32", "sm_90",
                     ["-arch=sm_90a"], W / "ceil.cubin", W / "ceil.json", W / "ceil.sass", W / "ceil.log")
    ceil.result()
for t in BUILDS:
    sass = (W / f"{t}.sass").read_text()
    record["builds"][t] = {"tiling": dataclasses.asdict(BUILDS[t][1]), "resources": json.loads((W / f"{t}.json").read_text()),
                           "IGMMA": sorted({ln.split()[1] for ln in sass.splitlines() if " IGMMA" in ln and len(ln.split()) > 1})}
log("built")
builds = dict(BUILDS)
for tag in list(builds):
    p = subprocess.run([sys.executable, me, "check", tag, ",".join(map(str, SIZES))], capture_output=True, text=True, timeout=150)
    record["checks"][tag] = {"rc": p.returncode, "out": (p.stdout + p.stderr)[-1500:]}; log("check", tag, p.returncode)
    if p.returncode:
        builds.pop(tag)
san = str(find_tool("compute-sanitizer"))
for tag in [t for t in NEW if t in builds]:
    for tool in ("memcheck", "racecheck"):
        p = subprocess.run([san, "--tool", tool, "--error-exitcode", "1", sys.executable, me, "check_mnk", tag,
                            *SAN_MNK], capture_output=True, text=True, timeout=60)
        record["sanitize"].append({"tag": tag, "tool": tool, "mnk": SAN_MNK, "rc": p.returncode, "tail": (p.stdout + p.stderr)[-600:]})
        log(tool, tag, p.returncode)
(OUT / "t8_checks.json").write_text(json.dumps(record, indent=1))

recs = []
tags = list(builds)
INPUTS = {n: make_inputs(PREC, n, n, n, np.random.default_rng(17 + n)) for n in (6144, 9216)}
for rnd in range(3):
    for tag in tags[rnd % len(tags):] + tags[:rnd % len(tags)]:
        for n in (6144, 9216):
            rng = np.random.default_rng(1000 * rnd + n)
            run = runner(tag, n, 1000 * rnd + n, INPUTS[n])
            try:
                err = check(run, tag, n, rng)
                tim = run.time(10, 50)
            finally:
                run.close()
            recs.append({"tag": tag, "n": n, "round": rnd, "median_ns": tim.median_ns, "rate": 2 * n**3 / tim.median_ns / 1e3,
                         "max_abs_error": err, "t": time.time() - T0})
    log("round", rnd)
(OUT / "t8_variants.json").write_text(json.dumps(recs, indent=1))
del INPUTS

from analysis.gpu.references import wgmma_ceilings
rows = wgmma_ceilings(W / "ceil.cubin", 10, 50)
(OUT / "t8_ceilings.json").write_text(json.dumps([dataclasses.asdict(r) for r in rows], indent=1, default=str))
log("ceilings", [(r.name, round(r.rate, 1)) for r in rows if r.precision == "int8"])

ncu = str(find_tool("ncu"))
prof = W / "prof"; prof.mkdir(exist_ok=True)
plog = open(prof / "t8_ncu.log", "w")
for tag in [t for t in ("i_cl", "i_t") if t in builds]:
    if time.time() - T0 > 150:  # the call's device time is short: no profile that might not finish
        log("ncu", tag, "skipped: out of time"); continue
    base = W / f"prof_{tag}_n9216"
    cmd = [ncu, "--set", "full", "--clock-control", "none", "--profile-from-start", "off", "--force-overwrite",
           "--export", str(base), sys.executable, me, "profile", tag, "9216"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=150)
    plog.write(f"$ {' '.join(cmd)}\nrc={p.returncode}\n{p.stdout[-3000:]}{p.stderr[-3000:]}\n"); plog.flush()
    log("ncu", tag, p.returncode)
    rep = base.with_suffix(".ncu-rep")
    if p.returncode == 0 and rep.exists():
        shutil.move(rep, prof / rep.name)
plog.close()
smi.terminate()
subprocess.run(["tar", "-cJf", str(OUT / "t8_profiles.tar.xz"), "-C", str(prof), "."])
log("done")
