from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from logic_rag.evals.rag import runner as runner_mod
from logic_rag.evals.rag.cache import RunSettingsMismatch
from logic_rag.evals.rag.runner import RagEvalConfig, run_rag_eval, summarize_items


@dataclass
class Example:
    id: str
    question: str
    answers: list[str]
    short_answers: list[Any] = field(default_factory=list)
    documents: list[Any] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)


EXAMPLES = [
    Example(f"q{i}", f"Why does thing {i} happen?", [f"Thing {i} happens because of reason {i}."])
    for i in range(5)
]


class FakeRetriever:
    """Returns passages whose text names the question number; counts searches."""

    def __init__(self, n: int = 50) -> None:
        self.n = n
        self.searches = 0

    def __len__(self) -> int:
        return self.n

    def search(self, query: str, k: int) -> list[Any]:
        self.searches += 1
        return [
            SimpleNamespace(
                id=f"d{j}", title=f"Doc {j}", text=f"passage {j} about {query}", score=1.0 / (j + 1)
            )
            for j in range(min(k, self.n))
        ]


def _judge_text(prompt: str) -> str:
    if "[RESULT]" in prompt:  # answer relevancy
        return "Relevant. [RESULT] 2"
    return "4\nGood answer."  # correctness


@pytest.fixture
def examples(monkeypatch):
    monkeypatch.setattr(runner_mod, "_load_examples", lambda config: list(EXAMPLES))
    monkeypatch.setattr(runner_mod, "_exclusion_filter", lambda: None)
    return EXAMPLES


def _answer(prompt: str) -> str:
    return "It happens because of a reason."


def test_results_keys_and_means(tmp_path, examples, fake_generator, canned_llm):
    gen = fake_generator(_answer)
    llm = canned_llm(_judge_text)
    config = RagEvalConfig(dataset="eli5", out=tmp_path / "run", limit=5, k=3)
    results = run_rag_eval(config, generator=gen, judge_llm=llm, retriever=FakeRetriever())
    on_disk = json.loads((tmp_path / "run" / "results.json").read_text())
    for key in (
        "correctness",
        "answer_relevancy",
        "rougeL",
        "parse_failures",
        "n",
        "config",
        "timings",
    ):
        assert key in on_disk, key
    assert on_disk["n"] == 5
    assert on_disk["correctness"] == 4.0
    assert on_disk["answer_relevancy"] == 1.0
    assert on_disk["parse_failures"] == 0
    assert on_disk["metrics"]["correctness"]["count"] == 5
    assert 0.0 < on_disk["rougeL"] <= 1.0
    assert results["config"]["k"] == 3
    # the generator saw the retrieved passages and the question
    assert "passage 0 about Why does thing 0 happen?" in gen.calls[0]
    assert len(gen.calls) == 5
    items = [
        json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text().splitlines()
    ]
    assert [i["id"] for i in items] == [e.id for e in EXAMPLES]
    assert len(items[0]["passages"]) == 3


def test_malformed_judge_outputs_are_counted_not_zero(
    tmp_path, examples, fake_generator, canned_llm
):
    outputs = iter(["5\nok", "nonsense", "Score: 11/10", "3\nfine", "no score here"])

    def judge(prompt: str) -> str:
        return next(outputs) if "[RESULT]" not in prompt else "[RESULT] 1"

    config = RagEvalConfig(dataset="eli5", out=tmp_path / "run", limit=5)
    results = run_rag_eval(
        config,
        generator=fake_generator(_answer),
        judge_llm=canned_llm(judge),
        retriever=FakeRetriever(),
    )
    assert results["parse_failures"] == 3
    assert results["parse_failures_by_metric"] == {"correctness": 3, "answer_relevancy": 0}
    assert results["metrics"]["correctness"]["count"] == 2
    assert results["correctness"] == pytest.approx(4.0)  # mean of 5 and 3, not (5+3+0+0+0)/5
    assert results["answer_relevancy"] == pytest.approx(0.5)
    items = (tmp_path / "run" / "items.jsonl").read_text().splitlines()
    failed = json.loads(items[1])
    assert failed["metrics"]["correctness"] is None
    assert failed["judge_raw"]["correctness"] == "nonsense"


class Boom(RuntimeError):
    pass


