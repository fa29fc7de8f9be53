"""Command line -> dataclass, argument errors, checkpoint selection, model card text (no torch)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logic_rag.finetune.recipes import ContrastiveArgs, LoreArgs, RecipeArgsError, parse_args
from logic_rag.finetune.recipes.card import render_card
from logic_rag.finetune.recipes.training import latest_checkpoint


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    paths = {}
    for name in ("train", "docs", "atoms"):
        p = tmp_path / f"{name}.jsonl"
        p.write_text("{}\n", encoding="utf-8")
        paths[name] = str(p)
    return paths


def _base(files: dict[str, str], out: str = "run") -> list[str]:
    return ["--train", files["train"], "--docs", files["docs"], "--out", out]


def test_logicol_flags_map_to_dataclass(files):
    argv = _base(files) + [
        "--base", "mpnet", "--atoms", files["atoms"], "--alpha", "0.5", "--max-steps", "7",
        "--batch-size", "12", "--lambda-subset", "0.3", "--cached", "--no-resume",
        "--limit", "9", "--batching", "random", "--loss", "logicol-noconstraints",
        "--exclusion-temperature", "0.5", "--lambda-exclusion", "0.3", "--gamma-exclusion", "0.2",
    ]  # fmt: skip
    args = parse_args("logicol", argv)
    assert args == ContrastiveArgs(
        train=files["train"], docs=files["docs"], out="run", base="mpnet",
        atoms=files["atoms"], alpha=0.5, max_steps=7, batch_size=12, lambda_subset=0.3,
        cached=True, resume=False, limit=9, batching="random", loss="logicol-noconstraints",
        exclusion_temperature=0.5, lambda_exclusion=0.3, gamma_exclusion=0.2,
    )  # fmt: skip


def test_recipe_name_sets_loss_and_default_batching(files):
    supcon = parse_args("supcon", _base(files))
    logicol = parse_args("logicol", _base(files))
    assert (supcon.loss, supcon.effective_batching) == ("supcon", "random")
    assert (logicol.loss, logicol.effective_batching) == ("logicol", "groups")
    assert supcon.resume is True and supcon.limit is None and supcon.atoms is None
    # Exclusion margin and temperature under which the term has a gradient (see
    # ContrastiveArgs); the weights and the subset term keep the paper's.
    assert (logicol.lambda_exclusion, logicol.gamma_exclusion) == (0.1, 2.0)
    assert logicol.exclusion_temperature == 0.05
    assert (logicol.lambda_subset, logicol.gamma_subset) == (0.1, 0.2)


def test_lore_flags(files):
    args = parse_args("lore", _base(files) + ["--beta", "4", "--num-distractors", "2"])
    assert args == LoreArgs(
        train=files["train"], docs=files["docs"], out="run", beta=4.0, num_distractors=2
    )
    assert args.batch_size == 16 and args.lr == 5e-5


@pytest.mark.parametrize(
    ("recipe", "extra", "message"),
    [
        ("logicol", ["--bogus", "1"], "unrecognized arguments: --bogus"),
        ("lore", ["--lambda-subset", "0.1"], "unrecognized arguments: --lambda-subset"),
        ("supcon", ["--loss", "logicol"], "invalid choice"),
        ("logicol", ["--alpha", "1.5"], "--alpha 1.5"),
        ("logicol", ["--exclusion-temperature", "0"], "--exclusion-temperature must be > 0"),
        ("logicol", ["--variants"], "--variants builds Quest+Variants from --atoms"),
        ("lore", ["--num-distractors", "0", "--num-negatives", "0"], "at least one"),
    ],
)
def test_bad_flags_exit_with_usage(files, capsys, recipe, extra, message):
    with pytest.raises(SystemExit) as info:
        parse_args(recipe, _base(files) + extra)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_missing_required_flag(files, capsys):
    with pytest.raises(SystemExit):
        parse_args("lore", ["--train", files["train"], "--out", "x"])
    assert "--docs" in capsys.readouterr().err


def test_missing_file_names_flag_and_path(files, tmp_path, capsys):
    missing = str(tmp_path / "nope.jsonl")
    with pytest.raises(SystemExit):
        parse_args("logicol", ["--train", missing, "--docs", files["docs"], "--out", "o"])
    err = capsys.readouterr().err
    assert f"--train {missing}: no such file" in err
    with pytest.raises(RecipeArgsError, match="--atoms"):
        LoreArgs(files["train"], files["docs"], "o", atoms=missing).validate()


def test_top_level_cli_dispatches_recipes(files, capsys):
    from logic_rag.cli import main

    with pytest.raises(SystemExit) as info:
        main(["finetune", "lore", *_base(files), "--nope"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "logic-rag finetune lore" in err and "--nope" in err


def _checkpoint(root: Path, step: int, *, state_step: int | None = None, weights: bool = True):
    folder = root / f"checkpoint-{step}"
    folder.mkdir(parents=True)
    state = {"global_step": step if state_step is None else state_step}
    (folder / "trainer_state.json").write_text(json.dumps(state))
    (folder / "optimizer.pt").write_bytes(b"x")
    if weights:
        (folder / "model.safetensors").write_bytes(b"x")
    return folder


def test_latest_checkpoint_skips_incomplete(tmp_path):
    assert latest_checkpoint(tmp_path / "absent") is None
    good = _checkpoint(tmp_path, 2)
    _checkpoint(tmp_path, 10)  # numerically newest, lexically older than 4: must win below
    assert latest_checkpoint(tmp_path).name == "checkpoint-10"
    _checkpoint(tmp_path, 12, weights=False)  # weights not written yet
    _checkpoint(tmp_path, 14, state_step=12)  # state of another step
    (tmp_path / "checkpoint-16").mkdir()  # nothing in it
    assert latest_checkpoint(tmp_path).name == "checkpoint-10"
    assert good.exists()


def test_card_renders_every_section():
    info = {
        "recipe": "lore",
        "base_model": {"name": "minilm", "weights_sha256": "abc123"},
        "data": [{"role": "train", "path": "/d/train.jsonl", "sha256": "f00d"}],
        "loss": {"class": "LoreLoss", "config": {"beta": 3.0}},
        "hyperparameters": {"lr": 2e-5},
        "training": {"global_step": 4, "training_loss": 0.5, "wall_time_s": 1.5},
        "document_encoder": {"name": "minilm", "weights_sha256": "abc123"},
        "metrics": {"recall@5": 0.25},
    }
    text = render_card(info)
    for needle in ("abc123", "/d/train.jsonl", "f00d", "LoreLoss", '"beta": 3.0', '"lr": 2e-05',
                   "steps: 4", "1.5 s", '"recall@5": 0.25', "Only the query encoder"):  # fmt: skip
        assert needle in text, needle
    assert "No evaluation" in render_card({})
