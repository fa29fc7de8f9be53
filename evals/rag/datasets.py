"""Question-answering datasets for the RAG evaluation, read from their published formats.

Every loader turns one dataset's official file into the same :class:`RagExample`, so the
runner never branches on the dataset. Supported (``name``: file format):

* ``eli5``: ELI5-Category (``q_id, title, selftext, answers{a_id[], text[]}``), gzip or
  plain; the published files are one JSON array, JSON lines are read too. Long answers only.
* ``asqa``: the official ``ASQA.json`` (``{split: {id: {ambiguous_question, qa_pairs,
  annotations[{long_answer, knowledge}]}}}``, ``split`` picks ``dev`` (default when
  present) / ``train`` / ``all``), or the same records one per line with their
  ``sample_id`` (``asqa_dev500.jsonl``). The Wikipedia text the records carry ships as
  documents: the annotators' knowledge snippets and the qa pairs' context paragraphs.
* ``quest``: QUEST query files (read by :func:`logic_rag.evals.quest.data.load_quest_queries`);
  one short-answer group per gold entity.
* ``nq``: NQ-open JSON lines (``question``, ``answer[]``).
* ``alce-asqa`` / ``alce-eli5`` / ``alce-qampari``: ALCE prompt files (``{..., demos:
  [{question, answer, docs[{title, text}]}]}``) or ALCE evaluation files (a JSON list of
  such records, with ``qa_pairs`` / ``annotations`` / ``claims`` / ``answers`` where
  ALCE has them). Citation markers ``[n]`` are removed from reference answers.

A malformed record raises :class:`~logic_rag.errors.CorpusFormatError` naming the file
and, for line-based files, the line: a silently skipped record would change the averages.
``limit`` keeps the first N examples in file order, so runs are reproducible.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logic_rag.corpus import Document
from logic_rag.errors import CorpusFormatError
from logic_rag.json_limits import JsonDepthError, loads_bounded
from logic_rag.paths import shared_data_dir

__all__ = [
    "RagExample",
    "DATASETS",
    "default_path",
    "load_rag_dataset",
    "strip_citations",
]

#: Dataset names accepted by :func:`load_rag_dataset`.
DATASETS: tuple[str, ...] = (
    "eli5",
    "asqa",
    "quest",
    "nq",
    "alce-asqa",
    "alce-eli5",
    "alce-qampari",
)

#: Default files, relative to the shared data folder; the first that exists is used (the
#: official file first, then the sample that ships with this environment).
_DEFAULT_FILES: Mapping[str, tuple[str, ...]] = {
    "eli5": ("rag/eli5/eli5-category-test.json.gz",),
    "asqa": ("rag/asqa/ASQA.json", "rag/asqa/asqa_dev500.jsonl", "rag/asqa/asqa_sample3.json"),
    "quest": ("quest/test.jsonl", "quest/quest_train_sample20.jsonl"),
    "nq": ("rag/nq_open/NQ-open.dev.jsonl",),
    "alce-asqa": ("rag/alce/asqa_default.json",),
    "alce-eli5": ("rag/alce/eli5_default.json",),
    "alce-qampari": ("rag/alce/qampari_default.json",),
}

_CITATION = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")


@dataclass(frozen=True)
class RagExample:
    """One question with its references, in a dataset-independent shape.

    ``answers`` are long reference answers (for ROUGE and the correctness judge);
    ``short_answers`` holds one tuple of acceptable alternatives per thing the answer
    must mention (ASQA: per disambiguated question; NQ-open: one group; QUEST and
    QAMPARI: one per gold entity). ``documents`` are passages shipped with the example.
    ``metadata`` always has ``dataset`` and ``source_path`` (the file it came from).
    """

    id: str
    question: str
    answers: tuple[str, ...]
    short_answers: tuple[tuple[str, ...], ...] = ()
    documents: tuple[Document, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)


def strip_citations(text: str) -> str:
    """Remove ALCE citation markers (``[1]``, ``[1][2]``, ``[1, 2]``) from a text."""
    return _CITATION.sub("", text).strip()


def default_path(name: str) -> Path:
    """The default file of a dataset under :func:`~logic_rag.paths.shared_data_dir`.

    Where several candidates are known (the official file, then the sample present in
    this environment) the first that exists is returned, else the first candidate, so
    that the "file not found" error names the official file.
    """
    _check_name(name)
    root = shared_data_dir()
    candidates = [root / rel for rel in _DEFAULT_FILES[name]]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return candidates[0]


def load_rag_dataset(
    name: str,
    path: str | os.PathLike[str] | None = None,
    *,
    limit: int | None = None,
    split: str | None = None,
) -> list[RagExample]:
    """Load dataset ``name`` from ``path`` (default: :func:`default_path`).

    ``limit`` keeps the first ``limit`` examples in file order. ``split`` applies to
    ASQA only (``dev`` when present, else every split; ``all`` for every split).
    """
    _check_name(name)
    if limit is not None and (isinstance(limit, bool) or limit < 0):
        raise ValueError(f"limit must be a non-negative integer or None, got {limit!r}")
    resolved = Path(path) if path is not None else default_path(name)
    if not resolved.is_file():
        hint = (
            f"pass the path of the {name} file"
            if path is not None
            else f"put it there, set LOGIC_RAG_DATA, or pass the path of the {name} file"
        )
        raise FileNotFoundError(f"{resolved}: no such file ({hint})")
    if split is not None and name != "asqa":
        raise ValueError(f"split applies to the asqa dataset only, not {name!r}")
    if name == "eli5":
        examples: Iterator[RagExample] = _iter_eli5(resolved)
    elif name == "asqa":
        examples = _iter_asqa(resolved, split)
    elif name == "quest":
        examples = _iter_quest(resolved)
    elif name == "nq":
        examples = _iter_nq(resolved)
    else:
        examples = _iter_alce(resolved, name)
    out: list[RagExample] = []
    seen: set[str] = set()
    for example in examples:
        if limit is not None and len(out) >= limit:
            break
        if example.id in seen:
            raise CorpusFormatError(resolved, None, f"duplicate example id {example.id!r}")
        seen.add(example.id)
        out.append(example)
    return out


# --------------------------------------------------------------------------- helpers
def _check_name(name: str) -> None:
    if name not in DATASETS:
        raise ValueError(f"unknown RAG dataset {name!r}; choose one of {', '.join(DATASETS)}")


def _read_text(path: Path) -> str:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as handle:
                return handle.read().decode("utf-8")
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise CorpusFormatError(path, None, f"cannot read the file ({exc})") from None


def _load_json(path: Path, text: str | None = None) -> Any:
    text = _read_text(path) if text is None else text
    try:
        return loads_bounded(text)
    except json.JSONDecodeError as exc:
        raise CorpusFormatError(
            path, exc.lineno, f"not valid JSON ({exc.msg} at column {exc.colno})"
        ) from None
    except JsonDepthError as exc:  # a value nested too deep (issue 42 item 6)
        raise CorpusFormatError(path, None, str(exc)) from None


def _iter_records(path: Path) -> Iterator[tuple[int | None, Any]]:
    """``(line or None, record)`` from a JSON array file or a JSON-lines file."""
    text = _read_text(path)
    if text.lstrip().startswith("["):
        data = _load_json(path, text)
        for record in data:
            yield None, record
        return
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = loads_bounded(line)
        except json.JSONDecodeError as exc:
            raise CorpusFormatError(
                path, lineno, f"not valid JSON ({exc.msg}); every line must be one JSON object"
            ) from None
        except JsonDepthError as exc:  # a value nested too deep (issue 42 item 6)
            raise CorpusFormatError(path, lineno, str(exc)) from None
        yield lineno, record


def _where(path: Path, lineno: int | None, index: int) -> tuple[Path, int | None, str]:
    """The (path, line, prefix) to report for record ``index`` (0-based) of a file."""
    return path, lineno, "" if lineno is not None else f"record {index}: "


def _fail(path: Path, lineno: int | None, index: int, problem: str) -> CorpusFormatError:
    p, line, prefix = _where(path, lineno, index)
    return CorpusFormatError(p, line, prefix + problem)


def _require_dict(path: Path, lineno: int | None, index: int, obj: Any) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise _fail(path, lineno, index, f"expected a JSON object, got {type(obj).__name__}")
    return obj


def _require_str(
    path: Path, lineno: int | None, index: int, obj: Mapping[str, Any], key: str
) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        got = "nothing" if value is None else type(value).__name__
        raise _fail(path, lineno, index, f"field {key!r} must be a string, got {got}")
    return value


def _str_list(path: Path, lineno: int | None, index: int, value: Any, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(path, lineno, index, f"{name!r} must be a list of strings")
    return value


def _base_metadata(name: str, path: Path, **extra: Any) -> dict[str, Any]:
    return {"dataset": name, "source_path": os.fspath(path), **extra}


# --------------------------------------------------------------------------- ELI5
def _iter_eli5(path: Path) -> Iterator[RagExample]:
    for index, (lineno, obj) in enumerate(_iter_records(path)):
        rec = _require_dict(path, lineno, index, obj)
        q_id = _require_str(path, lineno, index, rec, "q_id")
        title = _require_str(path, lineno, index, rec, "title")
        answers = rec.get("answers")
        if not isinstance(answers, dict):
            raise _fail(path, lineno, index, "field 'answers' must be an object {a_id, text}")
        texts = _str_list(path, lineno, index, answers.get("text"), "answers.text")
        a_ids = answers.get("a_id", [])
        a_ids = _str_list(path, lineno, index, a_ids, "answers.a_id") if a_ids else []
        if a_ids and len(a_ids) != len(texts):
            raise _fail(
                path, lineno, index, f"{len(a_ids)} answer ids but {len(texts)} answer texts"
            )
        selftext = rec.get("selftext") or ""
        if not isinstance(selftext, str):
            raise _fail(path, lineno, index, "field 'selftext' must be a string")
        yield RagExample(
            id=q_id,
            question=title.strip(),
            answers=tuple(t.strip() for t in texts if t.strip()),
            metadata=_base_metadata(
                "eli5",
                path,
                selftext=selftext,
                answer_ids=tuple(a_ids),
                category=rec.get("category"),
            ),
        )


# --------------------------------------------------------------------------- ASQA
def _asqa_pages(value: Any) -> list[str]:
    """Titles from ASQA ``wikipages`` (a list in ASQA.json, an index-keyed dict in samples)."""
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [p["title"] for p in items if isinstance(p, dict) and isinstance(p.get("title"), str)]


#: What ASQA writes in ``qa_pairs[].context`` when the annotator gave no paragraph.
_NO_CONTEXT = "no context provided"


def _asqa_is_records(text: str) -> bool:
    """True for ASQA records one per line (or a JSON array of them), False for ASQA.json."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        return True
    first = stripped.split("\n", 1)[0]
    try:
        record = loads_bounded(first)
    except JsonDepthError:
        return True  # records: the reader says which line is too deep
    except json.JSONDecodeError:
        return False  # a pretty-printed ASQA.json: its first line is only "{"
    return isinstance(record, dict) and "ambiguous_question" in record


