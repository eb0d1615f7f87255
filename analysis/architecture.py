"""Write ``docs/architecture.md`` from the code: the package's stages in the order of the
import-linter layers contract in ``pyproject.toml``, each stage's modules with the first
line of their docstring, and which other stages each module imports.

``python -m analysis.architecture`` rewrites the page; ``--check`` exits 1 when the
committed page differs from what the code gives (tests/test_architecture.py runs it).
"""

from __future__ import annotations

import argparse
import ast
import sys
import tomllib
from pathlib import Path

from analysis.io import atomic_path

PACKAGE = Path(__file__).resolve().parent
REPO = PACKAGE.parent
PAGE = REPO / "docs" / "architecture.md"


def layers(pyproject: Path = REPO / "pyproject.toml") -> list[str]:
    """The stages, top first, as the layers contract of ``pyproject.toml`` names them
    (``analysis.workflow``, ``analysis.compare``, ...).

    Raises:
        KeyError: pyproject.toml has no layers contract.
    """
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["importlinter"]
    contract = next(c for c in config["contracts"] if c["type"] == "layers")
    return list(contract["layers"])


def modules() -> dict[str, Path]:
    """Every module of the package, dotted name -> file, in name order."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(REPO).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        out[".".join(parts)] = path
    return out


def imported(path: Path) -> set[str]:
    """The ``analysis.*`` modules a file imports (at module level or inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("analysis"):
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("analysis"))
    return out


def stage_of(module: str, stages: list[str]) -> str | None:
    """The stage (a layer of :func:`layers`) holding ``module``, or None for a module of
    the package's base (errors, io, names, ...), which any stage may import."""
    return next((s for s in stages if module == s or module.startswith(s + ".")), None)


def _summary(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    first = doc.strip().split("\n\n")[0].replace("\n", " ")
    return first.replace("|", "\\|")


def render() -> str:
    """The page's Markdown."""
    stages = layers()
    mods = modules()
    lines = ["# Architecture", "",
             "Written by `python -m analysis.architecture` from the code (a test fails when it is",
             "out of date). The package follows the data: the GPU stage makes reports, the",
             "readers turn them into tables, the study and the comparisons read those tables,",
             "and the workflow helpers drive them all. A stage imports only stages below it:",
             "`lint-imports` checks the layers contract of `pyproject.toml`, and the test suite",
             "runs it.", "",
             "| stage (top first) | package |", "| --- | --- |"]
    for i, s in enumerate(stages):
        lines.append(f"| {len(stages) - i} | `{s}` |")
    lines += ["", "Modules outside the stages (`analysis.errors`, `analysis.io`, `analysis.names`, ...)",
              "are the base every stage may import; `analysis.benchmark` and this module are tools",
              "run by hand.", ""]
    for s in stages + [None]:
        lines += [f"## `{s}`" if s else "## Base and tools", "", "| module | what it does | imports from stages |",
                  "| --- | --- | --- |"]
        for name, path in mods.items():
            if stage_of(name, stages) != s:
                continue
            used = sorted({stage_of(m, stages) for m in imported(path)} - {s, None})
            lines.append(f"| `{name}` | {_summary(path)} | {', '.join(f'`{u}`' for u in used) or '-'} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m analysis.architecture [--check]``."""
    ap = argparse.ArgumentParser(prog="python -m analysis.architecture", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if docs/architecture.md is out of date")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    page = render()
    if args.check:
        if not PAGE.exists() or PAGE.read_text(encoding="utf-8") != page:
            print(f"{PAGE} is out of date: run python -m analysis.architecture", file=sys.stderr)
            return 1
        return 0
    with atomic_path(PAGE) as tmp:
        tmp.write_text(page, encoding="utf-8")
    print(f"{PAGE}: {len(page.splitlines())} lines")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
