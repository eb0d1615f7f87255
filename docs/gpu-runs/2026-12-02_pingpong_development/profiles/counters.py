"""The counters and hot spots the README's profile section quotes (run from the repository root:
python docs/gpu-runs/2026-12-02_pingpong_development/profiles/counters.py): the INT8 ping-pong build in
clusters beside the registered int8_wgmma_cluster (profiled in docs/gpu-runs/2026-12-02_streamk_development/),
each report two launches, N = 4096 then 8192."""
import lzma
import tempfile
from pathlib import Path

import ncu_report
import pandas as pd

from analysis.reports.hotspots import hotspots_of
from analysis.reports.parse import parse_reports

RUNS = Path(__file__).resolve().parents[2]
REPORTS = {"registered": RUNS / "2026-12-02_streamk_development/profiles/int8_wgmma_cluster_registered.ncu-rep.xz",
           "pingpong": RUNS / "2026-12-02_pingpong_development/profiles/int8_wgmma_cluster_pingpong.ncu-rep.xz"}
N_OF_LAUNCH = {0: 4096, 1: 8192}
METRICS = ["gpu__time_duration.sum", "sm__cycles_active.avg", "smsp__inst_executed.sum", "dram__bytes_read.sum",
           "l1tex__m_xbar2l1tex_read_bytes.sum", "lts__t_sector_hit_rate.pct"]

if __name__ == "__main__":
    pd.set_option("display.width", 200)
    pd.set_option("display.max_colwidth", 100)
    rows = []
    for tag, path in REPORTS.items():
        got = parse_reports([path])
        got.raise_errors(path.name)
        m = pd.concat(got.metrics, ignore_index=True)
        rows.append(m[m.metric.isin(METRICS)].assign(build=tag, N=lambda d: d.launch.map(N_OF_LAUNCH)))
        with tempfile.TemporaryDirectory() as tmp:
            plain = Path(tmp) / path.name.removesuffix(".xz")
            plain.write_bytes(lzma.decompress(path.read_bytes()))
            rng = ncu_report.load_report(str(plain)).range_by_idx(0)
            hot = hotspots_of(plain, [(1, rng, rng.action_by_idx(1))], top=4)
            print(f"{tag}, N = 8192, top SASS by warp samples:")
            print(hot[["rank", "sass", "samples", "samples_share", "reasons"]].to_string(index=False))
    table = pd.concat(rows).pivot_table(index="metric", columns=["N", "build"], values="value")
    print(table.to_string(float_format=lambda v: f"{v:,.1f}"))
