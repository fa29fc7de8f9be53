"""The natural-exclusion measurements: token F1 and trap metrics against hand-computed and
brute-force references, the excluir and boolq runners, the CLI's bad-input exits."""

from __future__ import annotations

import itertools
import json
import random

import pytest

from logic_rag.evals.exclusions import (
    evaluate_excluir,
    evaluate_traps,
    main,
    read_jsonl,
    read_traps,
    title_without_parenthesis,
    token_f1,
    trap_metrics,
)
from logic_rag.query import And, Atom, Decomposition, Not
from logic_rag.query.rules import RuleDecomposer


def test_token_f1_against_hand_computed_values() -> None:
    assert token_f1("Marc Platt", "Marc Platt") == 1.0
    assert token_f1("the American dancer Marc Platt", "Marc Platt") == pytest.approx(2 / 3)
    assert token_f1("Kastellet", "Kastellet, Copenhagen") == pytest.approx(2 / 3)
    assert token_f1("2012-13 FC Bayern Munich season", "2012–13 FC Bayern Munich season") == 1.0
    assert token_f1("Leo & Liz", "Leo &amp; Liz") == 1.0  # entities decoded
    assert token_f1("Moses", "Eiffel 65") == 0.0
    assert token_f1("", "") == 1.0 and token_f1("x", "") == 0.0


def test_title_without_parenthesis() -> None:
    assert title_without_parenthesis("Marc Platt (dancer)") == "Marc Platt"
    assert (
        title_without_parenthesis("Leo &amp; Liz in Beverly Hills") == "Leo & Liz in Beverly Hills"
    )
    assert title_without_parenthesis("(1999)") == "(1999)"  # nothing else left: kept


class Fixed:
    def __init__(self, mapping: dict[str, Decomposition]) -> None:
        self.mapping = mapping

    def decompose(self, text: str) -> Decomposition:
        return self.mapping[text]


def test_evaluate_excluir_counts_found_and_matched() -> None:
    records = [
        {"query": "a", "excluded": "Marc Platt (dancer)"},
        {"query": "b", "excluded": "Eiffel 65"},
        {"query": "c", "excluded": "Moses"},
    ]
    decomposer = Fixed(
        {
            "a": Decomposition(And((Atom("x"), Not(Atom("Marc Platt")))), 0.9, "rules"),
            "b": Decomposition(And((Atom("x"), Not(Atom("mention Eiffel 65 songs")))), 0.9, "r"),
            "c": Decomposition(Atom("c"), 0.5, "rules"),
        }
    )
    out = evaluate_excluir(decomposer, records, examples=5)
    assert out["n"] == 3 and out["not_found"] == pytest.approx(2 / 3, abs=1e-4)
    # "mention Eiffel 65 songs" vs "Eiffel 65": P 2/4, R 1 -> F1 2/3 >= 0.5
    assert out["atom_match"] == pytest.approx(2 / 3, abs=1e-4)
    assert out["examples"]["no_not"] == [{"query": "c", "excluded": "Moses"}]
    with pytest.raises(ValueError, match="must be strings"):
        evaluate_excluir(decomposer, [{"query": "a"}])
    with pytest.raises(ValueError, match="no records"):
        evaluate_excluir(decomposer, [])


def test_excluir_on_real_lines(shared_data) -> None:
    rows = read_jsonl(shared_data / "negation/excluir_dev.jsonl")[:40]
    out = evaluate_excluir(RuleDecomposer(), rows)
    assert out["n"] == 40
    assert 0.0 <= out["atom_match"] <= out["not_found"] <= 1.0


def _brute_force(ranked, answers, traps):
    """The same metrics by the definitions, one rank list at a time."""
    r1 = mrr = above = 0.0
    for qid, ids in ranked.items():
        ranks = [i for i, d in enumerate(ids) if d in answers[qid]]
        best = ranks[0] if ranks else None
        r1 += best == 0
        mrr += 1 / (best + 1) if best is not None and best < 10 else 0
        trap_rank = ids.index(traps[qid]) if traps[qid] in ids else None
        above += trap_rank is not None and (best is None or trap_rank < best)
    n = len(ranked)
    return {"R@1": r1 / n, "MRR@10": mrr / n, "trap_above_answer": above / n}


