"""Keys computed from a model spec are canonical: a deprecated alias (``qwen2.5-1.5b``) and
the name it stands for (``qwen2.5-coder-1.5b``) share the LLM verifier's cache and an
``adapt`` run's state (issue 52), so renaming a default to the canonical name loses
nothing."""

from __future__ import annotations

import pytest

from logic_rag.models import ALIASES, canonical_spec
from logic_rag.verifiers.llm import LLMVerifier


@pytest.mark.parametrize(
    ("spec", "canonical"),
    [
        ("qwen2.5-1.5b", "qwen2.5-coder-1.5b"),
        ("Qwen2.5-1.5B", "qwen2.5-coder-1.5b"),
        ("qwen2.5-0.5b", "qwen2.5-coder-0.5b"),
        ("llm:qwen2.5-1.5b", "llm:qwen2.5-coder-1.5b"),
        ("llm:llamacpp:qwen2.5-1.5b", "llm:llamacpp:qwen2.5-coder-1.5b"),
        ("transformers:qwen2.5-1.5b", "transformers:qwen2.5-coder-1.5b"),
        ("llm:qwen2.5-1.5b:0123456789abcdef", "llm:qwen2.5-coder-1.5b:0123456789abcdef"),
        ("qwen2.5-coder-1.5b", "qwen2.5-coder-1.5b"),
        ("smollm2-135m", "smollm2-135m"),
        ("/models/qwen2.5-1.5b", "/models/qwen2.5-1.5b"),
        ("openai:http://host:8000/v1#qwen2.5-1.5b", "openai:http://host:8000/v1#qwen2.5-1.5b"),
    ],
)
def test_canonical_spec(spec: str, canonical: str) -> None:
    assert canonical_spec(spec) == canonical


def test_every_alias_names_a_model_that_is_no_alias() -> None:
    assert all(canonical_spec(target) == target for target in ALIASES.values())


@pytest.mark.parametrize("backend", ["", "llamacpp:", "transformers:"])
def test_the_llm_verifiers_key_is_the_same_for_an_alias(backend: str) -> None:
    alias = LLMVerifier(generator=f"{backend}qwen2.5-1.5b").fingerprint()
    canonical = LLMVerifier(generator=f"{backend}qwen2.5-coder-1.5b").fingerprint()
    assert alias == canonical
    assert "qwen2.5-coder-1.5b" in canonical
    assert LLMVerifier(generator="smollm2-135m").fingerprint() != canonical


def test_the_default_verifier_is_named_canonically() -> None:
    assert LLMVerifier().generator == "qwen2.5-coder-1.5b"
    assert LLMVerifier().fingerprint() == LLMVerifier(generator="qwen2.5-1.5b").fingerprint()


def test_adapt_keys_its_state_on_the_canonical_teacher(tmp_path) -> None:
    from finetune.adapt.driver import DEFAULT_TEACHER, _teacher_name
    from finetune.adapt.state import RunState

    assert DEFAULT_TEACHER == "llm:qwen2.5-coder-1.5b"
    assert _teacher_name("llm:qwen2.5-1.5b") == _teacher_name("llm:qwen2.5-coder-1.5b")

    def fingerprint(spec: str) -> dict[str, object]:
        return {
            "index_manifest_sha256": "abc",
            "verifier": _teacher_name(spec),
            "teacher": LLMVerifier(generator=spec.removeprefix("llm:")).fingerprint(),
            "settings": {"budget": 10},
        }

    RunState.open(tmp_path / "run", fingerprint("llm:qwen2.5-1.5b")).finish("atoms", 1.0)
    resumed = RunState.open(tmp_path / "run", fingerprint("llm:qwen2.5-coder-1.5b"))
    assert resumed.done("atoms")


def test_a_state_written_under_the_alias_resumes(tmp_path) -> None:
    """A run folder from before the key was canonical names the alias in its state."""
    import json

    from finetune.adapt.state import STATE_FILE, RunState

    folder = tmp_path / "run"
    folder.mkdir()
    old = {"verifier": "llm:qwen2.5-1.5b", "teacher": "llm:qwen2.5-1.5b:0123", "settings": {}}
    state = {"fingerprint": old, "phases": {"atoms": {"seconds": 1.0}}, "spent": {}}
    (folder / STATE_FILE).write_text(json.dumps(state))
    new = {"verifier": "llm:qwen2.5-coder-1.5b", "teacher": "llm:qwen2.5-coder-1.5b:0123"}
    assert RunState.open(folder, {**new, "settings": {}}).done("atoms")
    with pytest.raises(Exception, match="another adapt run"):
        RunState.open(folder, {**new, "verifier": "llm:smollm2-135m", "settings": {}})
