"""Development call: is the stream-K build slower for its tail or for its code? The STREAM_K build with no
block split (SK_MIN_N=1000000: every tile whole at run time, the same code) beside the registered build and the split one."""
import dataclasses, json, os, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import yaml
sys.path.insert(0, os.getcwd())
from analysis.gpu.build import build_kernel
from analysis.gpu.config import tiling_from_config, kernel_options
from analysis.gpu.harness import command as hcmd
from analysis.gpu.harness.runner import check_and_time
OUT = Path(os.environ["OUT"]); W = Path("/tmp/w"); W.mkdir(exist_ok=True)
cfg = yaml.safe_load(open("config/config.yaml")); K = cfg["kernels"]
T0 = time.time()
def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)
builds = {"int8_wgmma_cluster": ("int8_wgmma_cluster", []), "i_cl_sk": ("int8_wgmma_cluster", ["-DSTREAM_K=1"]),
          "i_cl_sk_nosplit": ("int8_wgmma_cluster", ["-DSTREAM_K=1", "-DSK_MIN_N=1000000"]),
          "fp16_wgmma_cluster": ("fp16_wgmma_cluster", []), "f_cl_sk_nosplit": ("fp16_wgmma_cluster", ["-DSTREAM_K=1", "-DSK_MIN_N=1000000"])}
def b(tag):
    k, extra = builds[tag]; t = tiling_from_config(cfg, k)
    build_kernel(Path(f"kernels/{k}.cu"), k, "sm_90", t.defines() + extra, W / f"{tag}.cubin", W / f"{tag}.json", W / f"{tag}.sass", W / f"{tag}.log")
with ThreadPoolExecutor(5) as ex:
    list(ex.map(b, builds))
(OUT / "sk2_builds.json").write_text(json.dumps({tag: json.loads((W / f"{tag}.json").read_text()) for tag in builds}, indent=1))
for tag in list(builds):
    k, _ = builds[tag]; t = tiling_from_config(cfg, k)
    p = subprocess.run(hcmd("check-time", W / f"{tag}.cubin", k, K[k]["precision"], [512, 2304, 4096], t, warmups=1, repeats=3,
                            out=f"/tmp/w/chk_{tag}_{{n}}.json", **kernel_options(K[k])), capture_output=True, text=True, timeout=90)
    log("check", tag, p.returncode)
    if p.returncode: builds.pop(tag); log(p.stdout[-500:], p.stderr[-500:])
recs = []
tags = list(builds)
for rnd in range(6):
    for tag in tags[rnd % len(tags):] + tags[:rnd % len(tags)]:
        k, _ = builds[tag]; t = tiling_from_config(cfg, k)
        for n in (2304, 4096, 8192):
            r = check_and_time(W / f"{tag}.cubin", k, K[k]["precision"], n, t, 10, 50, 1000 * rnd + n, tma=True)
            recs.append({"tag": tag, "n": n, "round": rnd, "median_ns": r["median_ns"], "tput": r["throughput"], "ok": r["check"]["passed"]})
            log(json.dumps(recs[-1]))
(OUT / "sk2_variants.json").write_text(json.dumps(recs, indent=1))
log("done")
