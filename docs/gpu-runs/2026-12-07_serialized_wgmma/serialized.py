"""Which timed INT4 development builds had their wgmma serialized by ptxas, read from the build logs
and SASS that the GPU calls sent back (their *_extra.tar.xz). Run from the repository root:

    python3 docs/gpu-runs/2026-12-07_serialized_wgmma/serialized.py

Per build: ptxas's advisory C7512 ("wgmma.mma_async instructions are serialized due to insufficient
register resources") in its log, the `WARPGROUP.DEPBAR.LE gsb0, 0x0` and `0x1` waits and the `IGMMA`
in its SASS, and the registers its consumer warpgroups ask for (`USETMAXREG.TRY_ALLOC`)."""
import re
import tarfile
from pathlib import Path

CALLS = ("docs/gpu-runs/2026-12-05_int4_unpack/dev3_extra.tar.xz",
         "docs/gpu-runs/2026-12-06_int4_b_global/dev9_extra.tar.xz",
         "docs/gpu-runs/2026-12-07_int4_alternate/dev10_extra.tar.xz")

for call in CALLS:
    with tarfile.open(call) as tar:
        files = {Path(m.name).name: tar.extractfile(m).read().decode(errors="replace") for m in tar.getmembers()
                 if m.isfile() and m.name.endswith((".sass", ".log"))}
    print(call)
    for name in sorted(f for f in files if f.startswith("i4") and f.endswith(".sass")):
        sass, log = files[name], files.get(name[:-5] + ".log", "")
        waits = re.findall(r"WARPGROUP\.DEPBAR\.LE gsb0, 0x(\d)", sass)
        alloc = re.findall(r"USETMAXREG\.TRY_ALLOC\.CTAPOOL \w+, (0x\w+)", sass)
        print(f"  {name[:-5]:14s} C7512 {'yes' if 'C7512' in log else 'no ':3s}  IGMMA {len(re.findall(r'IGMMA', sass)):2d}"
              f"  wait 0x0 {waits.count('0'):2d}  wait 0x1 {waits.count('1')}  consumer registers {int(alloc[0], 16) if alloc else '-'}")
