"""No questions: the teacher names categories for sampled pages, then labels them.

The LLM is scripted (it names "Italian films" for pages that mention Italy, "French
novels" for those that mention France, and answers yes when the page mentions the
category's country), the verifier, index and driver are real.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pytest


class ScriptedLLM:
    name = "scripted-llm"

    def generate(self, prompts, *, max_tokens=256, temperature=0.0, system=None):
        out = []
        for prompt in prompts:
            page = prompt.split("\n\n")[0].lower()
            names = []
            if "italian" in page:
                names += ["Italian films", "italian  films"]
            if "french" in page:
                names.append("French novels")
            out.append("\n".join(f"{i + 1}. {n}" for i, n in enumerate(names)) or "I do not know.")
        return out

    def choice_logprobs(self, prompts: Sequence[str], choices, *, system=None) -> np.ndarray:
        rows = []
        for prompt in prompts:
            page, _, question = prompt.partition("Question:")
            country = "italian" if "Italian" in question else "french"
            yes = country in page.lower()
            rows.append([np.log(0.9), np.log(0.1)] if yes else [np.log(0.1), np.log(0.9)])
        return np.array(rows)


def test_atoms_generated_from_pages_then_labelled(tiny_index, tmp_path):
    from logic_rag.finetune.adapt import AdaptSettings, adapt
    from logic_rag.verifiers.llm import LLMVerifier

    index, _ = tiny_index
    settings = AdaptSettings(max_pairs=200, top_k=5, random_pages=2, sample_pages=12)
    result = adapt(
        index,
        tmp_path / "run",
        verifier=LLMVerifier(generator=ScriptedLLM()),
        settings=settings,
        progress=False,
        stop_after="labels",
    )
    atoms = result.phases["atoms"]
    assert atoms["source"] == "pages"
    assert atoms["atoms"] == ["Italian films", "French novels"]  # most frequent first
    assert "12 pages" in atoms["how"]
    generated = [json.loads(x) for x in (tmp_path / "run" / "generated.jsonl").open()]
    assert len(generated) == 12
    labels = [json.loads(x) for x in (tmp_path / "run" / "labels.jsonl").open()]
    italian = {r["doc"] for r in labels if r["atom"] == "Italian films" and r["score"] >= 0.5}
    assert italian == {"La dolce vita", "Gomorrah (film)", "Suburra (film)", "Il Divo"}


def test_without_queries_the_teacher_must_be_an_llm(tiny_index, tmp_path):
    from logic_rag.finetune.adapt import AdaptError, adapt

    index, _ = tiny_index
    with pytest.raises(AdaptError, match="--queries"):
        adapt(index, tmp_path / "run", verifier="embedding", progress=False)
