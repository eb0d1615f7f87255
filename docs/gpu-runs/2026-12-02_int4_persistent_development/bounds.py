"""Upper bounds, timing only (the outputs are wrong on purpose, never checked): wgmma kernels
without their C stores (what overlapping the epilogue could gain at most), the INT4 kernel
without its B unpacking, and the persistent INT4 kernel with each copy's block tracked
incrementally instead of by two divisions."""
import dataclasses, json, os, re, shutil, statistics, sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import yaml
sys.path.insert(0, os.getcwd())
from analysis.gpu.build import build_kernel
from analysis.gpu.config import tiling_from_config
from analysis.gpu.harness.runner import GemmRunner

OUT = Path(os.environ["OUT"]); W = Path("/tmp/wb"); W.mkdir(exist_ok=True)
cfg = yaml.safe_load(open("config/config.yaml")); K = cfg["kernels"]
T0 = time.time()
def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)

def variant(tag, edits):
    d = W / tag; shutil.rmtree(d, ignore_errors=True); shutil.copytree("kernels", d)
    for fname, old, new in edits:
        p = d / fname; s = p.read_text(); assert old in s, (tag, fname, old[:60]); p.write_text(s.replace(old, new))
    return d

WG_EPI = ("wgmma_gemm.cuh",
          """        *reinterpret_cast<Acc2*>(out + 8 * j) = Acc2{acc[4 * j], acc[4 * j + 1]};
        *reinterpret_cast<Acc2*>(out + 8 * n + 8 * j) = Acc2{acc[4 * j + 2], acc[4 * j + 3]};""",
          """        if (acc[4 * j] + acc[4 * j + 1] + acc[4 * j + 2] + acc[4 * j + 3] == Acc(12345))
          *reinterpret_cast<Acc2*>(out + 8 * j) = Acc2{acc[4 * j], acc[4 * j + 1]};""")
I4_EPI = ("int4_wgmma.cuh",
          """          *reinterpret_cast<int2*>(out + 8 * j) = int2{acc[h][4 * j] >> 8, acc[h][4 * j + 1] >> 8};
          *reinterpret_cast<int2*>(out + 8 * N + 8 * j) = int2{acc[h][4 * j + 2] >> 8, acc[h][4 * j + 3] >> 8};""",
          """          if (acc[h][4 * j] + acc[h][4 * j + 1] + acc[h][4 * j + 2] + acc[h][4 * j + 3] == 12345)
            *reinterpret_cast<int2*>(out + 8 * j) = int2{acc[h][4 * j] >> 8, acc[h][4 * j + 1] >> 8};""")
I4_NOUNPACK = ("int4_wgmma.cuh", "      unpack_b(s8_b(s), packed_b(s), threadIdx.x);\n", "")
I4_INC = ("int4_wgmma.cuh",
          """    auto copy_next = [&]() {
      const int s = next % kStages;
      const int kt = kPersistent ? next % k_tiles : next;
      const tuned::BlockCoord blk = kPersistent ? tiles.block(next / k_tiles) : blk0;""",
          """    int copy_kt = 0, copy_i = 0;
    tuned::BlockCoord copy_blk = blk0;
    auto copy_next = [&]() {
      const int s = next % kStages;
      const int kt = copy_kt;
      const tuned::BlockCoord blk = copy_blk;
      if (++copy_kt == k_tiles) { copy_kt = 0; if (++copy_i < tiles.mine) copy_blk = tiles.block(copy_i); }""")

builds = {}  # tag: (kernel, dir, tiling)
def add(tag, k, d, t=None):
    builds[tag] = (k, Path(d), t or tiling_from_config(cfg, k))
for k in ("fp16_wgmma", "fp16_wgmma_cluster", "int8_wgmma_cluster", "int4_wgmma_unpack_s8", "int4_wgmma_persistent"):
    add(k, k, "kernels")
d = variant("wg_noepi", [WG_EPI])
for k in ("fp16_wgmma", "fp16_wgmma_cluster", "int8_wgmma_cluster"):
    add(f"{k}_noepi", k, d)
add("int4_wgmma_unpack_s8_noepi", "int4_wgmma_unpack_s8", variant("i4_noepi", [I4_EPI]))
add("int4_wgmma_unpack_s8_nounpack", "int4_wgmma_unpack_s8", variant("i4_nounpack", [I4_NOUNPACK]))
d = variant("i4_inc", [I4_INC])
tp = tiling_from_config(cfg, "int4_wgmma_persistent")
add("int4_wgmma_persistent_inc", "int4_wgmma_persistent", d)
add("int4_wgmma_persistent_inc_s4", "int4_wgmma_persistent", d, dataclasses.replace(tp, stages=4, smem_bytes=4 * 40960 + 1024))
add("int4_wgmma_persistent_noepi", "int4_wgmma_persistent", variant("i4p_noepi", [I4_EPI]))

def b(tag):
    k, d, t = builds[tag]
    build_kernel(d / f"{k}.cu", k, "sm_90", t.defines(), W / f"{tag}.cubin", W / f"{tag}.json", W / f"{tag}.sass", W / f"{tag}.log")
    txt = (W / f"{tag}.log").read_text()
    return tag, bool(re.search(r"C751[125]", txt)), json.loads((W / f"{tag}.json").read_text())["registers"]
with ThreadPoolExecutor(8) as ex:
    info = list(ex.map(b, builds))
log("built", info)

recs = []
tags = list(builds)
for rnd in range(3):
    for tag in tags[rnd:] + tags[:rnd]:
        k, _, t = builds[tag]
        r = GemmRunner(W / f"{tag}.cubin", k, K[k]["precision"], t, 8192, 8192, 8192, 500 + rnd, tma=True)
        try:
            tm = r.time(10, 50)
        finally:
            r.close()
        rate = 2 * 8192**3 / tm.median_ns / 1e3
        recs.append({"tag": tag, "round": rnd, "median_ns": tm.median_ns, "rate": rate})
        log(tag, rnd, f"{rate:.1f}")
summary = {tag: statistics.median(x["rate"] for x in recs if x["tag"] == tag) for tag in tags}
(OUT / "bounds.json").write_text(json.dumps({"builds": info, "records": recs, "median_rate": summary}, indent=1))
for tag, v in summary.items():
    log(f"{tag:36s} {v:8.1f}")
