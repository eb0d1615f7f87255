"""Development call: the persistent INT4 wgmma kernel with each copy's block counted along (4 and 5 stages) against int4_wgmma_unpack_s8 and int8_wgmma_cluster."""
import dataclasses, json, os, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import yaml
sys.path.insert(0, os.getcwd())
from analysis.gpu.build import build_kernel
from analysis.gpu.config import tiling_from_config, kernel_options
from analysis.gpu.harness import command as hcmd
from analysis.gpu.harness.runner import check_and_time
from analysis.tools import find_tool

OUT = Path(os.environ["OUT"]); W = Path("/tmp/w"); W.mkdir(exist_ok=True)
cfg = yaml.safe_load(open("config/config.yaml")); K = cfg["kernels"]; SIZES = cfg["sizes"]
T0 = time.time()
def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)

P = "int4_wgmma_persistent"
tp = tiling_from_config(cfg, P)
builds = {  # tag: (kernel, source, tiling)
    "int4_wgmma_unpack_s8": ("int4_wgmma_unpack_s8", "kernels/int4_wgmma_unpack_s8.cu", tiling_from_config(cfg, "int4_wgmma_unpack_s8")),
    P: (P, f"kernels/{P}.cu", tp),
    f"{P}_s5": (P, f"kernels/{P}.cu", dataclasses.replace(tp, stages=5, smem_bytes=5 * 40960 + 1024)),
    "int8_wgmma_cluster": ("int8_wgmma_cluster", "kernels/int8_wgmma_cluster.cu", tiling_from_config(cfg, "int8_wgmma_cluster")),
}
def b(tag):
    k, src, t = builds[tag]
    build_kernel(Path(src), k, "sm_90", t.defines(), W / f"{tag}.cubin", W / f"{tag}.json", W / f"{tag}.sass", W / f"{tag}.log")
    return tag
with ThreadPoolExecutor(8) as ex:
    list(ex.map(b, builds))
log("built", len(builds))
(OUT / "dev_builds.json").write_text(json.dumps({tag: json.loads((W / f"{tag}.json").read_text()) for tag in builds}, indent=1))

recs = []
def one(tag, n, rnd):
    k, _, t = builds[tag]
    try:
        r = check_and_time(W / f"{tag}.cubin", k, K[k]["precision"], n, t, 10, 50, 1000 * rnd + n, tma=True)
        rec = {"tag": tag, "n": n, "round": rnd, "median_ns": r["median_ns"], "tput": r["throughput"], "ok": r["check"]["passed"],
               "max_abs_error": r["check"].get("max_abs_error")}
    except Exception as exc:  # a failed check: recorded, never timed
        rec = {"tag": tag, "n": n, "round": rnd, "ok": False, "error": f"{type(exc).__name__}: {exc}"[:500]}
    recs.append(rec); log(json.dumps(rec))
# every N once (the check at every N), then 3 more rounds at 8192 in rotating order
for tag in builds:
    for n in SIZES:
        one(tag, n, 0)
tags = list(builds)
for rnd in (1, 2, 3, 4, 5, 6):
    order = tags[rnd % len(tags):] + tags[:rnd % len(tags)]
    for tag in order:
        one(tag, 8192, rnd)
(OUT / "dev_variants.json").write_text(json.dumps(recs, indent=1))

# compute-sanitizer memcheck and racecheck of the persistent kernel: N = 512 (one block per CTA)
# and N = 2304 (162 blocks over 132 CTAs: the persistent loop)
san = str(find_tool("compute-sanitizer")); res = []
for tool in ("memcheck", "racecheck"):
    for n in (512, 2304):
        cmd = [san, "--tool", tool, "--error-exitcode", "1"] + hcmd("check-time", W / f"{P}.cubin", P, "int4", [n], tp, warmups=0, repeats=1, out=f"/tmp/w/san_{tool}_{n}.json", **kernel_options(K[P]))
        t = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120); rc = p.returncode; txt = p.stdout + p.stderr
        except subprocess.TimeoutExpired as e:
            rc = "timeout"; txt = str(e)
        res.append({"tool": tool, "n": n, "rc": rc, "wall_s": time.time() - t, "tail": txt[-800:]}); log(tool, n, rc, f"{time.time()-t:.1f}s")
(OUT / "dev_sanitize.json").write_text(json.dumps(res, indent=1))
log("done")
