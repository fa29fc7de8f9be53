"""The RAG evaluation runner: retrieve -> generate -> judge, resumable, one item at a time.

:func:`run_rag_eval` loads a dataset, builds (or reopens) a retrieval index, and for each
question retrieves ``k`` passages, generates an answer with the generator, scores it
with ROUGE-Lsum (and short-answer exact-match recall where the dataset has short
answers) and with the LLM judges. Every finished item is appended to ``OUT/items.jsonl``
(see :mod:`.cache`), so an interrupted run resumes where it stopped. At the end
``OUT/results.json`` (means, counts, parse failures, config, timings) is written
atomically, then ``report.md`` / ``report.html``.

``--retriever`` is a registry name (``minilm``), a sentence-transformers model folder
(a fine-tuned encoder) or an index folder written by ``logic-rag index``. A model is
indexed over ``--corpus`` or the dataset's default corpus; that index is cached under
``OUT/index/<hash of corpus texts + model weights>``.

:func:`run_meta_eval` scores the ALCE human-rated answers with the correctness judge and
reports rank correlations with human utility (key ``judge_meta_eval``).
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from logic_rag.atomic import atomic_write_json
from logic_rag.errors import LogicRagError

from .cache import ItemCache, check_run_settings, corpus_key
from .judges import JUDGE_METRICS, METRIC_SCALES, Judges
from .prompts import SYSTEM_PROMPT, build_alce_prompt, build_rag_prompt

__all__ = [
    "DATASETS",
    "RagEvalConfig",
    "run_rag_eval",
    "run_meta_eval",
    "summarize_items",
    "open_retriever",
    "input_fingerprints",
    "ITEMS_FILE",
    "RESULTS_FILE",
    "split_retriever_spec",
]

log = logging.getLogger(__name__)

DATASETS = ("eli5", "asqa", "quest", "nq", "alce-asqa", "alce-eli5", "alce-qampari")
ITEMS_FILE = "items.jsonl"
RESULTS_FILE = "results.json"
META_ITEMS_FILE = "meta_items.jsonl"
#: Reference answers are clipped to this many characters in the correctness prompt.
REFERENCE_CHARS = 1200

ItemHook = Callable[[int, dict[str, Any]], None]


@dataclass
class RagEvalConfig:
    """Everything that defines one RAG evaluation run (the CLI flags, one to one)."""

    dataset: str
    out: str | os.PathLike[str]
    retriever: str = "minilm"
    strategy: str = "vanilla"
    corpus: str | None = None
    generator: str = "qwen2.5-coder-1.5b"
    judge: str = "qwen2.5-coder-1.5b"
    limit: int | None = 20
    k: int = 5
    max_tokens: int = 200
    judges: tuple[str, ...] = ("correctness", "answer_relevancy")
    #: Further retrievers answered on the same questions, each ``RETRIEVER[@STRATEGY]``
    #: (strategy defaults to ``strategy``); a single string is one retriever.
    compare: tuple[str, ...] | str | None = ()
    #: The LLM pairwise judge on (``retriever``, each ``compare``); off saves two free-text
    #: judge calls per item and comparison (paired metric differences are always computed).
    pairwise: bool = True
    seed: int = 0
    data_path: str | None = None
    n_boot: int = 2000
    judge_max_tokens: int = 96
    pool_limit: int | None = None
    #: "choices": token-probability rubrics (small_judges.ChoiceJudges); "llamaindex":
    #: LlamaIndex's evaluators with free-text output; "auto": choices when the judge
    #: model implements choice_logprobs (every logic-rag backend does).
    judge_style: str = "auto"
    #: vLLM scale-out for vllm: generator and judge specs (see ``parallel_options``);
    #: not part of :meth:`settings`: they change speed, not which model answers.
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    distributed_executor_backend: str | None = None
    #: "default": this package's per-dataset prompt (:func:`build_rag_prompt`); "alce":
    #: ALCE's prompt file for the dataset, ``shots`` demos with ``demo_docs`` documents each
    #: (ALCE's ASQA default is 2 demos with 5 documents).
    prompt: str = "default"
    shots: int = 2
    demo_docs: int = 5

    def __post_init__(self) -> None:
        self._check_parallel()
        if self.prompt not in ("default", "alce"):
            raise ValueError(f"prompt must be 'default' or 'alce', not {self.prompt!r}")
        if self.shots < 0 or self.demo_docs < 0:
            raise ValueError("shots and demo_docs must be non-negative")
        if self.compare is None:
            self.compare = ()
        elif isinstance(self.compare, str):
            self.compare = (self.compare,)
        self.compare = tuple(self.compare)
        # compare_config splits each spec, so an unknown strategy is refused here
        labels = [self.label, *(self.compare_config(i).label for i in range(len(self.compare)))]
        repeated = sorted({x for x in labels if labels.count(x) > 1})
        if repeated:
            raise ValueError(
                f"retriever {', '.join(repeated)} is given twice (as --retriever/--strategy or "
                f"--compare); compare different retrievers or strategies"
            )
        if self.judge_style not in ("auto", "choices", "llamaindex"):
            raise ValueError("judge_style must be 'auto', 'choices' or 'llamaindex'")
        self.judges = tuple(self.judges)
        unknown = [j for j in self.judges if j not in JUDGE_METRICS]
        if unknown:
            raise ValueError(
                f"unknown judge metric(s) {unknown}; choose from {', '.join(JUDGE_METRICS)}"
            )
        if self.dataset not in DATASETS:
            raise ValueError(
                f"unknown dataset {self.dataset!r}; choose one of {', '.join(DATASETS)}"
            )
        if self.k < 1:
            raise ValueError("k must be at least 1")
        if self.limit is not None and self.limit < 1:
            raise ValueError("limit must be at least 1 (or None for all examples)")
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        if self.pool_limit is not None:
            if self.pool_limit < 1:
                raise ValueError("pool_limit must be at least 1 (or None for the whole file)")
            if self.dataset != "eli5" or self.corpus:
                raise ValueError(
                    "pool_limit sizes ELI5's default passage pool; it needs --dataset eli5 "
                    "and no --corpus"
                )

    def parallel(self) -> dict[str, Any]:
        """The vLLM parallel settings as ``parallel_options`` keyword arguments."""
        return {
            "tensor_parallel_size": self.tensor_parallel_size,
            "pipeline_parallel_size": self.pipeline_parallel_size,
            "distributed_executor_backend": self.distributed_executor_backend,
        }

    def _check_parallel(self) -> None:
        from logic_rag.generators.base import parallel_options
        from logic_rag.generators.factory import parse_spec

        if not parallel_options("vllm", **self.parallel()):
            return
        specs = [self.generator] + ([self.judge] if self.judges else [])
        if not any(parse_spec(s).backend == "vllm" for s in specs):
            raise ValueError(
                "--tensor-parallel-size / --pipeline-parallel-size / "
                "--distributed-executor-backend apply to vllm: generators and judges, and "
                f"neither {self.generator!r} nor {self.judge!r} is one; for openai: servers "
                f"pass them to `vllm serve`"
            )

    def settings(self) -> dict[str, Any]:
        """The fields that change answers or scores: a resumed run must match them."""
        keep = ("dataset", "retriever", "strategy", "corpus", "generator", "judge", "k")
        row = {name: getattr(self, name) for name in keep}
        row.update(
            max_tokens=self.max_tokens,
            judges=list(self.judges),
            data_path=self.data_path,
            judge_max_tokens=self.judge_max_tokens,
        )
        if self.pool_limit is not None:  # only when set, so older runs still resume
            row["pool_limit"] = self.pool_limit
        if self.judge_style != "auto":  # likewise
            row["judge_style"] = self.judge_style
        if self.prompt != "default":  # likewise
            row.update(prompt=self.prompt, shots=self.shots, demo_docs=self.demo_docs)
        return row

    def to_json(self) -> dict[str, Any]:
        row = asdict(self)
        row["out"] = os.fspath(self.out)
        row["judges"] = list(self.judges)
        row["compare"] = list(self.compare)
        return row

    @property
    def label(self) -> str:
        """``RETRIEVER@STRATEGY``: how reports name this run's retriever."""
        return f"{self.retriever}@{self.strategy}"

    def compare_config(self, i: int) -> RagEvalConfig:
        """The config of the ``i``-th ``compare`` run, written to ``OUT/compare[-N]``.

        The first keeps the folder name of single-comparison runs, so they still resume.
        """
        retriever, strategy = split_retriever_spec(self.compare[i], self.strategy)
        folder = "compare" if i == 0 else f"compare-{i + 1}"
        return replace(
            self, out=Path(self.out) / folder, retriever=retriever, strategy=strategy, compare=()
        )


