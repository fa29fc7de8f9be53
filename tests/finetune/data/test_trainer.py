"""The contrastive dataset in the real SentenceTransformerTrainer with the group sampler and the
multi-positive SupCon loss: two optimisation steps on MiniLM."""

from __future__ import annotations

import functools
import math

import pytest


@pytest.fixture(autouse=True)
def _one_torch_thread():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_two_real_training_steps(train_world, tmp_path) -> None:
    import torch
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )

    from logic_rag.finetune.data import load_quest_training_set, to_contrastive_dataset
    from logic_rag.finetune.losses import MultiPositiveSupConLoss
    from logic_rag.finetune.sampler import LogicalGroupBatchSampler
    from logic_rag.models import resolve_model

    ts = load_quest_training_set(
        train_world / "train.jsonl", train_world / "documents.jsonl", limit=24
    )
    data = to_contrastive_dataset(ts, seed=0)
    relations = ts.relations()
    model = SentenceTransformer(str(resolve_model("minilm").path), device="cpu")
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    seen_labels: list[list[int]] = []

    class Recording(MultiPositiveSupConLoss):
        def forward(self, sentence_features, labels):  # type: ignore[override]
            seen_labels.extend(labels.tolist())
            return super().forward(sentence_features, labels)

    loss = Recording(model, relations=relations)
    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path),
        max_steps=2,
        per_device_train_batch_size=8,
        learning_rate=5e-5,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        seed=7,
        batch_sampler=functools.partial(LogicalGroupBatchSampler, alpha=0.5),
    )
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=data, loss=loss)
    output = trainer.train()
    assert output.global_step == 2 and math.isfinite(output.training_loss)
    assert isinstance(trainer.get_train_dataloader().batch_sampler, LogicalGroupBatchSampler)
    assert len(seen_labels) == 16
    # Every label the loss saw is a gold document of its query (GoldSetRelations checks it too).
    for qid, doc, _group in seen_labels:
        assert doc in relations.gold_sets[qid]
    changed = [n for n, p in model.named_parameters() if not torch.equal(p, before[n])]
    assert len(changed) > 10
