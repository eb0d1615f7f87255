"""NVTX identity of launches: ``range_name`` (the NVTX range of a range-replay action) and
``nvtx`` (the push/pop ranges around a kernel), on the real H200 reports of tests/data
(``ranges_ab``, ``ranges_ba``, ``ranges_se``, ``nested``, ``templates``; what each holds:
tests/data/README.md, recorded by tests/data/src/record_more.sh)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis.compare.diff import compare_sets
from analysis.reports.ncu import IDENTITY_COLUMNS, TIDY_COLUMNS, load_report
from analysis.reports.schemas import validate_tidy
from analysis.reports.tables import set_table

DATA = Path(__file__).resolve().parent / "data"


def _launches(stem: str) -> pd.DataFrame:
    """One row per launch of ``tests/data/{stem}.ncu-rep.xz``: its identity columns."""
    df = load_report(DATA / f"{stem}.ncu-rep.xz")
    validate_tidy(df, stem)
    return df.drop_duplicates("launch")[["launch", *IDENTITY_COLUMNS]].reset_index(drop=True)


def _strings(col: pd.Series) -> list:
    return [None if pd.isna(v) else v for v in col]


def test_identity_columns_end_with_range_name_and_nvtx():
    df = load_report(DATA / "nested.ncu-rep.xz")
    assert IDENTITY_COLUMNS[-2:] == ["range_name", "nvtx"]
    assert list(df.columns) == TIDY_COLUMNS + IDENTITY_COLUMNS
    assert df["range_name"].dtype == "string" and df["nvtx"].dtype == "string"


@pytest.mark.parametrize("stem, names", [("ranges_ab", ["alpha", "beta"]), ("ranges_ba", ["beta", "alpha"]),
                                         ("ranges_se", ["alpha", "beta"])])
def test_a_range_replay_action_is_named_by_its_nvtx_range(stem, names):
    """Both actions of each report are named ``range`` (function, demangled and mangled):
    only the NVTX range tells them apart, so each is occurrence 0 of its own range."""
    ids = _launches(stem)
    assert set(ids["function"]) == set(ids["mangled"]) == {"range"}
    assert _strings(ids["range_name"]) == names
    assert list(ids["occurrence"]) == [0, 0]


def test_push_pop_ranges_are_the_nvtx_of_a_range_start_end_ranges_are_not():
    assert _strings(_launches("ranges_ab")["nvtx"]) == ["alpha", "beta"]
    assert _strings(_launches("ranges_se")["nvtx"]) == [None, None]  # start/end ranges only


def test_nvtx_gives_the_push_pop_stack_of_each_domain():
    """tests/data/README.md: launches 1-2 under step/forward, 3 under step/backward/grad,
    4 under read of domain loader (created after launch 3), 0 and 5 under none; the
    start/end range epoch is open over 1-4 and is not a push/pop range."""
    ids = _launches("nested")
    assert _strings(ids["nvtx"]) == [None, "step/forward", "step/forward", "step/backward/grad", "loader:read", None]
    assert ids["range_name"].isna().all()  # kernel replay: no range


def test_kernel_launches_count_occurrences_per_mangled_name():
    """``add`` at launches 0, 1 and 5 of ``nested`` is occurrence 0, 1, 2 whatever its NVTX
    ranges; the template instantiations of ``templates`` have no NVTX state."""
    ids = _launches("nested")
    add = ids[ids["function"] == "add"]
    assert list(add["launch"]) == [0, 1, 5] and list(add["occurrence"]) == [0, 1, 2]
    t = _launches("templates")
    assert t["nvtx"].isna().all() and t["range_name"].isna().all()
    assert list(t["occurrence"]) == [0, 0, 0, 1]  # scale<float> at launches 0 and 3


def test_two_runs_of_ranges_in_other_orders_are_compared_range_by_range():
    """ranges_ab runs alpha then beta, ranges_ba beta then alpha. Matched by position, alpha
    (2 function PCs) was compared with beta (1): launch__function_pcs "changed". Matched by
    range name, each range is compared with itself."""
    ab, ba = (load_report(DATA / f"{s}.ncu-rep.xz") for s in ("ranges_ab", "ranges_ba"))
    d = compare_sets(set_table([ab], "ab", {}), set_table([ba], "ba", {}))
    pcs = d[d["metric"] == "launch__function_pcs"]
    shown = pcs[["range_name", "value_baseline", "value_candidate", "status"]].to_string()
    assert len(pcs) == 2 and sorted(pcs["value_baseline"]) == [1, 2], shown
    assert (pcs["value_baseline"] == pcs["value_candidate"]).all() and (pcs["status"] == "identifier").all(), shown
    assert dict(zip(pcs["range_name"], pcs["value_baseline"])) == {"alpha": 2, "beta": 1}
