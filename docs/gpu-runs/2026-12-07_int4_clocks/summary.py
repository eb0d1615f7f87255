"""Reads clocks.npz and clocks.json of clocks.py (this folder) and prints, in SM cycles, where a K
tile's time goes in int4_wgmma_epi_tma at N = 8192: percentiles over the K tiles of CTAs 0-7 (the
first 256 K tiles each, 4 blocks of 64), leaving out each block's first two and last K tile, whose
stage release differs (the block's last stage is released after all its wgmma).

Names (per K tile t; P = a producer warp, C = a consumer warpgroup's warp 0):
- period: C's "INT8 B ready" of t minus that of t - 1 (the consumers' pace);
- P unpack: P's "released" minus P's "stage free" (load, convert, store, fence, arrive);
- P waits for the stage: P's "stage free" minus the later of P's "packed landed" and P's "released"
  of t - 1; P waits for the packed tile: P's "packed landed" minus P's "released" of t - 1;
- P spread: the last producer warp's "released" minus the first's, for t;
- C waits for B: C's "INT8 B ready" minus the later of C's "packed landed" of t and C's "previous
  wgmma complete" of t - 1 (an upper bound: it holds C's reads of A);
- C wakes after the last P: C's "INT8 B ready" minus the last producer warp's "released";
- stage release: the later consumer's "previous wgmma complete" of t + 1 (t's wgmma done, its stage
  released); P wakes after the release: P's "stage free" of t + 4 minus the release of t;
- stage held: the release of t minus the last producer warp's "released" of t;
- wgmma of t after B ready: the release of t minus the earlier consumer's "INT8 B ready" of t.
Then, per producer warp: the share of K tiles it released last (and the share where the last one is
the warp that issues the copy after that tile, K tile mod 4, as COPY_ROTATE does), and its unpack,
waits and release time against the mean of the four.
Run from the repository root: `python3 docs/gpu-runs/2026-12-07_int4_clocks/summary.py` (CLOCKS_DIR names
another folder holding the two files)."""
import json
import os
from pathlib import Path

import numpy as np

HERE = Path(os.environ.get("CLOCKS_DIR", Path(__file__).resolve().parent))
info = json.loads((HERE / "clocks.json").read_text())
print("GPU:", info["gpu"])
builds = info["builds"]
for tag, b in builds.items():
    r = b["rates_top_s"]
    rates = f"TOP/s median {np.median(r):.1f} over {len(r)} rounds ({', '.join(f'{x:.1f}' for x in r)})" if r else "not timed"
    print(f"{tag}: {b['kernel']} {' '.join(b['defines'])} check {'passed' if b['check_passed'] else 'FAILED'}, {rates}")




def ratio(a, b):  # median of the per-round ratios, or why there is none
    ra, rb = (builds.get(t, {}).get("rates_top_s", []) for t in (a, b))
    if not ra or len(ra) != len(rb):
        return f"{a} / {b}: no rounds of both"
    return f"{a} / {b} {np.median(np.array(ra) / np.array(rb)):.3f}"


PAIRS = (("clocks1", "clocks0"), ("clocks2", "clocks0"), ("rotate", "clocks0"), ("rotate", "int8_lag"),
         ("rotate_clocks2", "clocks0"), ("rotate_clocks2", "rotate"), ("wait_both", "clocks0"),
         ("clocks0", "int8_lag"), ("wait_both", "int8_lag"))
print("per-round medians:", ", ".join(ratio(a, b) for a, b in PAIRS if a in builds and b in builds))
if not (HERE / "clocks.npz").exists():
    raise SystemExit(f"{HERE / 'clocks.npz'}: no clocks recorded (the recording build failed its check or the call stopped)")

raw = np.load(HERE / "clocks.npz")["clocks"].astype(np.int64)  # [cta][t][row][event]
ctas, tiles = raw.shape[:2]
# 32-bit clocks: unwrap each CTA's records against its first, so that differences hold
x = np.empty_like(raw)
for c in range(ctas):
    first = raw[c, 0, 4, 0]
    x[c] = (raw[c] - first) % (1 << 32)
    x[c] = np.where(x[c] > (1 << 31), x[c] - (1 << 32), x[c])