def split_retriever_spec(spec: str, default_strategy: str) -> tuple[str, str]:
    """``"embeddinggemma-300m@rerank"`` -> ``("embeddinggemma-300m", "rerank")``.

    Only a suffix that names a strategy is split off, so a folder whose name holds ``@``
    still works; without one the strategy is ``default_strategy``.
    """
    from logic_rag.strategies import STRATEGIES

    head, sep, tail = spec.rpartition("@")
    if sep and head and tail in STRATEGIES:
        return head, tail
    if sep and head and tail and not Path(spec).expanduser().exists() and "/" not in tail:
        raise ValueError(
            f"{spec!r}: unknown strategy {tail!r} after '@'; choose one of {', '.join(STRATEGIES)}"
        )
    return spec, default_strategy


@dataclass
class _Context:
    """Objects shared by the stages (loaded once, reused by --compare)."""

    generator: Any
    judges: Any  # Judges (LlamaIndex evaluators) or small_judges.ChoiceJudges, or None
    timings: dict[str, float] = field(default_factory=dict)
    #: Finished records by ``prompt_sha256``, with the label of the run that made them:
    #: two retrievers that return the same passages give the same prompt, and greedy
    #: generation and the judges are deterministic, so the answer is reused, not redone.
    answered: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)

    _alce: dict[str, dict[str, Any]] = field(default_factory=dict)

    def alce_spec(self, dataset: str) -> dict[str, Any]:
        """ALCE's prompt file for ``dataset``, read once."""
        if dataset not in self._alce:
            from .prompts import load_alce_prompt

            self._alce[dataset] = load_alce_prompt(dataset)
        return self._alce[dataset]

    def remember(self, label: str, records: Sequence[Mapping[str, Any]]) -> None:
        for record in records:
            key = record.get("prompt_sha256")
            if key and key not in self.answered:
                self.answered[key] = (record.get("reused_from") or label, dict(record))