def test_killed_run_resumes_without_redoing_items(tmp_path, examples, fake_generator, canned_llm):
    config = RagEvalConfig(dataset="eli5", out=tmp_path / "run", limit=5)
    first = fake_generator(_answer)

    def kill_after_two(index: int, record: dict) -> None:
        if index == 1:
            raise Boom("killed")

    with pytest.raises(Boom):
        run_rag_eval(
            config,
            generator=first,
            judge_llm=canned_llm(_judge_text),
            retriever=FakeRetriever(),
            on_item=kill_after_two,
        )
    assert len(first.calls) == 2
    assert not (tmp_path / "run" / "results.json").exists()
    second = fake_generator(_answer)
    results = run_rag_eval(
        config, generator=second, judge_llm=canned_llm(_judge_text), retriever=FakeRetriever()
    )
    assert len(second.calls) == 3  # only the remaining items
    assert all("thing 0 " not in c and "thing 1 " not in c for c in second.calls)
    assert results["n"] == 5
    # a third run does nothing at all
    third = fake_generator(_answer)
    run_rag_eval(
        config, generator=third, judge_llm=canned_llm(_judge_text), retriever=FakeRetriever()
    )
    assert third.calls == []


def test_torn_last_line_is_redone(tmp_path, examples, fake_generator, canned_llm):
    config = RagEvalConfig(dataset="eli5", out=tmp_path / "run", limit=5)
    run_rag_eval(
        config,
        generator=fake_generator(_answer),
        judge_llm=canned_llm(_judge_text),
        retriever=FakeRetriever(),
    )
    items = tmp_path / "run" / "items.jsonl"
    lines = items.read_text().splitlines(keepends=True)
    items.write_text("".join(lines[:3]) + lines[3][: len(lines[3]) // 2])  # torn 4th line
    gen = fake_generator(_answer)
    with pytest.warns(RuntimeWarning, match="torn last line"):
        results = run_rag_eval(
            config, generator=gen, judge_llm=canned_llm(_judge_text), retriever=FakeRetriever()
        )
    assert len(gen.calls) == 2  # the torn item and the one never written
    assert results["n"] == 5
    reread = [json.loads(line) for line in items.read_text().splitlines()]
    assert sorted(r["id"] for r in reread) == [e.id for e in EXAMPLES]


def test_resume_with_other_settings_is_refused(tmp_path, examples, fake_generator, canned_llm):
    config = RagEvalConfig(dataset="eli5", out=tmp_path / "run", limit=2)
    run_rag_eval(
        config,
        generator=fake_generator(_answer),
        judge_llm=canned_llm(_judge_text),
        retriever=FakeRetriever(),
    )
    other = RagEvalConfig(dataset="eli5", out=tmp_path / "run", limit=2, k=7)
    with pytest.raises(RunSettingsMismatch, match="k: 5 -> 7"):
        run_rag_eval(
            other,
            generator=fake_generator(_answer),
            judge_llm=canned_llm(_judge_text),
            retriever=FakeRetriever(),
        )


def test_no_judge_and_empty_answer(tmp_path, examples, fake_generator):
    config = RagEvalConfig(dataset="eli5", out=tmp_path / "run", limit=3, judges=())
    results = run_rag_eval(config, generator=fake_generator(""), retriever=FakeRetriever())
    assert results["parse_failures"] == 0
    assert "correctness" not in results
    assert results["rougeL"] == 0.0


def test_exclusion_filter_drops_own_answers(tmp_path, monkeypatch, fake_generator):
    monkeypatch.setattr(runner_mod, "_load_examples", lambda config: EXAMPLES[:2])
    monkeypatch.setattr(
        runner_mod, "_exclusion_filter", lambda: lambda ex, doc: doc.id in ("d0", "d2")
    )
    config = RagEvalConfig(dataset="eli5", out=tmp_path / "run", limit=2, k=3, judges=())
    run_rag_eval(config, generator=fake_generator(_answer), retriever=FakeRetriever())
    items = [json.loads(x) for x in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    assert [p["id"] for p in items[0]["passages"]] == ["d1", "d3", "d4"]


def test_summarize_items_against_hand_computation():
    records = [
        {"metrics": {"correctness": 5.0, "rougeL": 0.5}},
        {"metrics": {"correctness": None, "rougeL": 0.1}},
        {"metrics": {"correctness": 2.0, "rougeL": 0.3}},
        {"metrics": {"rougeL": 0.2}},  # empty answer: not judged
    ]
    summary = summarize_items(records, ["correctness"])
    assert summary["n"] == 4
    assert summary["correctness"] == pytest.approx(3.5)
    assert summary["metrics"]["correctness"]["count"] == 2
    assert summary["parse_failures"] == 1
    assert summary["rougeL"] == pytest.approx(0.275)
    assert summary["metrics"]["correctness"]["std"] == pytest.approx(2.1213203)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"dataset": "msmarco"}, "unknown dataset"),
        ({"k": 0}, "k must"),
        ({"judges": ("faith",)}, "unknown judge"),
    ],
)
def test_config_validation(tmp_path, changes, message):
    with pytest.raises(ValueError, match=message):
        RagEvalConfig(**{"dataset": "eli5", "out": tmp_path, **changes})


