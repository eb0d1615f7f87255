"""Counters of the profiles a development call brought back (a tar.xz of .ncu-rep files), one
row per profiled launch, read with ncu_report. Run from the repository root:
`python docs/gpu-runs/2026-12-03_wide_stores/counters.py [PROFILES.tar.xz]` (default: this
folder's wide_profiles.tar.xz: the three vendor GEMMs and the five builds, N = 8192)."""
import sys
import tarfile
import tempfile
from pathlib import Path

import ncu_report
import pandas as pd

METRICS = {
    "gpu__time_duration.sum": "ns",
    "sm__cycles_elapsed.avg.per_second": "SM clock (Hz)",
    "launch__grid_size": "CTAs",
    "launch__cluster_size": "cluster",
    "launch__cluster_max_active": "max active clusters",
    "launch__shared_mem_per_block_dynamic": "dynamic smem (byte)",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": "tensor pipe, % of active",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed": "tensor pipe, % of elapsed",
    "dram__bytes_read.sum": "DRAM read (byte)",
    "dram__bytes_write.sum": "DRAM write (byte)",
    "l1tex__m_xbar2l1tex_read_bytes.sum": "L2 to SM (byte)",
    "lts__t_sectors_srcunit_tex_op_read.sum": "L2 read sectors",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "smem store wavefronts",
    "smsp__inst_executed.sum": "instructions",
}


def rows(tar_path: Path) -> pd.DataFrame:
    out = []
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(tar_path) as tar:
        tar.extractall(tmp, filter="data")
        for rep in sorted(Path(tmp).glob("*.ncu-rep")):
            ctx = ncu_report.load_report(str(rep))
            for ri in range(ctx.num_ranges()):
                rng = ctx.range_by_idx(ri)
                for ai in range(rng.num_actions()):
                    a = rng.action_by_idx(ai)
                    names = set(a.metric_names())
                    row = {"report": rep.stem.removeprefix("prof_"), "kernel": a.name(),
                           "mangled": a.name(ncu_report.IAction.NameBase_MANGLED)}
                    for m in METRICS:
                        row[m] = a.metric_by_name(m).as_double() if m in names else float("nan")
                    out.append(row)
    return pd.DataFrame(out)


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    table = rows(Path(sys.argv[1]) if len(sys.argv) > 1 else here / "wide_profiles.tar.xz")
    with pd.option_context("display.width", 250, "display.max_columns", 30, "display.float_format", "{:.4g}".format):
        print(table.drop(columns="mangled").set_index(["report", "kernel"]).T.to_string())
        print("\n" + table[["report", "kernel", "mangled"]].to_string(index=False))
