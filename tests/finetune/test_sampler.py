"""LogicalGroupBatchSampler: alpha share, coverage, no duplicates, determinism, trainer wiring."""

from __future__ import annotations

import functools
from collections import Counter
from types import SimpleNamespace

import pytest
import torch

datasets = pytest.importorskip("datasets")

from logic_rag.finetune.sampler import LogicalGroupBatchSampler  # noqa: E402

LABEL_COLUMNS = ["label", "labels", "score", "scores"]  # the trainer's default valid_label_columns


def make_dataset(group_sizes: list[int], ungrouped: int = 0):
    labels = []
    qid = 0
    for gid, size in enumerate(group_sizes):
        for _ in range(size):
            labels.append([qid, 1000 + qid, gid])
            qid += 1
    for _ in range(ungrouped):
        labels.append([qid, 1000 + qid, -1])
        qid += 1
    n = len(labels)
    return datasets.Dataset.from_dict(
        {
            "query": [f"q{i}" for i in range(n)],
            "document": [f"d{i}" for i in range(n)],
            "label": labels,
        }
    )


def build(dataset, batch_size=10, drop_last=False, seed=0, **kwargs):
    """Build it exactly as SentenceTransformerTrainer.get_batch_sampler does."""
    from sentence_transformers import SentenceTransformerTrainer

    cls = (
        functools.partial(LogicalGroupBatchSampler, **kwargs)
        if kwargs
        else LogicalGroupBatchSampler
    )
    fake_trainer = SimpleNamespace(args=SimpleNamespace(batch_sampler=cls))
    return SentenceTransformerTrainer.get_batch_sampler(
        fake_trainer,
        dataset,
        batch_size=batch_size,
        drop_last=drop_last,
        valid_label_columns=LABEL_COLUMNS,
        generator=torch.Generator().manual_seed(seed),
        seed=seed,
    )


def group_of(dataset) -> list[int]:
    return [row[2] for row in dataset["label"]]


@pytest.mark.parametrize("alpha", [0.5, 0.6, 0.7])
def test_alpha_share_of_random_queries_in_each_batch(alpha: float) -> None:
    data = make_dataset([4] * 25)  # 100 rows in groups of 4
    sampler = build(data, batch_size=10, alpha=alpha)
    n_random = round(alpha * 10)
    plan = sampler.epoch_plan()
    full = [(g, r) for g, r in plan if len(g) + len(r) == 10]
    assert len(full) == 10
    random_pool = {i for _, r in plan for i in r}
    assert len(random_pool) == pytest.approx(alpha * 100, abs=4)  # whole groups are dissolved
    for grouped, randoms in plan[:-1]:
        assert len(randoms) == n_random and len(grouped) == 10 - n_random
    # Batches that still have both streams keep the exact split; the random pool never holds
    # a member of a kept group.
    kept = {i for g, _ in plan for i in g}
    assert not kept & random_pool
    groups = group_of(data)
    assert all(Counter(groups[i] for i in kept)[gid] == 4 for gid in {groups[i] for i in kept})


def test_grouped_part_holds_whole_groups() -> None:
    data = make_dataset([4] * 25)
    sampler = build(data, batch_size=10, alpha=0.6)  # 4 grouped slots = one group of 4
    groups = group_of(data)
    for grouped, _ in sampler.epoch_plan():
        if grouped:
            assert len({groups[i] for i in grouped}) == 1 and len(grouped) == 4


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize(
    ("sizes", "ungrouped", "batch_size"), [([4] * 10, 7, 8), ([3, 9, 1, 6, 2], 30, 7)]
)
def test_every_example_once_and_no_duplicates(drop_last, sizes, ungrouped, batch_size) -> None:
    data = make_dataset(sizes, ungrouped)
    sampler = build(data, batch_size=batch_size, drop_last=drop_last, alpha=0.6)
    batches = list(sampler)
    assert len(batches) == len(sampler)
    flat = [i for b in batches for i in b]
    assert all(len(b) == len(set(b)) for b in batches)
    assert len(flat) == len(set(flat))
    if drop_last:
        assert all(len(b) == batch_size for b in batches)
        assert len(flat) == len(data) - len(data) % batch_size
    else:
        assert sorted(flat) == list(range(len(data)))
        assert all(len(b) == batch_size for b in batches[:-1])


def test_deterministic_per_epoch_and_seed() -> None:
    data = make_dataset([4] * 10, 10)
    a, b = build(data, seed=3), build(data, seed=3)
    first = list(a)
    assert first == list(b)
    a.set_epoch(1)
    second = list(a)
    assert second != first and sorted(map(sorted, second)) != sorted(map(sorted, first))
    a.set_epoch(0)
    assert list(a) == first
    assert list(build(data, seed=4)) != first


def test_alpha_extremes_and_ungrouped_rows() -> None:
    data = make_dataset([5] * 4, 5)
    all_grouped = build(data, batch_size=5, alpha=0.0).epoch_plan()
    groups = group_of(data)
    assert all(len({groups[i] for i in g}) == 1 for g, _ in all_grouped if len(g) == 5)
    assert sum(len(r) for _, r in all_grouped) == 5  # only the ungrouped rows are random
    all_random = build(data, batch_size=5, alpha=1.0).epoch_plan()
    assert all(not g for g, _ in all_random)


def test_group_ids_argument_and_clear_errors() -> None:
    plain = datasets.Dataset.from_dict(
        {"query": ["a", "b", "c", "d"], "document": ["w", "x", "y", "z"]}
    )
    with pytest.raises(ValueError, match="needs group ids"):
        build(plain, batch_size=2)
    sampler = build(plain, batch_size=2, alpha=0.5, group_ids=["g", "g", None, "h"])
    assert sampler.groups == {"g": [0, 1], "h": [3]} and sampler.ungrouped == [2]
    with pytest.raises(ValueError, match="4 rows"):
        build(plain, batch_size=2, group_ids=[1, 2])
    with pytest.raises(ValueError, match="alpha"):
        build(plain, batch_size=2, alpha=1.5, group_ids=[1, 1, 2, 2])
    scalar = datasets.Dataset.from_dict(
        {"query": ["a", "b"], "document": ["x", "y"], "label": [1, 0]}
    )
    with pytest.raises(ValueError, match="group id at position 2"):
        build(scalar, batch_size=2)


def test_works_as_a_dataloader_batch_sampler() -> None:
    from torch.utils.data import DataLoader

    data = make_dataset([4] * 5, 4)
    loader = DataLoader(data, batch_sampler=build(data, batch_size=8), collate_fn=lambda rows: rows)
    rows = [row for batch in loader for row in batch]
    assert sorted(r["query"] for r in rows) == sorted(data["query"])
