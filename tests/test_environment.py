"""The pinned environment: constraints.txt pins every package pyproject.toml asks for, at a
version it allows, and the README's install, .ci/run and environment.yml all use it."""

from __future__ import annotations

import re
import tomllib

import yaml
from packaging.requirements import Requirement

from .conftest import REPO


def _pins() -> dict[str, str]:
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version.strip()
    return pins


def test_every_requirement_is_pinned_within_its_range():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + project["optional-dependencies"]["test"]
    pins = _pins()
    for spec in map(Requirement, wanted):
        name = re.sub(r"[-_.]+", "-", spec.name).lower()
        assert name in pins, f"{spec.name} is not pinned in constraints.txt (run .ci/lock)"
        assert spec.specifier.contains(pins[name], prereleases=True), f"{spec.name}=={pins[name]} outside {spec}"


def test_every_install_uses_the_constraints():
    assert "pip install -e '.[test]' -c constraints.txt" in (REPO / "README.md").read_text()
    assert "pip install -e '.[test]' -c constraints.txt" in (REPO / ".ci" / "run").read_text()
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert pip == ["-c constraints.txt", "-e .[test]"]
