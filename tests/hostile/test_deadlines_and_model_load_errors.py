"""Issue 32, the leftovers: a deadline from the settings' ``llm_deadline_s`` and in ``as_llm()``, a clear
``finetune verifier`` error when no gold page is in the corpus, out-of-memory model loads
told apart from bad folders, and a BM25 index bounded by the documents' character budget.

The hostile servers are those of ``test_generator_limits.py`` (one trickles a byte every
half second, so only an overall deadline stops it). Each call that must give up is run in
a thread and joined at deadline + 1 s, so a regression fails fast instead of hanging.
"""

from __future__ import annotations

import errno
import logging
import math
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from logic_rag.corpus import DEFAULT_MAX_DOCUMENT_CHARS, Document, TextBudget
from logic_rag.generators import make_generator
from logic_rag.generators.base import default_deadline, set_default_deadline
from logic_rag.generators.openai_server import DeadlineError
from logic_rag.strategies import pipeline_of
from logic_rag.strategy_settings import QualitySettings, StrategySettings, VerifySettings
from tests.hostile.test_cli_hostile import CLI, assert_user_error, write_jsonl
from tests.hostile.test_generator_limits import servers  # noqa: F401  (the fixture)


def _raised_within(seconds: float, call: Callable[[], Any]) -> BaseException:
    """Run ``call`` in a thread; it must raise within ``seconds``. Return what it raised."""
    outcome: list[BaseException | None] = []

    def target() -> None:
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome.append(exc)
        else:
            outcome.append(None)

    worker = threading.Thread(target=target, daemon=True)
    began = time.monotonic()
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still running after {seconds:g} s"
    assert outcome[0] is not None, "returned instead of raising"
    assert time.monotonic() - began < seconds
    return outcome[0]


# --- 1. llm_deadline_s of the settings -------------------------------------------------------


def _second_verifier(config: StrategySettings, strategy: str = "verify") -> Any:
    from logic_rag.verifiers.base import Verify
    from logic_rag.verifiers.llm import LLMVerifier

    found = [
        stage.verifier
        for stage in pipeline_of(strategy, config)
        if isinstance(stage, Verify) and isinstance(stage.verifier, LLMVerifier)
    ]
    assert len(found) == 1
    return found[0]


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, "5", True])
def test_d32_04_llm_deadline_s_is_checked(bad):
    # Non-numbers and non-finite values are refused by the settings' field checks (issue 51
    # item 6), non-positive ones by the deadline check; either way one line naming the field.
    with pytest.raises(
        ValueError,
        match=r"llm_deadline_s must be (a positive number of seconds|a finite number|a number)",
    ):
        VerifySettings(llm_deadline_s=bad)


def test_d32_04_llm_deadline_s_bounds_the_llm_verifier_it_builds(servers):  # noqa: F811
    slow = servers.start("slow", "trickle")
    config = VerifySettings(verifier=f"llm:openai:{slow.url}#m", llm_deadline_s=1.5)
    verifier = _second_verifier(config)
    assert verifier._generator().deadline == 1.5
    error = _raised_within(
        1.5 + 1.0, lambda: verifier.score_texts([("Westerns", "A western film.")])
    )
    assert isinstance(error, DeadlineError) and "1.5 s deadline" in str(error)
    assert slow.hits == 1

    # The quality strategy's costly verifier and its cheap one get it too.
    spec = f"llm:openai:{slow.url}#other"
    quality = QualitySettings(verifier=spec, cheap=spec, llm_deadline_s=2.5)
    from logic_rag.verifiers.certified import CertifiedTopK

    [certified] = [s for s in pipeline_of("quality", quality) if isinstance(s, CertifiedTopK)]
    assert certified.expensive._generator().deadline == 2.5
    assert _second_verifier(quality, "quality")._generator().deadline == 2.5


