"""No module imports, reads, writes or overrides an underscore name of a third-party package.

A library's underscore names are outside its compatibility promise: a minor release may rename or
remove one, and the code built on it breaks without a failing import. This test reads every Python
file of the repository (the library, functions, infra, scripts, benchmarks and the tests) and lists
each use it finds; the list must be empty. Found by reading the source (no code runs), except that a
class's third-party base is imported to learn whether a private method defined on it overrides one.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SOURCE_ROOTS = ("shared", "functions", "infra", "scripts", "benchmarks", "tests", "app.py")
SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "cdk.out", "build", ".venv"})


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def python_files() -> list[Path]:
    files = []
    for root in SOURCE_ROOTS:
        path = REPO_ROOT / root
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files += [p for p in path.rglob("*.py") if not SKIPPED_DIRS & set(p.relative_to(REPO_ROOT).parts)]
    return sorted(files)


def first_party_modules(files: list[Path]) -> set[str]:
    """Top-level names importable from the repository: packages, and modules the tests import by name."""
    names = {"agentmem"}
    for path in files:
        names.add(path.stem)
        names.update(path.relative_to(REPO_ROOT).parts[:-1])
    return names


def third_party(module: str | None, ours: set[str]) -> bool:
    if not module:
        return False  # a relative import
    top = module.split(".")[0]
    return top not in ours and top not in sys.stdlib_module_names


def defined_private_names(trees: list[ast.AST]) -> set[str]:
    """Underscore names the repository defines itself: functions, classes, variables, and `self._x = ...`."""
    names: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name.split(".")[0])
            elif (
                isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}
            ):  # fmt: skip
                names.add(node.attr)
    return {name for name in names if private(name)}


def imported_third_party(tree: ast.AST, ours: set[str]) -> dict[str, str]:
    """Local name -> dotted third-party name, for every import of the file."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if third_party(alias.name, ours) and alias.asname:
                    bound[alias.asname] = alias.name
                elif third_party(alias.name, ours):
                    bound[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and third_party(node.module, ours):
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    # `x = library.Thing(...)`: x is the library's object too.
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            made_by = dotted(node.value.func)
            root = made_by.split(".")[0] if made_by else None
            if made_by and root in bound:
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        bound[target.id] = f"{bound[root]}{made_by[len(root):]}()"
    return bound


def dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def resolve(name: str) -> object | None:
    """The object a dotted third-party name stands for, or None when it cannot be imported here."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for part in parts[cut:]:
                value = getattr(value, part)
        except AttributeError:
            return None
        return value
    return None


def private_uses(path: Path, tree: ast.AST, ours: set[str], defined: set[str]) -> Iterator[str]:
    where = path.relative_to(REPO_ROOT).as_posix()
    bound = imported_third_party(tree, ours)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if third_party(alias.name, ours) and any(map(private, alias.name.split("."))):
                    yield f"{where}:{node.lineno} imports {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and third_party(node.module, ours):
            module = node.module or ""
            for alias in node.names:
                if private(alias.name) or any(map(private, module.split("."))):
                    yield f"{where}:{node.lineno} imports {alias.name} from {module}"
        elif isinstance(node, ast.Attribute) and private(node.attr):
            head = dotted(node.value)
            root = head.split(".")[0] if head else None
            if root in bound:
                yield f"{where}:{node.lineno} uses {bound[root]}{head[len(root):] if head else ''}.{node.attr}"
            elif node.attr not in defined:
                # Defined nowhere here: an attribute of some library's object (or of a library base class).
                yield f"{where}:{node.lineno} uses .{node.attr} of {head or 'an expression'}, defined by no module here"
        elif isinstance(node, ast.ClassDef):
            yield from overrides(where, node, bound)


def defined_names(statement: ast.stmt) -> list[str]:
    """The names a statement of a class body defines on the class."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
        return [statement.name]
    if isinstance(statement, ast.Assign | ast.AnnAssign):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return [t.id for t in targets if isinstance(t, ast.Name)]
    return []


def overrides(where: str, node: ast.ClassDef, bound: dict[str, str]) -> Iterator[str]:
    if not any(private(name) for statement in node.body for name in defined_names(statement)):
        return  # nothing to override: spare importing the bases (aws_cdk starts a node process)
    bases = []
    for base in node.bases:
        name = dotted(base)
        root = name.split(".")[0] if name else None
        if name and root in bound:
            resolved = resolve(bound[root] + name[len(root):])
            if isinstance(resolved, type):
                bases.append(resolved)
    for statement in node.body:
        for name in filter(private, defined_names(statement)):
            for base in bases:
                # An abstract method is the base's declared extension point (powertools' BasePersistenceLayer
                # asks for `_get_record` and three others): implementing it is what the library asks.
                if hasattr(base, name) and name not in getattr(base, "__abstractmethods__", ()):
                    overridden = f"{base.__module__}.{base.__qualname__}.{name}"
                    yield f"{where}:{statement.lineno} {node.name}.{name} overrides {overridden}"


def line_number(use: str) -> int:
    return int(use.split(" ", 1)[0].rsplit(":", 1)[1])


def test_no_module_imports_reads_or_overrides_an_underscore_name_of_a_third_party_package() -> None:
    files = python_files()
    trees = [ast.parse(path.read_text(), filename=str(path)) for path in files]
    ours = first_party_modules(files)
    defined = defined_private_names(trees)

    found = [use for path, tree in zip(files, trees, strict=True) for use in private_uses(path, tree, ours, defined)]
    found.sort()

    assert found == []


def test_the_scan_finds_an_import_a_read_and_an_override_of_a_private_name(tmp_path: Path) -> None:
    source = (
        "import requests\n"
        "from aws_lambda_powertools.event_handler import APIGatewayRestResolver\n"
        "from aws_lambda_powertools.event_handler.api_gateway import _SAFE_URI\n"
        "class R(APIGatewayRestResolver):\n"
        "    def _convert_matches_into_route_keys(self, match):\n"
        "        return {}\n"
        "response = requests.Response()\n"
        "response._content = b''\n"
        "requests._internal_utils\n"
    )
    path = REPO_ROOT / "tests" / "unit" / "sample_private_use.py"
    tree = ast.parse(source)

    found = sorted(private_uses(path, tree, first_party_modules(python_files()), set()), key=line_number)

    assert found == [
        "tests/unit/sample_private_use.py:3 imports _SAFE_URI from aws_lambda_powertools.event_handler.api_gateway",
        "tests/unit/sample_private_use.py:5 R._convert_matches_into_route_keys overrides "
        "aws_lambda_powertools.event_handler.api_gateway.APIGatewayRestResolver._convert_matches_into_route_keys",
        "tests/unit/sample_private_use.py:8 uses requests.Response()._content",
        "tests/unit/sample_private_use.py:9 uses requests._internal_utils",
    ]
