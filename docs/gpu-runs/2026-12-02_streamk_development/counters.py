"""The counters and warp samples the README quotes, from the two reports in profiles/ (run from the
repository root: python docs/gpu-runs/2026-12-02_streamk_development/counters.py). Each report holds
two launches of int8_wgmma_cluster, N = 4096 then 8192 (skprof.py)."""
import collections
import lzma
import tempfile
from pathlib import Path

import ncu_report
import pandas as pd

from analysis.reports.parse import parse_reports

HERE = Path(__file__).resolve().parent / "profiles"
REPORTS = {"registered": "int8_wgmma_cluster_registered", "stream_k": "int8_wgmma_cluster_stream_k"}
N_OF_LAUNCH = {0: 4096, 1: 8192}
METRICS = ["gpu__time_duration.sum", "sm__cycles_active.avg", "sm__cycles_elapsed.avg.per_second",
           "smsp__inst_executed.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"]
#: SASS whose warp samples the README counts: the fixup's wait (32-bit acquire load), its loads of C,
#: the consumers' named barrier, and the read of the CTA's shared-memory window in the loops' address arithmetic
SASS = ("LDG.E.STRONG.GPU ", "LDG.E.64.STRONG.GPU", "BAR.SYNC", "SR_CgaCtaId")

if __name__ == "__main__":
    rows = []
    for tag, stem in REPORTS.items():
        got = parse_reports([HERE / f"{stem}.ncu-rep.xz"])
        got.raise_errors(stem)
        m = pd.concat(got.metrics, ignore_index=True)
        m = m[m.metric.isin(METRICS)].assign(build=tag, N=lambda d: d.launch.map(N_OF_LAUNCH))
        rows.append(m[["build", "N", "metric", "value"]])
        with tempfile.TemporaryDirectory() as tmp:
            plain = Path(tmp) / f"{stem}.ncu-rep"
            plain.write_bytes(lzma.decompress((HERE / f"{stem}.ncu-rep.xz").read_bytes()))
            rng = ncu_report.load_report(str(plain)).range_by_idx(0)
            for launch in range(rng.num_actions()):
                action = rng.action_by_idx(launch)
                samples = action.metric_by_name("smsp__pcsamp_sample_count")
                ids = samples.correlation_ids()
                by = collections.Counter()
                total = 0
                for i in range(samples.num_instances()):
                    sass = action.sass_by_pc(int(ids.value(i))) + " "
                    total += samples.value(i)
                    for key in SASS:
                        if key in sass:
                            by[key.strip()] += samples.value(i)
                print(f"{tag} N={N_OF_LAUNCH[launch]}: {total:.0f} warp samples;",
                      ", ".join(f"{k} {by.get(k.strip(), 0):.0f}" for k in SASS))
    table = pd.concat(rows).pivot_table(index="metric", columns=["N", "build"], values="value")
    print(table.to_string(float_format=lambda v: f"{v:,.0f}"))
