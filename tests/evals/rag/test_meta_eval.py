"""Judge meta-evaluation: the ALCE human-ratings loader and agreement vs scipy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats

from logic_rag.errors import CorpusFormatError
from logic_rag.evals.rag.meta_eval import HumanRating, judge_agreement, load_human_ratings


def _ratings(dataset: str, utilities: list[float]) -> list[HumanRating]:
    return [
        HumanRating(dataset, "sys", f"q{i}?", f"answer {i}", u, f"{dataset}/sys/{i}")
        for i, u in enumerate(utilities)
    ]


def test_loader_on_real_file(shared_data: Path) -> None:
    ratings = load_human_ratings()
    # 4 systems x 100 questions for each of ASQA and ELI5; "overall_results" is skipped
    assert len(ratings) == 800
    assert {r.dataset for r in ratings} == {"asqa", "eli5"}
    assert len({r.system for r in ratings}) == 8
    assert len({r.item_id for r in ratings}) == 800
    assert all(r.utility in (1.0, 2.0, 3.0, 4.0, 5.0) for r in ratings)
    first = ratings[0]
    assert first.question == "Who has the highest goals in world football?"
    assert first.utility == 5.0
    assert first.item_id == "asqa/asqa-gpt-35-turbo-gtr-shot2-ndoc5-42-azure/-7013890438520559398"


def test_agreement_matches_scipy() -> None:
    ratings = _ratings("asqa", [5, 4, 1, 3, 2, 5, 4]) + _ratings("eli5", [1, 2, 3, 4, 5, 3])
    judge = dict(
        zip(
            [r.item_id for r in ratings],
            [4.0, 4.5, 2.0, 2.0, 3.0, 5.0, 1.0, 2.0, 1.0, 3.5, 4.0, 5.0, 3.0],
            strict=True,
        )
    )
    result = judge_agreement(judge, ratings)
    for block, subset in [(result, ratings)] + [
        (result["per_dataset"][ds], [r for r in ratings if r.dataset == ds])
        for ds in ("asqa", "eli5")
    ]:
        xs = [judge[r.item_id] for r in subset]
        ys = [r.utility for r in subset]
        rho, tau = stats.spearmanr(xs, ys), stats.kendalltau(xs, ys)
        assert block["n"] == len(subset) and block["n_missing"] == 0
        assert block["spearman"] == pytest.approx(rho.statistic)
        assert block["spearman_p"] == pytest.approx(rho.pvalue)
        assert block["kendall"] == pytest.approx(tau.statistic)
        assert block["kendall_p"] == pytest.approx(tau.pvalue)


def test_perfect_and_reversed_agreement() -> None:
    ratings = _ratings("eli5", [1, 2, 3, 4, 5])
    same = {r.item_id: r.utility * 2 + 1 for r in ratings}  # monotone transform
    assert judge_agreement(same, ratings)["spearman"] == pytest.approx(1.0)
    assert judge_agreement(same, ratings)["kendall"] == pytest.approx(1.0)
    reverse = {r.item_id: -r.utility for r in ratings}
    assert judge_agreement(reverse, ratings)["spearman"] == pytest.approx(-1.0)


def test_missing_scores_are_counted_not_zero() -> None:
    ratings = _ratings("asqa", [1, 2, 3, 4, 5])
    # the best-rated item's score is unparsable (None), ratings[3] was never scored
    judge = {
        ratings[0].item_id: 1.0,
        ratings[1].item_id: 2.0,
        ratings[2].item_id: 3.0,
        ratings[4].item_id: None,
    }
    result = judge_agreement(judge, ratings)
    assert (result["n"], result["n_missing"]) == (3, 2)
    # scored as 0 instead, the best-rated item would break the perfect ranking
    assert result["spearman"] == pytest.approx(1.0)
    as_zero = judge_agreement({**judge, ratings[4].item_id: 0.0}, ratings)
    assert as_zero["spearman"] < 0.5
    assert result["per_dataset"]["asqa"]["n_missing"] == 2


def test_undefined_correlations_are_none() -> None:
    ratings = _ratings("asqa", [1, 2, 3])
    constant = judge_agreement({r.item_id: 3.0 for r in ratings}, ratings)
    assert constant["spearman"] is None and constant["kendall"] is None and constant["n"] == 3
    nothing = judge_agreement({}, ratings)
    assert (nothing["n"], nothing["n_missing"], nothing["spearman"]) == (0, 3, None)


def test_loader_rejects_bad_files(tmp_path: Path) -> None:
    path = tmp_path / "h.json"
    item = {"id": "1", "question": "q", "output": "o", "utility_score": 4}
    good = {"asqa": {"sys.json": {"1": item, "overall_results": {"rougeLsum": 30.0}}}}
    path.write_text(json.dumps(good), encoding="utf-8")
    (rating,) = load_human_ratings(path)
    assert (rating.system, rating.item_id, rating.utility) == ("sys", "asqa/sys/1", 4.0)
    item["utility_score"] = None
    path.write_text(json.dumps(good), encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="asqa/sys.json/1: 'utility_score'"):
        load_human_ratings(path)
    path.write_text("[1, 2", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="not valid JSON"):
        load_human_ratings(path)
    with pytest.raises(FileNotFoundError, match="LOGIC_RAG_DATA"):
        load_human_ratings(tmp_path / "absent.json")