def test_open_retriever_caches_the_index(tmp_path, minilm, monkeypatch):
    from logic_rag.corpus import Document

    docs = [Document(f"d{i}", f"text number {i} about topic {i % 3}") for i in range(12)]
    calls = []

    def documents():
        calls.append(1)
        return docs

    r1, info1 = runner_mod.open_retriever(
        "minilm", strategy="vanilla", documents=documents, index_root=tmp_path
    )
    r2, info2 = runner_mod.open_retriever(
        "minilm", strategy="vanilla", documents=documents, index_root=tmp_path
    )
    assert info1["index_cached"] is False and info2["index_cached"] is True
    assert info1["index"] == info2["index"]
    assert [h.id for h in r1.search("topic 1", 3)] == [h.id for h in r2.search("topic 1", 3)]
    # the index folder itself is accepted as --retriever
    r3, info3 = runner_mod.open_retriever(
        info1["index"], strategy="vanilla", documents=documents, index_root=tmp_path
    )
    assert info3["kind"] == "index" and len(r3) == 12
    # another corpus gets another index
    docs.append(Document("d12", "a new document"))
    _, info4 = runner_mod.open_retriever(
        "minilm", strategy="vanilla", documents=documents, index_root=tmp_path
    )
    assert info4["index"] != info1["index"]


def test_an_index_with_passages_serves_vanilla(tmp_path, minilm):
    from logic_rag.corpus import Document

    docs = [Document(f"d{i}", f"Sentence {i}. About topic {i % 3}.") for i in range(8)]
    _, wide = runner_mod.open_retriever(
        "minilm", strategy="rerank", documents=lambda: docs, index_root=tmp_path
    )
    r, plain = runner_mod.open_retriever(
        "minilm", strategy="vanilla", documents=lambda: docs, index_root=tmp_path
    )
    assert plain["index"] == wide["index"] and plain["index_cached"] is True
    assert r.strategy == "vanilla"
    # without one, vanilla builds its own (no sentences)
    _, own = runner_mod.open_retriever(
        "minilm", strategy="vanilla", documents=lambda: docs[:5], index_root=tmp_path
    )
    assert own["index"] != wide["index"] and own["index_cached"] is False


