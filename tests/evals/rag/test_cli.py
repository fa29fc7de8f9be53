from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from logic_rag.evals.rag import runner as runner_mod
from logic_rag.evals.rag.cli import add_rag_parser, config_from_args, main


def _parser():
    parser = argparse.ArgumentParser(prog="logic-rag eval")
    add_rag_parser(parser.add_subparsers(dest="command", required=True))
    return parser


def test_flags_map_onto_config(tmp_path):
    args = _parser().parse_args(
        [
            "rag",
            "--dataset",
            "asqa",
            "--retriever",
            "mpnet",
            "--strategy",
            "rerank",
            "--corpus",
            "c.jsonl",
            "--generator",
            "vllm:x",
            "--judge",
            "openai:http://h/v1#m",
            "--limit",
            "7",
            "--k",
            "3",
            "--out",
            str(tmp_path),
            "--compare",
            "minilm",
            "--max-tokens",
            "50",
        ]
    )
    config = config_from_args(args)
    assert (config.dataset, config.retriever, config.strategy, config.corpus) == (
        "asqa",
        "mpnet",
        "rerank",
        "c.jsonl",
    )
    assert (config.generator, config.judge, config.limit, config.k) == (
        "vllm:x",
        "openai:http://h/v1#m",
        7,
        3,
    )
    assert config.compare == ("minilm",) and config.max_tokens == 50
    assert config.pairwise
    assert config.judges == ("correctness", "answer_relevancy")
    no_judge = config_from_args(
        _parser().parse_args(["rag", "--dataset", "eli5", "--out", "o", "--no-judge"])
    )
    assert no_judge.judges == () and no_judge.pool_limit is None
    pooled = config_from_args(
        _parser().parse_args(["rag", "--dataset", "eli5", "--out", "o", "--pool-limit", "300"])
    )
    assert pooled.pool_limit == 300


@pytest.mark.parametrize(
    "argv",
    [
        ["rag", "--dataset", "msmarco", "--out", "o"],
        ["rag", "--dataset", "eli5", "--limit", "0", "--out", "o"],
        ["rag", "--dataset", "eli5", "--pool-limit", "0", "--out", "o"],
        ["rag", "--dataset", "eli5"],
    ],
)
def test_bad_flags_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as info:
        _parser().parse_args(argv)
    assert info.value.code == 2


def test_missing_dataset_is_a_clear_error(tmp_path, capsys):
    assert main(["rag", "--out", str(tmp_path)]) == 2
    assert "--dataset is required" in capsys.readouterr().err


def test_cli_runs_end_to_end_with_doubles(
    tmp_path, monkeypatch, capsys, canned_llm, fake_generator
):
    examples = [
        SimpleNamespace(id=f"q{i}", question=f"q {i}?", answers=["an answer"], short_answers=[])
        for i in range(3)
    ]
    monkeypatch.setattr(runner_mod, "_load_examples", lambda config: examples[: config.limit])
    monkeypatch.setattr(runner_mod, "_exclusion_filter", lambda: None)
    retriever = SimpleNamespace(
        __len__=None, search=lambda q, k: [SimpleNamespace(id="d", title="t", text="x", score=1.0)]
    )
    monkeypatch.setattr(
        runner_mod, "open_retriever", lambda spec, **kw: (retriever, {"kind": "fake"})
    )
    llm = canned_llm(lambda p: "[RESULT] 1" if "[RESULT]" in p else "Score: 3/5")
    specs = []

    def make(spec, parallel=None):
        specs.append(spec)
        return fake_generator("an answer", llm=llm)

    monkeypatch.setattr(runner_mod, "_make_generator", make)
    out = tmp_path / "run"
    assert (
        main(["rag", "--dataset", "eli5", "--limit", "2", "--out", str(out), "--judge", "other"])
        == 0
    )
    assert specs == ["qwen2.5-coder-1.5b", "other"]  # the default generator and a separate judge
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (
        printed["n"] == 2 and printed["correctness"] == 3.0 and printed["answer_relevancy"] == 0.5
    )
    assert {p.name for p in out.iterdir()} >= {
        "results.json",
        "report.md",
        "report.html",
        "items.jsonl",
    }


