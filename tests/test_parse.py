"""Reading a set in one process (analysis.reports.parse): pool, cache, crashes and hangs."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from analysis.compare.diff import metric_table, read_metric_table
from analysis.errors import AnalysisError
from analysis.reports.ncu import load_report
from analysis.reports.ncu.files import orphan_tmpdirs
from analysis.reports.parse import parse_reports, write_set_tables

from . import readers
from .conftest import DEFAULT_SET, REPO, SET_DIR

#: Four real reports of the default set: two kernels, N = 512 and 1024.
FOUR = [SET_DIR / "reports" / f"{k}_n{n}.ncu-rep.xz" for k in ("int8_wmma", "int4_wmma") for n in (512, 1024)]


@pytest.fixture()
def four(tmp_path):
    d = tmp_path / "reports"
    d.mkdir()
    for p in FOUR:
        shutil.copy(p, d)
    return sorted(d.iterdir())


def test_pool_tables_equal_the_in_process_reader(four):
    got = parse_reports(four, workers=2)
    assert not got.errors and got.parsed == four
    for path, table in zip(four, got.metrics):
        pd.testing.assert_frame_equal(table, load_report(path))
    opcode = pd.concat(got.instances)
    assert set(opcode["metric"]) >= {"sass__thread_inst_executed_true_per_opcode_with_modifier_all"}
    assert opcode["metric"].str.contains("per_opcode").all()


def test_cache_rereads_only_a_new_or_changed_report(four, tmp_path):
    cache = tmp_path / "cache"
    first = parse_reports(four[:3], cache, workers=1)
    assert len(first.parsed) == 3 and not first.cached
    again = parse_reports(four, cache, workers=1)  # one report added to the set
    assert again.parsed == [four[3]] and again.cached == four[:3]
    for a, b in zip(first.metrics, again.metrics):
        pd.testing.assert_frame_equal(a, b)
    # the same file name with other content (int4_wmma N = 1024's report under N = 512's
    # name): read again, and the new content is what is kept
    shutil.copy(four[0], four[1])
    changed = parse_reports(four, cache, workers=1)
    assert changed.parsed == [four[1]]

    def grid(t):
        return t.set_index("metric").loc["launch__grid_size", "value"]

    assert grid(changed.metrics[1]) == grid(first.metrics[0]) != grid(first.metrics[1])


def test_damaged_cache_entry_is_read_again(four, tmp_path):
    cache = tmp_path / "cache"
    parse_reports(four, cache, workers=1)
    stem = four[0].name.removesuffix(".ncu-rep.xz")
    (cache / f"{stem}.parquet").write_bytes(b"not parquet")
    with pytest.warns(UserWarning, match=rf"{stem}\.parquet: the cached table of .* is damaged"):
        got = parse_reports(four, cache, workers=1)
    assert got.parsed == [four[0]] and not got.errors
    pd.testing.assert_frame_equal(got.metrics[0], load_report(four[0]))


def test_bad_report_fails_alone_and_the_others_are_cached(four, tmp_path):
    data = four[0].read_bytes()
    four[0].write_bytes(data[: len(data) // 2])
    cache = tmp_path / "cache"
    got = parse_reports(four, cache, workers=2)
    assert list(got.errors) == [four[0]] and "not a complete xz stream" in str(got.errors[four[0]])
    assert len(got.metrics) == 3
    with pytest.raises(AnalysisError, match=r"1 of 4 reports could not be read:\n.*int4_wmma_n1024.*not a complete"):
        got.raise_errors("set x")
    assert parse_reports(four[1:], cache, workers=1).cached == four[1:]


def test_a_crashing_worker_breaks_only_the_pool(four):
    """A worker killed by SIGSEGV: the reports in flight are read again, each in a child
    of its own (there the real reader succeeds), so every table is still there."""
    got = parse_reports(four, workers=2, reader=readers.crash_on_n1024)
    assert not got.errors and sorted(got.parsed) == four
    for path, table in zip(four, got.metrics):
        pd.testing.assert_frame_equal(table, load_report(path))


def test_a_worker_killed_while_reading_leaves_no_decompressed_copy(four):
    """A worker killed while it holds a report's decompressed copy (in /dev/shm: memory)
    cannot remove it; the parse removes the copies of processes that no longer run."""
    got = parse_reports(four, workers=2, reader=readers.crash_inside_n1024)
    assert not got.errors and sorted(got.parsed) == four
    assert orphan_tmpdirs() == []


def test_a_hanging_worker_is_stopped(four):
    """The pool is stopped after 5 s without progress and the reports in flight are read
    again, one child process each, without a time budget of their own (600 s): on a busy
    machine a report that only looked hung is then read whole, so the result does not
    depend on the machine's speed (it once failed with 5 s for the re-reads too)."""
    got = parse_reports(four, workers=2, timeout=5, retry_timeout=600, reader=readers.hang_on_n1024)
    assert not got.errors and sorted(got.parsed) == four


