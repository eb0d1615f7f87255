"""Development measurements in one process on a GPU machine: inputs drawn on the GPU against the host; profile-job parts; raster variants."""
import dataclasses, json, os, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import numpy as np
import yaml
sys.path.insert(0, os.getcwd())
from analysis.gpu.build import build_kernel
from analysis.gpu.config import tiling_from_config, kernel_options
from analysis.gpu.harness import command as hcmd, GemmRunner, make_inputs, device_rng
from analysis.gpu.profile import ncu_command
from analysis.precision import precision_of
from analysis.tools import find_tool

OUT = Path(os.environ["OUT"]); W = Path("/tmp/w"); W.mkdir(exist_ok=True)
cfg = yaml.safe_load(open("config/config.yaml"))
K = cfg["kernels"]; SIZES = cfg["sizes"]
T0 = time.time()
def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)

builds = {}
for k in ("int8_wgmma_cluster", "fp16_wgmma_cluster", "int4_wgmma_unpack_s8"):
    builds[k] = (k, tiling_from_config(cfg, k))
for k in ("fp16_wgmma_cluster", "int8_wgmma_cluster"):
    for r in (2, 16, 32):
        builds[f"{k}_r{r}"] = (k, dataclasses.replace(tiling_from_config(cfg, k), raster=r))
for r in (4, 16):
    builds[f"int4_wgmma_unpack_s8_r{r}"] = ("int4_wgmma_unpack_s8", dataclasses.replace(tiling_from_config(cfg, "int4_wgmma_unpack_s8"), raster=r))
def b(tag):
    k, t = builds[tag]
    build_kernel(Path(f"kernels/{k}.cu"), k, "sm_90", t.defines(), W / f"{tag}.cubin", W / f"{tag}.json", W / f"{tag}.sass", W / f"{tag}.log")
    return tag
with ThreadPoolExecutor(10) as ex:
    list(ex.map(b, builds))
log("built", len(builds))

def run(cmd, tag):
    t = time.time(); p = subprocess.run(cmd, capture_output=True, text=True); dt = time.time() - t
    log(f"{tag}: rc {p.returncode} wall {dt:.2f} s")
    (OUT / "logs").mkdir(exist_ok=True); (OUT / "logs" / f"{tag.replace(' ', '_')}.txt").write_text(p.stdout + p.stderr)
    if p.returncode: log((p.stdout + p.stderr)[-1500:])
    return dt

res = {}
# 1. runner set-up at each N: inputs drawn on the host (NumPy) against on the GPU (CuPy)
k = "fp16_wgmma_cluster"; t = tiling_from_config(cfg, k)
for kk in ("fp16_wgmma_cluster", "int8_wgmma_cluster"):
    tt = tiling_from_config(cfg, kk); prec = precision_of(K[kk]["precision"])
    for n in SIZES:
        for how in ("host", "gpu", "host", "gpu"):
            t1 = time.perf_counter()
            inp = make_inputs(prec, n, n, n, np.random.default_rng(n)) if how == "host" else None
            r = GemmRunner(W / f"{kk}.cubin", kk, prec.name, tt, n, n, n, n, tma=True, inputs=inp)
            t2 = time.perf_counter(); chk = r.check(); t3 = time.perf_counter(); r.close()
            assert chk.passed, (kk, n, how, chk)
            res.setdefault("setup", []).append({"kernel": kk, "n": n, "inputs": how, "setup_s": t2 - t1, "check_s": t3 - t2})
    log("setup", kk, json.dumps([x for x in res["setup"] if x["kernel"] == kk and x["n"] == 8192]))
(OUT / "setup.json").write_text(json.dumps(res["setup"], indent=1))

# 2. whole jobs as the workflow runs them: check-time 5 N, ncu full 5 N; ncu LaunchStats only; N=512 only
ncu = str(find_tool("ncu")); py = sys.executable
res["python_imports"] = run([py, "-c", "import analysis.gpu.harness.runner, cuda.bindings.driver, cupy, numpy"], "imports")
for kk in ("fp16_wgmma_cluster", "int8_wgmma_cluster", "int4_wgmma_unpack_s8"):
    spec = K[kk]; tt = tiling_from_config(cfg, kk); opts = kernel_options(spec); cub = W / f"{kk}.cubin"
    ct = hcmd("check-time", cub, kk, spec["precision"], SIZES, tt, warmups=10, repeats=50, out=f"/tmp/w/{kk}_n{{n}}.json", **opts)
    pr = hcmd("profile", cub, kk, spec["precision"], SIZES, tt, warmups=3, **opts)
    res[f"{kk}.check_time"] = run(ct, f"{kk} check-time")
    res[f"{kk}.ncu_full"] = run(ncu_command(ncu, "full", kk, 5, W / f"{kk}_full") + pr, f"{kk} ncu full")
    if kk == "fp16_wgmma_cluster":
        res[f"{kk}.ncu_launchstats"] = run([ncu, "--section", "LaunchStats", *ncu_command(ncu, "full", kk, 5, W / f"{kk}_ls")[3:]] + pr, f"{kk} ncu LaunchStats")
        pr1 = hcmd("profile", cub, kk, spec["precision"], [512], tt, warmups=3, **opts)
        res[f"{kk}.ncu_full_n512"] = run(ncu_command(ncu, "full", kk, 1, W / f"{kk}_f512") + pr1, f"{kk} ncu full N=512")
    log(json.dumps({a: b for a, b in res.items() if a != "setup"}))
(OUT / "times.json").write_text(json.dumps({a: b for a, b in res.items() if a != "setup"}, indent=1))

# 3. raster variants: check (all of C) and time at 4096, 8192; pairs at 8192
from analysis.gpu.harness.runner import check_and_time
from analysis.gpu.paired import PairedKernel, paired_table
from analysis.gpu.references import library_gemms_paired
recs = []
for tag, (kk, tt) in builds.items():
    for n in (4096, 8192):
        r = check_and_time(W / f"{tag}.cubin", kk, K[kk]["precision"], n, tt, 10, 50, 77 + n, tma=True)
        recs.append({"tag": tag, "n": n, "median_ns": r["median_ns"], "tput": r["throughput"], "ok": r["check"]["passed"]})
        log(tag, n, f"{r['throughput']:.1f}")
(OUT / "variants.json").write_text(json.dumps(recs, indent=1))
pk = [(tag, PairedKernel(kk, W / f"{tag}.cubin", K[kk]["precision"], tt, {"tma": True})) for tag, (kk, tt) in builds.items()
      if kk in ("fp16_wgmma_cluster", "int8_wgmma_cluster")]
rows, paired, note = library_gemms_paired([8192], 10, 50, 99, [p for _, p in pk], 4)
(OUT / "paired_order.json").write_text(json.dumps([tag for tag, _ in pk]))
tab = paired_table(paired); tab.to_csv(OUT / "paired.csv", index=False)
(OUT / "refs.json").write_text(json.dumps([dataclasses.asdict(r) for r in rows], default=str, indent=1))
log("paired done")