def _iter_asqa(path: Path, split: str | None) -> Iterator[RagExample]:
    """ASQA.json (``{split: {id: record}}``) or records one per line (``sample_id`` + record)."""
    text = _read_text(path)
    if _asqa_is_records(text):
        if split not in (None, "all"):
            raise ValueError(
                f"{path}: a line-based ASQA file holds one split; leave split unset (or 'all')"
            )
        for index, (lineno, obj) in enumerate(_iter_records(path)):
            rec = _require_dict(path, lineno, index, obj)
            qid = rec.get("sample_id", rec.get("id"))
            if not isinstance(qid, (str, int)) or isinstance(qid, bool):
                raise _fail(path, lineno, index, "field 'sample_id' must be a string")
            p, line, prefix = _where(path, lineno, index)
            yield _asqa_example(p, line, prefix, str(qid), rec, None)
        return
    data = _load_json(path, text)
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise CorpusFormatError(
            path, None, "expected the ASQA.json structure {split: {example id: record}}"
        )
    if split is None:
        splits = ["dev"] if "dev" in data else list(data)
    elif split == "all":
        splits = list(data)
    elif split in data:
        splits = [split]
    else:
        raise ValueError(f"{path}: no split {split!r}; the file has {', '.join(data) or 'none'}")
    for split_name in splits:
        for qid, rec in data[split_name].items():
            yield _asqa_example(path, None, f"{split_name}/{qid}: ", str(qid), rec, split_name)