def test_set_tables_are_written_whole_or_not_at_all(four, tmp_path):
    out = tmp_path / "out"
    metrics, instances, per = out / "metrics.parquet", out / "instances.parquet", out / "per_metric.parquet"
    got = write_set_tables(four, "s", SET_DIR / "metadata.json", tmp_path / "cache", metrics, instances,
                           metric_table_out=per)
    table = pd.read_parquet(metrics)
    assert table.groupby(["kernel", "n"]).ngroups == 4 and (table["set"] == "s").all()
    assert set(table["driver"]) == {"580.159.04"} and len(got.cached) == 0
    # the comparisons' table is the set table reduced, as compare_sets reduces it
    pd.testing.assert_frame_equal(read_metric_table(per), metric_table(table))
    four[2].write_bytes(b"")
    metrics.unlink()
    per.unlink()
    with pytest.raises(AnalysisError, match="int8_wmma_n1024.ncu-rep.xz: file is empty"):
        write_set_tables(four, "s", None, tmp_path / "cache", metrics, instances, metric_table_out=per)
    assert not metrics.exists() and not per.exists()


def test_summary_is_written_with_the_set_tables(four, tmp_path, capsys):
    """With summary_out and the set's timings, the parse writes the summary the study reads:
    equal to analysis.reports.tables.summary of the tables it wrote, timings joined per kernel and
    N; a damaged timings.csv is refused naming it, before any table is written."""
    from analysis.reports.setfiles import SetFileError, read_timings
    from analysis.reports.tables import summary

    out = tmp_path / "out"
    metrics, instances, summ = out / "metrics.parquet", out / "instances.parquet", out / "summary.csv"
    units = out / "summary_units.csv"
    write_set_tables(four, "s", SET_DIR / "metadata.json", tmp_path / "cache", metrics, instances,
                     summary_out=summ, timings=SET_DIR / "timings.csv", summary_units_out=units)
    got = pd.read_csv(summ)
    u = pd.read_csv(units, keep_default_na=False).set_index("column")["unit"]
    keys = ("n", "launch", "occurrence", "flags", "profiling_failed")  # keys, and flags read as all-NaN
    numeric = {c for c in got.columns if pd.api.types.is_numeric_dtype(got[c]) and c not in keys}
    assert numeric <= set(u.index) and set(u.index) <= set(got.columns)  # every numeric column has its unit
    assert (u["gpu__time_duration.sum"], u["dram__bytes_read.sum"], u["median_ns"]) == ("ns", "byte", "ns")
    want = summary(pd.read_parquet(metrics), pd.read_parquet(instances), read_timings(SET_DIR / "timings.csv"))
    assert list(got["kernel"] + got["n"].astype(str)) == list(want["kernel"] + want["n"].astype(str))
    assert len(got) == 4 and got["median_ns"].notna().all()
    pd.testing.assert_series_equal(got["median_ns"], want["median_ns"].astype(float), rtol=1e-6)
    bad = tmp_path / "timings.csv"
    pd.read_csv(SET_DIR / "timings.csv").assign(median_ns=-1.0).to_csv(bad, index=False)
    for f in (metrics, instances, summ):
        f.unlink()
    with pytest.raises(SetFileError, match=r"timings\.csv.*median_ns"):
        write_set_tables(four, "s", SET_DIR / "metadata.json", tmp_path / "cache", metrics, instances,
                         summary_out=summ, timings=bad)
    assert not metrics.exists() and not instances.exists() and not summ.exists()


def test_set_table_of_the_default_set(table):
    """The default set read through the pool: every report, one launch each."""
    assert table.groupby(["kernel", "n"]).ngroups == len(list((SET_DIR / "reports").glob("*.ncu-rep.xz")))
    assert (table["launch"] == 0).all() and (table["set"] == DEFAULT_SET).all()


