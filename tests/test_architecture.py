"""The package's floor plan: stages import only the stages below them (import-linter's
layers contract in pyproject.toml), and docs/architecture.md is what the code gives."""

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


def test_no_stage_imports_a_later_one():
    proc = _lint(REPO)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "1 kept, 0 broken" in proc.stdout


def test_a_planted_upward_import_breaks_the_contract(tmp_path):
    """The GPU stage importing the comparison (a later stage) fails the check, naming both."""
    shutil.copytree(REPO / "analysis", tmp_path / "analysis", ignore=shutil.ignore_patterns("__pycache__", "data"))
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    build = tmp_path / "analysis" / "gpu" / "build.py"
    build.write_text(build.read_text() + "\n\ndef _planted():\n    from analysis.compare.diff import compare_sets\n")
    proc = _lint(tmp_path)
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert "0 kept, 1 broken" in proc.stdout
    assert "analysis.gpu.build -> analysis.compare.diff" in proc.stdout


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
