"""GPU check of the reader change of 2026-12-05: profile_kernel (which counts the profiled
launches through analysis.nsight.load_report now) on int8_wmma and int8_wgmma_serpentine at
N = 512 and 1024, then load_report of each report in this process, after this process used
ncu_report itself (the outside-use path) and in a fresh one (the usual path): the tables must be
equal. Files into $OUT."""
import os, subprocess, sys, time
from pathlib import Path
import yaml

from analysis.gpu.build import build_kernel
from analysis.gpu.config import kernel_options, tiling_from_config
from analysis.gpu.profile import profile_kernel
from analysis.tools import find_tool

OUT = Path(os.environ["OUT"])
W = Path("/tmp/pc"); W.mkdir(exist_ok=True)
CFG = yaml.safe_load(open("config/config.yaml"))
ncu = find_tool("ncu")
for kernel in ("int8_wmma", "int8_wgmma_serpentine"):
    spec = CFG["kernels"][kernel]
    t0 = time.time()
    archs = spec.get("archs", ["sm_90"])
    arch = "sm_90" if "sm_90" in archs else archs[-1]
    build_kernel(Path("kernels") / f"{kernel}.cu", kernel, arch, tiling_from_config(CFG, kernel).defines(),
                 W / f"{kernel}.cubin", W / f"{kernel}.json", W / f"{kernel}.sass", W / f"{kernel}.log")
    opts = kernel_options(spec)
    report = OUT / f"{kernel}_n512-1024.ncu-rep.xz"
    profile_kernel(W / f"{kernel}.cubin", kernel, spec["precision"], [512, 1024], tiling_from_config(CFG, kernel),
                   report, ncu=ncu, options=opts)
    print(kernel, "profiled", f"{time.time() - t0:.1f} s", report.stat().st_size, flush=True)
code = ("import sys, ncu_report\nimport analysis\n"
        "if sys.argv[1] == 'outside':\n"
        "    import lzma, tempfile, os\n"
        "    d = tempfile.mkdtemp(); q = os.path.join(d, 'x.ncu-rep')\n"
        "    open(q, 'wb').write(lzma.open('tests/data/add_basic.ncu-rep.xz').read())\n"
        "    a = ncu_report.load_report(q).range_by_idx(0).action_by_idx(0)\n"
        "    [a.metric_by_name(n).metric_type() for n in a.metric_names()]\n"
        "for p in sys.argv[3:]:\n"
        "    t = analysis.load_report(p, expect_launches=1)\n"
        "    t.to_parquet(sys.argv[2] + '/' + os.path.basename(p) + '.parquet')\n"
        "    print(p, len(t), t['metric_type'].value_counts().to_dict())\n")
reports = sorted(str(p) for p in OUT.glob("*.ncu-rep.xz"))
for mode in ("fresh", "outside"):
    d = W / mode; d.mkdir(exist_ok=True)
    r = subprocess.run([sys.executable, "-c", "import os\n" + code, mode, str(d), *reports], capture_output=True, text=True)
    print(mode, r.returncode, r.stdout, r.stderr[-1500:], flush=True)
import pandas as pd
for p in reports:
    a = pd.read_parquet(W / "fresh" / (os.path.basename(p) + ".parquet"))
    b = pd.read_parquet(W / "outside" / (os.path.basename(p) + ".parquet"))
    print(os.path.basename(p), "equal" if a.equals(b) else "DIFFER", len(a))