def test_isolated_reading_gives_each_report_a_process_of_its_own(four):
    """Units can depend on what the native reader read before in the same process
    (fault 6 of docs/robustness.md: across Nsight Compute versions); isolate=True reads every
    report in a worker that read no other, isolate=False lets a worker read several."""
    shared = parse_reports(four, workers=1, reader=readers.count_reads)
    assert max(int(t["reads_in_process"].max()) for t in shared.metrics) == len(four)
    got = parse_reports(four, workers=1, reader=readers.count_reads, isolate=True)
    assert not got.errors and sorted(got.parsed) == four
    assert {int(t["reads_in_process"].max()) for t in got.metrics} == {1}
    for path, table in zip(four, got.metrics):
        pd.testing.assert_frame_equal(table.drop(columns="reads_in_process"), load_report(path))


def test_a_set_of_several_gpus_shares_its_readers_and_gets_each_reports_units(foreign_dir, tmp_path):
    """An imported set of reports of three GPUs and Nsight Compute versions (T4 2024.2.1,
    RTX 3080 2020.2.1, the H200's add 2025.3.1) is read by shared reader processes and gives
    each report the units and metric types it has read in a process of its own (fault 6)."""
    from analysis.reports.ncu import load_report_isolated

    paths = [foreign_dir / "armleth__cuda-mlp-inference__report__b4d31e9a.ncu-rep.xz",
             foreign_dir / "iamcoleman__monte-carlo-pi__profile__3d528bfb.ncu-rep.xz",
             REPO / "tests" / "data" / "add_n1024.ncu-rep.xz"]
    out = tmp_path / "out"
    write_set_tables(paths, "mixed", None, tmp_path / "cache", out / "m.parquet", out / "i.parquet", workers=1)
    table = pd.read_parquet(out / "m.parquet")
    for path in paths:
        alone = load_report_isolated(path, expect_launches=None)[0]
        got = table[table["report"] == alone["report"].iloc[0]]
        key = ["launch", "metric"]
        a = alone.set_index(key)[["unit", "metric_type"]].sort_index()
        b = got.set_index(key)[["unit", "metric_type"]].sort_index()
        assert a.astype(str).equals(b.astype(str)), path.name




#: Scripts of a user calling parse_reports: the call's place (the reports are sys.argv[1:]).
_SCRIPTS = {
    "top level": 'got = parse_reports(sys.argv[1:], workers=2)\n',
    "under another if": 'if len(sys.argv) > 1:\n    got = parse_reports(sys.argv[1:], workers=2)\n',
    "in a thread": ("import threading\nout = {}\n"
                    "t = threading.Thread(target=lambda: out.update(got=parse_reports(sys.argv[1:], workers=2)))\n"
                    "t.start()\nt.join()\ngot = out['got']\n"),
    "latin-1 source": "# caf\xe9\ngot = parse_reports(sys.argv[1:], workers=2)\n",
    "guarded": 'if __name__ == "__main__":\n    got = parse_reports(sys.argv[1:], workers=2)\n',
    "guarded, and more": ('if __name__ == "__main__" and len(sys.argv) > 1:\n'
                          '    got = parse_reports(sys.argv[1:], workers=2)\n'),
    # the interpreter ending: the pool raised "cannot schedule new futures after interpreter shutdown"
    "at exit": ("import atexit\ndef end():\n    got = parse_reports(sys.argv[1:], workers=2)\n"
                "    print('rows', sum(len(m) for m in got.metrics), 'errors', len(got.errors))\n"
                'if __name__ == "__main__":\n    atexit.register(end)\n'),
    "thread left running": ("import threading, time\ndef work():\n    time.sleep(0.5)\n"
                            "    got = parse_reports(sys.argv[1:], workers=2)\n"
                            "    print('rows', sum(len(m) for m in got.metrics), 'errors', len(got.errors))\n"
                            'if __name__ == "__main__":\n    threading.Thread(target=work).start()\n'),
}


