"""The import graph: no circles, and imports point one way (down the layers).

Read from the source with :mod:`ast`, nothing imported. Every import counts: module level,
inside functions (lazy), under ``if TYPE_CHECKING``. The folders are mapped to import names
as ``pyproject.toml``'s ``package-dir`` maps them (``integrations`` ->
``logic_rag.integrations``, ``finetune`` -> ``logic_rag.finetune``, ``evals`` ->
``logic_rag.evals``), plus the repository's unpackaged ``benchmarks`` and ``experiments``.

A name taken from a package (``from logic_rag.generators import make_generator``) counts as
an import of the module the package re-exports it from (its ``_EXPORTS`` map for lazy
names, or its own ``from .x import name``), so a re-export cannot hide a loop; a package
``__init__`` itself, which only re-exports, is not a node of the graph.

Layers, lowest first; a module imports only from its own layer or lower ones:

0. core: ``logic_rag.*`` except the layers below (query, encoders, index, candidates,
   verifiers, compose, pipeline, generators, strategies, the retrievers, ...). Inside it,
   ``logic_rag.index`` and ``logic_rag.encoders`` (storage and encoding) import nothing of
   the search engine built on them (queries, candidates, verifiers, logic, pipeline,
   generators, strategies, retrievers).
1. ``logic_rag.integrations`` (the LlamaIndex and LangChain adapters);
2. ``logic_rag.finetune`` and ``logic_rag.evals``: one layer, since fine-tuning reads the
   evaluation's QUEST data, splits and metrics and two evals read training pairs (no
   module loop between them: the cycle test holds);
3. the command line, ``logic_rag.cli`` and ``logic_rag.__main__``: one entry point for every
   subcommand (eval, finetune, adapt), so it sits above all it dispatches to. Inside it, a
   sub-command group's module (``cli.search``, ``cli.evaluate`` ...) imports only the
   shared helpers (``cli.common``, ``cli.settings`` ...), never another group's: only
   ``cli.parser`` assembles them;
4. ``benchmarks`` and ``experiments`` (in the repository, not in the wheel).

So the core never imports ``logic_rag.integrations``, ``logic_rag.evals`` or
``logic_rag.finetune``. Interfaces never import their implementations: a factory module
above both picks the backend (``logic_rag.generators.factory``).
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Repository folders that are import roots but not in the wheel.
UNPACKAGED = {"benchmarks": "benchmarks", "experiments": "experiments"}

#: (prefix, layer); the longest matching prefix wins.
LAYERS = [
    ("logic_rag", 0),
    ("logic_rag.integrations", 1),
    ("logic_rag.finetune", 2),
    ("logic_rag.evals", 2),
    ("logic_rag.cli", 3),
    ("logic_rag.__main__", 3),
    ("benchmarks", 4),
    ("experiments", 4),
]

#: Inside the core: storage and encoding, and the search engine above them.
STORAGE = ("logic_rag.index", "logic_rag.encoders")
ENGINE = (
    "logic_rag.query",
    "logic_rag.candidates",
    "logic_rag.verifiers",
    "logic_rag.compose",
    "logic_rag.pipeline",
    "logic_rag.generators",
    "logic_rag.strategies",
    "logic_rag.strategy_settings",
    "logic_rag.retriever",
    "logic_rag.sparse_retriever",
    "logic_rag.logic_retriever",
)


def _roots(root: Path) -> dict[str, str]:
    """Folder (relative to ``root``) -> import name, from pyproject's package-dir."""
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    package_dir = pyproject["tool"]["setuptools"]["package-dir"]
    roots = {folder: name for name, folder in package_dir.items()}
    roots.update(UNPACKAGED)
    return roots


