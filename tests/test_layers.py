"""The import layers hold: the contract in pyproject.toml passes, an upward import breaks it,
and no module imports itself back through others (function-level imports included)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
PACKAGES: list[str] = CONFIG["root_packages"]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with this project's contract over the packages found in ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [str(LINT_IMPORTS), str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=tree, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def copy_packages(to: Path) -> Path:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, to / package, ignore=shutil.ignore_patterns("__pycache__"))
    return to


def test_the_layer_contract_holds_on_this_tree(tmp_path: Path) -> None:
    run = lint_imports(copy_packages(tmp_path))
    assert run.returncode == 0, run.stdout + run.stderr
    assert " 0 broken" in run.stdout


def test_an_upward_import_from_the_floor_breaks_the_contract(tmp_path: Path) -> None:
    tree = copy_packages(tmp_path)
    lowest, highest = PACKAGES[-1], PACKAGES[0]
    (tree / lowest / "_upward.py").write_text(f"import {highest}\n")
    run = lint_imports(tree)
    assert run.returncode != 0, run.stdout
    assert f"{lowest}._upward -> {highest}" in run.stdout


def strongly_connected(graph: grimp.ImportGraph) -> Iterator[set[str]]:
    """Tarjan's components of more than one module, iteratively (no recursion limit)."""

    def imported_by(module: str) -> Iterator[str]:
        return iter(sorted(graph.find_modules_directly_imported_by(module)))

    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, imported_by(start))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, imported_by(child)))
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == module:
                        break
                if len(component) > 1:
                    yield component


def test_no_module_imports_itself_back_through_others() -> None:
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    assert [sorted(c) for c in strongly_connected(graph)] == []


@pytest.mark.parametrize("cycle", [["a.x", "a.y"], ["a.x", "a.y", "a.z"]])
def test_the_cycle_finder_sees_a_cycle(cycle: list[str]) -> None:
    graph = grimp.ImportGraph()
    for importer, imported in zip(cycle, [*cycle[1:], cycle[0]], strict=True):
        graph.add_import(importer=importer, imported=imported)
    graph.add_import(importer="a.w", imported="a.x")
    assert list(strongly_connected(graph)) == [set(cycle)]
