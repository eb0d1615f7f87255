"""Profile the INT8 ping-pong build in clusters (i_pp_cl of the ping-pong development call: PINGPONG=1,
64 x 256 blocks, 5 stages, raster 16) under ncu --set full (clock control none) at N = 4096 and 8192,
beside the registered int8_wgmma_cluster profiled the same way in the stream-K call."""
import dataclasses, os, sys, time
from pathlib import Path
import yaml
sys.path.insert(0, os.getcwd())
from analysis.gpu.build import build_kernel
from analysis.gpu.config import tiling_from_config, kernel_options
from analysis.gpu.harness.runner import check_and_time
from analysis.gpu.profile import profile_kernel
OUT = Path(os.environ["OUT"]); W = Path("/tmp/w"); W.mkdir(exist_ok=True)
cfg = yaml.safe_load(open("config/config.yaml")); K = cfg["kernels"]
T0 = time.time()
k = "int8_wgmma_cluster"
t = dataclasses.replace(tiling_from_config(cfg, k), block_m=64, stages=5, smem_bytes=5 * 40960 + 1024, raster=16)
build_kernel(Path(f"kernels/{k}.cu"), k, "sm_90", t.defines() + ["-DPINGPONG=1"], W / "pp.cubin", W / "pp.json", W / "pp.sass", W / "pp.log")
for n in (4096, 8192):
    r = check_and_time(W / "pp.cubin", k, "int8", n, t, 10, 50, 5 + n, tma=True)
    print(f"[{time.time()-T0:.1f}s] N={n} checked {r['check']['passed']} median {r['median_ns']:.0f} ns", flush=True)
profile_kernel(W / "pp.cubin", k, "int8", [4096, 8192], t, OUT / "int8_wgmma_cluster_pingpong.ncu-rep.xz", options=kernel_options(K[k]))
print(f"[{time.time()-T0:.1f}s] profiled", flush=True)
