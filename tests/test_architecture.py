"""The package's floor plan: stages import only the stages below them (import-linter's
layers contract in pyproject.toml), ncu_report is imported only by analysis.nsight (a
forbidden contract), and docs/architecture.md is what the code gives."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import REPO

LINT = Path(sys.executable).with_name("lint-imports")


def _lint(root: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(root))
    return subprocess.run([str(LINT), "--config", str(root / "pyproject.toml"), "--no-cache"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


def _planted(root: Path, module: str, statement: str) -> subprocess.CompletedProcess:
    """:func:`_lint` of a copy of the package in ``root`` where ``analysis/{module}`` gained a
    function holding ``statement``."""
    shutil.copytree(REPO / "analysis", root / "analysis", ignore=shutil.ignore_patterns("__pycache__", "data"))
    shutil.copy(REPO / "pyproject.toml", root)
    path = root / "analysis" / module
    path.write_text(path.read_text() + f"\n\ndef _planted():\n    {statement}\n")
    return _lint(root)


def test_no_stage_imports_a_later_one():
    proc = _lint(REPO)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "2 kept, 0 broken" in proc.stdout


def test_a_planted_upward_import_breaks_the_contract(tmp_path):
    """The GPU stage importing the comparison (a later stage) fails the check, naming both."""
    proc = _planted(tmp_path, "gpu/build.py", "from analysis.compare.diff import compare_sets")
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert "1 kept, 1 broken" in proc.stdout
    assert "analysis.gpu.build -> analysis.compare.diff" in proc.stdout


def test_a_planted_direct_import_of_ncu_report_breaks_the_contract(tmp_path):
    """A reader importing ncu_report itself (its reads would not be told apart from a
    user's: analysis.nsight) fails the check, naming the module."""
    proc = _planted(tmp_path, "reports/hotspots.py", "import ncu_report")
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert "1 kept, 1 broken" in proc.stdout
    assert "analysis.reports.hotspots -> ncu_report" in proc.stdout


def test_the_architecture_page_is_what_the_code_gives():
    proc = subprocess.run([sys.executable, "-m", "analysis.architecture", "--check"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_the_page_lists_every_module_under_its_stage():
    from analysis.architecture import layers, modules, stage_of

    page = (REPO / "docs" / "architecture.md").read_text()
    stages = layers()
    sections = page.split("\n## ")
    for name in modules():
        stage = stage_of(name, stages)
        section = next(s for s in sections if s.startswith(f"`{stage}`" if stage else "Base and tools"))
        assert f"| `{name}` |" in section, name
