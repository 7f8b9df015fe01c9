"""The layout's rules, read from the source: arrows run one way and never in a circle.

- the domain never imports the web layer (only the web layer, the app that assembles it and the
  command line do);
- the web layer writes no SQL: it imports neither the schema, nor the driver, nor SQLAlchemy's
  statements;
- no module imports, at load time, a module that imports it back.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import trilha

SRC = Path(trilha.__file__).parent
OUTER = ("trilha.web", "trilha.app", "trilha.cli", "trilha.__main__")
SQL_FOR_WEB = ("trilha.db.schema", "trilha.db.driver")
SQL_STATEMENTS = frozenset({"insert", "update", "delete", "text", "select", "Table"})


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {
    module_name(path): path
    for path in SRC.rglob("*.py")
    if "migrations" not in path.relative_to(SRC).parts
}


def imports(path: Path, *, load_time_only: bool) -> Iterator[tuple[str, str]]:
    """(module, name) of each import; ``load_time_only``: those run when the module loads
    (module level, outside ``if TYPE_CHECKING:``)."""
    tree = ast.parse(path.read_text())
    nodes = tree.body if load_time_only else list(ast.walk(tree))
    for node in nodes:
        if isinstance(node, ast.Import):
            yield from ((alias.name, "") for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield from ((node.module, alias.name) for alias in node.names)


def trilha_targets(path: Path, *, load_time_only: bool) -> set[str]:
    """The trilha modules ``path`` imports: a name that is a submodule counts as that module."""
    found = set()
    for module, name in imports(path, load_time_only=load_time_only):
        if module == "trilha" or module.startswith("trilha."):
            submodule = f"{module}.{name}"
            found.add(submodule if submodule in MODULES else module)
    return found


def is_outer(module: str) -> bool:
    return any(module == outer or module.startswith(f"{outer}.") for outer in OUTER)


def test_it_never_imports_the_web_layer_from_the_domain() -> None:
    wrong = {
        (module, target)
        for module, path in MODULES.items()
        if not is_outer(module)
        for target in trilha_targets(path, load_time_only=False)
        if target.startswith("trilha.web")
    }
    assert wrong == set()


def test_it_writes_no_sql_in_the_web_layer() -> None:
    wrong = {
        (module, f"{imported}.{name}")
        for module, path in MODULES.items()
        if module.startswith("trilha.web")
        for imported, name in imports(path, load_time_only=False)
        if imported in SQL_FOR_WEB or (imported == "sqlalchemy" and name in SQL_STATEMENTS)
    }
    assert wrong == set()


def test_it_has_no_import_circle() -> None:
    graph = {
        module: trilha_targets(path, load_time_only=True) & MODULES.keys()
        for module, path in MODULES.items()
    }
    assert circles(graph) == []


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm).

    >>> circles({"a": {"b"}, "b": {"a"}, "c": {"a"}})
    [['a', 'b']]
    >>> circles({"a": {"b"}, "b": set()})
    []
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found