# --------------------------------------------------------------------------- loading
def _load_examples(config: RagEvalConfig) -> list[Any]:
    from .datasets import load_rag_dataset

    return list(load_rag_dataset(config.dataset, path=config.data_path, limit=config.limit))


def _default_documents(config: RagEvalConfig, examples: Sequence[Any]) -> list[Any]:
    """The dataset's default corpus; ``pool_limit`` builds ELI5's pool from fewer questions.

    Why ``pool_limit``: the ELI5 pool is chunked from the answers of every question in the
    file (about 11.5k passages, 12 minutes to index on 2 cores), which dominates a smoke run.
    """
    from .datasets import load_rag_dataset
    from .pool import default_corpus

    source = None
    if config.pool_limit is not None:
        source = load_rag_dataset(config.dataset, path=config.data_path, limit=config.pool_limit)
    return list(default_corpus(config.dataset, examples, source=source))


def _exclusion_filter() -> Callable[[Any, Any], bool] | None:
    """H5's ``excluded_for(example, doc)`` (a question's own answers), wherever it lives."""
    import importlib

    for module in ("pool", "datasets"):
        try:
            mod = importlib.import_module(f"{__package__}.{module}")
        except ImportError:
            continue
        func = getattr(mod, "excluded_for", None)
        if func is not None:
            return func
    return None


def _is_index_folder(path: Path) -> bool:
    return path.is_dir() and (path / "manifest.json").is_file()


def _content_sha256(path: Path) -> str:
    """SHA-256 of a file, or of a folder's files (relative names and bytes), sorted."""
    from logic_rag.index.store import file_sha256

    if path.is_file():
        return file_sha256(path)
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(file.relative_to(path).as_posix().encode("utf-8", "surrogateescape"))
        digest.update(bytes.fromhex(file_sha256(file)))
    return digest.hexdigest()


def _model_sha256(spec: str) -> str:
    """Weights and encoder configuration (pooling, prompts, ...) of a dense model spec."""
    from logic_rag.encoders.dense import DenseEncoder

    encoder = DenseEncoder(spec)
    return f"{encoder.fingerprint}:{encoder.config_fingerprint}"


def input_fingerprints(config: RagEvalConfig, *, retriever_given: bool = False) -> dict[str, Any]:
    """Content hashes of a run's inputs, so a resumed run cannot mix two corpora.

    Paths alone are not enough: replacing the file behind ``--corpus`` between two runs
    would otherwise resume with items retrieved from the old corpus. Covers the corpus,
    the dataset file, and the retriever (an index folder's manifest, which lists the
    checksum of every file, or a model's weights and encoder configuration).
    """
    from .datasets import default_path

    row: dict[str, Any] = {}
    if config.corpus:
        corpus = Path(config.corpus).expanduser()
        row["corpus_sha256"] = _content_sha256(corpus) if corpus.exists() else None
    data = Path(config.data_path).expanduser() if config.data_path else default_path(config.dataset)
    row["data_sha256"] = _content_sha256(data) if data.exists() else None
    if not retriever_given:
        path = Path(config.retriever).expanduser()
        if _is_index_folder(path):
            row["retriever_sha256"] = _content_sha256(path / "manifest.json")
        else:
            row["retriever_sha256"] = _model_sha256(config.retriever)
    return row


def open_retriever(
    spec: str,
    *,
    strategy: str,
    documents: Callable[[], Sequence[Any]],
    index_root: str | os.PathLike[str],
) -> tuple[Any, dict[str, Any]]:
    """A :class:`~logic_rag.LogicRetriever` for ``spec`` and a description of it.

    An index folder is opened as is; a registry name or model folder is indexed over
    ``documents()`` once and the index cached under ``index_root/<key>``.
    """
    from logic_rag.index.store import recover_leftovers
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.models import resolve_model

    path = Path(spec).expanduser()
    if _is_index_folder(path):
        retriever = LogicRetriever.load(path, strategy=strategy)
        return retriever, {"kind": "index", "path": str(path.resolve()), "size": len(retriever)}
    resolved = resolve_model(spec)
    if resolved.kind != "dense":
        raise LogicRagError(
            f"--retriever {spec!r} is a {resolved.kind} model; pass a dense encoder name "
            f"(e.g. 'minilm'), a sentence-transformers model folder, or an index folder"
        )
    docs = list(documents())
    if not docs:
        raise LogicRagError("the retrieval corpus is empty; pass --corpus with documents")

    def key(passages: bool) -> str:
        return corpus_key(
            (f"{d.id}\x1f{d.title}\x1f{d.text}" for d in docs),
            f"{_model_sha256(str(resolved.path))}:passages={passages}",
        )

    passages = strategy != "vanilla"
    folder = Path(index_root) / key(passages)
    if not passages and not _is_index_folder(folder):
        # An index with passages (built for a logical strategy) also serves vanilla.
        wider = Path(index_root) / key(True)
        folder = wider if _is_index_folder(wider) else folder
    # A run killed while saving this index leaves a temporary folder, or the index moved
    # aside: clean up or put it back (each action is logged as a warning).
    recover_leftovers(folder)
    if _is_index_folder(folder):
        retriever = LogicRetriever.load(folder, model=str(resolved.path), strategy=strategy)
        cached = True
    else:
        retriever = LogicRetriever.build(
            docs, model=str(resolved.path), passages=passages, strategy=strategy
        )
        retriever.save(folder)
        cached = False
    info = {
        "kind": "model",
        "model": spec,
        "index": str(folder),
        "size": len(retriever),
        "index_cached": cached,
    }
    return retriever, info


