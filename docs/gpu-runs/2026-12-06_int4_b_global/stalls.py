"""Where the warps of the two `--set full` launches of dev9 waited: i4_tma4 (launch 0, the
registered int4_wgmma_epi_tma) and i4_g2_tma4 (launch 1, B_GLOBAL=2). Prints:
- a few whole-launch counters;
- each launch's 12 SASS instructions with the most PC samples, with their line of
  kernels/int4_wgmma.cuh as it was built (2 lines lower in the file since) and the samples by stall
  reason (analysis.reports.hotspots);
- the shared-memory wavefronts of each SASS opcode against their ideal count (the Source Counters'
  per-instruction `memory_l1_wavefronts_shared` and `memory_l1_wavefronts_shared_ideal`);
- each launch's PC samples summed by SASS opcode (the six largest shares);
- the warp-level executions of the producer's `LDS.128` and `STS.128` (`inst_executed`) and their
  threads per execution (`thread_inst_executed` / `inst_executed`; 32 for whole warps).
Run from the repository root: `python3 docs/gpu-runs/2026-12-06_int4_b_global/stalls.py`.
DEV_DIR=folder and DEV_SET=alternate read the `--set full` launches of dev10 (i4_tma4, then
i4_alt_tma4: PRODUCER_ALTERNATE) in that folder instead, and DEV_SET=syncwarp those of dev11 (i4_tma4,
i4_sw_tma4: PRODUCER_SYNCWARP, i4_g1_tma4: B_GLOBAL=1 with the wgmma asynchronous), and DEV_SET=cluster
those of dev12 (i4_tma4, i4_cl_tma4: CLUSTER_M=2):
`DEV_DIR=docs/gpu-runs/2026-12-07_int4_alternate DEV_SET=alternate python3 docs/gpu-runs/2026-12-06_int4_b_global/stalls.py`."""
import collections
import os
from pathlib import Path

import pandas as pd

from analysis.reports.hotspots import hotspots_of
from analysis.reports.ncu.files import _plain_report
from analysis.reports.ncu.launches import _actions, _open

HERE = Path(os.environ.get("DEV_DIR", Path(__file__).resolve().parent))
# dev.py's FULL for each DEV_SET, in launch order, and its files' prefix
BUILDS, PREFIX = {"alternate": (("i4_tma4", "i4_alt_tma4"), "dev10"),
                  "syncwarp": (("i4_tma4", "i4_sw_tma4", "i4_g1_tma4"), "dev11"),
                  "cluster": (("i4_tma4", "i4_cl_tma4"), "dev12")}.get(os.environ.get("DEV_SET", ""),
                                                                     (("i4_tma4", "i4_g2_tma4"), "dev9"))
COUNTERS = ["gpu__time_duration.sum", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
            "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
            "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
            "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"]


def opcode(sass: str) -> str:
    """The SASS instruction's opcode with its modifiers, its predicate (``@!P0``) dropped."""
    words = sass.split()
    return words[1] if words[0].startswith("@") else words[0]


def by_opcode(action, name: str) -> collections.Counter:
    """The per-instruction metric `name` of a launch (an ``ncu_report`` action), summed by opcode."""
    m = action.metric_by_name(name)
    ids = m.correlation_ids()
    out = collections.Counter()
    for j in range(m.num_instances()):
        out[opcode(action.sass_by_pc(int(ids.value(j))))] += m.value(j)
    return out


rep = HERE / f"{PREFIX}_full.ncu-rep.xz"
with _plain_report(rep) as plain:
    actions = list(_actions(_open(rep, plain)))
    for i, _, a in actions:
        print(f"launch {i} ({BUILDS[i]}): " + ", ".join(f"{m} {a[m].as_double():,.3f}" for m in COUNTERS))
    # every sampled instruction of each launch, ranked (1 = most samples)
    every = hotspots_of(rep, actions, top=100_000)
    for i, _, a in actions:
        real, ideal = by_opcode(a, "memory_l1_wavefronts_shared"), by_opcode(a, "memory_l1_wavefronts_shared_ideal")
        # warp-level executions of the producer's unpacking instructions and their threads: a warp whose
        # threads left a try_wait loop at different rounds runs them in several passes (fewer threads each)
        passes, threads = by_opcode(a, "inst_executed"), by_opcode(a, "thread_inst_executed")
        passes = {op: passes[op] for op in ("LDS.128", "STS.128") if op in passes}
        print(f"launch {i} ({BUILDS[i]}) warp-level executions (threads per execution): "
              + ", ".join(f"{op} {passes[op]:,.0f} ({threads[op] / passes[op]:.2f})" for op in sorted(passes)))
        print(f"launch {i} ({BUILDS[i]}) shared-memory wavefronts by opcode (ideal): "
              + ", ".join(f"{op} {real[op]:,.0f} ({ideal[op]:,.0f})" for op, _ in real.most_common()))
# the samples summed by SASS opcode (predicate dropped): the share of each launch's PC samples on
# WARPGROUP.DEPBAR (the consumers waiting for their own wgmma), BRA (the mbarrier try_wait loops) ...
every["opcode"] = every["sass"].map(opcode)
for i, _, _ in actions:
    by_op = every[every["launch"] == i].groupby("opcode")["samples_share"].sum().sort_values(ascending=False)
    print(f"launch {i} ({BUILDS[i]}) PC samples by opcode: "
          + ", ".join(f"{op} {share:.1%}" for op, share in by_op.head(6).items()))
pd.set_option("display.width", 250)
pd.set_option("display.max_colwidth", 100)
print(every[every["rank"] <= 12][["launch", "rank", "sass", "line", "samples_share", "reasons"]].to_string(index=False))