def test_d32_04_without_llm_deadline_s_the_process_default_holds(servers):  # noqa: F811
    slow = servers.start("slow", "trickle")
    config = VerifySettings(verifier=f"llm:openai:{slow.url}#m")
    assert _second_verifier(config)._generator().deadline == default_deadline()
    # In-process generators send no request: nothing is passed to them.
    local = VerifySettings(verifier="llm:smollm2-135m", llm_deadline_s=2.0)
    assert _second_verifier(local).generator_options == ()


# --- 2. as_llm() keeps the generator's deadline ------------------------------------------


@pytest.mark.parametrize("method", ["complete", "chat"])
def test_d32_04_as_llm_gives_up_at_the_deadline(servers, method):  # noqa: F811
    from llama_index.core.base.llms.types import ChatMessage

    slow = servers.start("slow", "trickle")
    llm = make_generator(f"openai:{slow.url}#m", timeout=30, deadline=1.5).as_llm()
    if method == "complete":
        error = _raised_within(2.5, lambda: llm.complete("Is this answer correct?"))
    else:
        messages = [ChatMessage(role="user", content="Is this answer correct?")]
        error = _raised_within(2.5, lambda: llm.chat(messages))
    assert isinstance(error, DeadlineError), repr(error)
    assert "1.5 s deadline" in str(error) and "--deadline" in str(error)


def test_d32_04_as_llm_keeps_the_run_wide_deadline(servers):  # noqa: F811
    slow = servers.start("slow", "trickle")
    before = default_deadline()
    set_default_deadline(1.0)  # what `logic-rag --deadline 1 ...` does
    try:
        llm = make_generator(f"openai:{slow.url}#m", timeout=30).as_llm(max_tokens=4)
    finally:
        set_default_deadline(before)
    error = _raised_within(2.0, lambda: llm.complete("judge"))
    assert isinstance(error, DeadlineError), repr(error)


# --- 3. finetune verifier without any gold page in the corpus ----------------------------


def test_d32_finetune_verifier_without_gold_pages_says_what_to_fix(tmp_path):
    train = write_jsonl(
        tmp_path / "train.jsonl",
        [
            {
                "query": "Westerns",
                "docs": ["West 1", "West 2"],
                "original_query": "<mark>Westerns</mark>",
                "metadata": {"template": "_", "domain": "films"},
            }
        ],
    )
    docs = write_jsonl(tmp_path / "docs.jsonl", [{"title": "Other", "text": "A novel."}])
    run = CLI(tmp_path)
    out = tmp_path / "run"
    result = run(
        "finetune", "verifier", "--train", str(train), "--docs", str(docs),
        "--out", str(out), "--max-steps", "1",
    )  # fmt: skip
    line = assert_user_error(result, "none of its 2 gold pages", "'West 1'", "--docs")
    assert "num_samples" not in line
    assert not out.exists()  # refused before a folder was made (or a model loaded)
    # Every flag the line names is a flag of the command.
    shown = run("finetune", "verifier", "--help").stdout.decode()
    flags = {word.strip("(),;:'\"") for word in line.split() if word.startswith("--")}
    assert flags and all(flag in shown for flag in flags), (flags, shown)


# --- 4. a model that cannot be mapped for lack of memory ---------------------------------

#: What each loader really raises when the weights cannot be mapped: safetensors 0.8
#: (pyo3 maps ENOMEM to MemoryError), an OSError with errno (older bindings), torch's mmap.
_OUT_OF_MEMORY = [
    MemoryError("Cannot allocate memory (os error 12)"),
    OSError(errno.ENOMEM, "Cannot allocate memory"),
    RuntimeError(
        "unable to mmap 90868376 bytes from file <model.safetensors>: Cannot allocate memory (12)"
    ),
]


@pytest.mark.parametrize("raised", _OUT_OF_MEMORY, ids=lambda e: type(e).__name__)
def test_d32_a_model_load_out_of_memory_is_not_called_a_bad_folder(monkeypatch, raised):
    import sentence_transformers

    from logic_rag.encoders.dense import DenseEncoder, ModelLoadError
    from logic_rag.encoders.sparse import SpladeEncoder

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise raised

    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", refuse)
    monkeypatch.setattr(sentence_transformers, "SparseEncoder", refuse)
    for encoder in (DenseEncoder("minilm"), SpladeEncoder("splade-tiny")):
        with pytest.raises(ModelLoadError) as caught:
            _ = encoder.model
        message = str(caught.value)
        assert "more (virtual) memory" in message and "ulimit -v" in message
        assert "Cannot allocate memory" in message
        assert "safetensors weights written by" not in message


