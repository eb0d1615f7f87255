"""The import check (analysis.reports.importing.check_sources) of two versions of the module,
alternating, on the foreign reports: the 56 into a new set, and 28 into a set that holds the
other 28. Usage: git show REV:analysis/reports/importing.py > /tmp/old.py;
python docs/import-check/check_sources_timing.py /tmp/old.py (numbers: docs/benchmarks.md)."""
import importlib.util, shutil, sys, time, tempfile
from pathlib import Path
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path); m = importlib.util.module_from_spec(spec)
    sys.modules[name] = m; spec.loader.exec_module(m); return m
old = load(sys.argv[1], "importing_old")
import analysis.reports.importing as new
src = Path(__file__).resolve().parents[2].parent / "shared" / "foreign-reports"  # beside the repository
tmp = Path(tempfile.mkdtemp())
files = sorted(src.glob("*.ncu-rep.xz"))
(tmp / "first").mkdir(); (tmp / "second").mkdir(); (tmp / "set" / "reports").mkdir(parents=True)
for f in files[:28]: shutil.copy(f, tmp / "first" / f.name)
for f in files[28:]: shutil.copy(f, tmp / "second" / f.name)
plan1 = new.import_plan(tmp / "first")
for stem, p in plan1.items(): shutil.copy(p, tmp / "set" / "reports" / f"{stem}.ncu-rep.xz")
new.write_import_record(plan1, tmp / "set" / "imported.csv")
if __name__ == "__main__":
    for label, mod in (("before", old), ("after", new), ("before", old), ("after", new), ("before", old), ("after", new)):
        t = time.perf_counter(); mod.check_sources(mod.import_plan(src)); a = time.perf_counter() - t
        t = time.perf_counter(); mod.check_sources(mod.import_plan(tmp / "second"), tmp / "set"); b = time.perf_counter() - t
        print(f"{label}: 56 into a new set {a:.2f} s; 28 into a set of 28 {b:.2f} s", flush=True)
