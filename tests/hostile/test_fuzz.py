"""Issue 18: bounded Hypothesis fuzzing of the corpus loaders, the manifest loader and the
decomposer. Inputs that once failed are kept as ``@example`` regression cases.

- Corpus loaders: any bytes give documents or a CorpusFormatError naming the file, never
  another exception.
- Manifest loader: any manifest gives a manifest or an IndexCorruptError, and no file
  outside the index folder is ever opened (checked with an audit hook).
- Decomposer: any text decomposes (or is refused as empty); stacked negations cancel in
  pairs.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from logic_rag.corpus import load_documents
from logic_rag.errors import CorpusFormatError, IndexCorruptError
from logic_rag.index.snapshot import read_manifest
from logic_rag.index.store import MANIFEST_NAME, listed_file, write_folder
from logic_rag.query.algebra import And, Atom, Not, Relation, relation
from logic_rag.query.rules import RuleDecomposer

FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# ------------------------------------------------------------------------ corpus loaders
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
_fields = st.dictionaries(
    st.sampled_from(["id", "_id", "title", "text", "metadata", "other"]), _json_values, max_size=5
)


def _line(obj: dict) -> bytes:
    return json.dumps(obj, ensure_ascii=False, allow_nan=True).encode("utf-8", "surrogatepass")


_lines = st.lists(
    st.one_of(_fields.map(_line), st.binary(max_size=30), st.just(b'{"text": "ok"}')), max_size=6
)


@FUZZ
@given(lines=_lines, suffix=st.sampled_from([".jsonl", ".txt", ".jsonl.gz"]))
@example(lines=[b'{"text": "a\\ud800"}'], suffix=".jsonl")  # lone surrogate
@example(lines=[b'{"text": "x", "metadata": {"v": NaN}}'], suffix=".jsonl")  # NaN
@example(lines=[b"\xff\xfe"], suffix=".txt")  # invalid UTF-8
@example(lines=[b'{"text": "plain"}'], suffix=".jsonl.gz")  # not gzip
@example(lines=[b'{"id": "1", "text": "a"}', b'{"id": 1, "text": "b"}'], suffix=".jsonl")
@example(lines=[b'{"id": true, "text": "a"}'], suffix=".jsonl")
def test_corpus_loaders_fail_only_with_corpus_errors(lines, suffix):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"corpus{suffix}"
        path.write_bytes(b"\n".join(lines) + b"\n")
        try:
            docs = load_documents(path)
        except CorpusFormatError as exc:
            assert str(exc).startswith(str(path))
            assert "\n" not in str(exc).strip()
            return
        for doc in docs:  # what loads is valid: strict JSON, valid Unicode
            json.dumps(doc.to_json(), allow_nan=False).encode("utf-8")


# ------------------------------------------------------------------------ manifest loader
_OPENED: list[str] | None = None


def _audit(event: str, args: tuple) -> None:
    if _OPENED is not None and event == "open" and isinstance(args[0], str | bytes | Path):
        _OPENED.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)


@pytest.fixture(scope="module")
def clean_index(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-index")
    (root / "outside.txt").write_text("secret")
    return write_folder(
        root / "idx",
        {"a.txt": lambda p: p.write_text("A"), "sub/b.txt": lambda p: p.write_text("B")},
        {"documents_file": "a.txt"},
    )


_names = st.sampled_from(
    ["a.txt", "sub/b.txt", "../outside.txt", "/etc/passwd", "", ".", "..", "sub/../a.txt",
     "c.txt", "sub", "a.txt/", "\x00", "~/x"]
)  # fmt: skip
_entries = st.one_of(
    _json_values,
    st.fixed_dictionaries(
        {"sha256": st.one_of(st.just("0" * 64), st.text(max_size=5)), "bytes": _json_values}
    ),
)


@FUZZ
@given(
    files=st.one_of(st.none(), _json_values, st.dictionaries(_names, _entries, max_size=4)),
    version=st.one_of(st.just(2), _json_values),
    fmt=st.one_of(st.just("logic-rag/index"), _json_values),
    keep_real=st.booleans(),
)
@example(files={"/etc/passwd": {"sha256": "0" * 64, "bytes": 1}}, version=2,
         fmt="logic-rag/index", keep_real=True)  # fmt: skip
@example(files={}, version=2, fmt="logic-rag/index", keep_real=False)  # empty table
@example(files={"../outside.txt": {"sha256": "0" * 64, "bytes": 6}}, version=2,
         fmt="logic-rag/index", keep_real=True)  # fmt: skip
def test_manifest_loader_never_reads_outside_the_folder(
    clean_index, files, version, fmt, keep_real
):
    global _OPENED
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "idx"
        shutil.copytree(clean_index, folder)
        (Path(tmp) / "outside.txt").write_text("secret")
        manifest = json.loads((folder / MANIFEST_NAME).read_text())
        if isinstance(files, dict) and keep_real:
            files = {**manifest["files"], **files}
        manifest.update(files=files, format_version=version, format=fmt)
        (folder / MANIFEST_NAME).write_text(json.dumps(manifest))
        _OPENED = []
        try:
            loaded = read_manifest(folder)
            listed_file(folder, loaded, "a.txt")
        except IndexCorruptError:
            pass
        finally:
            opened, _OPENED = _OPENED, None
        root = folder.resolve()
        assert any(name.endswith(MANIFEST_NAME) for name in opened)  # the hook sees opens
        for name in opened:
            # Index files are opened relative to a descriptor of the folder (dir_fd, one
            # consistent version: issue 32); the audit event carries the name only.
            path = Path(name) if Path(name).is_absolute() else folder / name
            assert path.resolve().is_relative_to(root), name


@FUZZ
@given(
    manifest=st.dictionaries(
        st.sampled_from(
            ["model", "dimension", "document_count", "index_kind", "metric", "passages", "sparse"]
        ),  # fmt: skip
        _json_values,
    )
)
@example(manifest={"model": "minilm"})  # the model as a string
@example(manifest={"model": {"name": "minilm"}, "dimension": True, "document_count": 1})
def test_manifest_fields_fail_only_with_index_errors(manifest):
    from logic_rag.retriever import _check_manifest

    try:
        _check_manifest(Path("idx"), manifest)
    except IndexCorruptError:
        pass


# ----------------------------------------------------------------------------- decomposer
_WORDS = ["films", "comedies", "French", "not", "and", "or", "but", "that", "are", "also",
          "both", "either", "neither", "nor", "without", "except", "non-fiction", "aren't",
          ",", "?", "of", "Malaysia", "what", "is", "who", "likes", "excluding", "other",
          "than", "the", "n't", "&"]  # fmt: skip


@FUZZ
@given(words=st.lists(st.one_of(st.sampled_from(_WORDS), st.text(max_size=4)), max_size=14))
@example(words=["not", "not"])
@example(words=["not", "not", "not"])
@example(words=["films", "that", "are", "not", "not"])
@example(words=["but", "not", "not", "comedies"])
@example(words=["\ud800"])
def test_decomposer_never_crashes(words):
    text = " ".join(words)
    try:
        result = RuleDecomposer().decompose(text)
    except ValueError:
        assert not text.strip()
        return
    assert 0.0 <= result.confidence <= 1.0


@FUZZ
@given(
    n=st.integers(0, 7),
    opening=st.sampled_from(["that are", "that aren't", "but not", "which are"]),
    head=st.sampled_from(["films", "novels", "birds of Malaysia"]),
    atom=st.sampled_from(["comedies", "French films", "thrillers"]),
)
@example(n=2, opening="that are", head="films", atom="comedies")
@example(n=1, opening="but not", head="films", atom="comedies")
def test_nested_negations_cancel_in_pairs(n, opening, head, atom):
    """ "films that are not not ... comedies": an even number of negations cancels."""
    negations = n + (1 if opening in ("that aren't", "but not") else 0)
    text = " ".join([head, opening, *(["not"] * n), atom])
    query = RuleDecomposer().decompose(text).query
    a, b = Atom(head), Atom(atom)
    expected = And((a, Not(b))) if negations % 2 else And((a, b))
    if opening == "but not" and negations % 2 == 0:
        expected = And((a, b))
    assert relation(query, expected) is Relation.EQUAL, (text, query)