def test_trap_metrics_against_brute_force() -> None:
    rng = random.Random(7)
    docs = [f"p{i}" for i in range(15)]
    for _ in range(40):
        ranked, answers, traps = {}, {}, {}
        for q in range(6):
            ids = rng.sample(docs, rng.randint(1, 15))
            ranked[f"q{q}"] = ids
            answers[f"q{q}"] = [rng.choice(docs)]
            traps[f"q{q}"] = rng.choice(docs)
        got = trap_metrics(ranked, answers, traps)
        want = _brute_force(ranked, answers, traps)
        for key, value in want.items():
            assert got[key] == pytest.approx(value, abs=1e-4)
    with pytest.raises(ValueError, match="no answer"):
        trap_metrics({"q": ["p1"]}, {}, {})


def test_read_traps_accepts_a_header_and_rejects_short_rows(tmp_path) -> None:
    path = tmp_path / "traps.tsv"
    path.write_text("query-id\tcorpus-id\nq1\tp1\n\nq2\tp3\n")
    assert read_traps(path) == {"q1": "p1", "q2": "p3"}
    path.write_text("q1\n")
    with pytest.raises(ValueError, match="traps.tsv:1"):
        read_traps(path)


def _tiny_beir(folder) -> None:
    """Two questions, each with an answer and a trap passage that the exclusion rules out."""
    corpus = {
        "a1": "Sourdough bread is leavened by a wild yeast starter and baked slowly.",
        "t1": "Rye bread with caraway seeds is a dense loaf popular in Germany.",
        "a2": "The Eiffel Tower is a wrought-iron lattice tower in Paris.",
        "t2": "The Louvre is the world's most visited art museum, in Paris.",
    }
    (folder / "qrels").mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w") as out:
        for pid, text in corpus.items():
            out.write(json.dumps({"_id": pid, "title": "", "text": text}) + "\n")
    queries = {
        "q1": "Which bread is leavened with a starter, excluding rye bread?",
        "q2": "What landmark is in Paris, other than the Louvre museum?",
    }
    with (folder / "queries.jsonl").open("w") as out:
        for qid, text in queries.items():
            out.write(json.dumps({"_id": qid, "text": text}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\ta1\t1\nq2\ta2\t1\n")
    (folder / "traps.tsv").write_text("q1\tt1\nq2\tt2\n")


def test_evaluate_traps_end_to_end_on_a_tiny_corpus(tmp_path) -> None:
    _tiny_beir(tmp_path)
    out = evaluate_traps(tmp_path, model="minilm")
    assert out["documents"] == 4 and out["queries"] == 2
    assert out["decomposed"]["with_not"] == 2
    for metrics in out["strategies"].values():
        assert metrics["queries"] == 2
        assert 0.0 <= metrics["R@1"] <= metrics["MRR@10"] <= 1.0
        assert 0.0 <= metrics["trap_above_answer"] <= 1.0


def test_evaluate_traps_on_real_boolq_not(shared_data) -> None:
    """The metric machinery on the real 323 questions and 646 passages (fast model)."""
    folder = shared_data / "negation/boolq_not"
    out = evaluate_traps(folder, model="minilm")
    assert out["queries"] == 323 and out["documents"] == 646
    assert out["decomposed"]["with_not"] > 300  # the rules read nearly every exclusion
    traps = read_traps(folder / "traps.tsv")
    assert len(traps) == 323
    for name in ("vanilla", "rerank"):
        metrics = out["strategies"][name]
        assert metrics["queries"] == 323
        assert 0.0 <= metrics["R@1"] <= metrics["MRR@10"] <= 1.0
        # an answer at rank 1 cannot have its trap above it
        assert metrics["trap_above_answer"] <= 1.0 - metrics["R@1"] + 1e-9


def test_cli_bad_input_exits_2_with_one_line(tmp_path, capsys) -> None:
    assert main(["excluir", "--data", str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and err.count("\n") == 1
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"query": "a", "excluded": "b"}\n{not json\n')
    assert main(["excluir", "--data", str(broken)]) == 2
    assert "broken.jsonl:2" in capsys.readouterr().err
    assert main(["boolq", "--data", str(tmp_path)]) == 2  # no traps.tsv
    assert "traps.tsv" in capsys.readouterr().err


def test_cli_prints_json(tmp_path, capsys) -> None:
    path = tmp_path / "ex.jsonl"
    rows = [{"id": "1", "query": "Birds of Asia but not Parrots", "excluded": "Parrots"}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert main(["excluir", "--data", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["not_found"] == 1.0 and out["atom_match"] == 1.0


def test_every_pair_of_distinct_f1_inputs_is_symmetric() -> None:
    words = ["Marc Platt", "the Marc", "Platt dancer", "Eiffel 65"]
    for a, b in itertools.permutations(words, 2):
        assert token_f1(a, b) == pytest.approx(token_f1(b, a))
