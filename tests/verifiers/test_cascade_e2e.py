"""The ``quality`` strategy end to end on real QUEST pages with real models.

Default suite: MiniLM's embedding evidence and SmolLM2-135M (llama.cpp) as the costly
verifier, over ten real novel pages: certified top-k verification with a real model
(costs in every hit, fewer checks than all pairs, a certificate), ``llm-rerank`` beside
it, and the calibrated mode through ``fit-cascade``. Slow: Qwen2.5-1.5B, whose verdicts
must separate the science fiction novels.
"""

from __future__ import annotations

import numpy as np
import pytest

QUERY = "novels that are not science fiction novels"


def _docs(pages):
    from logic_rag import Document

    return [Document(id=p["title"], title=p["title"], text=p["text"]) for p in pages]


def _llamacpp_or_skip():
    import os

    from logic_rag.generators.llamacpp import llamacpp_available

    if not llamacpp_available():
        if os.environ.get("LOGIC_RAG_REQUIRE_MODELS"):
            pytest.fail("llama-cpp-python is not installed (make setup builds it)")
        pytest.skip("llama-cpp-python is not installed; run `make setup`")


def test_quality_certifies_the_top_k_with_a_real_llm(quest_novel_pages, minilm):
    _llamacpp_or_skip()
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.strategy_settings import LLMRerankSettings, QualitySettings

    llm = "llm:llamacpp:smollm2-135m"
    retriever = LogicRetriever.build(_docs(quest_novel_pages), model=minilm).with_settings(
        QualitySettings(verifier=llm, verifier_atoms="all"),
        LLMRerankSettings(verifier=llm, verifier_atoms="all"),
    )
    hits = retriever.search(QUERY, k=3, strategy="quality")
    assert len(hits) == 3 and len({h.id for h in hits}) == 3
    cost = hits[0].logic["llm"]
    assert cost["all_pairs_calls"] == 20  # 10 pages x 2 atoms
    assert 0 < cost["calls"] < 20 and cost["k"] == 3
    # The order of the top 3 is certified; a hit only when the LLM's verdicts make the
    # query true (the certificate covers every constraint, NOT included). SmolLM2 is
    # plumbing-grade and may call a novel "not a novel", so the top k as a whole is
    # certified exactly when every hit is.
    assert cost["order_certified"] is True and cost["covers"] == "every constraint"
    assert cost["certified"] is (cost["certified_hits"] == cost["k"])
    assert cost["prompt_tokens"] > 0
    for hit in hits:
        assert set(hit.constraint_scores) == {"novels", "NOT science fiction novels"}
        assert set(hit.constraint_sources.values()) <= {"llm", "embedding"}
    assert any(src == "llm" for h in hits for src in h.constraint_sources.values())
    # The whole-query peer on the same pool: one check per page.
    peer = retriever.search(QUERY, k=3, strategy="llm-rerank")
    assert peer[0].logic["llm"]["calls"] == 10


@pytest.mark.slow
def test_quality_with_qwen_certifies_members_with_fewer_calls(quest_novel_pages, minilm, qwen_1_5b):
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.strategy_settings import QualitySettings, VerifySettings

    member = {p["title"]: "science fiction" in p["text"].lower() for p in quest_novel_pages}
    retriever = LogicRetriever.build(_docs(quest_novel_pages), model=minilm).with_settings(
        QualitySettings(verifier="llm:qwen2.5-1.5b", max_calls=None),
        VerifySettings(verifier="llm:qwen2.5-1.5b"),
    )
    atom = "science fiction novels"
    top = retriever.search(atom, k=3, strategy="quality")
    cost = top[0].logic["llm"]
    assert cost["certified"] is True and 0 < cost["calls"] < cost["all_pairs_calls"]
    assert sum(member[h.id] for h in top) >= 2, [(h.id, h.constraint_scores) for h in top]
    # Qwen's own verdicts separate the members: verify with every pair checked.
    every = retriever.search(atom, k=10, strategy="verify")
    p = {h.id: h.constraint_scores[atom] for h in every}
    yes = np.array([p[t] for t in member if member[t]])
    no = np.array([p[t] for t in member if not member[t]])
    auc = float((yes[:, None] > no[None, :]).mean() + 0.5 * (yes[:, None] == no[None, :]).mean())
    assert auc >= 0.75, (auc, p)


def test_fit_cascade_command_fits_once_and_search_reuses_it(
    quest_novel_pages, minilm, tmp_path, capsys
):
    _llamacpp_or_skip()
    from logic_rag.cli import main
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.verifiers.thresholds import CascadeThresholds

    index = tmp_path / "index"
    LogicRetriever.build(_docs(quest_novel_pages), model=minilm).save(index)
    queries = tmp_path / "train.txt"
    queries.write_text(f"{QUERY}\nscience fiction novels or fantasy novels\n")
    out = tmp_path / "cascade.json"
    spec = "llm:llamacpp:smollm2-135m"
    args = ["fit-cascade", str(index), "--queries", str(queries), "--out", str(out)]
    assert main([*args, "--verifier", spec, "--sample", "10"]) == 0
    assert len(CascadeThresholds.load(out).sample) == 10
    assert "--quality-thresholds" in capsys.readouterr().out
    search = ["search", str(index), QUERY, "--strategy", "quality", "--json", "--explain"]
    calibrated = ["--quality-bounds", "calibrated", "--quality-thresholds", str(out)]
    assert main([*search, "--verifier", spec, *calibrated]) == 0
    import json

    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["logic"]["llm"]["bounds"] == "calibrated"
    # Calibrated bounds with no fitted file: one line naming fit-cascade, before any model.
    missing = ["--quality-bounds", "calibrated", "--quality-thresholds", str(tmp_path / "no.json")]
    assert main([*search, "--verifier", spec, *missing]) == 2
    assert "fit-cascade" in capsys.readouterr().err
    assert main([*search[:-2], "--verifier", spec, "--quality-bounds", "calibrated"]) == 2
    assert "fit-cascade" in capsys.readouterr().err
    # The text output says what the LLM cost, in one line.
    assert main([*search[:-2], "--verifier", spec]) == 0
    out_text = capsys.readouterr().out
    assert "LLM: " in out_text and "certified" in out_text
    (tmp_path / "empty.txt").write_text("\n")
    bad = ["fit-cascade", str(index), "--queries", str(tmp_path / "empty.txt"), "--out", str(out)]
    assert main(bad) == 2
    assert "no queries" in capsys.readouterr().err
