"""Is the epilogue's cost within each SM or shared among them? int8_wgmma_cluster as registered,
N = 8192, on persistent grids sized for 132, 66, 34 and 16 SMs (the harness's SM count lowered,
so 132-16 CTAs each loop over 15.5-128 blocks of C). If the C stores of all CTAs at once contend
for something they share (L2, the crossbar, DRAM), the tensor pipe's idle share of active cycles
shrinks as fewer CTAs store together; if the cost is inside each SM it stays.

`python sms.py` (on an sm_90 GPU, from the repository root, files into $OUT): builds, checks
(256 sampled rows) and event-times each grid (10 warm-ups, 20 launches), then one ncu process
(clock control none) profiles one launch per grid; `python sms.py profile` is what ncu runs."""
import json, os, subprocess, sys
from pathlib import Path
import numpy as np
import yaml
sys.path.insert(0, os.getcwd())
from analysis.gpu.build import build_kernel
from analysis.gpu.config import tiling_from_config
from analysis.gpu.harness import make_inputs, sample_rows
from analysis.gpu.harness.runner import GemmRunner
from analysis.precision import gemm_ops, precision_of
from analysis.tools import find_tool

K = "int8_wgmma_cluster"
CFG = yaml.safe_load(open("config/config.yaml"))
T = tiling_from_config(CFG, K)
W = Path("/tmp/wsms"); W.mkdir(exist_ok=True)
SMS = (132, 66, 34, 16)
N = 8192


def runner(sms, inputs):
    run = GemmRunner(W / "k.cubin", K, "int8", T, N, N, N, 7, tma=True, inputs=inputs)
    run.sms = sms
    return run


inputs = make_inputs(precision_of("int8"), N, N, N, np.random.default_rng(5))
if len(sys.argv) > 1:  # profile
    from cuda.bindings import driver as cu
    for sms in SMS:
        run = runner(sms, inputs)
        run.launch(); run.sync()
        cu.cuProfilerStart(); run.launch(); run.sync(); cu.cuProfilerStop()
        run.close()
    sys.exit(0)
OUT = Path(os.environ["OUT"])
build_kernel(Path("kernels") / f"{K}.cu", K, "sm_90", T.defines(), W / "k.cubin", W / "k.json", W / "k.sass", W / "k.log")
res = []
for sms in SMS:
    run = runner(sms, inputs)
    chk = run.check(sample_rows(N, 256, np.random.default_rng(3)))
    tim = run.time(10, 20)
    grid = T.grid(N, N, sms)
    run.close()
    res.append({"sms": sms, "ctas": grid[1], "passed": bool(chk.passed), "median_ns": tim.median_ns,
                "rate": gemm_ops(N, N, N) / tim.median_ns / 1e3})
    print(res[-1], flush=True)
(OUT / "sms_rounds.json").write_text(json.dumps(res, indent=1))
ncu = str(find_tool("ncu"))
M = ("gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,"
     "sm__cycles_active.max,sm__cycles_active.sum,lts__t_sectors_srcunit_tex_op_write.sum,dram__bytes_read.sum,"
     "lts__throughput.avg.pct_of_peak_sustained_elapsed")
cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--metrics", M, "--force-overwrite", "--export",
       str(W / "sms"), sys.executable, str(Path(__file__).resolve()), "profile"]
p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
print("ncu", p.returncode, p.stdout[-1500:], p.stderr[-1500:])
q = subprocess.run([ncu, "--import", str(W / "sms.ncu-rep"), "--csv", "--page", "raw", "--metrics", M],
                   capture_output=True, text=True)
(OUT / "sms_ncu.csv").write_text(q.stdout)
