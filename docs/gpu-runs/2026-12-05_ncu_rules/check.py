"""Where a profile job's time goes, and whether ncu's guided-analysis rules can be applied
after profiling: for int8_wgmma_serpentine and int4_ptx_mma_k64 at N = 512..8192 (one ncu
process each, as the profile rule runs it), ncu --set full as is and with --apply-rules no,
then ncu --import of the rule-less report with --apply-rules yes --export; metrics and
findings of the three compared. Also: the new fp16_wgmma_serpentine checked and timed at
every N. Files into $OUT."""
import json, os, subprocess, sys, time
from pathlib import Path
import yaml

from analysis.gpu.build import build_kernel
from analysis.gpu.config import kernel_options, tiling_from_config
from analysis.gpu.harness import command as harness_command
from analysis.gpu.profile import ncu_command
from analysis.tools import find_tool

OUT = Path(os.environ["OUT"])
W = Path("/tmp/rules"); W.mkdir(exist_ok=True)
CFG = yaml.safe_load(open("config/config.yaml"))
NCU = find_tool("ncu")
SIZES = [512, 1024, 2048, 4096, 8192]
res = {"ncu": subprocess.run([str(NCU), "--version"], capture_output=True, text=True).stdout.strip(), "runs": []}


def build(kernel):
    spec = CFG["kernels"][kernel]
    archs = spec.get("archs", ["sm_90"])
    arch = "sm_90" if "sm_90" in archs else archs[-1]
    t0 = time.time()
    build_kernel(Path("kernels") / f"{kernel}.cu", kernel, arch, tiling_from_config(CFG, kernel).defines(),
                 W / f"{kernel}.cubin", W / f"{kernel}.json", W / f"{kernel}.sass", W / f"{kernel}.log")
    print(kernel, "built", f"{time.time() - t0:.1f} s", flush=True)


def timed(what, cmd):
    """Run cmd, stamping each output line with seconds since the start."""
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = [f"{time.time() - t0:7.2f} {ln.rstrip()}" for ln in p.stdout]
    rc = p.wait()
    wall = time.time() - t0
    res["runs"].append({"what": what, "wall_s": round(wall, 2), "rc": rc,
                        "stamped": [ln for ln in lines if "==PROF==" in ln or " as is " in ln or "passed" in ln
                                    or "ERROR" in ln or "WARN" in ln][:60]})
    print(f"{what}: rc={rc} {wall:.2f} s", flush=True)
    if rc:
        print("\n".join(lines[-30:]), flush=True)
    return rc


def prog(kernel, sizes):
    spec = CFG["kernels"][kernel]
    return harness_command("profile", W / f"{kernel}.cubin", kernel, spec["precision"], sizes,
                           tiling_from_config(CFG, kernel), warmups=3, **kernel_options(spec))


# the new kernel: check and time at every N (what check_time runs)
build("fp16_wgmma_serpentine")
spec = CFG["kernels"]["fp16_wgmma_serpentine"]
timed("fp16_wgmma_serpentine check-time 5 N",
      harness_command("check-time", W / "fp16_wgmma_serpentine.cubin", "fp16_wgmma_serpentine", "fp16", SIZES,
                      tiling_from_config(CFG, "fp16_wgmma_serpentine"), out=str(OUT / "fp16_wgmma_serpentine_n{n}.json"),
                      **kernel_options(spec)))

for kernel in ("int8_wgmma_serpentine", "int4_ptx_mma_k64"):
    build(kernel)
    base = [str(NCU), *ncu_command(NCU, "full", kernel, 5, W / f"{kernel}_as_is")[1:]]
    timed(f"{kernel} full 5 N as is", base + prog(kernel, SIZES))
    nr = [str(NCU), "--apply-rules", "no", *ncu_command(NCU, "full", kernel, 5, W / f"{kernel}_norules")[1:]]
    timed(f"{kernel} full 5 N --apply-rules no", nr + prog(kernel, SIZES))
    timed(f"{kernel} import --apply-rules yes --export",
          [str(NCU), "--import", str(W / f"{kernel}_norules.ncu-rep"), "--apply-rules", "yes",
           "--export", str(W / f"{kernel}_reapplied"), "--force-overwrite"])
    if kernel.startswith("int4"):
        for n in (512, 8192):
            c = [str(NCU), *ncu_command(NCU, "full", kernel, 1, W / f"{kernel}_n{n}")[1:]]
            timed(f"{kernel} full N={n} only", c + prog(kernel, [n]))
        c = [str(NCU), "--section", "SourceCounters", "--clock-control", "none", "--profile-from-start", "off",
             "--kernel-name", kernel, "--launch-count", "5", "--force-overwrite", "--export", str(W / f"{kernel}_src")]
        timed(f"{kernel} SourceCounters only 5 N", c + prog(kernel, SIZES))

# compare in a fresh process: metrics (tidy tables) and findings of each report
cmp_code = r'''
import json, sys, pandas as pd
import analysis
from analysis.reports.findings import load_findings
out = {}
for k in sys.argv[1:]:
    reps = {v: f"/tmp/rules/{k}_{v}.ncu-rep" for v in ("as_is", "norules", "reapplied")}
    t = {}; f = {}
    for v, p in reps.items():
        try:
            t[v] = analysis.load_report(p, expect_launches=5)
            f[v] = load_findings(p)
        except Exception as e:
            out[f"{k}_{v}"] = f"error: {e!r}"
    d = {}
    if "norules" in t and "reapplied" in t:
        cols = [c for c in t["norules"].columns if c != "report"]
        a = t["norules"][cols].reset_index(drop=True); b = t["reapplied"][cols].reset_index(drop=True)
        d["metrics_norules_equal_reapplied"] = bool(a.equals(b))
        d["metric_rows"] = [len(a), len(b), len(t["as_is"])]
    for v in f:
        d[f"findings_{v}"] = len(f[v])
    if "as_is" in f and "reapplied" in f:
        key = ["launch", "rule", "name", "kind"]
        a = f["as_is"][key].sort_values(key).reset_index(drop=True)
        b = f["reapplied"][key].sort_values(key).reset_index(drop=True)
        d["findings_rules_equal"] = bool(a.equals(b))
        d["findings_as_is_rules"] = sorted(set(f["as_is"]["rule"]))
        d["findings_reapplied_rules"] = sorted(set(f["reapplied"]["rule"]))
        m = f["as_is"].merge(f["reapplied"], on=["launch", "rule", "name"], suffixes=("_a", "_r"))
        d["speedup_pct_as_is_vs_reapplied"] = m[["launch", "rule", "speedup_pct_a", "speedup_pct_r"]].head(40).values.tolist()
    out[k] = d
print(json.dumps(out, indent=1, default=str))
'''
r = subprocess.run([sys.executable, "-c", cmp_code, "int8_wgmma_serpentine", "int4_ptx_mma_k64"],
                   capture_output=True, text=True)
print(r.stdout[-6000:], r.stderr[-3000:], flush=True)
res["compare"] = r.stdout
(OUT / "rules.json").write_text(json.dumps(res, indent=1))
subprocess.run(f"cd /tmp/rules && tar -cJf {OUT}/reports.tar.xz *.ncu-rep *.sass *.log", shell=True)