def _asqa_example(
    path: Path, lineno: int | None, where: str, qid: str, rec: Any, split_name: str | None
) -> RagExample:
    """One ASQA record; its Wikipedia text (knowledge snippets, qa-pair paragraphs) as documents.

    Both kinds of text are real Wikipedia, titled by their page; a snippet that two
    annotators quoted is kept once. ``metadata["kind"]`` says which kind a document is.
    """

    def fail(problem: str) -> CorpusFormatError:
        return CorpusFormatError(path, lineno, where + problem)

    if not isinstance(rec, dict):
        raise fail("expected an object")
    question = rec.get("ambiguous_question")
    if not isinstance(question, str):
        raise fail("missing 'ambiguous_question'")
    qa_pairs = rec.get("qa_pairs")
    if not isinstance(qa_pairs, list):
        raise fail("'qa_pairs' must be a list")
    annotations = rec.get("annotations")
    if not isinstance(annotations, list):
        raise fail("'annotations' must be a list")
    shorts: list[tuple[str, ...]] = []
    sub_questions: list[str] = []
    docs: list[Document] = []
    seen_docs: set[tuple[str, str]] = set()

    def add(title: str, content: str, kind: str) -> None:
        key = (title, content.strip())
        if key in seen_docs:
            return
        seen_docs.add(key)
        docs.append(
            Document(
                id=f"{qid}#{kind[0]}{len(docs)}",
                title=title,
                text=content.strip(),
                metadata={"source_id": qid, "dataset": "asqa", "kind": kind},
            )
        )

    for j, pair in enumerate(qa_pairs):
        alts = pair.get("short_answers") if isinstance(pair, dict) else None
        if not isinstance(alts, list) or not all(isinstance(a, str) for a in alts):
            raise fail(f"qa_pairs[{j}].short_answers must be a list of strings")
        shorts.append(tuple(alts))
        sub_questions.append(str(pair.get("question") or ""))
        context = pair.get("context")
        if isinstance(context, str) and context.strip().lower() not in ("", _NO_CONTEXT):
            add(str(pair.get("wikipage") or ""), context, "qa_context")
    long_answers: list[str] = []
    for j, ann in enumerate(annotations):
        if not isinstance(ann, dict) or not isinstance(ann.get("long_answer"), str):
            raise fail(f"annotations[{j}].long_answer must be a string")
        if ann["long_answer"].strip():
            long_answers.append(ann["long_answer"].strip())
        for know in ann.get("knowledge") or []:
            content = know.get("content") if isinstance(know, dict) else None
            if not isinstance(content, str) or not content.strip():
                continue  # ASQA has knowledge entries with a page but no content
            add(str(know.get("wikipage") or ""), content, "knowledge")
    extra: dict[str, Any] = {"split": split_name} if split_name is not None else {}
    return RagExample(
        id=qid,
        question=question.strip(),
        answers=tuple(long_answers),
        short_answers=tuple(shorts),
        documents=tuple(docs),
        metadata=_base_metadata(
            "asqa",
            path,
            **extra,
            sub_questions=tuple(sub_questions),
            wikipages=tuple(_asqa_pages(rec.get("wikipages"))),
        ),
    )


