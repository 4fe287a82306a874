"""The shape of the code: short modules, no import cycles, apps one way, private names kept home.

Read from the source (``tests/structure.py``: ``ast``, nothing imported), over the apps,
``peerrevenue/``, ``scripts/``, ``tests/`` and ``bench/``. Each check names every violation it
finds, not just the first.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from tests.structure import (
    ROOT,
    Module,
    cycles,
    graph,
    private_uses,
    project_modules,
    target,
)

LONGEST = 700

# Modules still over LONGEST, each with why it may be for now. An entry must name a module that
# is still too long: once it is split, its entry has to go.
TOO_LONG_FOR_NOW: dict[str, str] = {}

# Private names a module may still read from another, each with why.
PRIVATE_FOR_NOW: dict[tuple[str, str], str] = {}


def apps_in_order() -> list[str]:
    """The apps in the order docs/architecture.md draws them: each depends only on those before
    it. Read from the diagram itself, so that the rule and the documentation cannot part."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    found = re.search(r"^(\w+(?:\s+←\s+\w+)+)\s*$", text, re.MULTILINE)
    assert found, "docs/architecture.md has no 'a ← b ← …' line naming the apps in order"
    return re.split(r"\s+←\s+", found.group(1))


def too_long(modules: dict[str, Module]) -> dict[str, int]:
    return {name: module.lines for name, module in modules.items() if module.lines > LONGEST}


def against_the_order(modules: dict[str, Module], order: list[str]) -> list[str]:
    found = []
    for _name, module in sorted(modules.items()):
        if module.top not in order:
            continue
        for imported in module.imports:
            loaded = target(imported, modules)
            if loaded is None:
                continue
            app = loaded.partition(".")[0]
            if app in order and order.index(app) > order.index(module.top):
                found.append(
                    f"{module.file}:{imported.line}: {module.top} imports "
                    f"{loaded}, but {app} comes after {module.top}"
                )
    return found


def describe_cycle(cycle: list[str], modules: dict[str, Module]) -> str:
    steps = []
    for here, there in zip(cycle, cycle[1:], strict=False):
        lines = sorted(
            {
                imported.line
                for imported in modules[here].imports
                if target(imported, modules) == there
            }
        )
        steps.append(f"{here} (line {', '.join(map(str, lines))}) → ")
    return "".join(steps) + cycle[-1]


@pytest.fixture(scope="module")
def modules() -> dict[str, Module]:
    return project_modules()


def test_no_module_is_longer_than_the_limit(modules):
    long = too_long(modules)
    unexplained = [
        f"{modules[name].file}: {lines} lines (at most {LONGEST})"
        for name, lines in sorted(long.items())
        if name not in TOO_LONG_FOR_NOW
    ]
    assert not unexplained, "\n".join(unexplained)


def test_every_module_allowed_to_be_long_still_is(modules):
    stale = [name for name in TOO_LONG_FOR_NOW if name not in too_long(modules)]
    assert not stale, f"no longer too long (or gone): take them off TOO_LONG_FOR_NOW: {stale}"


def test_no_modules_import_each_other(modules):
    found = [describe_cycle(cycle, modules) for cycle in cycles(graph(modules))]
    assert not found, "import cycles:\n" + "\n".join(found)


def test_apps_depend_one_way_as_the_architecture_says(modules):
    order = apps_in_order()
    found = against_the_order(modules, order)
    assert not found, "\n".join(found)


def test_no_module_uses_a_private_name_of_another(modules):
    found = [
        f"{module.file}:{line}: {used}"
        for name, module in sorted(modules.items())
        for line, used in private_uses(module, modules)
        if (name, used) not in PRIVATE_FOR_NOW
    ]
    assert not found, "private names used from another module:\n" + "\n".join(found)


def test_every_private_use_allowed_for_now_still_happens(modules):
    happening = {
        (name, used)
        for name, module in modules.items()
        for _line, used in private_uses(module, modules)
    }
    stale = sorted(set(PRIVATE_FOR_NOW) - happening)
    assert not stale, f"take them off PRIVATE_FOR_NOW: {stale}"


# The checks themselves, on a small project of their own: each finds what it is there to find.


def write(root: Path, files: dict[str, str]) -> None:
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")


def test_a_cycle_closed_by_an_import_inside_a_function_is_found(tmp_path):
    write(
        tmp_path,
        {
            "shop/__init__.py": "",
            "shop/orders.py": "from . import trades\n",
            "shop/trades.py": "def fill():\n    from .orders import place\n",
            "shop/prices.py": "from shop import trades\n",
        },
    )
    modules = project_modules(tmp_path, ("shop",))
    assert cycles(graph(modules)) == [["shop.orders", "shop.trades", "shop.orders"]]
    assert describe_cycle(["shop.orders", "shop.trades", "shop.orders"], modules) == (
        "shop.orders (line 1) → shop.trades (line 2) → shop.orders"
    )


def test_an_app_importing_a_later_one_is_named_with_its_line(tmp_path):
    write(
        tmp_path,
        {
            "early/__init__.py": "",
            "early/views.py": "import os\n\nfrom late.models import Thing\n",
            "late/__init__.py": "",
            "late/models.py": "from early import views\n",
        },
    )
    modules = project_modules(tmp_path, ("early", "late"))
    found = against_the_order(modules, ["early", "late"])
    assert len(found) == 1
    assert found[0].endswith(
        "early/views.py:3: early imports late.models, but late comes after early"
    )


def test_a_private_name_imported_or_read_through_its_module_is_found(tmp_path):
    write(
        tmp_path,
        {
            "shop/__init__.py": "",
            "shop/trades.py": "_SQL = ''\n\ndef _fetch():\n    return _SQL\n",
            "shop/orders.py": "from shop import trades\n\ndef fill():\n    trades._fetch()\n",
            "shop/refunds.py": "from .trades import _SQL, __doc__\n",
            "shop/aliased.py": "import shop.trades as t\n\nt._fetch()\n",
        },
    )
    modules = project_modules(tmp_path, ("shop",))
    found = {name: private_uses(module, modules) for name, module in modules.items()}
    assert found["shop.orders"] == [(4, "shop.trades._fetch")]
    assert found["shop.refunds"] == [(1, "shop.trades._SQL")]
    assert found["shop.aliased"] == [(3, "shop.trades._fetch")]
    assert found["shop.trades"] == []


def test_the_architecture_orders_every_app_the_site_installs(settings):
    # The project's apps are the installed ones whose package is here; with the plumbing first.
    installed = {app for app in settings.INSTALLED_APPS if (ROOT / app / "apps.py").exists()}
    order = apps_in_order()
    assert order[0] == "peerrevenue"
    assert set(order[1:]) == installed
