"""Issue 32, case 6: a fine-tuning run resumes a checkpoint only when what made it matches.

Killed at a checkpoint and re-run with another training file, batch size and learning
rate, the run must refuse and name each change (it used to resume the old checkpoint and
write the new values on the model card). Unchanged inputs moved to another path still
resume; ``--no-resume`` starts over.
"""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest

pytest.importorskip("sentence_transformers")

from logic_rag.finetune.recipes import ContrastiveArgs, train_contrastive  # noqa: E402
from logic_rag.finetune.recipes.args import RecipeArgsError  # noqa: E402


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory):
    """A LogiCoL run killed right after its step-2 checkpoint."""
    from transformers import TrainerCallback

    from logic_rag.evals.world import main as world_main

    world = tmp_path_factory.mktemp("world")
    assert world_main(["--out", str(world), "--entities", "300", "--seed", "2"]) == 0
    out = tmp_path_factory.mktemp("run")

    class Interrupt(TrainerCallback):
        def on_save(self, args, state, control, **kwargs):
            if state.global_step == 2:
                raise KeyboardInterrupt

    args = ContrastiveArgs(
        train=str(world / "train.jsonl"), docs=str(world / "documents.jsonl"), out=str(out),
        max_steps=4, save_steps=2, batch_size=8, max_seq_length=64, limit=32,
    )  # fmt: skip
    with pytest.raises(KeyboardInterrupt):
        train_contrastive(args, callbacks=[Interrupt()])
    assert (out / "checkpoints" / "checkpoint-2").is_dir()
    return args, world, out


def test_d32_06_changed_data_batch_and_lr_refuse_to_resume(interrupted, tmp_path):
    args, world, out = interrupted
    other = tmp_path / "train-other.jsonl"
    lines = (world / "train.jsonl").read_text(encoding="utf-8").splitlines()
    other.write_text("\n".join(reversed(lines)) + "\n", encoding="utf-8")
    changed = dataclasses.replace(args, train=str(other), batch_size=4, lr=1e-4)
    with pytest.raises(RecipeArgsError) as err:
        train_contrastive(changed)
    message = str(err.value)
    assert "--train file" in message and "--batch-size (8 -> 4)" in message
    assert "--lr (5e-05 -> 0.0001)" in message and "--no-resume" in message
    assert not (out / "model").exists()  # nothing was trained or published
    assert sorted(p.name for p in (out / "checkpoints").glob("checkpoint-*")) == ["checkpoint-2"]


def test_d32_06_same_contents_at_another_path_resume(interrupted, tmp_path):
    args, world, out = interrupted
    moved = tmp_path / "moved-train.jsonl"
    shutil.copyfile(world / "train.jsonl", moved)
    model = train_contrastive(dataclasses.replace(args, train=str(moved)))
    info = json.loads((model / "logic_rag_training.json").read_text(encoding="utf-8"))
    assert info["training"]["resumed_from"] == "checkpoint-2"
    assert info["training"]["global_step"] == 4
