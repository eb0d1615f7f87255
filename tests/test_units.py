"""Units and metric types of a report do not depend on what was read before it.

ncu_report's ``IMetric.unit()`` of some metrics takes the unit of metrics asked for before
it, and after a report of another GPU chip ``metric_type()`` and ``unit()`` follow that
chip's metric definitions (docs/robustness.md, fault 6). Every scenario here runs in a
fresh Python process of its own, as a user's script would, so that what this test
session read before cannot change it. Real reports of ../shared/foreign-reports
(provenance in its INDEX.tsv) and of tests/data.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from analysis.compare.diff import compare_sets
from analysis.reports.tables import set_table

REPO = Path(__file__).resolve().parents[1]

#: armleth/cuda-mlp-inference report.ncu-rep: Tesla T4, ncu 2024.2.1, one launch.
T4 = "armleth__cuda-mlp-inference__report__b4d31e9a"
#: iamcoleman/monte-carlo-pi profile.ncu-rep: GeForce RTX 3080, ncu 2020.2.1, two launches.
RTX3080 = "iamcoleman__monte-carlo-pi__profile__452bfd7f"
#: bautista-garcia/heat_sim: GeForce GTX 1650, ncu 2021.3.1; two reports of one program
#: (41 and 4 launches) sharing the kernels mantener_fuentes_de_calor and reduction_kernel.
HEAT_A = "bautista-garcia__heat_sim__profile__41001a03"
HEAT_B = "bautista-garcia__heat_sim__report_name__74ef3945"
#: tests/data/add_basic: NVIDIA H200, ncu 2025.3.1 (tests/data/README.md).
H200 = REPO / "tests" / "data" / "add_basic.ncu-rep.xz"

COLUMNS = ["launch", "metric", "unit", "metric_type", "value", "value_str"]

_LOOP = textwrap.dedent("""
    import sys
    from analysis.reports.ncu import load_report
    out, *paths = sys.argv[1:]
    for i, p in enumerate(paths):
        load_report(p).to_parquet(f"{out}/{i}.parquet", index=False)
""")

_ALONE = textwrap.dedent("""
    # The unit ncu_report gives each metric when it is the first unit its process asks
    # for: the report is loaded and its values read here (no unit, no metric type), then
    # a child is forked per metric and asks for that metric's unit only. ncu_report alone,
    # independent of the reader under test.
    import json, lzma, os, shutil, sys, tempfile
    import ncu_report
    src, metrics = sys.argv[1], json.loads(sys.argv[2])
    tmp = tempfile.mkdtemp()
    plain = os.path.join(tmp, "report.ncu-rep")
    with lzma.open(src) as fin, open(plain, "wb") as fout:
        shutil.copyfileobj(fin, fout)
    ctx = ncu_report.load_report(plain)
    action = ctx.range_by_idx(0).action_by_idx(0)
    for name in action.metric_names():
        m = action.metric_by_name(name)
        if m.has_value() and m.kind() != m.ValueKind_STRING:
            m.as_double()
    out = {}
    for name in metrics:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            os.write(w, action.metric_by_name(name).unit().encode())
            os._exit(0)
        os.close(w)
        chunks = []
        while chunk := os.read(r, 4096):
            chunks.append(chunk)
        os.close(r)
        os.waitpid(pid, 0)
        out[name] = b"".join(chunks).decode()
    shutil.rmtree(tmp)
    print(json.dumps(out))
""")


_OUTSIDE = textwrap.dedent("""
    # A user's script: ncu_report used directly on another GPU's report (values, metric
    # types and units of every metric of its first launch), then the package's reader.
    import lzma, os, shutil, sys, tempfile
    when, out, foreign, ours = sys.argv[1:]
    if when == "before":
        import ncu_report
        load = ncu_report.load_report
    import analysis.reports.ncu as reader
    if when == "after":
        import ncu_report
        load = ncu_report.load_report
    elif when == "from-import":
        from ncu_report import load_report as load
    elif when == "reload":  # gives ncu_report.load_report back its own code
        import importlib
        import ncu_report
        importlib.reload(ncu_report)
        load = ncu_report.load_report
    elif when == "imported-again":  # as autoreload tools do: a new module and native copy
        for name in [m for m in sys.modules if m == "ncu_report" or m.startswith("ncu_report.")]:
            del sys.modules[name]
        import ncu_report
        load = ncu_report.load_report
    tmp = tempfile.mkdtemp()
    plain = os.path.join(tmp, "report.ncu-rep")
    with lzma.open(foreign) as fin, open(plain, "wb") as fout:
        shutil.copyfileobj(fin, fout)
    action = load(plain).range_by_idx(0).action_by_idx(0)
    for name in action.metric_names():
        m = action.metric_by_name(name)
        if m.has_value() and m.kind() != m.ValueKind_STRING:
            m.as_double()
        m.metric_type(), m.unit()
    shutil.rmtree(tmp)
    reader.load_report(ours).to_parquet(out, index=False)