def _make_generator(spec: str, parallel: Mapping[str, Any] | None = None) -> Any:
    """The generator of ``spec``; ``parallel`` (vLLM sizes) applies to vllm: specs only."""
    from logic_rag.generators.base import parallel_options
    from logic_rag.generators.factory import make_generator, parse_spec

    parsed = parse_spec(spec)
    parallel = dict(parallel or {})
    context = parallel.pop("context", None)
    options = parallel_options("vllm", **parallel) if parallel and parsed.backend == "vllm" else {}
    if context is not None:
        options["context"] = context
    return make_generator(parsed, **options)


def _judge_llm(generator: Any, max_tokens: int) -> Any:
    as_llm = generator.as_llm
    try:
        params = inspect.signature(as_llm).parameters
    except (TypeError, ValueError):
        params = {}
    takes_options = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    if "max_tokens" in params or takes_options:
        return as_llm(max_tokens=max_tokens)
    return as_llm()


def _build_context(config: RagEvalConfig, generator: Any | None, judge_llm: Any | None) -> _Context:
    started = time.perf_counter()
    if generator is None:
        generator = _make_generator(config.generator, config.parallel())
    judges = None
    if config.judges:
        judge_gen = None
        if judge_llm is None:
            judge_gen = generator if config.judge == config.generator else None
            if judge_gen is not None and hasattr(generator, "context"):
                # the same llama.cpp model in its own context: generating and judging each
                # keep their prompt prefix (ALCE's demos, the rubric) in their own KV cache
                judge_gen = _make_generator(config.judge, {"context": "judge"})
            if judge_gen is None:
                judge_gen = _make_generator(config.judge, config.parallel())
        from .small_judges import ChoiceJudges, supports_choices

        choices = judge_gen is not None and supports_choices(judge_gen)
        if config.judge_style == "choices" and not choices:
            raise LogicRagError(
                f"--judge-style choices needs a judge with choice_logprobs; {config.judge!r} "
                f"has none"
            )
        if choices and config.judge_style != "llamaindex":
            judges = ChoiceJudges(judge_gen, name=config.judge)
        else:
            if judge_llm is None:
                judge_llm = _judge_llm(judge_gen, config.judge_max_tokens)
            judges = Judges(judge_llm, name=config.judge)
    ctx = _Context(generator, judges, {"load_models_s": time.perf_counter() - started})
    if config.prompt == "alce":
        ctx.alce_spec(config.dataset)  # a missing prompt file fails before any indexing
    return ctx


# --------------------------------------------------------------------------- one item
def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _reference(example: Any) -> str | None:
    """The correctness judge's reference: the first long answer, else the short answers."""
    answers = [a for a in (getattr(example, "answers", None) or []) if _text(a).strip()]
    if answers:
        ref = answers[0].strip()
        return ref if len(ref) <= REFERENCE_CHARS else ref[:REFERENCE_CHARS].rsplit(" ", 1)[0]
    shorts = _flatten(getattr(example, "short_answers", None) or [])
    return "; ".join(shorts) if shorts else None


def _flatten(values: Any) -> list[str]:
    out: list[str] = []
    for value in values:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, (list, tuple)):
            out.extend(_flatten(value))
    return out


def _retrieve(
    retriever: Any, example: Any, k: int, exclude: Callable[[Any, Any], bool] | None
) -> list[Any]:
    if exclude is None:
        return list(retriever.search(example.question, k))
    fetch = k + 20
    while True:
        hits = retriever.search(example.question, min(fetch, len(retriever)))
        kept = [h for h in hits if not exclude(example, h)]
        if len(kept) >= k or fetch >= len(retriever):
            return kept[:k]
        fetch *= 4


def _lexical_metrics(example: Any, answer: str) -> dict[str, float | None]:
    from .metrics import answer_words, exact_match_recall, rouge_lsum

    refs = [a for a in (example.answers or []) if _text(a).strip()]
    row: dict[str, float | None] = {"rougeL": rouge_lsum(answer, refs) if refs else None}
    shorts = getattr(example, "short_answers", None)
    if shorts:
        row["str_em"] = exact_match_recall(answer, shorts)
    row["answer_words"] = float(answer_words(answer))
    return row


