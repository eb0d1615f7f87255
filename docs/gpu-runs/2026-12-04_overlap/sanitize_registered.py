"""compute-sanitizer memcheck and racecheck of every registered TMA kernel, with the command the
workflow's rule sanitize_kernel runs (analysis.gpu.harness.command in check-time mode, the
registry's tiling and options, config sanitize n, `--error-exitcode 1`). Run on an sm_90 GPU
from the repository root, files into $OUT. It checks the harness's fix of 2026-12-04: C's tensor
map is written only where the cubin defines its global (analysis.gpu.harness.cubin_globals), so a
registered kernel makes no failing cuModuleGetGlobal call, which memcheck reports as an error."""
import json, os, subprocess, sys, time
from pathlib import Path
import yaml
sys.path.insert(0, os.getcwd())
from analysis.gpu.build import build_kernel
from analysis.gpu.config import tiling_from_config
from analysis.gpu.harness import command
from analysis.tools import find_tool
from analysis.workflow import kernel_options

CFG = yaml.safe_load(open("config/config.yaml"))
OUT, W = Path(os.environ["OUT"]), Path("/tmp/wsan")
W.mkdir(exist_ok=True)
n = CFG["sanitize"]["n"]
san = str(find_tool("compute-sanitizer"))
res = []
for kernel, spec in CFG["kernels"].items():
    if not spec.get("tma"):
        continue
    t = tiling_from_config(CFG, kernel)
    build_kernel(Path("kernels") / f"{kernel}.cu", kernel, "sm_90", t.defines(), W / f"{kernel}.cubin",
                 W / f"{kernel}.json", W / f"{kernel}.sass", W / f"{kernel}.log")
    for tool in ("memcheck", "racecheck"):
        cmd = [san, "--tool", tool, "--error-exitcode", "1",
               *command("check-time", W / f"{kernel}.cubin", kernel, spec["precision"], n, t, warmups=0, repeats=1,
                        out=W / f"{kernel}_{tool}.json", **kernel_options(spec))]
        t0 = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        res.append({"kernel": kernel, "tool": tool, "n": n, "rc": p.returncode, "wall_s": round(time.time() - t0, 1),
                    "summary": [l for l in (p.stdout + p.stderr).splitlines() if "SUMMARY" in l],
                    "tail": (p.stdout + p.stderr)[-400:]})
        print(kernel, tool, p.returncode, res[-1]["summary"], flush=True)
        (OUT / "sanitize_registered.json").write_text(json.dumps(res, indent=1))
