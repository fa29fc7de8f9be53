"""Issue 42 items 9 and 19 (manifest half): index files that lie about their contents.

The checksums in these folders are recomputed after each edit (a user can always do
that), so only the load-time checks of the contents stand between the edit and a search:

- NaN in ``passages.npy`` (or in the document vectors, or int8 scales) gave zero hits and
  exit 0 for rerank, verify and setops: every similarity with it is NaN;
- structured or datetime offsets gave numpy's own messages, and shape errors named
  ``<IndexSnapshot object at 0x...>`` instead of the folder;
- ``"normalized": "no"`` was read as true (a non-empty string).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from logic_rag import cli
from logic_rag.corpus import Document
from logic_rag.errors import IndexCorruptError
from logic_rag.logic_retriever import LogicRetriever

DOCS = [
    Document("d1", "Apples are crisp red fruits grown in orchards. They grow in Kent.", "Apple"),
    Document("d2", "Lemons are sour yellow citrus fruits. They grow in Spain.", "Lemon"),
    Document("d3", "Jazz is a music genre from New Orleans.", "Jazz"),
    Document("d4", "A comedy film is a funny movie. Some are French.", "Comedy film"),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory, minilm) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("folders")
    out = {}
    for dtype in ("float16", "int8"):
        retriever = LogicRetriever.build(DOCS, model=minilm, sentence_dtype=dtype)
        out[dtype] = retriever.save(root / dtype)
    return out


def _copy(built: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "idx"
    shutil.copytree(built, folder)
    return folder


def _relist(folder: Path, edit_manifest=None) -> None:
    """Recompute every checksum (a tampered folder whose manifest is consistent)."""
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text())
    if edit_manifest is not None:
        edit_manifest(manifest)
    for name in manifest["files"]:
        data = (folder / name).read_bytes()
        manifest["files"][name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    path.write_text(json.dumps(manifest))


def _replace_npy(folder: Path, name: str, array: np.ndarray) -> None:
    with open(folder / name, "wb") as handle:
        np.save(handle, array, allow_pickle=False)
    _relist(folder)


def _load_error(folder: Path, minilm) -> str:
    with pytest.raises(IndexCorruptError) as caught:
        LogicRetriever.load(folder, model=minilm)
    message = str(caught.value)
    assert "IndexSnapshot object" not in message and str(folder) in message, message
    return message


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_sentence_vectors_are_refused_at_load(built, tmp_path, minilm, value):
    folder = _copy(built["float16"], tmp_path)
    vectors = np.load(folder / "passages.npy")
    vectors[3, 7] = value
    _replace_npy(folder, "passages.npy", vectors)
    message = _load_error(folder, minilm)
    assert "passages.npy: row 3 holds NaN or an infinity" in message


def test_non_finite_int8_scales_are_refused_at_load(built, tmp_path, minilm):
    folder = _copy(built["int8"], tmp_path)
    scales = np.load(folder / "passage_scales.npy")
    scales[1] = np.nan
    _replace_npy(folder, "passage_scales.npy", scales)
    assert "passage_scales.npy: row 1 holds NaN" in _load_error(folder, minilm)


def test_non_finite_document_vectors_are_refused_at_load(built, tmp_path, minilm):
    from logic_rag.index.faiss_index import DenseIndex

    folder = _copy(built["float16"], tmp_path)
    vectors = minilm.encode_documents([d.content for d in DOCS])
    vectors[2, 0] = np.nan
    index = DenseIndex(vectors.shape[1], "flat")
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    (folder / "index.faiss").unlink()
    index.save(folder / "index.faiss")
    _relist(folder)
    assert "index.faiss: document vector 2 holds NaN" in _load_error(folder, minilm)


@pytest.mark.parametrize(
    "offsets",
    [
        np.zeros(5, dtype=[("a", "<i8")]),
        np.arange(5).astype("datetime64[D]"),
        np.arange(5, dtype=np.float64),
        np.array([True, True, True, True, True]),
    ],
    ids=["structured", "datetime", "float", "bool"],
)
def test_offsets_that_are_not_integers_are_refused(built, tmp_path, minilm, offsets):
    folder = _copy(built["float16"], tmp_path)
    _replace_npy(folder, "passage_offsets.npy", offsets)
    message = _load_error(folder, minilm)
    assert "passage_offsets.npy holds" in message and "offsets are integers" in message


@pytest.mark.parametrize("case", ["1-d vectors", "2-d offsets", "short offsets", "decreasing"])
def test_shape_errors_name_the_folder(built, tmp_path, minilm, case):
    folder = _copy(built["float16"], tmp_path)
    vectors = np.load(folder / "passages.npy")
    offsets = np.load(folder / "passage_offsets.npy")
    if case == "1-d vectors":
        _replace_npy(folder, "passages.npy", vectors.reshape(-1))
    elif case == "2-d offsets":
        _replace_npy(folder, "passage_offsets.npy", offsets.reshape(1, -1))
    elif case == "short offsets":
        _replace_npy(folder, "passage_offsets.npy", offsets[:-1])
    else:
        offsets[1], offsets[2] = offsets[2], offsets[1]
        _replace_npy(folder, "passage_offsets.npy", offsets)
    message = _load_error(folder, minilm)
    assert message.startswith(str(folder)), message


def test_cli_search_says_which_file(built, tmp_path, capsys):
    folder = _copy(built["float16"], tmp_path)
    vectors = np.load(folder / "passages.npy")
    vectors[0, 0] = np.nan
    _replace_npy(folder, "passages.npy", vectors)
    assert cli.main(["search", str(folder), "fruits", "--strategy", "rerank"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("logic-rag")]
    assert len(err) == 1 and "passages.npy: row 0 holds NaN" in err[0], err


@pytest.mark.parametrize("value", ["no", "false", 0, 1, None, []])
def test_normalized_must_be_a_boolean(built, tmp_path, minilm, value):
    folder = _copy(built["float16"], tmp_path)
    _relist(folder, lambda manifest: manifest.update(normalized=value))
    assert "'normalized' must be true or false" in _load_error(folder, minilm)


def test_verify_false_skips_the_scan_of_mapped_vectors(built, tmp_path, minilm):
    """``verify=False`` (trusted, huge folders) reads no mapped file whole at load."""
    folder = _copy(built["float16"], tmp_path)
    vectors = np.load(folder / "passages.npy")
    vectors[0, 0] = np.nan
    _replace_npy(folder, "passages.npy", vectors)
    loaded = LogicRetriever.load(folder, model=minilm, verify=False)
    assert np.isnan(loaded.passages.rows(np.array([0]))).any()


def _deep(depth: int = 5_000) -> str:
    return '{"a": ' + "[" * depth + "]" * depth + "}"


def test_a_deeply_nested_manifest_is_one_line(tmp_path, capsys):
    """``RecursionError`` from the manifest parser was a traceback (search and index)."""
    folder = tmp_path / "idx"
    folder.mkdir()
    (folder / "manifest.json").write_text(_deep())
    assert cli.main(["search", str(folder), "fruits"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("logic-rag")]
    assert len(err) == 1 and "manifest.json is not valid JSON" in err[0], err
    corpus = tmp_path / "c.txt"
    corpus.write_text("a page\n")
    assert cli.main(["index", "--docs", str(corpus), "--out", str(folder), "-q"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("logic-rag")]
    assert len(err) == 1 and "is not a logic-rag index folder" in err[0], err


def test_a_deeply_nested_build_record_is_refused(tmp_path, minilm):
    from logic_rag.index import streaming

    work = streaming.work_folder(tmp_path / "idx")
    work.mkdir()
    (work / "progress.json").write_text(_deep())
    corpus = tmp_path / "c.txt"
    corpus.write_text("a page\n")
    with pytest.raises(IndexCorruptError, match="is not a logic-rag build record"):
        streaming.stream_index(corpus, tmp_path / "idx", model=minilm, chunk_size=2)