def _retrieval_metrics(
    config: RagEvalConfig, example: Any, hits: Sequence[Any]
) -> dict[str, float | None]:
    """How good the passages were, before any generation (ALCE reports both).

    ``str_em_passages``: STR-EM of the top-k passages' text taken together, ALCE's
    retrieval recall for ASQA (can the answer be found in what the generator saw?).
    ``gold_passage_recall``: share of the Wikipedia text shipped with the question that is
    among the top k; only on the dataset's own corpus (a user's corpus has other passages).
    """
    from .metrics import exact_match_recall

    row: dict[str, float | None] = {}
    shorts = getattr(example, "short_answers", None)
    if shorts:
        row["str_em_passages"] = exact_match_recall(
            "\n".join(_text(getattr(h, "text", "")) for h in hits), shorts
        )
    docs = getattr(example, "documents", None) or ()
    if docs and not config.corpus:
        gold = {(d.title, d.text) for d in docs}
        found = {(getattr(h, "title", ""), getattr(h, "text", "")) for h in hits}
        row["gold_passage_recall"] = len(gold & found) / len(gold)
    return row


def _generation_prompt(config: RagEvalConfig, ctx: _Context, example: Any, hits: Any) -> str:
    if config.prompt == "alce":
        return build_alce_prompt(
            example.question,
            hits,
            ctx.alce_spec(config.dataset),
            shots=config.shots,
            demo_docs=config.demo_docs,
        )
    return build_rag_prompt(example.question, hits, config.dataset)


def _system_prompt(config: RagEvalConfig) -> str | None:
    """ALCE's prompt carries its own instruction and no system message."""
    return None if config.prompt == "alce" else SYSTEM_PROMPT


def _process_item(
    config: RagEvalConfig,
    ctx: _Context,
    retriever: Any,
    example: Any,
    exclude: Callable[[Any, Any], bool] | None,
) -> dict[str, Any]:
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    hits = _retrieve(retriever, example, config.k, exclude)
    timings["retrieve_s"] = time.perf_counter() - t0

    prompt = _generation_prompt(config, ctx, example, hits)
    reference = _reference(example)
    key = _prompt_key(config, prompt, reference)
    retrieval = _retrieval_metrics(config, example, hits)
    earlier = ctx.answered.get(key)
    if earlier is not None and all(m in earlier[1].get("metrics", {}) for m in config.judges):
        return _reused(example, hits, key, *earlier, timings, retrieval)
    t0 = time.perf_counter()
    answer = ctx.generator.generate(
        [prompt], max_tokens=config.max_tokens, temperature=0.0, system=_system_prompt(config)
    )[0]
    timings["generate_s"] = time.perf_counter() - t0
    answer = answer.strip() if isinstance(answer, str) else ""

    metrics: dict[str, float | None] = {**_lexical_metrics(example, answer), **retrieval}
    judge_raw: dict[str, str | None] = {}
    if ctx.judges is not None:
        t0 = time.perf_counter()
        for metric in config.judges:
            if not answer:  # nothing to judge: neither a score nor a parse failure
                judge_raw[metric] = "(empty answer: not judged)"
                continue
            scored = ctx.judges.score(metric, example.question, answer, reference)
            metrics[metric], judge_raw[metric] = scored.score, scored.raw
        timings["judge_s"] = time.perf_counter() - t0
    return {
        "id": str(example.id),
        "question": example.question,
        "answer": answer,
        "passages": _passage_rows(hits),
        "metrics": metrics,
        "judge_raw": judge_raw,
        "timings": timings,
        "prompt_sha256": key,
    }


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def item_record_problem(record: Mapping[str, Any]) -> str | None:
    """What makes a cached line other than a finished item (:func:`_process_item`'s
    record), or ``None``. Resuming trusts the cache: a line ``{"id": ...}`` alone counted
    as finished (null scores in the results, exit 0) and a wrongly typed field ended in a
    traceback in the summary (issue 42 item 10)."""
    for key in ("question", "answer"):
        if not isinstance(record.get(key), str):
            return f"{key!r} must be a string"
    if not isinstance(record.get("prompt_sha256", ""), str):  # absent in older caches
        return "'prompt_sha256' must be a string"
    passages = record.get("passages")
    if not isinstance(passages, list) or not all(isinstance(p, dict) for p in passages):
        return "'passages' must be a list of objects"
    metrics = record.get("metrics")
    if not isinstance(metrics, dict) or not all(
        v is None or _is_number(v) for v in metrics.values()
    ):
        return "'metrics' must map names to numbers (or null for a parse failure)"
    raw = record.get("judge_raw", {})
    if not isinstance(raw, dict) or not all(v is None or isinstance(v, str) for v in raw.values()):
        return "'judge_raw' must map names to strings"
    timings = record.get("timings", {})
    if not isinstance(timings, dict) or not all(_is_number(v) for v in timings.values()):
        return "'timings' must map names to numbers of seconds"
    if "reused_from" in record and not isinstance(record["reused_from"], str):
        return "'reused_from' must be a string"
    return None


