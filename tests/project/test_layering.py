"""The dependency direction of docs/DESIGN.md, enforced on the imports of every module: between
packages (FORBIDDEN), between the modules of one package (no cycles), and inside functions (none
anywhere but FUNCTION_IMPORTS: an import there hides a dependency the module structure should
show)."""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# package -> top-level modules it must never import
FORBIDDEN = {
    "sgf_tools": {"engine", "models", "gtp", "training", "torch", "onnxruntime"},
    "engine": {"torch", "onnxruntime", "sgfmill", "sgf_tools", "models", "gtp", "training", "ray"},
    "models": {"torch", "gtp", "training", "ray"},
    "gtp": {"torch", "training", "match", "ray"},
    # engine-match: a tool of its own that speaks GTP to engines (gtp.client) and referees with engine
    "match": {"torch", "onnxruntime", "models", "training"},
}
PACKAGES = ("engine", "gtp", "models", "training", "sgf_tools")
NO_FUNCTION_IMPORTS = (*PACKAGES, "match", "tests", "benchmarks")
# The one function that imports: engine-train registers the stages' commands when it runs, so
# that an install without the `train` extra (torch) gets a message, not a traceback.
FUNCTION_IMPORTS = {"training/cli.py"}
# The one deferred import: gtp.main has the session's loading thread import gtp.loader (numba,
# onnxruntime), so that the server answers `name` at once.
DEFERRED_IMPORTS = {"gtp/main.py"}


def _top(name: str) -> str:
    """The project package (engine, gtp, ...) or outside module (torch, ...) that `name` is in."""
    return name.removeprefix("goengine.").split(".")[0]


def _imports(path: pathlib.Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield _top(alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield _top(node.module)


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_respect_layering(package):
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"{package} has no modules"
    bad = []
    for f in files:
        for name in _imports(f):
            if name in FORBIDDEN[package]:
                bad.append(f"{f.relative_to(ROOT)} imports {name}")
    assert not bad, "\n".join(bad)


def test_nothing_imports_training():
    bad = []
    for package in ("engine", "models", "gtp", "match", "sgf_tools"):
        for f in (ROOT / package).rglob("*.py"):
            if "training" in set(_imports(f)):
                bad.append(str(f.relative_to(ROOT)))
    assert not bad


def test_only_training_imports_match():
    """engine-match's runner is a tool; the Zero loop's reference matches are its one user."""
    bad = [str(f.relative_to(ROOT)) for package in ("engine", "models", "gtp", "sgf_tools")
           for f in (ROOT / package).rglob("*.py") if "match" in set(_imports(f))]
    assert not bad


# ---- between the modules of one package -------------------------------------------------------

def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["goengine", *parts])     # installed under the goengine namespace


def _imported_modules(path: pathlib.Path, modules: set[str]):
    """The modules of `modules` that `path` imports, at any level of the file (functions too)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([node.module] if node.module else []))
            # `from pkg import mod` imports pkg.mod; `from mod import name` imports mod
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                       for a in node.names]
        else:
            continue
        for target in targets:
            parts = target.split(".")
            for k in range(len(parts), 0, -1):     # the module itself, or the package it is in
                if ".".join(parts[:k]) in modules:
                    if ".".join(parts[:k]) != name:
                        yield ".".join(parts[:k])
                    break


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle_between_the_modules_of_a_package(package):
    files = sorted((ROOT / package).rglob("*.py"))
    modules = {_module_name(f) for f in files}
    graph = {_module_name(f): set(_imported_modules(f, modules)) for f in files}
    assert not _cycles(graph), "\n".join(" -> ".join(g) for g in _cycles(graph))


def test_the_cycle_finder_sees_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


# ---- training/ by stage ---------------------------------------------------------------------

# The shared layers, lowest first: each imports only those before it. The workers play the games,
# data stores them and the datasets, nets trains and exports networks on them, export makes any
# stage's model files into int8 twins and held-out figures.
SHARED_LAYERS = ("workers", "data", "nets", "export")
# Each stage imports the shared layers and itself, never another stage.
STAGES = ("sl", "value", "rollout", "rl", "zero", "book")
# The release reads the stages' runs (training.bundle); training/cli.py registers every command.
RELEASE = "bundle"


def _training_imports(path: pathlib.Path) -> set[str]:
    """The training subpackages (or top-level modules) that `path` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return {n.split(".")[2] for n in names
            if n.startswith("goengine.training.") and len(n.split(".")) > 2}


def test_training_is_split_by_stage():
    folders = {p.parent.name for p in (ROOT / "training").glob("*/__init__.py")}
    assert folders == {*SHARED_LAYERS, *STAGES, RELEASE}
    assert sorted(p.name for p in (ROOT / "training").glob("*.py")) == ["__init__.py", "cli.py"]


def test_a_stage_imports_the_shared_layers_never_another_stage():
    allowed = {layer: set(SHARED_LAYERS[:i]) for i, layer in enumerate(SHARED_LAYERS)}
    allowed |= {stage: set(SHARED_LAYERS) for stage in STAGES}
    allowed[RELEASE] = set(SHARED_LAYERS) | set(STAGES)
    bad = []
    for package, may in allowed.items():
        for f in sorted((ROOT / "training" / package).rglob("*.py")):
            bad += [f"{f.relative_to(ROOT)} imports training.{name}"
                    for name in sorted(_training_imports(f) - may - {package})]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("package", PACKAGES + ("match",))
def test_no_private_name_is_imported_from_another_module(package):
    bad = []
    for f in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("goengine."):
                bad += [f"{f.relative_to(ROOT)} imports {node.module}.{a.name}"
                        for a in node.names if a.name.startswith("_")]
    assert not bad, "\n".join(bad)


# ---- inside functions -----------------------------------------------------------------------------

def _function_level_imports(path: pathlib.Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    yield node.lineno


def _dynamic_imports(path: pathlib.Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in ("import_module", "__import__"):
                yield node.lineno


@pytest.mark.parametrize("package", NO_FUNCTION_IMPORTS)
def test_no_imports_inside_functions(package):
    bad = []
    for f in sorted((ROOT / package).rglob("*.py")):
        rel = f.relative_to(ROOT).as_posix()
        if rel not in FUNCTION_IMPORTS:
            bad += [f"{rel}:{line} imports inside a function"
                    for line in _function_level_imports(f)]
        if rel not in DEFERRED_IMPORTS:
            bad += [f"{rel}:{line} imports by name at run time" for line in _dynamic_imports(f)]
    assert not bad, "\n".join(bad)


# ---- each thing once -----------------------------------------------------------------------------

ONE_DEFINITION = {  # name assigned at module level -> the one module that may define it
    "EMPTY": "engine/colors.py", "BLACK": "engine/colors.py", "WHITE": "engine/colors.py",
    "COLOUR_NAMES": "engine/colors.py", "MODEL_FILES": "models/names.py",
    "BUNDLED_DIR": "models/names.py",
}


def test_colours_and_model_names_are_defined_once():
    bad = []
    for package in PACKAGES + ("match",):
        for f in (ROOT / package).rglob("*.py"):
            rel = str(f.relative_to(ROOT))
            for node in ast.parse(f.read_text(encoding="utf-8")).body:
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, ast.AnnAssign) else []
                names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
                bad += [f"{rel} defines {n}" for n in names
                        if n in ONE_DEFINITION and ONE_DEFINITION[n] != rel]
    assert not bad, "\n".join(bad)
