"""Profile the stream-K build and the registered int8_wgmma_cluster under ncu --set full (clock control none)
at N = 4096 and 8192, to see where the stream-K tail's time goes."""
import dataclasses, os, subprocess, sys, time
from pathlib import Path
import yaml
sys.path.insert(0, os.getcwd())
from analysis.gpu.build import build_kernel
from analysis.gpu.config import tiling_from_config, kernel_options
from analysis.gpu.profile import profile_kernel
OUT = Path(os.environ["OUT"]); W = Path("/tmp/w"); W.mkdir(exist_ok=True)
cfg = yaml.safe_load(open("config/config.yaml")); K = cfg["kernels"]
T0 = time.time()
builds = {"int8_wgmma_cluster": [], "i_cl_sk": ["-DSTREAM_K=1"]}
for tag, extra in builds.items():
    k = "int8_wgmma_cluster"; t = tiling_from_config(cfg, k)
    build_kernel(Path(f"kernels/{k}.cu"), k, "sm_90", t.defines() + extra, W / f"{tag}.cubin", W / f"{tag}.json", W / f"{tag}.sass", W / f"{tag}.log")
    profile_kernel(W / f"{tag}.cubin", k, "int8", [4096, 8192], t, OUT / f"{tag}_n4096-8192.ncu-rep.xz", options=kernel_options(K[k]))
    print(f"[{time.time()-T0:.1f}s] profiled {tag}", flush=True)