# --------------------------------------------------------------------------- QUEST
_PAREN = re.compile(r"\s*\([^)]*\)\s*$")


def _entity_alternatives(title: str) -> tuple[str, ...]:
    """A Wikipedia title and, when it has one, the title without its "(disambiguation)"."""
    bare = _PAREN.sub("", title).strip()
    return (title, bare) if bare and bare != title else (title,)


def _iter_quest(path: Path) -> Iterator[RagExample]:
    from logic_rag.evals.quest.data import load_quest_queries

    for q in load_quest_queries(path):
        gold = sorted(q.docs)
        yield RagExample(
            id=q.qid,
            question=q.query,
            answers=(", ".join(gold),) if gold else (),
            short_answers=tuple(_entity_alternatives(t) for t in gold),
            metadata=_base_metadata(
                "quest",
                path,
                original_query=q.original_query,
                template=q.template,
                domain=q.domain,
                atoms=q.atoms,
                gold_docs=tuple(gold),
            ),
        )


# --------------------------------------------------------------------------- NQ-open
def _iter_nq(path: Path) -> Iterator[RagExample]:
    for index, (lineno, obj) in enumerate(_iter_records(path)):
        rec = _require_dict(path, lineno, index, obj)
        question = _require_str(path, lineno, index, rec, "question")
        answers = _str_list(path, lineno, index, rec.get("answer"), "answer")
        if not answers:
            raise _fail(path, lineno, index, "field 'answer' is empty")
        extra = {
            k: tuple(v)
            for k, v in rec.items()
            if k.endswith("_predictions") and isinstance(v, list)
        }
        yield RagExample(
            id=str(rec.get("id", f"nq{index}")),
            question=question.strip(),
            answers=tuple(answers),
            short_answers=(tuple(answers),),
            metadata=_base_metadata("nq", path, line=lineno, **extra),
        )


