"""The library stays a library: importing it loads no eval or fine-tuning code, and no
module of ``logic_rag/`` keeps a module-level mutable cache (state belongs to objects:
a retriever's resources, a verifier's pair cache), nor an ``lru_cache``."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "logic_rag"


def test_importing_logic_rag_loads_no_eval_or_finetune_module():
    code = (
        "import logic_rag, sys; print([m for m in sys.modules if 'evals' in m or 'finetune' in m])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _module_level_caches(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in tree.body:
        targets: list[ast.expr] = []
        value = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        mutable = isinstance(value, ast.Dict | ast.List | ast.Set) or (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in {"dict", "list", "set", "OrderedDict", "defaultdict"}
        )
        for target in targets:
            name = target.id if isinstance(target, ast.Name) else ""
            # Upper-case names are constant tables (registries, limits), never written.
            if mutable and name and not name.isupper() and name != "__all__":
                found.append(f"{path.name}:{node.lineno} {name}")
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for deco in node.decorator_list:
                text = ast.unparse(deco)
                if "lru_cache" in text or text.endswith("cache"):
                    found.append(f"{path.name}:{node.lineno} @{text} {node.name}")
    return found


#: Process-wide values that are not caches of anyone's state, each with why:
ALLOWED = {
    # a fact of the machine (CPU flags), computed once
    "dtype.py @functools.lru_cache(maxsize=1) cpu_has_bf16",
    # pure functions of a file's identity: keyed by path, size and mtime, so an edited
    # file is hashed again
    "models.py @functools.lru_cache(maxsize=32) _fingerprint",
    "weights.py @functools.lru_cache(maxsize=64) _cached_sha256",
    # the process default of `logic-rag --deadline` (set_default_deadline), a setting
    "base.py _deadline",
}


def test_no_module_level_mutable_cache_in_the_library():
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in _module_level_caches(path)]
    unexplained = [
        hit for hit in found if f"{hit.split(':')[0]} {hit.split(' ', 1)[1]}" not in ALLOWED
    ]
    assert unexplained == []


def test_installed_code_never_looks_beside_site_packages(tmp_path, monkeypatch):
    """Outside a checkout (no pyproject.toml beside the package) the data default is
    under the current folder, not ``site-packages/../shared``."""
    import logic_rag.paths as paths

    fake = tmp_path / "site-packages"
    (fake / "logic_rag").mkdir(parents=True)
    monkeypatch.delenv("LOGIC_RAG_DATA", raising=False)
    monkeypatch.setattr(paths, "project_root", lambda: fake)
    monkeypatch.chdir(tmp_path)
    assert paths.shared_data_dir() == tmp_path / "shared" / "data"
    monkeypatch.setenv("LOGIC_RAG_DATA", str(tmp_path / "data"))
    assert paths.shared_data_dir() == tmp_path / "data"