def test_scale_flags_reach_vllm_specs_only(tmp_path, monkeypatch):
    args = _parser().parse_args(
        ["rag", "--dataset", "asqa", "--out", str(tmp_path), "--generator", "vllm:x"]
        + ["--tensor-parallel-size", "2", "--pipeline-parallel-size", "3"]
        + ["--distributed-executor-backend", "ray"]
    )
    config = config_from_args(args)
    assert config.parallel() == {
        "tensor_parallel_size": 2,
        "pipeline_parallel_size": 3,
        "distributed_executor_backend": "ray",
    }
    assert "tensor_parallel_size" not in config.settings()  # resuming does not depend on it
    built = []
    monkeypatch.setattr(
        "logic_rag.generators.factory.make_generator",
        lambda spec, **options: built.append((spec.backend, options)),
    )
    runner_mod._make_generator("vllm:x", config.parallel())
    runner_mod._make_generator("openai:http://h/v1#m", config.parallel())
    assert built == [
        (
            "vllm",
            {
                "tensor_parallel_size": 2,
                "pipeline_parallel_size": 3,
                "distributed_executor_backend": "ray",
            },
        ),
        ("openai", {}),
    ]


def test_scale_flags_without_a_vllm_spec_are_refused(tmp_path, capsys):
    argv = ["rag", "--dataset", "asqa", "--out", str(tmp_path), "--tensor-parallel-size", "2"]
    assert main(argv) == 2
    assert "apply to vllm: generators" in capsys.readouterr().err


def test_server_urls_build_an_openai_spec(tmp_path, capsys):
    def config(*extra):
        return config_from_args(
            _parser().parse_args(["rag", "--dataset", "asqa", "--out", str(tmp_path), *extra])
        )

    two = config("--server-url", "http://a:8000/v1", "--server-url", "http://b:8000/v1,http://c:1")
    assert two.generator == "openai:http://a:8000/v1,http://b:8000/v1,http://c:1"
    named = config("--generator", "openai:http://old/v1#m", "--server-url", "http://a:1/v1")
    assert named.generator == "openai:http://a:1/v1#m"
    assert config().generator == "qwen2.5-coder-1.5b"
    with pytest.raises(ValueError, match="--server-url"):
        config("--generator", "vllm:x", "--server-url", "http://a:1/v1")


def test_compare_repeats_with_strategies_and_no_pairwise():
    args = _parser().parse_args(
        [
            "rag",
            "--dataset",
            "eli5",
            "--out",
            "o",
            "--retriever",
            "minilm",
            "--strategy",
            "vanilla",
            "--compare",
            "embeddinggemma-300m",
            "--compare",
            "embeddinggemma-300m@rerank",
            "--no-pairwise",
        ]
    )
    config = config_from_args(args)
    assert config.compare == ("embeddinggemma-300m", "embeddinggemma-300m@rerank")
    assert not config.pairwise
    subs = [config.compare_config(i) for i in range(2)]
    assert [(c.retriever, c.strategy, c.label) for c in subs] == [
        ("embeddinggemma-300m", "vanilla", "embeddinggemma-300m@vanilla"),
        ("embeddinggemma-300m", "rerank", "embeddinggemma-300m@rerank"),
    ]
    assert [Path(c.out).name for c in subs] == ["compare", "compare-2"]
    assert all(c.compare == () for c in subs)


def test_summary_line_names_every_retriever():
    from logic_rag.evals.rag.cli import _summary_line

    results = {
        "n": 2,
        "rougeL": 0.2,
        "runs": [
            {"label": "a@vanilla", "metrics": {"rougeL": {"mean": 0.2}}},
            {"label": "b@rerank", "metrics": {"rougeL": {"mean": 0.3}}},
        ],
    }
    line = json.loads(_summary_line(results))
    assert line["rougeL"] == 0.2
    assert line["runs"] == {"a@vanilla": {"rougeL": 0.2}, "b@rerank": {"rougeL": 0.3}}
    assert "runs" not in json.loads(_summary_line({"n": 1}))
