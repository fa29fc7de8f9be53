"""Real training runs on a tiny world with MiniLM: resume, model card, registry, LORE index.

Kept small (<= 4 steps, batch 8, max_seq_length 64, 48 queries) so the module stays well
under the default test budget on 2 cores.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")

from logic_rag.finetune.recipes import (  # noqa: E402
    ContrastiveArgs,
    LoreArgs,
    train_contrastive,
    train_lore,
)


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    from logic_rag.evals.world import main as world_main

    out = tmp_path_factory.mktemp("world")
    assert world_main(["--out", str(out), "--entities", "300", "--seed", "1"]) == 0
    return out


def _stop_at(step: int):
    from transformers import TrainerCallback

    class Interrupt(TrainerCallback):
        """Simulates Ctrl-C right after the checkpoint of ``step`` was written."""

        def on_save(self, args, state, control, **kwargs):
            if state.global_step == step:
                raise KeyboardInterrupt

    return Interrupt()


def _count_steps(seen: list[int]):
    from transformers import TrainerCallback

    class Count(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            seen.append(state.global_step)

    return Count()


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _query_only_marker_and_card(model_dir: Path) -> tuple[dict, dict]:
    """A query-only folder names MiniLM (by its weights) as its document encoder; returns
    the marker and the training card."""
    from logic_rag.models import resolve_model

    base_fp = resolve_model("minilm").fingerprint
    meta = json.loads((model_dir / "logic_rag_encoder.json").read_text())
    assert meta == {
        "role": "query",
        "document_encoder": {"name": "minilm", "weights_sha256": base_fp},
    }
    return meta, json.loads((model_dir / "logic_rag_training.json").read_text())


@pytest.fixture(scope="module")
def logicol_run(world, tmp_path_factory):
    """Interrupted after step 2, then resumed to step 4, with an eval_fn."""
    out = tmp_path_factory.mktemp("logicol")
    args = ContrastiveArgs(
        train=str(world / "train.jsonl"), docs=str(world / "documents.jsonl"), out=str(out),
        atoms=str(world / "atoms.jsonl"), max_steps=4, save_steps=2, batch_size=8,
        max_seq_length=64, limit=48, alpha=0.5, keep_checkpoints=True,
    )  # fmt: skip
    with pytest.raises(KeyboardInterrupt):
        train_contrastive(args, callbacks=[_stop_at(2)])
    after_interrupt = sorted(p.name for p in (out / "checkpoints").iterdir())
    model_after_interrupt = (out / "model").exists()
    seen: list[int] = []
    evaluated: list[Path] = []

    def eval_fn(path: Path) -> dict:
        evaluated.append(path)
        assert (path / "model.safetensors").is_file()
        return {"toy_recall@5": 0.5}

    model_dir = train_contrastive(args, eval_fn=eval_fn, callbacks=[_count_steps(seen)])
    return {
        "args": args,
        "out": out,
        "model": model_dir,
        "after_interrupt": after_interrupt,
        "model_after_interrupt": model_after_interrupt,
        "steps_after_resume": seen,
        "evaluated": evaluated,
    }


def test_interrupted_run_resumes_at_step_2_and_finishes(logicol_run):
    out = logicol_run["out"]
    # The checkpoint, and the run record a resume is checked against.
    assert logicol_run["after_interrupt"] == ["checkpoint-2", "run_record.json"]
    assert not logicol_run["model_after_interrupt"], "an interrupted run must not publish model/"
    # The second run did only the steps after the checkpoint.
    assert logicol_run["steps_after_resume"] == [3, 4]
    state = json.loads((out / "checkpoints" / "checkpoint-4" / "trainer_state.json").read_text())
    assert state["global_step"] == 4
    info = json.loads((logicol_run["model"] / "logic_rag_training.json").read_text())
    assert info["training"]["resumed_from"] == "checkpoint-2"
    assert info["training"]["global_step"] == 4
    assert logicol_run["model"] == out / "model"
    assert not [p for p in out.iterdir() if p.name.startswith(".model")], "temp folder left over"


def test_model_card_lists_data_loss_hyperparameters_base_and_metrics(logicol_run):
    from logic_rag.models import resolve_model

    model, args = logicol_run["model"], logicol_run["args"]
    card = (model / "README.md").read_text()
    info = json.loads((model / "logic_rag_training.json").read_text())
    base_fp = resolve_model("minilm").fingerprint
    for name in ("train", "docs", "atoms"):
        path = Path(getattr(args, name))
        assert str(path.resolve()) in card and _sha(path) in card
    roles = {d["role"]: d["sha256"] for d in info["data"]}
    assert roles == {n: _sha(Path(getattr(args, n))) for n in ("train", "docs", "atoms")}
    assert info["base_model"] == {"name": "minilm", "weights_sha256": base_fp}
    assert base_fp in card
    assert info["loss"]["class"] == "LogiCoLLoss" and "`LogiCoLLoss`" in card
    assert info["loss"]["config"]["subset_weight"] == args.lambda_subset
    assert info["loss"]["config"]["exclusion_margin"] == args.gamma_exclusion
    assert info["loss"]["config"]["exclusion_temperature"] == args.exclusion_temperature
    assert info["hyperparameters"]["max_steps"] == 4 and info["hyperparameters"]["alpha"] == 0.5
    assert '"max_seq_length": 64' in card
    assert info["batching"] == {"kind": "groups", "alpha": 0.5}
    assert info["dataset"]["queries"] == 48
    assert info["training"]["wall_time_s"] > 0 and "wall time:" in card
    assert logicol_run["evaluated"] == [model]
    assert info["metrics"] == {"toy_recall@5": 0.5} and '"toy_recall@5": 0.5' in card


def test_output_loads_through_registry_with_new_weights(logicol_run):
    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.models import resolve_model

    resolved = resolve_model(logicol_run["model"])
    assert resolved.kind == "dense"
    assert resolved.fingerprint != resolve_model("minilm").fingerprint
    tuned, base = DenseEncoder(logicol_run["model"]), DenseEncoder("minilm")
    text = ["frogs of Oceania that are not moths"]
    a, b = tuned.encode_queries(text), base.encode_queries(text)
    assert a.shape == b.shape == (1, 384)
    assert not np.allclose(a, b, atol=1e-4)


@pytest.mark.slow
def test_eval_quest_cli_accepts_the_model(logicol_run, world, tmp_path):
    from logic_rag.cli import main

    queries = tmp_path / "test20.jsonl"
    lines = (world / "test.jsonl").read_text().splitlines()[:20]
    queries.write_text("\n".join(lines) + "\n")
    out = tmp_path / "eval"
    argv = ["eval", "quest", "--docs", str(world / "documents.jsonl"), "--queries", str(queries),
            "--out", str(out), "--model", str(logicol_run["model"]), "--strategy", "vanilla",
            "--gold-logic"]  # fmt: skip
    assert main(argv) == 0
    assert (out / "results.json").is_file()


def test_lore_keeps_old_index_valid(world, tmp_path):
    from logic_rag.corpus import load_documents
    from logic_rag.errors import IndexMismatchError
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.retriever import DenseRetriever

    docs = list(load_documents(world / "documents.jsonl"))
    index_dir = tmp_path / "index"
    LogicRetriever.build(docs, model="minilm", passages=False).save(index_dir)
    # Keep the retriever alive: vectors() is a zero-copy view of FAISS memory.
    base_retriever = DenseRetriever.load(index_dir)
    before = base_retriever.index.vectors().copy()

    args = LoreArgs(
        train=str(world / "train.jsonl"), docs=str(world / "documents.jsonl"),
        out=str(tmp_path / "lore"), atoms=str(world / "atoms.jsonl"), max_steps=3,
        save_steps=3, batch_size=8, max_seq_length=64, limit=24, lr=1e-4,
    )  # fmt: skip
    model_dir = train_lore(args)
    # published, so the checkpoints (resume state only) are gone, nothing half-deleted left
    assert not (tmp_path / "lore" / "checkpoints").exists()
    assert sorted(p.name for p in (tmp_path / "lore").iterdir()) == ["model"]
    meta, info = _query_only_marker_and_card(model_dir)
    base_fp = meta["document_encoder"]["weights_sha256"]
    assert info["loss"]["class"] == "LoreLoss" and info["loss"]["config"]["beta"] == 3.0
    assert info["dataset"]["queries_with_distractors"] > 0

    tuned = DenseRetriever.load(index_dir, model=model_dir)  # no flag needed
    assert tuned.encoder.fingerprint != base_fp
    np.testing.assert_array_equal(tuned.index.vectors(), before)  # document vectors unchanged
    query = "frogs of Oceania that are not toads"
    q_tuned = tuned.encoder.encode_queries([query])
    q_base = base_retriever.encoder.encode_queries([query])
    assert not np.allclose(q_tuned, q_base, atol=1e-4)  # the query side did change
    hits = tuned.search(query, k=5)
    assert len(hits) == 5 and all(h.id for h in hits)
    logical = LogicRetriever.load(index_dir, model=model_dir, strategy="vanilla")
    assert [h.id for h in logical.search(query, k=5)] == [h.id for h in hits]

    # A marker naming other document weights, or no marker, is refused as before.
    marker = model_dir / "logic_rag_encoder.json"
    marker.write_text(json.dumps({**meta, "document_encoder": {"weights_sha256": "0" * 64}}))
    with pytest.raises(IndexMismatchError, match="rebuild the index"):
        DenseRetriever.load(index_dir, model=model_dir)
    marker.unlink()
    with pytest.raises(IndexMismatchError, match="rebuild the index"):
        DenseRetriever.load(index_dir, model=model_dir)


def test_variants_flag_adds_quest_variants_of_train_atoms_only(world):
    from logic_rag.finetune.recipes.training import load_training_set
    from logic_rag.query.algebra import atoms

    common = {
        "train": str(world / "train.jsonl"),
        "docs": str(world / "documents.jsonl"),
        "atoms": str(world / "atoms.jsonl"),
        "out": "unused",
    }
    plain = load_training_set(ContrastiveArgs(**common))
    grown = load_training_set(ContrastiveArgs(**common, variants=True))
    extra = grown.queries[len(plain) :]
    assert grown.queries[: len(plain)] == plain.queries and extra
    assert all(q.query_id.startswith("variant:") and q.group for q in extra)
    train_atoms = {
        row["atom"]
        for row in map(json.loads, (world / "atoms.jsonl").read_text().splitlines())
        if row.get("split") == "train"
    }
    for q in extra:
        assert q.logical_query is not None
        assert {a.text for a in atoms(q.logical_query)} <= train_atoms


def test_hard_negatives_flag_trains_with_a_negative_column(world, tmp_path):
    """--hard-negatives: known ones from the atoms plus mined ones, one column per row, the
    real trainer runs, and the card says how many queries had some."""
    args = ContrastiveArgs(
        train=str(world / "train.jsonl"), docs=str(world / "documents.jsonl"),
        out=str(tmp_path / "hn"), atoms=str(world / "atoms.jsonl"), max_steps=2,
        batch_size=8, max_seq_length=64, limit=24, hard_negatives=True, mined_negatives=2,
        loss="logicol",
    )  # fmt: skip
    model_dir = train_contrastive(args)
    info = json.loads((model_dir / "logic_rag_training.json").read_text())
    assert info["hard_negatives"]["queries_with_some"] == 24
    assert info["hard_negatives"]["total"] >= 24 and info["hard_negatives"]["mined_per_query"] == 2
    assert (model_dir / "model.safetensors").is_file()
    # The base's mining embeddings stay in the cache, in the folder keyed by its weights.
    from sentence_transformers import SentenceTransformer

    from logic_rag.finetune.data import mining_cache_folder
    from logic_rag.finetune.recipes.training import load_base_model
    from logic_rag.paths import cache_dir

    base, fingerprint = load_base_model(args)
    assert isinstance(base, SentenceTransformer)
    folder = mining_cache_folder(cache_dir() / "mining", base, fingerprint)
    assert list(folder.glob("corpus_embeddings_*.npy"))


def test_record_metrics_rewrites_the_card_and_keeps_the_training_record(logicol_run, tmp_path):
    import shutil

    from logic_rag.finetune.recipes.card import record_metrics

    model = tmp_path / "copy"
    shutil.copytree(logicol_run["model"], model)
    before = json.loads((model / "logic_rag_training.json").read_text())
    record_metrics(model, {"held_out": {"test": {"R@20": 0.42}}})
    after = json.loads((model / "logic_rag_training.json").read_text())
    assert after["metrics"] == {"held_out": {"test": {"R@20": 0.42}}}
    assert {k: v for k, v in after.items() if k != "metrics"} == {
        k: v for k, v in before.items() if k != "metrics"
    }
    assert '"R@20": 0.42' in (model / "README.md").read_text()
    with pytest.raises(FileNotFoundError, match="not a model this package trained"):
        record_metrics(tmp_path, {})


def test_query_only_contrastive_run_keeps_the_base_index_valid(world, tmp_path, logicol_run):
    """--query-only: LogiCoL on the query side; the folder names its document encoder, an
    index built with the base serves it, and document embeddings do not change."""
    from logic_rag.retriever import DenseRetriever

    args = ContrastiveArgs(
        train=str(world / "train.jsonl"), docs=str(world / "documents.jsonl"),
        out=str(tmp_path / "qo"), atoms=str(world / "atoms.jsonl"), max_steps=2,
        batch_size=8, max_seq_length=64, limit=24, lr=1e-4, query_only=True,
    )  # fmt: skip
    model_dir = train_contrastive(args)
    _, info = _query_only_marker_and_card(model_dir)
    assert info["loss"]["config"]["frozen_documents"] is True
    assert "prompts" not in info  # MiniLM has none
    assert "Only the query encoder was trained" in (model_dir / "README.md").read_text()

    from logic_rag.corpus import load_documents
    from logic_rag.logic_retriever import LogicRetriever

    docs = list(load_documents(world / "documents.jsonl"))[:50]
    index_dir = tmp_path / "index"
    LogicRetriever.build(docs, model="minilm", passages=False).save(index_dir)
    tuned = DenseRetriever.load(index_dir, model=model_dir)
    query = "frogs of Oceania that are not toads"
    base = DenseRetriever.load(index_dir)
    assert not np.allclose(
        tuned.encoder.encode_queries([query]), base.encoder.encode_queries([query]), atol=1e-4
    )
    assert len(tuned.search(query, k=5)) == 5

    # `eval quest --index DIR --model FOLDER` searches the index with that query encoder
    # (it used to be ignored); a fully tuned model cannot serve the base's index.
    from logic_rag.errors import IndexMismatchError
    from logic_rag.evals.quest.runner import run_eval_quest

    common = {"docs": None, "queries": world / "test.jsonl", "index": index_dir}
    common["strategies"] = ["vanilla"]
    run_eval_quest(out=tmp_path / "ev", model=str(model_dir), **common)
    with pytest.raises(IndexMismatchError):
        run_eval_quest(out=tmp_path / "ev2", model=str(logicol_run["model"]), **common)


def test_query_only_refuses_the_cached_loss(world):
    from logic_rag.finetune.recipes import RecipeArgsError

    args = ContrastiveArgs(
        train=str(world / "train.jsonl"), docs=str(world / "documents.jsonl"), out="unused",
        query_only=True, cached=True,
    )  # fmt: skip
    with pytest.raises(RecipeArgsError, match="--query-only and --cached"):
        args.validate()


def test_training_prompts_follow_the_base_model():
    from types import SimpleNamespace

    from logic_rag.finetune.recipes.training import training_prompts

    gemma_like = SimpleNamespace(prompts={"query": "task: q | ", "document": "title: none | "})
    cols = ["anchor", "positive", "negative", "label"]
    assert training_prompts(gemma_like, cols) == {
        "anchor": "task: q | ",
        "positive": "title: none | ",
        "negative": "title: none | ",
    }
    assert training_prompts(SimpleNamespace(prompts={}), cols) is None
    assert training_prompts(SimpleNamespace(prompts={"query": "", "document": ""}), cols) is None
    assert training_prompts(SimpleNamespace(prompts={"query": "q: "}), cols) == {"anchor": "q: "}
