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
