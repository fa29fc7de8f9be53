"""Atoms from questions and from pages (a scripted generator), and the run state."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pytest

from logic_rag.finetune.adapt.atoms import (
    atoms_from_pages,
    atoms_from_queries,
    merge_names,
    parse_categories,
    read_queries,
)
from logic_rag.finetune.adapt.state import AdaptError, AdaptSettings, RunState


def test_atoms_from_queries_groups_each_questions_atoms():
    found = atoms_from_queries(
        [
            "Orchids of Malaysia but not Thailand",
            "1990s films that are also Italian crime films",
            "orchids of  malaysia",
        ]
    )
    assert found["groups"] == [
        ["Orchids of Malaysia", "Orchids of Thailand"],
        ["1990s films", "Italian crime films"],
        ["Orchids of Malaysia"],  # merged with the first spelling
    ]
    assert found["atoms"] == [
        "Orchids of Malaysia",
        "Orchids of Thailand",
        "1990s films",
        "Italian crime films",
    ]


def test_read_queries_jsonl_and_plain(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text('{"query": "Birds of Guadeloupe"}\n\nMoths of Guadeloupe\n')
    assert read_queries(path) == ["Birds of Guadeloupe", "Moths of Guadeloupe"]
    path.write_text('{"query": ""}\n')
    with pytest.raises(ValueError, match=":1:"):
        read_queries(path)


def test_parse_categories_cleans_small_model_output():
    answer = '1. "Italian comedy films"\n- Category: Films shot in Rome.\n* 1990s films\nThis page is about a film that was made in Italy in the nineties.'
    assert parse_categories(answer, 3) == [
        "Italian comedy films",
        "Films shot in Rome",
        "1990s films",
    ]
    assert parse_categories("novels, French novels, novels", 5) == ["Novels", "French novels"]
    assert parse_categories("", 3) == []
    assert parse_categories("I do not know.\nThis page is about orchids\nNone", 3) == []
    # Seen from SmolLM2 on QUEST pages: a sentence about the page, and the prompt's examples.
    sentence = "A man who dies then goes to Heaven, but descends into Hell to rescue his wife."
    assert parse_categories(sentence, 3) == []
    parroted = 'This page belongs to the category "Italian crime films"'
    assert parse_categories(f"{parroted}\n- Italian crime films\n- Novels set in Paris", 3) == []


def test_merge_names_keeps_the_most_frequent_spelling():
    names = ["French novels", "Novels from France", "Birds"]
    vectors = np.array([[1.0, 0.0], [0.96, 0.28], [0.0, 1.0]])
    mapping = merge_names(
        names, Counter({"Novels from France": 3, "French novels": 1, "Birds": 1}), vectors, 0.9
    )
    assert mapping == {
        "French novels": "Novels from France",
        "Novels from France": "Novels from France",
        "Birds": "Birds",
    }


@dataclass
class _Doc:
    id: str
    content: str
    title: str = ""


class _Scripted:
    """Names two categories per page from its text; counts the pages it was asked about."""

    def __init__(self):
        self.asked = 0

    def generate(self, prompts, *, max_tokens, temperature, system):
        self.asked += len(prompts)
        out = []
        for prompt in prompts:
            kind = "Films" if "film" in prompt.split("\n\n")[0] else "Novels"
            out.append(f"- {kind}\n- {kind} about cats\n")
        return out


def _encode(names):
    """Films and novels far apart; "... about cats" at cosine 0.958 from its kind."""
    vectors = np.array(
        [
            [1.0 if "Films" in n else 0.0, 0.0 if "Films" in n else 1.0, 0.3 * ("cats" in n)]
            for n in names
        ]
    )
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_atoms_from_pages_resumes_without_asking_again(tmp_path):
    docs = [
        _Doc(f"d{i}", f"page {i}: a film" if i % 2 else f"page {i}: a novel") for i in range(10)
    ]
    out = tmp_path / "generated.jsonl"
    kwargs = dict(
        sample_pages=6, per_page=2, merge_threshold=0.999, max_chars=200, seed=0, progress=False
    )
    first = _Scripted()
    found = atoms_from_pages(docs, first, _encode, out, **kwargs)
    assert first.asked == 6
    assert set(found["atoms"]) == {"Films", "Films about cats", "Novels", "Novels about cats"}
    assert all(len(g) == 2 for g in found["groups"])
    assert "6 pages" in found["how"]
    again = _Scripted()
    assert atoms_from_pages(docs, again, _encode, out, **kwargs) == found
    assert again.asked == 0
    # Merged at a looser threshold: "X about cats" joins "X".
    merged = atoms_from_pages(docs, again, _encode, out, **{**kwargs, "merge_threshold": 0.9})
    assert len(merged["atoms"]) == 2
    assert [json.loads(line)["page"] for line in out.read_text().splitlines()] == sorted(
        {json.loads(line)["page"] for line in out.read_text().splitlines()}
    )


def test_run_state_refuses_another_run(tmp_path):
    fp = {"index_manifest_sha256": "a", "settings": {"max_pairs": 10}}
    state = RunState.open(tmp_path / "run", fp)
    state.finish("atoms", 1.234, atoms=["x"])
    state.checkpoint("labels", 12.5)  # a session interrupted after 12.5 s of labelling
    again = RunState.open(tmp_path / "run", fp)
    assert again.done("atoms") and not again.done("labels")
    assert again.spent == {"labels": 12.5}
    again.finish("labels", 12.5 + 3.0)
    assert RunState.open(tmp_path / "run", fp).spent == {}
    assert RunState.open(tmp_path / "run", fp).phases["labels"]["seconds"] == 15.5
    with pytest.raises(AdaptError, match=r"settings.max_pairs \(10 -> 20\)"):
        RunState.open(tmp_path / "run", {**fp, "settings": {"max_pairs": 20}})
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "file").write_text("x")
    with pytest.raises(AdaptError, match="not empty"):
        RunState.open(tmp_path / "other", fp)


def test_settings_are_validated():
    with pytest.raises(AdaptError, match="yes-threshold"):
        AdaptSettings(yes_threshold=1.0).validate()
    with pytest.raises(AdaptError, match="loss"):
        AdaptSettings(loss="lore").validate()
    AdaptSettings().validate()


def test_a_page_is_not_its_own_category(tmp_path):
    docs = [_Doc("d0", "Films about cats\na film", title="Films about cats")]
    found = atoms_from_pages(
        docs,
        _Scripted(),
        _encode,
        tmp_path / "generated.jsonl",
        sample_pages=1,
        per_page=2,
        merge_threshold=0.999,
        max_chars=200,
        seed=0,
        progress=False,
    )
    assert found["atoms"] == ["Films"]