""")


def _run(code: str, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def _one_process(paths: list[Path], tmp: Path) -> list[pd.DataFrame]:
    """``load_report`` of each of ``paths``, in this order, in one fresh process."""
    tmp.mkdir(parents=True, exist_ok=True)
    _run(_LOOP, str(tmp), *map(str, paths))
    return [pd.read_parquet(tmp / f"{i}.parquet") for i in range(len(paths))]


def _attrs(table: pd.DataFrame) -> pd.DataFrame:
    return table[COLUMNS].sort_values(["launch", "metric"]).reset_index(drop=True)


@pytest.mark.parametrize("stem", [T4, RTX3080])
def test_each_metric_gets_the_unit_it_has_when_asked_for_alone(foreign_dir, tmp_path, stem):
    """Read sorted by name, the T4 report stored ``thread`` for the predicated-on FMA
    instruction counts (derived__*_pred_on_x2, a metric asked for before them has unit
    thread), ``inst`` for the warp samples smsp__pcsamp_warps_issue_stalled_no_instructions
    and ``sector`` for the percentage lts__average_gcomp_input_sector_success_rate.pct;
    the RTX 3080 report ``inst`` for those warp samples. Checked: every metric of type
    OTHER (the ones whose unit ncu_report works out itself; counters, ratios and
    throughputs take theirs from the metric definitions) of launch 0."""
    path = foreign_dir / f"{stem}.ncu-rep.xz"
    table = _one_process([path], tmp_path)[0]
    launch0 = table[table["launch"] == 0].set_index("metric")
    other = sorted(launch0.index[launch0["metric_type"] == "other"])
    assert len(other) > 200
    alone = json.loads(_run(_ALONE, str(path), json.dumps(other)))
    got = launch0.loc[other, "unit"].fillna("").to_dict()
    differ = {m: (got[m], alone[m]) for m in other if got[m] != alone[m]}
    assert not differ, f"{len(differ)} units differ from the metric's own (table, alone): {differ}"


@pytest.mark.parametrize("first, then", [(T4, H200), (H200, T4), (RTX3080, T4)],
                         ids=["H200-after-T4", "T4-after-H200", "T4-after-RTX3080"])
def test_a_report_read_after_one_of_another_gpu_gets_what_it_gets_alone(foreign_dir, tmp_path, first, then):
    """In one process, the H200 report read after the T4 one had counters and throughputs
    typed ``other`` (ncu_report keeps the metric definitions of the first chip it read),
    and the T4 report read after another GPU's got other units. Units, metric types and
    values must be those of the report read in a process of its own."""
    def path(x):
        return x if isinstance(x, Path) else foreign_dir / f"{x}.ncu-rep.xz"

    alone = _one_process([path(then)], tmp_path / "alone")[0]
    after = _one_process([path(first), path(then)], tmp_path / "after")[1]
    pd.testing.assert_frame_equal(_attrs(after), _attrs(alone))


def test_two_orders_of_reading_give_each_report_the_same_table(foreign_dir, tmp_path):
    paths = [foreign_dir / f"{T4}.ncu-rep.xz", H200, foreign_dir / f"{RTX3080}.ncu-rep.xz"]
    forward = _one_process(paths, tmp_path / "forward")
    backward = _one_process(paths[::-1], tmp_path / "backward")[::-1]
    for path, f, b in zip(paths, forward, backward):
        assert len(f) > 500, path
        pd.testing.assert_frame_equal(_attrs(f), _attrs(b), obj=path.name)


def test_equal_values_in_one_ncu_version_never_compare_as_unit_changed(foreign_dir, tmp_path):
    """Two reports of one program, GPU and ncu version (2021.3.1), each read by a user's
    own loop over reports: the second after a report of another GPU. The predicated-on
    FMA counts (GPU peaks, equal in both reports) compared as "unit changed": thread in
    the report read first, inst in the other."""
    heat_a, heat_b = (foreign_dir / f"{s}.ncu-rep.xz" for s in (HEAT_A, HEAT_B))
    a = _one_process([heat_a], tmp_path / "a")[0]
    b = _one_process([foreign_dir / f"{T4}.ncu-rep.xz", heat_b], tmp_path / "b")[1]
    d = compare_sets(set_table([a], "a", {}), set_table([b], "b", {}))
    both = d[d["value_baseline"].notna() & d["value_candidate"].notna()]
    equal = both[both["value_baseline"] == both["value_candidate"]]
    x2 = equal[equal["metric"].str.endswith("_pred_on_x2")]
    assert len(x2) >= 8  # four x2 metrics, two matched kernels
    assert not (equal["status"] == "unit changed").any(), \
        equal.loc[equal["status"] == "unit changed", ["metric", "unit_baseline", "unit_candidate"]].to_string()


@pytest.mark.parametrize("when", ["before", "after", "from-import", "reload", "imported-again"])
def test_ncu_report_used_directly_before_the_reader_changes_nothing(foreign_dir, tmp_path, when):
    """A script that asked ncu_report itself for a T4 report's metrics, then read an H200
    report with load_report, got 1,317 of its 2,243 metrics typed ``other`` (390 alone)
    and 3 other units, without a word: the reader's record of what the process read did
    not see that read.
    ncu_report imported before the package, after it, its load_report imported by name, the
    module reloaded (which gives ncu_report.load_report back its own code), or removed from
    sys.modules and imported again: the table must be the one of a process that read
    nothing else."""
    ours = REPO / "tests" / "data" / "add_n1024.ncu-rep.xz"  # --set full
    alone = _one_process([ours], tmp_path / "alone")[0]
    out = tmp_path / "after.parquet"
    _run(_OUTSIDE, when, str(out), str(foreign_dir / f"{T4}.ncu-rep.xz"), str(ours))
    after = pd.read_parquet(out)
    assert (alone["metric_type"] != "other").sum() > 1000
    pd.testing.assert_frame_equal(_attrs(after), _attrs(alone))