@pytest.mark.slow
def test_end_to_end_real_smollm2_on_eli5(tmp_path, shared_data):
    """Real SmolLM2-135M generator and judge, real MiniLM index, ELI5 --limit 2."""
    from logic_rag.atomic import atomic_write_jsonl
    from logic_rag.evals.rag.datasets import load_rag_dataset
    from logic_rag.evals.rag.pool import default_corpus

    examples = load_rag_dataset("eli5", limit=2)
    # own answers plus 400 other passages keep indexing quick; the own answers are there
    # so that the exclusion filter has something to drop
    pool = default_corpus("eli5", examples)
    own = [d for d in pool if d.metadata["answer_of"] in {e.id for e in examples}]
    corpus = tmp_path / "corpus.jsonl"
    chosen = {d.id: d for d in [*own, *pool[-400:]]}
    atomic_write_jsonl(corpus, [d.to_json() for d in chosen.values()])
    config = RagEvalConfig(
        dataset="eli5",
        out=tmp_path / "run",
        limit=2,
        corpus=str(corpus),
        max_tokens=48,
        judge_max_tokens=32,
    )
    results = run_rag_eval(config)
    assert results["n"] == 2
    for metric in ("correctness", "answer_relevancy"):
        block = results["metrics"][metric]
        assert block["count"] + block["parse_failures"] == 2
    items = [json.loads(x) for x in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    for item, example in zip(items, examples, strict=True):
        assert item["answer"]
        assert len(item["passages"]) == 5
        assert not any(p["id"].startswith(example.id + "#") for p in item["passages"])
    assert (tmp_path / "run" / "report.html").stat().st_size > 1000


def test_meta_eval_against_human_ratings(tmp_path, shared_data, canned_llm):
    from scipy import stats

    from logic_rag.evals.rag.meta_eval import load_human_ratings
    from logic_rag.evals.rag.runner import run_meta_eval

    utility = {r.item_id: r.utility for r in load_human_ratings()}
    calls = {"n": 0}

    def judge(prompt: str) -> str:
        # scores cycle 1..4 by output length; every 5th output is garbage (a parse failure)
        calls["n"] += 1
        if calls["n"] % 5 == 0:
            return "I cannot rate this."
        return f"{1 + len(prompt) % 4}\nreason"

    results = run_meta_eval("canned", tmp_path / "meta", limit=10, judge_llm=canned_llm(judge))
    meta = json_load(tmp_path / "meta" / "results.json")["judge_meta_eval"]
    assert meta["per_dataset"] == results["judge_meta_eval"]["per_dataset"]
    assert set(meta["per_dataset"]) == {"asqa", "eli5"}
    assert meta["n"] == 20 and meta["parse_failures"] == 4
    items = [
        json.loads(x) for x in (tmp_path / "meta" / "meta_items.jsonl").read_text().splitlines()
    ]
    assert len({i["item_id"].split("/")[1] for i in items}) == 8  # every system sampled
    for dataset, block in meta["per_dataset"].items():
        rows = [i for i in items if i["dataset"] == dataset]
        assert all(i["utility"] == utility[i["item_id"]] for i in rows)
        scored = [(i["correctness"], i["utility"]) for i in rows if i["correctness"] is not None]
        assert block["n"] == len(scored) and block["parse_failures"] == 10 - len(scored)
        judge_scores, human = zip(*scored, strict=True)
        assert block["spearman"] == pytest.approx(stats.spearmanr(judge_scores, human).statistic)
        assert block["kendall"] == pytest.approx(stats.kendalltau(judge_scores, human).statistic)
    assert "Judge meta-evaluation" in (tmp_path / "meta" / "report.md").read_text()
    # resume: nothing is judged again
    again = canned_llm(judge)
    run_meta_eval("canned", tmp_path / "meta", limit=10, judge_llm=again)
    assert again.prompts == []


def json_load(path):
    return json.loads(path.read_text())


# ------------------------------------------------------------------- issue 18: d05, d07
def test_resume_refuses_a_corpus_whose_contents_changed(
    tmp_path, examples, fake_generator, canned_llm
):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "a", "text": "first corpus"}\n')
    config = RagEvalConfig(dataset="eli5", out=tmp_path / "run", limit=5, corpus=str(corpus))
    gen, llm = fake_generator(_answer), canned_llm(_judge_text)
    run_rag_eval(config, generator=gen, judge_llm=llm, retriever=FakeRetriever())
    run_rag_eval(config, generator=gen, judge_llm=llm, retriever=FakeRetriever())  # same: ok
    corpus.write_text('{"id": "b", "text": "another corpus, same path"}\n')
    with pytest.raises(RunSettingsMismatch, match="inputs"):
        run_rag_eval(config, generator=gen, judge_llm=llm, retriever=FakeRetriever())


def test_input_fingerprints_cover_corpus_data_and_model(tmp_path):
    data = tmp_path / "nq.jsonl"
    data.write_text('{"question": "q", "answer": ["a"]}\n')
    config = RagEvalConfig(dataset="nq", out=tmp_path / "o", data_path=str(data))
    first = runner_mod.input_fingerprints(config)
    assert set(first) == {"data_sha256", "retriever_sha256"}
    data.write_text('{"question": "q2", "answer": ["a"]}\n')
    second = runner_mod.input_fingerprints(config)
    assert second["data_sha256"] != first["data_sha256"]
    assert second["retriever_sha256"] == first["retriever_sha256"]


def test_index_cache_leftovers_are_recovered(tmp_path, minilm, caplog):
    import logging
    import os
    import subprocess
    import sys

    from logic_rag.corpus import Document

    docs = [Document(id=str(i), text=t) for i, t in enumerate(["apples", "jazz", "salmon"])]
    root = tmp_path / "index"

    def open_it():
        return runner_mod.open_retriever(
            "minilm", strategy="vanilla", documents=lambda: docs, index_root=root
        )

    _, info = open_it()
    key = Path(info["index"]).name
    pid = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                             capture_output=True, text=True, check=True).stdout)  # fmt: skip
    os.replace(root / key, root / f".{key}.old-{pid}")  # killed between the two renames
    (root / f".{key}.tmp-{pid}-zz").mkdir()  # killed during the save
    with caplog.at_level(logging.WARNING):
        retriever, info = open_it()
    assert info["index_cached"] is True and len(retriever) == 3
    assert "recovered the index" in caplog.text and "removed" in caplog.text
    assert sorted(p.name for p in root.iterdir()) == [key]
