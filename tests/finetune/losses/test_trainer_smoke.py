"""End to end: the losses and the group sampler inside SentenceTransformerTrainer, a few steps."""

from __future__ import annotations

import copy
import functools
import math

import pytest
import torch

datasets = pytest.importorskip("datasets")

# Four logical groups (atoms shared inside a group) and four unrelated queries.
GROUPS = {
    0: [
        "orchids of Malaysia",
        "orchids of Malaysia but not Thailand",
        "orchids of Malaysia and Thailand",
    ],
    1: [
        "Italian crime films",
        "1990s Italian crime films",
        "Italian crime films not from the 1990s",
    ],
    2: ["moths of Guadeloupe", "moths or insects of Guadeloupe", "insects of Guadeloupe"],
    3: ["novels set in Paris", "French novels set in Paris", "novels set in Paris but not French"],
}
SINGLES = [
    "rivers of Canada",
    "jazz albums of 1959",
    "Spanish tennis players",
    "volcanoes of Chile",
]


def logicol_dataset():
    from logic_rag.finetune.losses import GoldSetRelations

    rows, gold, subset, exclusion = [], {}, [], []
    qid = 0
    for gid, queries in GROUPS.items():
        base = qid
        for text in queries:
            gold[qid] = {1000 + qid}
            rows.append((text, f"A document relevant to {text.lower()}.", [qid, 1000 + qid, gid]))
            qid += 1
        gold[base] |= gold[base + 1] | gold[base + 2]  # the atom query contains the others
        subset += [(base + 1, base), (base + 2, base)]
        exclusion.append((base + 1, base + 2))
    for text in SINGLES:
        gold[qid] = {1000 + qid}
        rows.append((text, f"An article about {text.lower()}.", [qid, 1000 + qid, -1]))
        qid += 1
    data = datasets.Dataset.from_dict(
        {
            "query": [r[0] for r in rows],
            "document": [r[1] for r in rows],
            "label": [r[2] for r in rows],
        }
    )
    return data, GoldSetRelations(gold, subset, exclusion)


def train(model, loss, data, tmp_path, **kwargs):
    from sentence_transformers import (
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )

    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path),
        max_steps=2,
        per_device_train_batch_size=8,
        learning_rate=5e-5,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        seed=7,
        **kwargs,
    )
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=data, loss=loss)
    output = trainer.train()
    return trainer, output


def test_logicol_with_group_sampler_trains(minilm, tmp_path) -> None:
    from logic_rag.finetune.losses import CachedLogiCoLLoss
    from logic_rag.finetune.sampler import LogicalGroupBatchSampler

    model = copy.deepcopy(minilm)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    data, relations = logicol_dataset()
    loss = CachedLogiCoLLoss(
        model, relations=relations, mini_batch_size=4, exclusion_temperature=0.05
    )
    trainer, output = train(
        model,
        loss,
        data,
        tmp_path,
        batch_sampler=functools.partial(LogicalGroupBatchSampler, alpha=0.5),
    )
    sampler = trainer.get_train_dataloader().batch_sampler
    assert isinstance(sampler, LogicalGroupBatchSampler) and sampler.alpha == 0.5
    # The group batches bring related queries together, so the regularisers have pairs to act on.
    labels = torch.tensor(data["label"])
    related = [relations(labels[batch]) for batch in sampler]
    assert any(r.subset.any() for r in related) and any(r.exclusion.any() for r in related)
    assert (
        output.global_step == 2 and math.isfinite(output.training_loss) and output.training_loss > 0
    )
    changed = [n for n, p in model.named_parameters() if not torch.equal(p, before[n])]
    assert len(changed) > 10


def test_lore_trains_the_query_encoder_only(minilm, tmp_path) -> None:
    from logic_rag.finetune.losses import LoreLoss

    model = copy.deepcopy(minilm)
    base = {n: p.detach().clone() for n, p in model.named_parameters()}
    data = datasets.Dataset.from_dict(
        {
            "query": [q for group in GROUPS.values() for q in group] + SINGLES,
            "positive": ["A relevant article."] * 16,
            "distractor": ["An article on a related subject."] * 16,
            "negative": ["A recipe for bread."] * 16,
            "label": [[1, 0, -1]] * 16,
        }
    )
    loss = LoreLoss(model)
    _, output = train(model, loss, data, tmp_path)
    assert output.global_step == 2 and math.isfinite(output.training_loss)
    assert any(not torch.equal(p, base[n]) for n, p in model.named_parameters())
    for name, p in loss.document_model.named_parameters():
        assert torch.equal(p, base[name]), name  # documents are still encoded by the base model
