"""The package's wings, and the rule that every import points down or sideways.

Read without importing anything (``ast``), so that the check has no side
effects and also sees the imports inside functions (the lazy ones that keep
``import polars_cumdev`` light). ``docs/architecture.md`` explains the wings:

0. the ground: ``kernel/`` (compiled arithmetic), ``errors``, ``datasets/``;
1. ``method/``: the stages every analysis shares;
2. the analyses: ``subpopulation`` (with ``subpopulation_stages``), ``paired``,
   ``calibration``, ``drift``, ``compare/``, ``binned/``, ``corp/``, ``covariates/``,
   ``multicalibration/``;
3. ``engines/``: range-partitioned and cluster runs of the analyses;
4. the faces, in this order: ``charts/``, ``report/``, ``namespace``, then
   ``cli/`` beside the public facades (``spark``, ``dask``, ``partitioned``, ``sklearn``) and
   the package itself.

An import may point to a lower wing, or sideways inside a wing, never up;
and the imports between modules form no circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import polars_cumdev

PACKAGE = Path(polars_cumdev.__file__).resolve().parent
NAME = "polars_cumdev"

#: First component under the package -> (wing, rank inside the wing).
WINGS: dict[str, tuple[int, int]] = {
    "kernel": (0, 0),
    "errors": (0, 0),
    "progress": (0, 0),
    "datasets": (0, 0),
    "method": (1, 0),
    "subpopulation": (2, 0),
    "subpopulation_stages": (2, 0),
    "paired": (2, 0),
    "calibration": (2, 0),
    "compare": (2, 0),
    "binned": (2, 0),
    "corp": (2, 0),
    "covariates": (2, 0),
    "multicalibration": (2, 0),
    "recalibration": (2, 0),
    "engines": (3, 0),
    "charts": (4, 0),
    "report": (4, 1),
    "namespace": (4, 2),
    "cli": (4, 3),
    "spark": (4, 3),
    "dask": (4, 3),
    "partitioned": (4, 3),
    "sklearn": (4, 3),
    "drift": (2, 0),
    "sklearn_recalibration": (4, 3),
    "sklearn_display": (4, 3),
    "sklearn_inputs": (4, 3),
    "sklearn_matplotlib": (4, 3),
    "": (4, 3),  # polars_cumdev/__init__.py (the command line imports it to register `cumdev`)
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def resolve(name: str, known: dict[str, Path]) -> str:
    """The module an imported name lives in (a name inside a module: that module)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every package module ``name`` imports, at the top or inside a function."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                origin = ".".join([*base, node.module] if node.module else base)
            else:
                origin = node.module or ""
            # `from a import b` may import the module a.b, or the name b of a.
            targets = [f"{origin}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            if target == NAME or target.startswith(NAME + "."):
                found.add(resolve(target, known))
    found.discard(name)
    return found


def wing(module: str) -> tuple[int, int]:
    first = module.split(".")[1] if "." in module else ""
    if first not in WINGS:
        raise AssertionError(
            f"{module} is in no wing: add it to WINGS in tests/test_architecture.py "
            "and to docs/architecture.md"
        )
    return WINGS[first]


_MODULES = modules()  # one walk of the package, not one per module
GRAPH = {name: imports(name, path, _MODULES) for name, path in _MODULES.items()}


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_point_down_or_sideways(module: str) -> None:
    mine = wing(module)
    upward = sorted(target for target in GRAPH[module] if wing(target) > mine)
    assert not upward, f"{module} (wing {mine}) imports up into {upward}"


def test_the_kernel_needs_nothing_but_itself() -> None:
    for module, targets in GRAPH.items():
        if module.startswith(f"{NAME}.kernel"):
            outside = {t for t in targets if not t.startswith(f"{NAME}.kernel")}
            assert not outside, f"{module} imports {outside}"
            source = modules()[module].read_text()
            assert "import polars" not in source, f"{module} imports Polars"


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """A circle of imports in ``graph`` (depth-first search for a back edge), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (circle := visit(target)):
                return circle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (circle := visit(node)):
            return circle
    return None


def test_no_circle() -> None:
    circle = find_circle(GRAPH)
    assert circle is None, "import circle: " + " -> ".join(circle or [])


def test_the_circle_search_finds_a_planted_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert find_circle(graph) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_map_knows_every_module() -> None:
    for module in GRAPH:
        wing(module)


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    """The walker itself: a planted upward import and a planted circle are found."""
    known = {f"{NAME}.method.a": tmp_path / "a.py", f"{NAME}.charts.b": tmp_path / "b.py"}
    (tmp_path / "a.py").write_text("def f():\n    from polars_cumdev.charts import b\n")
    (tmp_path / "b.py").write_text("from polars_cumdev.method.a import f\n")
    seen = imports(f"{NAME}.method.a", known[f"{NAME}.method.a"], known)
    assert seen == {f"{NAME}.charts.b"}
    assert wing(f"{NAME}.charts.b") > wing(f"{NAME}.method.a")
    back = imports(f"{NAME}.charts.b", known[f"{NAME}.charts.b"], known)
    assert back == {f"{NAME}.method.a"}