@pytest.mark.parametrize("where", list(_SCRIPTS))
def test_a_script_without_the_main_guard_is_not_run_again_by_the_readers(tmp_path, where):
    """A user's script calling parse_reports other than under `if __name__ == "__main__":`
    ran its top-level code once more in each reader process (whose start then failed with
    multiprocessing's "bootstrapping phase" RuntimeError), and the reports were read again
    a process each. Now it is run once, told why, and its reports read here. Missed at
    first: a call under another `if`, from a thread, in a script of another encoding."""
    import os
    import subprocess
    import sys

    script = tmp_path / "mine.py"
    head = "# -*- coding: latin-1 -*-\n" if where == "latin-1 source" else ""
    ending = where in ("at exit", "thread left running")
    body = (head + "import sys\nfrom analysis.reports.parse import parse_reports\nprint('top level ran', flush=True)\n"
            + _SCRIPTS[where] + ("" if ending else
                                 "print('rows', sum(len(m) for m in got.metrics), 'errors', len(got.errors))\n"))
    script.write_bytes(body.encode("latin-1"))
    reports = [REPO / "tests" / "data" / f"{r}.ncu-rep.xz" for r in ("add_n1024", "several")]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, str(script), *map(str, reports)], capture_output=True, text=True,
                          env=env, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = sum(len(load_report(r)) for r in reports)
    assert f"rows {rows} errors 0" in proc.stdout
    assert "RuntimeError" not in proc.stderr and "bootstrapping" not in proc.stderr
    said = "outside `if __name__ == '__main__':`; reader processes would run that script again"
    if ending:
        assert "parse_reports is called while the interpreter ends" in proc.stderr
    elif where.startswith("guarded"):  # the workers import the script, whose top level outside the guard runs there
        assert said not in proc.stderr
    else:
        assert proc.stdout.count("top level ran") == 1
        assert said in proc.stderr and str(script) in proc.stderr


def test_a_script_read_from_stdin_reads_in_the_pool_without_tracebacks(tmp_path):
    """`python - < script` calling parse_reports printed a FileNotFoundError traceback of
    '<stdin>' per reader process (each tried to run the main module's file again before its
    first task) and the reports were read again one process each. The workers now start as
    under `python -c`; the main module keeps its `__file__` after the call."""
    import os
    import subprocess
    import sys

    reports = [REPO / "tests" / "data" / f"{r}.ncu-rep.xz" for r in ("add_n1024", "several")]
    body = ("import sys\nfrom analysis.reports.parse import parse_reports\n"
            f"got = parse_reports({[str(r) for r in reports]!r}, workers=2)\n"
            "print('rows', sum(len(m) for m in got.metrics), 'errors', len(got.errors))\n"
            "print('file', sys.modules['__main__'].__file__)\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-"], input=body, capture_output=True, text=True, env=env, timeout=600,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = sum(len(load_report(r)) for r in reports)
    assert f"rows {rows} errors 0" in proc.stdout and "file <stdin>" in proc.stdout
    assert "Traceback" not in proc.stderr and "FileNotFoundError" not in proc.stderr, proc.stderr[-3000:]


def test_a_damaged_cache_entry_is_warned_of_and_the_report_read_again(tmp_path):
    """One flipped byte in a cached parquet file read without error and gave other values,
    which the set's tables then held without a word (the key checked the report's bytes
    only); one in its pandas metadata raised an error the cache did not catch, failing
    every later parse. Now each table's SHA-256 is kept with the key."""
    report = REPO / "tests" / "data" / "add_n1024.ncu-rep.xz"
    cache = tmp_path / "cache"
    first = parse_reports([report], cache)
    cached = cache / "add_n1024.parquet"
    good = cached.read_bytes()
    # a flip that pandas reads without error, to other values: the first such offset
    for offset in range(len(good) // 4, len(good)):
        bad = bytearray(good)
        bad[offset] ^= 1
        cached.write_bytes(bytes(bad))
        try:
            if not pd.read_parquet(cached).equals(first.metrics[0]):
                break
        except Exception:  # noqa: BLE001 (this flip is caught by the reader itself)
            continue
    else:
        pytest.fail("no flipped byte reads as other values")
    with pytest.warns(UserWarning, match=r"add_n1024\.parquet: the cached table of add_n1024\.ncu-rep\.xz is "
                                         r"damaged \(its SHA-256 is not the one recorded"):
        again = parse_reports([report], cache)
    assert again.parsed == [report] and again.cached == []
    pd.testing.assert_frame_equal(again.metrics[0], first.metrics[0])
    assert cached.read_bytes() == good  # written again whole
    assert parse_reports([report], cache).cached == [report]  # and taken from the cache after