def _passage_rows(hits: Sequence[Any]) -> list[dict[str, Any]]:
    return [
        {"id": h.id, "title": h.title, "score": float(h.score), "text": h.text[:300]} for h in hits
    ]


def _prompt_key(config: RagEvalConfig, prompt: str, reference: str | None) -> str:
    """What decides an item's answer and scores besides the retriever: same key, same record."""
    parts = [
        config.generator,
        config.judge,
        str(config.max_tokens),
        str(config.judge_max_tokens),
        config.judge_style,
        ",".join(config.judges),
        _system_prompt(config) or "",
        prompt,
        reference or "",
    ]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def _reused(
    example: Any,
    hits: Sequence[Any],
    key: str,
    label: str,
    earlier: Mapping[str, Any],
    timings: dict[str, float],
    retrieval: Mapping[str, float | None],
) -> dict[str, Any]:
    """The record of an item whose prompt another retriever already answered."""
    answer = earlier.get("answer", "")
    return {
        "id": str(example.id),
        "question": example.question,
        "answer": answer,
        "passages": _passage_rows(hits),
        "metrics": {
            **earlier.get("metrics", {}),
            **_lexical_metrics(example, answer),
            **retrieval,
        },
        "judge_raw": dict(earlier.get("judge_raw", {})),
        "timings": {**timings, "generate_s": 0.0, "judge_s": 0.0},
        "prompt_sha256": key,
        "reused_from": label,
    }