def _scan(root: Path) -> tuple[dict[str, Path], set[str]]:
    """Module name -> file, and the set of package names (folders with ``__init__``)."""
    modules: dict[str, Path] = {}
    packages: set[str] = set()
    for folder, name in _roots(root).items():
        base = root / folder
        for path in sorted(base.rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                packages.add(".".join([name, *parts[:-1]]))
            modules[".".join([name, *parts])] = path
    return modules, packages


def _absolute(node: ast.ImportFrom, module: str) -> str:
    """The absolute module an ``ImportFrom`` in ``module`` names."""
    if not node.level:
        return node.module or ""
    # A module's package is its name less the last part ("a.b.c" -> "a.b"; "a.b.__init__"
    # is package "a.b" itself).
    package = module.rpartition(".")[0]
    parts = package.split(".")
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


class Graph:
    """Module -> the modules it imports (within the project)."""

    def __init__(self, root: Path = ROOT) -> None:
        self.files, self.packages = _scan(root)
        self.trees = {
            m: ast.parse(p.read_text(encoding="utf-8"), filename=str(p))
            for m, p in self.files.items()
        }
        self.reexports = {pkg: self._reexports(pkg) for pkg in self.packages}
        self.edges: dict[str, set[str]] = {}
        for module in self.files:
            if module.endswith(".__init__"):
                continue
            self.edges[module] = {t for t in self._imports(module) if t != module}

    def _module(self, name: str) -> str | None:
        """The graph node for an absolute dotted name, or None outside the project."""
        if name in self.packages:
            return name + ".__init__"
        while name:
            if name in self.files:
                return name
            if name in self.packages:
                return name + ".__init__"
            name = name.rpartition(".")[0]
        return None

    def _reexports(self, package: str) -> dict[str, str]:
        """Names a package's ``__init__`` re-exports -> the absolute module they come from."""
        init = package + ".__init__"
        out: dict[str, str] = {}
        for node in ast.walk(self.trees[init]):
            if isinstance(node, ast.ImportFrom):
                source = _absolute(node, init)
                for alias in node.names:
                    out[alias.asname or alias.name] = source
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
                if not any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in node.targets):
                    continue
                for key, value in zip(node.value.keys, node.value.values, strict=True):
                    if isinstance(key, ast.Constant) and isinstance(value, ast.Constant):
                        out[key.value] = f"{package}.{value.value}"
        return out

    def _resolve(self, name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        """Leaf modules behind an absolute dotted name (a package goes through its exports)."""
        if name in seen:
            return set()
        if name in self.files:
            return {name}
        head, _, attr = name.rpartition(".")
        if head in self.packages and attr in self.reexports[head]:
            source = self.reexports[head][attr]
            if source in self.packages:
                return self._resolve(f"{source}.{attr}", seen | {name})
            target = self._module(source)
            return {target} if target and not target.endswith(".__init__") else set()
        if name in self.packages:
            return set()  # ``import package``: its __init__ only re-exports lazily
        target = self._module(name)
        return {target} if target and not target.endswith(".__init__") else set()

    def _imports(self, module: str) -> set[str]:
        out: set[str] = set()
        for node in ast.walk(self.trees[module]):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    out |= self._resolve(alias.name)
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(node, module)
                for alias in node.names:
                    if alias.name == "*":
                        out |= self._resolve(source)
                    else:
                        out |= self._resolve(f"{source}.{alias.name}")
        return out

    def cycles(self) -> list[list[str]]:
        """Strongly connected components of more than one module (Tarjan, iterative)."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        found: list[list[str]] = []
        counter = 0
        for start in sorted(self.edges):
            if start in index:
                continue
            work = [(start, iter(sorted(self.edges[start])))]
            index[start] = low[start] = counter
            counter += 1
            stack.append(start)
            on_stack.add(start)
            while work:
                v, children = work[-1]
                for w in children:
                    if w not in index:
                        index[w] = low[w] = counter
                        counter += 1
                        stack.append(w)
                        on_stack.add(w)
                        work.append((w, iter(sorted(self.edges.get(w, ())))))
                        break
                    if w in on_stack:
                        low[v] = min(low[v], index[w])
                else:
                    work.pop()
                    if work:
                        low[work[-1][0]] = min(low[work[-1][0]], low[v])
                    if low[v] == index[v]:
                        component = []
                        while True:
                            w = stack.pop()
                            on_stack.discard(w)
                            component.append(w)
                            if w == v:
                                break
                        if len(component) > 1:
                            found.append(sorted(component))
        return found

    def loop(self, component: list[str]) -> list[str]:
        """One closed path through a strongly connected component, for the message."""
        members = set(component)
        start = component[0]
        # Breadth-first from start back to start, inside the component.
        previous: dict[str, str] = {}
        frontier = [start]
        while frontier:
            nxt = []
            for v in frontier:
                for w in sorted(self.edges[v] & members):
                    if w == start:
                        path = [v]
                        while path[-1] != start:
                            path.append(previous[path[-1]])
                        return [start, *reversed(path[:-1]), start]
                    if w not in previous:
                        previous[w] = v
                        nxt.append(w)
            frontier = nxt
        return component


def layer(module: str) -> int:
    return max((len(p), lvl) for p, lvl in LAYERS if module == p or module.startswith(p + "."))[1]


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _within_any(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(_within(module, p) for p in prefixes)


GRAPH = Graph()


def test_the_graph_covers_every_package():
    names = set(GRAPH.edges)
    for expected in (
        "logic_rag.retriever",
        "logic_rag.integrations.llama_index",
        "logic_rag.finetune.adapt.driver",
        "logic_rag.evals.beir",
        "benchmarks.run",
    ):
        assert expected in names, expected
    # Lazy imports and package re-exports are followed.
    assert "logic_rag.generators.factory" in GRAPH.edges["logic_rag.query.auto"]


def _named(graph: Graph, component: list[str]) -> str:
    """A loop as ``a -> b -> a``, plus the rest of its circle when the path skips some."""
    path = graph.loop(component)
    rest = sorted(set(component) - set(path))
    return " -> ".join(path) + (f" (same circle: {', '.join(rest)})" if rest else "")


#: Loops known and owned elsewhere, each to be removed here when it is gone. Empty is the
#: goal (issue 50). ``pipeline.stage``'s allow-list check (``component_from_dict``, issue
#: 51) imports ``verifiers.base.Verifier`` lazily, and ``verifiers.base`` builds on
#: ``pipeline.stage``: the check belongs in a module above both.
KNOWN_CYCLES: list[set[str]] = []


def test_no_import_cycles():
    found = GRAPH.cycles()
    loops = [_named(GRAPH, c) for c in found if set(c) not in KNOWN_CYCLES]
    assert not loops, "import cycles (lazy imports count too):\n" + "\n".join(loops)
    gone = [sorted(k) for k in KNOWN_CYCLES if k not in [set(c) for c in found]]
    assert not gone, f"no longer a loop, remove from KNOWN_CYCLES: {gone}"


def test_imports_point_down_the_layers():
    upward = [
        f"{module} (layer {layer(module)}) imports {target} (layer {layer(target)})"
        for module, targets in sorted(GRAPH.edges.items())
        for target in sorted(targets)
        if layer(target) > layer(module)
    ]
    assert not upward, "imports against the layer order:\n" + "\n".join(upward)


#: The command line's sub-command groups, each a module adding its parsers (``cli.parser``
#: imports them all; none imports another).
CLI_COMMANDS = tuple(
    f"logic_rag.cli.{name}"
    for name in (
        "index", "search", "evaluate", "fit_cascade", "adapt", "finetune", "demo", "models"
    )
)  # fmt: skip


def test_cli_command_groups_import_only_shared_helpers():
    crossing = [
        f"{module} imports {target}"
        for module in CLI_COMMANDS
        for target in sorted(GRAPH.edges[module])
        if target in CLI_COMMANDS
    ]
    assert not crossing, "a CLI command group importing another:\n" + "\n".join(crossing)
    assert set(CLI_COMMANDS) <= GRAPH.edges["logic_rag.cli.parser"]


def test_storage_imports_nothing_of_the_engine_above_it():
    upward = [
        f"{module} imports {target}"
        for module, targets in sorted(GRAPH.edges.items())
        if _within_any(module, STORAGE)
        for target in sorted(targets)
        if _within_any(target, ENGINE)
    ]
    assert not upward, "storage importing the search engine above it:\n" + "\n".join(upward)


def test_a_loop_and_an_upward_import_are_found(tmp_path):
    """The checks above on a made-up tree: the message names every module of the loop."""
    for folder, files in {
        "logic_rag": {
            "a.py": "from logic_rag.b import x\n",
            "b.py": "def f():\n    import logic_rag.a\n",
        },
        "integrations": {"c.py": ""},
        "finetune": {},
        "evals": {"d.py": "from logic_rag.integrations import c\n"},
    }.items():
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
        for name, text in files.items():
            (tmp_path / folder / name).write_text(text)
    (tmp_path / "logic_rag" / "e.py").write_text("from logic_rag.evals import d\n")
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    graph = Graph(tmp_path)
    assert [_named(graph, c) for c in graph.cycles()] == [
        "logic_rag.a -> logic_rag.b -> logic_rag.a"
    ]
    assert graph.edges["logic_rag.e"] == {"logic_rag.evals.d"}
    assert layer("logic_rag.e") < layer("logic_rag.evals.d")