def test_d32_a_bad_model_folder_keeps_its_own_advice(monkeypatch):
    import sentence_transformers

    from logic_rag.encoders.dense import DenseEncoder, ModelLoadError

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("Error no file named model.safetensors found in directory")

    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", refuse)
    with pytest.raises(ModelLoadError, match="safetensors weights written by") as caught:
        _ = DenseEncoder("minilm").model
    assert "ulimit" not in str(caught.value)


_UNDER_ULIMIT = textwrap.dedent(
    """
    import resource, sys
    import sentence_transformers, transformers.models.bert.modeling_bert  # noqa: F401
    from logic_rag.encoders.dense import DenseEncoder, ModelLoadError
    encoder = DenseEncoder("minilm")
    encoder.resolved  # resolved before the limit: only the weights are left to map
    size = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status")
                if line.startswith("VmSize"))
    # 30 MB more address space: less than the 87 MB weights file needs to be mapped.
    resource.setrlimit(resource.RLIMIT_AS, (size + 30 * 2**20, resource.RLIM_INFINITY))
    try:
        encoder.model
    except ModelLoadError as exc:
        print(exc)
        sys.exit(3)
    print("loaded")
    """
)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmSize from /proc")
def test_d32_a_model_under_ulimit_v_names_the_memory_limit(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", _UNDER_ULIMIT],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**CLI(tmp_path).env},
    )
    assert result.returncode == 3, result.stdout + result.stderr
    assert "more (virtual) memory" in result.stdout and "ulimit -v" in result.stdout
    assert "Traceback" not in result.stderr


# --- 5. BM25 reads each document within the character budget -----------------------------


def _resources(documents: list[Document], budget: TextBudget | None) -> Any:
    from logic_rag.pipeline.context import Resources

    dense = SimpleNamespace(documents=documents, text_budget=budget)
    return Resources(dense)  # type: ignore[arg-type]


def _tokenized(monkeypatch) -> list[int]:
    """Lengths of the texts the BM25 index hands to its tokenizer."""
    import bm25s

    lengths: list[int] = []
    real = bm25s.tokenize

    def spy(texts: Any, *args: Any, **kwargs: Any) -> Any:
        lengths.extend(len(t) for t in ([texts] if isinstance(texts, str) else texts))
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(bm25s, "tokenize", spy)
    return lengths


@pytest.mark.parametrize("budget", [None, 5_000])
def test_d32_02_bm25_reads_each_document_within_the_budget(monkeypatch, caplog, budget):
    huge = "zebra " + "lorem ipsum dolor sit amet " * 800_000  # about 22 million characters
    documents = [
        Document(id="big", title="Huge", text=huge),
        Document(id="d1", title="Apple", text="Apples are crisp red fruits."),
        Document(id="d2", title="Zebra", text="Zebras are striped horses."),
    ]
    lengths = _tokenized(monkeypatch)
    resources = _resources(documents, None if budget is None else TextBudget(budget))
    with caplog.at_level(logging.WARNING):
        index = resources.bm25()
    limit = DEFAULT_MAX_DOCUMENT_CHARS if budget is None else budget
    assert len(lengths) == 3 and max(lengths) == limit  # the huge one cut, the rest whole
    assert resources.bm25_budget.record() == {
        "max_document_chars": limit,
        "documents_cut": 1,
        "longest_document_chars": len("Huge\n" + huge),
    }
    assert "1 of 3 documents" in caplog.text and "before BM25 indexing" in caplog.text
    scores, ids = index.search(["zebra"], 3)
    assert set(ids[0].tolist()[:2]) == {0, 2}  # the kept start is still searchable
