"""The ``quality`` strategy end to end on real QUEST pages with real models.

Default suite: MiniLM's embedding evidence and SmolLM2-135M (llama.cpp) as the costly
verifier, over ten real novel pages: the plumbing (fit on the batch, bands, rounds,
costs in every hit) with a real model. Slow: Qwen2.5-1.5B, whose verdicts must separate
the science fiction novels, with fewer calls than checking every pair.
"""

from __future__ import annotations

import numpy as np
import pytest

from logic_rag.verifiers.cascade import forget_thresholds

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


def test_quality_runs_the_cascade_with_a_real_llm(quest_novel_pages, minilm, tmp_path):
    _llamacpp_or_skip()
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.strategies import LogicConfig
    from logic_rag.verifiers.thresholds import CascadeThresholds

    forget_thresholds()
    saved = tmp_path / "cascade.json"
    config = LogicConfig(
        verifier="llm:llamacpp:smollm2-135m",
        verifier_atoms="all",
        quality_thresholds=str(saved),
        quality_sample=12,
    )
    retriever = LogicRetriever.build(_docs(quest_novel_pages), model=minilm, config=config)
    hits = retriever.search(QUERY, k=10, strategy="quality")
    assert len(hits) == 10 and len({h.id for h in hits}) == 10
    cascade = hits[0].logic["cascade"]
    assert cascade["all_pairs_calls"] == 20  # 10 pages x 2 atoms
    assert 0 < cascade["expensive_calls"] <= 20
    assert cascade["fit_calls"] >= 1 and cascade["prompt_tokens"] > 0
    assert saved.is_file() and len(CascadeThresholds.load(saved).sample) == 12
    for hit in hits:
        assert set(hit.constraint_scores) == {"novels", "NOT science fiction novels"}
        assert all(0.0 <= v <= 1.0 for v in hit.constraint_scores.values())
    # A second search reuses the saved sample: no fitting calls.
    forget_thresholds()
    again = retriever.search(QUERY, k=10, strategy="quality")
    assert again[0].logic["cascade"]["fit_calls"] == 0
    forget_thresholds()


@pytest.mark.slow
def test_quality_with_qwen_separates_members_with_fewer_calls(
    quest_novel_pages, minilm, qwen_1_5b, tmp_path
):
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.strategies import LogicConfig

    forget_thresholds()
    member = {p["title"]: "science fiction" in p["text"].lower() for p in quest_novel_pages}
    config = LogicConfig(
        verifier="llm:qwen2.5-1.5b",
        quality_thresholds=str(tmp_path / "cascade.json"),
        quality_sample=8,
    )
    retriever = LogicRetriever.build(_docs(quest_novel_pages), model=minilm, config=config)
    atom = "science fiction novels"
    hits = retriever.search(atom, k=10, strategy="quality")
    p = {h.id: h.constraint_scores[atom] for h in hits}
    yes = np.array([p[t] for t in member if member[t]])
    no = np.array([p[t] for t in member if not member[t]])
    auc = float((yes[:, None] > no[None, :]).mean() + 0.5 * (yes[:, None] == no[None, :]).mean())
    assert auc >= 0.75, (auc, p)
    forget_thresholds()


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
    forget_thresholds()
    search = ["search", str(index), QUERY, "--strategy", "quality", "--json", "--explain"]
    assert main([*search, "--verifier", spec, "--quality-thresholds", str(out)]) == 0
    import json

    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["logic"]["cascade"]["fit_calls"] == 0
    forget_thresholds()
    (tmp_path / "empty.txt").write_text("\n")
    bad = ["fit-cascade", str(index), "--queries", str(tmp_path / "empty.txt"), "--out", str(out)]
    assert main(bad) == 2
    assert "no queries" in capsys.readouterr().err
