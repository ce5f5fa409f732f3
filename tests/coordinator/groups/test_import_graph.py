"""The group coordinator's modules import one way: no module of ``coordinator.groups`` reaches itself again.

The graph is read from the source, not from ``sys.modules``, so every import counts: those under
``if TYPE_CHECKING:`` and those inside functions too (a cycle hidden in either is still a cycle for
whoever reads the code).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import groupcoord.coordinator.groups as groups_package

PACKAGE = groups_package.__name__
ROOT = Path(groups_package.__path__[0])


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((PACKAGE, *parts))


def imported_names(tree: ast.Module, module: str, is_package: bool) -> set[str]:
    """Every dotted name the module imports, candidate submodules included (``from a import b`` -> a, a.b)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                parent = ".".join(base + ([node.module] if node.module else []))
            else:
                parent = node.module or ""
            names.add(parent)
            names.update(f"{parent}.{alias.name}" for alias in node.names)
    return names


def import_graph() -> dict[str, set[str]]:
    sources = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for module, path in sources.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        imported = imported_names(tree, module, path.name == "__init__.py")
        # `from pkg import mod` names the module mod; `from pkg import func` names pkg itself.
        targets = {name for name in imported if name in sources}
        graph[module] = {t for t in targets if not any(o != t and o.startswith(t + ".") for o in targets)} - {module}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a path that starts and ends at the same module, or None."""
    visiting: list[str] = []
    on_path: set[str] = set()
    done: set[str] = set()

    def visit(node: str) -> list[str] | None:
        visiting.append(node)
        on_path.add(node)
        for nxt in sorted(graph[node]):
            if nxt in on_path:
                return visiting[visiting.index(nxt):] + [nxt]
            if nxt not in done:
                found = visit(nxt)
                if found is not None:
                    return found
        on_path.discard(visiting.pop())
        done.add(node)
        return None

    for start in sorted(graph):
        if start not in done:
            cycle = visit(start)
            if cycle is not None:
                return cycle
    return None


def test_the_graph_covers_the_whole_package():
    graph = import_graph()
    assert f"{PACKAGE}.shard" in graph and f"{PACKAGE}.service" in graph
    assert any(graph.values()), "no import between the package's modules was found: the parser is broken"


def test_the_group_coordinator_has_no_import_cycle():
    cycle = find_cycle(import_graph())
    if cycle is not None:
        pytest.fail("import cycle: " + " -> ".join(name.removeprefix(PACKAGE + ".") for name in cycle))


def test_the_cycle_finder_names_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_subpackage_repeats_a_module_name_of_its_parent():
    """A child named like its parent's module forces aliases on whoever imports both (``heartbeat as cg_heartbeat``)."""
    repeats = []
    for package in [ROOT, *(p.parent for p in ROOT.rglob("*/__init__.py"))]:
        parent_names = {p.stem for p in package.glob("*.py")} | {p.name for p in package.iterdir() if p.is_dir()}
        for child in (p.parent for p in package.glob("*/__init__.py")):
            repeats += [f"{child.relative_to(ROOT)}/{m.name}" for m in child.glob("*.py") if m.stem in parent_names - {"__init__"}]
    assert repeats == []