# --------------------------------------------------------------------------- ALCE
def _split_list_answer(answer: str) -> tuple[tuple[str, ...], ...]:
    """QAMPARI demo answers ("A [1], B [2], C [3].") as one group per listed entity."""
    items = [strip_citations(part).strip().rstrip(".").strip() for part in answer.split(",")]
    return tuple((item,) for item in items if item)


def _alce_docs(
    path: Path, where: str, ex_id: str, dataset: str, value: Any
) -> tuple[Document, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise CorpusFormatError(path, None, where + "'docs' must be a list")
    docs: list[Document] = []
    for j, doc in enumerate(value):
        if not isinstance(doc, dict) or not isinstance(doc.get("text"), str):
            raise CorpusFormatError(path, None, where + f"docs[{j}] needs a string 'text'")
        raw_id = doc.get("id")
        meta: dict[str, Any] = {"source_id": ex_id, "dataset": dataset, "rank": j}
        if raw_id is not None:
            meta["passage_id"] = str(raw_id)
        docs.append(
            Document(
                id=f"{ex_id}#d{j}",
                title=str(doc.get("title") or ""),
                text=doc["text"].strip(),
                metadata=meta,
            )
        )
    return tuple(docs)


def _iter_alce(path: Path, name: str) -> Iterator[RagExample]:
    data = _load_json(path)
    if isinstance(data, dict) and isinstance(data.get("demos"), list):
        records, kind = data["demos"], "demo"
    elif isinstance(data, dict) and isinstance(data.get("data"), list):
        records, kind = data["data"], "eval"  # ALCE result files keep records under "data"
    elif isinstance(data, list):
        records, kind = data, "eval"
    else:
        raise CorpusFormatError(
            path, None, "expected an ALCE prompt file {..., demos: [...]} or a list of records"
        )
    sub = name.removeprefix("alce-")
    for index, rec in enumerate(records):
        where = f"record {index}: "
        if not isinstance(rec, dict) or not isinstance(rec.get("question"), str):
            raise CorpusFormatError(path, None, where + "expected an object with a 'question'")
        raw_id = rec.get("id", rec.get("sample_id"))
        ex_id = str(raw_id) if raw_id is not None else f"{name}-{kind}{index}"
        long_answers: list[str] = []
        shorts: tuple[tuple[str, ...], ...] = ()
        if isinstance(rec.get("annotations"), list):
            long_answers = [
                a["long_answer"].strip()
                for a in rec["annotations"]
                if isinstance(a, dict) and isinstance(a.get("long_answer"), str)
            ]
        answer = rec.get("answer")
        if not long_answers and isinstance(answer, str) and answer.strip():
            long_answers = [strip_citations(answer)]
        if isinstance(rec.get("qa_pairs"), list):
            shorts = tuple(
                tuple(p.get("short_answers") or ()) for p in rec["qa_pairs"] if isinstance(p, dict)
            )
        elif isinstance(rec.get("answers"), list):  # QAMPARI eval: list of alias lists
            groups = [tuple(g) if isinstance(g, list) else (str(g),) for g in rec["answers"]]
            shorts = tuple(g for g in groups if g)
            if not long_answers:
                long_answers = [", ".join(g[0] for g in shorts)]
        elif sub == "qampari" and isinstance(answer, str):
            shorts = _split_list_answer(answer)
        if not long_answers:
            raise CorpusFormatError(path, None, where + "no reference answer")
        meta = _base_metadata(name, path, kind=kind)
        if isinstance(answer, str):
            meta["answer_with_citations"] = answer
        if isinstance(rec.get("claims"), list):
            meta["claims"] = tuple(str(c) for c in rec["claims"])
        yield RagExample(
            id=ex_id,
            question=rec["question"].strip(),
            answers=tuple(long_answers),
            short_answers=shorts,
            documents=_alce_docs(path, where, ex_id, name, rec.get("docs")),
            metadata=meta,
        )
