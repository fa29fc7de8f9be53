"""eval quest's cost figures read the LLM block of quality / llm-rerank hits."""

from __future__ import annotations

from logic_rag.evals.quest.costs import query_cost, summarise_costs


def test_llm_block_of_certified_quality_is_counted():
    logic = {"llm": {"calls": 12, "all_pairs_calls": 80, "prompt_tokens": 900, "certified": True}}
    record = query_cost(2.5, logic)
    assert record == {
        "seconds": 2.5,
        "expensive_calls": 12,
        "all_pairs_calls": 80,
        "prompt_tokens": 900,
    }
    summary = summarise_costs(
        [record, query_cost(1.0, {"llm": {"calls": 4, "all_pairs_calls": 80}})]
    )
    assert summary["llm_calls_mean"] == 8.0 and summary["llm_call_share"] == round(16 / 160, 4)


def test_a_query_without_llm_has_seconds_only():
    assert query_cost(0.1, {"query": "a"}) == {"seconds": 0.1}


class _Recorder:
    """A retriever double that answers nothing and writes down the k it was asked for."""

    def __init__(self) -> None:
        self.asked: dict[str, list[int]] = {}

    def __len__(self) -> int:
        return 500

    def search_batch(self, texts, k, strategy, logical_queries=None):
        self.asked.setdefault(strategy, []).append(k)
        return [[] for _ in texts]


def test_quality_is_searched_at_the_k_it_certifies_not_at_the_ranking_depth():
    # At --depth its top k would be the whole pool: no LLM check could decide anything.
    from logic_rag.evals.quest.data import QuestQuery
    from logic_rag.evals.quest.runner import evaluate_strategies

    queries = [QuestQuery(qid="q1", query="novels", docs=frozenset({"a"}))]
    retriever = _Recorder()
    evaluate_strategies(retriever, queries, ["rerank", "quality"], depth=100, progress=False)
    assert retriever.asked == {"rerank": [100], "quality": [20]}
    retriever = _Recorder()
    evaluate_strategies(retriever, queries, ["quality"], depth=100, certify_k=None, progress=False)
    assert retriever.asked == {"quality": [100]}