# --------------------------------------------------------------------------- summary
def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _std(values: Sequence[float]) -> float | None:
    if len(values) < 2:
        return None
    m = sum(values) / len(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def summarize_items(records: Sequence[Mapping[str, Any]], judges: Sequence[str]) -> dict[str, Any]:
    """Per-metric means over items; a judge score of ``None`` is a parse failure, not 0."""
    names: list[str] = []
    for record in records:
        for name in record.get("metrics", {}):
            if name not in names:
                names.append(name)
    for name in judges:
        if name not in names:
            names.append(name)
    summary: dict[str, Any] = {"n": len(records)}
    metrics: dict[str, Any] = {}
    parse_failures: dict[str, int] = {}
    for name in names:
        values = [
            float(r["metrics"][name]) for r in records if r.get("metrics", {}).get(name) is not None
        ]
        block: dict[str, Any] = {
            "mean": _mean(values),
            "std": _std(values),
            "count": len(values),
        }
        if name in judges:
            failures = sum(
                1 for r in records if name in r.get("metrics", {}) and r["metrics"][name] is None
            )
            block["parse_failures"] = failures
            block["scale"] = list(METRIC_SCALES[name])
            parse_failures[name] = failures
        metrics[name] = block
        summary[name] = block["mean"]
    summary["parse_failures"] = sum(parse_failures.values())
    summary["parse_failures_by_metric"] = parse_failures
    summary["metrics"] = metrics
    return summary


# --------------------------------------------------------------------------- the run
def _run_items(
    config: RagEvalConfig,
    ctx: _Context,
    examples: Sequence[Any],
    retriever: Any,
    on_item: ItemHook | None,
    desc: str,
) -> list[dict[str, Any]]:
    from tqdm.auto import tqdm

    cache = ItemCache(Path(config.out) / ITEMS_FILE, check=item_record_problem)
    done = cache.load()
    pending = [(i, ex) for i, ex in enumerate(examples) if str(ex.id) not in done]
    if done:
        log.info(
            "resuming: %d of %d items already done", len(examples) - len(pending), len(examples)
        )
    exclude = _exclusion_filter()
    for i, example in tqdm(pending, desc=desc, unit="item", disable=False):
        record = _process_item(config, ctx, retriever, example, exclude)
        cache.append(record)
        if on_item is not None:
            on_item(i, record)
    finished = cache.items()
    return [finished[str(ex.id)] for ex in examples]


def _timing_totals(records: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    totals: dict[str, float] = {}
    for record in records:
        for key, value in record.get("timings", {}).items():
            totals[key] = totals.get(key, 0.0) + float(value)
    return totals


def _single_run(
    config: RagEvalConfig,
    ctx: _Context,
    examples: Sequence[Any],
    on_item: ItemHook | None,
    retriever: Any | None,
    index_root: Path | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    settings = config.settings()
    settings["inputs"] = input_fingerprints(config, retriever_given=retriever is not None)
    check_run_settings(out, settings)
    t0 = time.perf_counter()
    if retriever is None:

        def documents() -> list[Any]:
            if config.corpus:
                from logic_rag.corpus import load_documents

                return load_documents(config.corpus)
            return _default_documents(config, examples)

        retriever, retriever_info = open_retriever(
            config.retriever,
            strategy=config.strategy,
            documents=documents,
            index_root=index_root or out / "index",
        )
    else:
        retriever_info = {"kind": "given", "size": len(retriever)}
    index_s = time.perf_counter() - t0
    records = _run_items(config, ctx, examples, retriever, on_item, desc=f"rag {config.label}")
    ctx.remember(config.label, records)
    summary = summarize_items(records, config.judges)
    summary["retriever"] = retriever_info
    summary["timings"] = {"index_s": index_s, **_timing_totals(records)}
    summary["reused"] = sum(1 for r in records if r.get("reused_from"))
    return summary, records


def _run_summary(label: str, summary: Mapping[str, Any]) -> dict[str, Any]:
    """One row of the ``runs`` table: a retriever's means, failures, reuse and timings."""
    keep = ("n", "parse_failures", "reused", "timings", "metrics")
    return {"label": label, **{k: summary[k] for k in keep if k in summary}}


def run_rag_eval(
    config: RagEvalConfig,
    *,
    generator: Any | None = None,
    judge_llm: Any | None = None,
    retriever: Any | None = None,
    compare_retriever: Any | Sequence[Any] | None = None,
    on_item: ItemHook | None = None,
    write_report: bool = True,
) -> dict[str, Any]:
    """Run the evaluation described by ``config``; returns what ``results.json`` holds.

    ``generator``, ``judge_llm``, ``retriever`` and ``compare_retriever`` (one object,
    or one per ``config.compare``) replace the objects the config names (tests pass
    doubles); ``on_item(index, record)`` is called after each item is durably cached.

    Every retriever answers the same questions; ``comparisons`` holds the paired metric
    differences of every pair of them (the LLM pairwise judge only against
    ``--retriever``), ``compare`` the first of those (A = ``--retriever``, B = the
    first ``--compare``). All runs share ``OUT/index`` and reuse each other's answers
    where the prompt is identical (``reused_from`` in ``items.jsonl``).
    """
    wall0, cpu0 = time.perf_counter(), time.process_time()
    out = Path(config.out)
    examples = _load_examples(config)
    if not examples:
        raise LogicRagError(f"dataset {config.dataset!r} gave no examples")
    ids = [str(ex.id) for ex in examples]
    if len(set(ids)) != len(ids):
        raise LogicRagError(f"dataset {config.dataset!r} has duplicate example ids")
    given = _per_compare(compare_retriever, len(config.compare))
    ctx = _build_context(config, generator, judge_llm)
    index_root = out / "index"
    summary, records = _single_run(config, ctx, examples, on_item, retriever, index_root)
    results: dict[str, Any] = {**summary, "config": config.to_json()}
    corpus = _corpus_block(config, examples)
    if corpus:
        results["corpus"] = corpus
    results["timings"] = {**ctx.timings, **summary["timings"]}
    runs = [(config.label, summary, records)]
    for i in range(len(config.compare)):
        sub = config.compare_config(i)
        other, other_records = _single_run(sub, ctx, examples, None, given[i], index_root)
        runs.append((sub.label, other, other_records))
    compare_records = runs[1][2] if len(runs) > 1 else None
    if len(runs) > 1:
        results["runs"] = [_run_summary(label, s) for label, s, _ in runs]
        results["comparisons"] = _comparisons(config, ctx, runs, out)
        results["compare"] = results["comparisons"][0]
    results["timings"]["wall_s"] = time.perf_counter() - wall0
    results["timings"]["cpu_s"] = time.process_time() - cpu0
    atomic_write_json(out / RESULTS_FILE, _jsonable(results))
    if write_report:
        from .report import write_reports

        write_reports(out, results, records, compare_records)
    return results


#: What a default corpus is, said in the report next to its size.
CORPUS_NOTES: dict[str, str] = {
    "asqa": (
        "ASQA ships no retrieval corpus. This one is the Wikipedia text the file carries "
        "(annotators' knowledge snippets and the qa pairs' context paragraphs, deduplicated, "
        "titled by their page) for every question in it: a question's own text is its gold, "
        "the other questions' text its distractors. It is far smaller and easier than the "
        "21M-passage 2018 Wikipedia ALCE retrieves from: compare retrievers on it, not "
        "with ALCE's published numbers."
    ),
}


def _corpus_block(config: RagEvalConfig, examples: Sequence[Any]) -> dict[str, Any] | None:
    """Size and provenance of the default corpus of a dataset that ships its passages."""
    if config.corpus or not any(getattr(ex, "documents", None) for ex in examples):
        return None
    from .pool import describe_corpus

    docs = _default_documents(config, examples)
    block: dict[str, Any] = {"source": "default", **describe_corpus(examples, docs)}
    base = config.dataset.removeprefix("alce-")
    if base in CORPUS_NOTES and not config.dataset.startswith("alce-"):
        block["note"] = CORPUS_NOTES[base]
    return block


def _per_compare(given: Any | Sequence[Any] | None, n: int) -> list[Any | None]:
    """``compare_retriever`` as one entry (object or ``None``) per ``--compare``."""
    if given is None:
        return [None] * n
    if isinstance(given, (list, tuple)):
        if len(given) != n:
            raise ValueError(f"{len(given)} compare retrievers given for {n} --compare runs")
        return list(given)
    return [given] + [None] * (n - 1)


def _comparisons(
    config: RagEvalConfig,
    ctx: _Context,
    runs: Sequence[tuple[str, Mapping[str, Any], Sequence[Mapping[str, Any]]]],
    out: Path,
) -> list[dict[str, Any]]:
    """Paired differences for every pair of runs; the pairwise judge against the first."""
    from itertools import combinations

    from .compare import compare_runs

    blocks = []
    for i, j in combinations(range(len(runs)), 2):
        (label_a, _, records_a), (label_b, summary_b, records_b) = runs[i], runs[j]
        judged = i == 0 and config.pairwise
        name = "pairwise.jsonl" if j == 1 else f"pairwise-{j}.jsonl"
        blocks.append(
            compare_runs(
                records_a,
                records_b,
                config=config,
                judges=ctx.judges if judged else None,
                summary_b=summary_b,
                cache_path=out / name if judged else None,
                labels=(label_a, label_b),
            )
        )
    return blocks


def _jsonable(obj: Any) -> Any:
    """NaN/inf become ``None`` so ``results.json`` is strict JSON."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    return obj


# --------------------------------------------------------------------------- meta-eval
def _interleave_by_system(ratings: Sequence[Any]) -> list[Any]:
    """Round-robin over systems so a small ``--limit`` still covers every system."""
    by_system: dict[str, list[Any]] = {}
    for rating in ratings:
        by_system.setdefault(rating.system, []).append(rating)
    queues = [by_system[s] for s in sorted(by_system)]
    out: list[Any] = []
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop(0))
    return out


def run_meta_eval(
    judge: str,
    out: str | os.PathLike[str],
    *,
    limit: int | None = 50,
    ratings_path: str | os.PathLike[str] | None = None,
    judge_llm: Any | None = None,
    judge_max_tokens: int = 96,
    on_item: ItemHook | None = None,
    write_report: bool = True,
) -> dict[str, Any]:
    """Agreement of the correctness judge with ALCE human utility ratings, per dataset.

    Scores ``limit`` rated answers per dataset (interleaved across systems) with
    :class:`~llama_index.core.evaluation.CorrectnessEvaluator` (no reference: the human
    file has none) and reports Spearman and Kendall correlations with the human utility
    score, plus parse failures. Items are cached in ``OUT/meta_items.jsonl``.
    """
    from tqdm.auto import tqdm

    from .meta_eval import default_ratings_path, judge_agreement, load_human_ratings

    wall0, cpu0 = time.perf_counter(), time.process_time()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ratings_file = Path(ratings_path) if ratings_path else default_ratings_path()
    check_run_settings(
        out,
        {
            "mode": "meta-eval",
            "judge": judge,
            "ratings": os.fspath(ratings_path or ""),
            "judge_max_tokens": judge_max_tokens,
            "inputs": {
                "ratings_sha256": _content_sha256(ratings_file) if ratings_file.exists() else None
            },
        },
    )
    ratings = list(load_human_ratings(ratings_path))
    by_dataset: dict[str, list[Any]] = {}
    for rating in ratings:
        by_dataset.setdefault(rating.dataset, []).append(rating)
    chosen = {
        ds: _interleave_by_system(rs)[: limit if limit else None]
        for ds, rs in sorted(by_dataset.items())
    }
    if judge_llm is None:
        judge_llm = _judge_llm(_make_generator(judge), judge_max_tokens)
    judges = Judges(judge_llm, name=judge)
    cache = ItemCache(out / META_ITEMS_FILE, key="item_id")
    done = cache.load()
    todo = [r for rs in chosen.values() for r in rs if str(r.item_id) not in done]
    for i, rating in enumerate(tqdm(todo, desc=f"meta-eval {judge}", unit="item", disable=False)):
        scored = judges.correctness(rating.question, rating.output, None)
        record = {
            "item_id": str(rating.item_id),
            "dataset": rating.dataset,
            "system": rating.system,
            "utility": rating.utility,
            "correctness": scored.score,
            "raw": scored.raw,
        }
        cache.append(record)
        if on_item is not None:
            on_item(i, record)
    finished = cache.items()
    chosen_all = [r for rs in chosen.values() for r in rs]
    scores = {str(r.item_id): finished[str(r.item_id)]["correctness"] for r in chosen_all}
    agreement = judge_agreement(scores, chosen_all)
    per_dataset: dict[str, Any] = {}
    for ds, rs in chosen.items():
        block = dict(agreement["per_dataset"].get(ds, {}))
        block["parse_failures"] = sum(1 for r in rs if scores[str(r.item_id)] is None)
        per_dataset[ds] = block
    results = {
        "judge_meta_eval": {
            "judge": judge,
            "metric": "correctness",
            "per_dataset": per_dataset,
            "overall": {k: v for k, v in agreement.items() if k != "per_dataset"},
            "parse_failures": sum(b["parse_failures"] for b in per_dataset.values()),
            "n": len(chosen_all),
        },
        "config": {"mode": "meta-eval", "judge": judge, "limit": limit, "out": str(out)},
        "timings": {
            "wall_s": time.perf_counter() - wall0,
            "cpu_s": time.process_time() - cpu0,
        },
    }
    atomic_write_json(out / RESULTS_FILE, _jsonable(results))
    if write_report:
        from .report import write_reports

        write_reports(out, results, [], None)
    return results
