"""The project's own modules and the imports between them, read from the source with ``ast``.

Nothing is imported or executed: a module is a ``.py`` file under one of the project's top-level
packages, and an import is any ``import``/``from … import`` statement in it, at module level or
inside a function (both run sooner or later, so both can close a cycle). ``tests/test_structure.py``
holds the rules these facts are checked against.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The project's own code: the apps, the plumbing and what runs or checks them.
PACKAGES = ("peerrevenue", "papers", "market", "library", "accounts", "scripts", "tests", "bench")


@dataclass(frozen=True)
class Import:
    """One imported name as written: ``from module import name as alias`` (``name`` empty for
    ``import module as alias``; ``alias`` empty when there is none)."""

    module: str
    name: str
    line: int
    alias: str = ""


@dataclass
class Module:
    name: str
    path: Path
    file: str  # the path from the project's root, as messages name it
    lines: int
    imports: list[Import] = field(default_factory=list)
    # Every ``a.b.c`` read in the module, as (("a", "b", "c"), line), for private uses.
    attributes: list[tuple[tuple[str, ...], int]] = field(default_factory=list)

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"

    @property
    def top(self) -> str:
        return self.name.partition(".")[0]


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _absolute(module: Module, node: ast.ImportFrom) -> str:
    """The absolute module a ``from`` import names (relative ones resolved against ``module``)."""
    if not node.level:
        return node.module or ""
    package = module.name.split(".")
    if not module.is_package:
        package.pop()
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _imports(module: Module, tree: ast.Module) -> list[Import]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [Import(a.name, "", node.lineno, a.asname or "") for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            found += [Import(source, a.name, node.lineno, a.asname or "") for a in node.names]
    return found


def _module_attributes(tree: ast.Module) -> list[tuple[tuple[str, ...], int]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            parts = [node.attr]
            value = node.value
            while isinstance(value, ast.Attribute):
                parts.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name):
                parts.append(value.id)
                found.append((tuple(reversed(parts)), node.lineno))
    return found


def project_modules(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, Module]:
    """Every module under ``packages`` (folders of ``root``), by dotted name."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            module = Module(
                module_name(path, root),
                path,
                str(path.relative_to(root)),
                len(source.splitlines()),
            )
            tree = ast.parse(source, filename=str(path))
            module.imports = _imports(module, tree)
            module.attributes = _module_attributes(tree)
            modules[module.name] = module
    return modules


def target(imported: Import, modules: dict[str, Module]) -> str | None:
    """The project module an import loads: ``from pkg import sub`` is the submodule ``pkg.sub``
    when there is one, and otherwise ``pkg`` itself; ``None`` for anything outside the project."""
    if imported.name and f"{imported.module}.{imported.name}" in modules:
        return f"{imported.module}.{imported.name}"
    return imported.module if imported.module in modules else None


def graph(modules: dict[str, Module]) -> dict[str, set[str]]:
    """Each module's project imports (itself left out)."""
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for name, module in modules.items():
        for imported in module.imports:
            loaded = target(imported, modules)
            if loaded is not None and loaded != name:
                edges[name].add(loaded)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles, as ``[a, b, …, a]``: within each group of modules that import each
    other (a strongly connected component), the shortest cycle through each member, each cycle
    once (started at its first module by name)."""
    found: set[tuple[str, ...]] = set()
    for component in _components(edges):
        if len(component) == 1:
            continue
        for member in component:
            cycle = _shortest_cycle(member, component, edges)[:-1]
            first = cycle.index(min(cycle))
            turned = cycle[first:] + cycle[:first]
            found.add((*turned, turned[0]))
    return sorted(list(cycle) for cycle in found)


def _components(edges: dict[str, set[str]]) -> list[set[str]]:
    # Tarjan's algorithm, iterative so that a deep chain of imports cannot hit the recursion limit.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    components.append(component)
    return components


def _shortest_cycle(start: str, within: set[str], edges: dict[str, set[str]]) -> list[str]:
    # Breadth first from start back to itself, staying inside its component.
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for successor in sorted(edges[node] & within):
                if successor == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start else [start, start]
                if successor not in came_from:
                    came_from[successor] = node
                    following.append(successor)
        frontier = following
    raise AssertionError(f"{start} is in a component without a cycle through it")


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses(module: Module, modules: dict[str, Module]) -> list[tuple[int, str]]:
    """Where ``module`` uses another project module's private name, as (line, ``other._name``):
    imported (``from other import _name``) or read through the module (``other._name``)."""
    found = []
    # What each local name stands for, when it is a project module.
    bound: dict[str, str] = {}
    for imported in module.imports:
        if not imported.name:
            # ``import a.b`` binds ``a`` (``a.b._x`` is read through it); ``import a.b as c``: c.
            top = imported.module.partition(".")[0]
            bound[imported.alias or top] = imported.module if imported.alias else top
            continue
        loaded = target(imported, modules)
        if loaded is None or loaded == module.name:
            continue
        if is_private(imported.name):
            found.append((imported.line, f"{imported.module}.{imported.name}"))
        elif loaded == f"{imported.module}.{imported.name}":
            bound[imported.alias or imported.name] = loaded
    for parts, line in module.attributes:
        if parts[0] not in bound:
            continue
        dotted = [bound[parts[0]], *parts[1:]]
        # The longest prefix that is a module; the name read from it is the next part.
        for end in range(len(dotted) - 1, 0, -1):
            owner = ".".join(dotted[:end])
            if owner in modules:
                if owner != module.name and is_private(dotted[end]):
                    found.append((line, f"{owner}.{dotted[end]}"))
                break
    return sorted(set(found))