P, C = x[:, :, :4, :], x[:, :, 4:, :]  # producer warps, consumer warpgroups
t = np.arange(tiles)
kt = (t + info.get("first_tile", 0)) % 64  # the K tile within its block (64 at N = 8192)
inner = (kt >= 2) & (kt <= 62)


def pct(name, v):
    v = np.asarray(v, float).ravel()
    v = v[np.isfinite(v)]
    print(f"  {name:<44} median {np.median(v):7.0f}  p10 {np.percentile(v, 10):7.0f}  p90 {np.percentile(v, 90):7.0f}"
          f"  mean {v.mean():7.0f}  (n={v.size})")


sel = inner[1:-4]
tt = t[1:-4]
last_p = P[:, :, :, 2].max(axis=2)       # [cta][t] the last producer warp's release
first_p = P[:, :, :, 2].min(axis=2)
release = C[:, 1:, :, 2].max(axis=2)     # [cta][t] for t = 0 .. tiles - 2: t's wgmma done (seen at t + 1)
print("Per K tile, SM cycles (tiles", int(sel.sum()), "a CTA):")
pct("period (consumer warpgroup 0)", np.diff(C[:, :, 0, 1], axis=1)[:, tt - 1][:, sel])
pct("P unpack", (P[:, :, :, 2] - P[:, :, :, 1])[:, tt][:, sel])
prev_done = P[:, :-1, :, 2]
pct("P waits for the packed tile", (P[:, 1:, :, 0] - prev_done)[:, tt - 1][:, sel])
pct("P waits for the stage", (P[:, 1:, :, 1] - np.maximum(P[:, 1:, :, 0], prev_done))[:, tt - 1][:, sel])
pct("P spread (last - first warp released)", (last_p - first_p)[:, tt][:, sel])
c_prev = C[:, :-1, :, 2]
pct("C waits for B (upper bound)", (C[:, 1:, :, 1] - np.maximum(C[:, 1:, :, 0], c_prev))[:, tt - 1][:, sel])
pct("C wakes after the last P", (C[:, :, :, 1] - last_p[:, :, None])[:, tt][:, sel])
pct("stage held (last P released -> stage released)", (release - last_p[:, :-1])[:, tt][:, sel])
pct("wgmma of t after B ready (first C)", (release - C[:, :-1, :, 1].min(axis=2))[:, tt][:, sel])
pct("P wakes after the release (t + 4)", (P[:, 4:, :, 1] - release[:, :-3, None])[:, tt][:, sel])
pct("consumers apart (C1 - C0, B ready)", (C[:, :, 1, 1] - C[:, :, 0, 1])[:, tt][:, sel])
# per producer warp: which one releases a K tile last, and where each one's time goes
last_w = P[:, :, :, 2].argmax(axis=2)[:, tt][:, sel]
print("last producer warp to release a K tile, share of tiles:",
      ", ".join(f"warp {w} {np.mean(last_w == w):.3f}" for w in range(4)))
abs_t = (tt + info.get("first_tile", 0))[sel]  # the CTA's K tile index of each column of last_w
print("last producer warp = the warp that issues the copy after that K tile (K tile mod 4), share:",
      f"{np.mean(last_w == abs_t[None, :] % 4):.3f}")
for w in range(4):
    print(f"producer warp {w}:")
    pct("  unpack", (P[:, :, w, 2] - P[:, :, w, 1])[:, tt][:, sel])
    pct("  waits for the packed tile", (P[:, 1:, w, 0] - prev_done[:, :, w])[:, tt - 1][:, sel])
    pct("  waits for the stage", (P[:, 1:, w, 1] - np.maximum(P[:, 1:, w, 0], prev_done[:, :, w]))[:, tt - 1][:, sel])
    pct("  released after the mean of the 4", (P[:, :, w, 2] - P[:, :, :, 2].mean(axis=2))[:, tt][:, sel])
