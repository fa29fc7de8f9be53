"""Every package's lazy re-exports resolve, are cached, and unknown names fail clearly."""

from __future__ import annotations

import importlib
import sys
import types

import pytest

from logic_rag.lazy import lazy_exports

PACKAGES = [
    "logic_rag",
    "logic_rag.generators",
    "logic_rag.evals.rag",
    "logic_rag.finetune.data",
    "logic_rag.finetune.entailment",
    "experiments.finetune",
    "logic_rag.finetune.losses",
    "logic_rag.finetune.recipes",
]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{package}.{name}"
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        module.nope  # noqa: B018


def test_lazy_exports_imports_on_first_use_and_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    package = types.ModuleType("fakepkg")
    package.__path__ = []  # a package, so relative imports resolve against it
    leaf = types.ModuleType("fakepkg.leaf")
    leaf.VALUE = object()
    monkeypatch.setitem(sys.modules, "fakepkg", package)
    monkeypatch.setitem(sys.modules, "fakepkg.leaf", leaf)
    getattr_, dir_ = lazy_exports("fakepkg", {"VALUE": "leaf"})
    assert "VALUE" not in vars(package)
    assert getattr_("VALUE") is leaf.VALUE
    assert vars(package)["VALUE"] is leaf.VALUE  # cached: the next lookup skips __getattr__
    assert "VALUE" in dir_()
    with pytest.raises(AttributeError, match="'fakepkg' has no attribute 'OTHER'"):
        getattr_("OTHER")
