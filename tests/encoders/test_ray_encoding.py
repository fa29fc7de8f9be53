"""Distributed encoding with Ray Data gives the single-process index, row for row.

Runs a real local Ray cluster (``ray.init(num_cpus=2)``, started once for this module, ~3 s)
and real MiniLM actors (each pool start loads torch and the model in two workers, ~8 s on
this 2-core box), over the first 160 MS MARCO passages of the shared data.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="needs the ray extra: pip install 'logic-rag[ray]'")

from logic_rag.encoders.ray_encoding import RayEncoding, encode_corpus  # noqa: E402
from logic_rag.index.passages import split_corpus  # noqa: E402

N_DOCS = 160
QUERIES = [
    "what is the weather like in the desert",
    "how to cook rice but not in a microwave",
    "symptoms of flu and cold",
]


@pytest.fixture(scope="module")
def ray_cluster():
    """A local two-CPU Ray cluster for this module; shut down after it, so the rest of the
    suite does not run beside a Ray cluster's processes and object store."""
    if ray.is_initialized():  # pragma: no cover - another test left one running
        ray.shutdown()
    began = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    print(f"\nray.init(num_cpus=2) took {time.perf_counter() - began:.1f} s")
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def docs(msmarco_small):
    return msmarco_small[0][:N_DOCS]


@pytest.fixture(scope="module")
def built(docs, minilm, ray_cluster):
    """The same corpus indexed in this process and on Ray (2 actors, many small blocks)."""
    from logic_rag.logic_retriever import LogicRetriever

    local = LogicRetriever.build(docs, model=minilm, show_progress_bar=False)
    on_ray = LogicRetriever.build(
        docs,
        model=minilm,
        show_progress_bar=False,
        encode_with=RayEncoding(num_actors=2, block_rows=24, batch_rows=16),
    )
    return local, on_ray


def test_ray_index_matches_single_process(built) -> None:
    local, on_ray = built
    assert np.allclose(local.dense.index.vectors(), on_ray.dense.index.vectors(), atol=1e-5, rtol=0)
    assert np.array_equal(local.passages.offsets, on_ray.passages.offsets)
    # Stored float16: a 1e-7 difference may round to the neighbouring float16 (1 ulp).
    diff = np.abs(
        local.passages.vectors.astype(np.float32) - on_ray.passages.vectors.astype(np.float32)
    )
    assert diff.max() <= 1e-3
    assert [d.id for d in local.documents] == [d.id for d in on_ray.documents]


def test_ray_index_searches_the_same(built) -> None:
    local, on_ray = built
    for strategy in ("vanilla", "rerank", "setops"):
        want = local.search_batch(QUERIES, k=10, strategy=strategy)
        got = on_ray.search_batch(QUERIES, k=10, strategy=strategy)
        for a, b in zip(want, got, strict=True):
            assert [h.id for h in a] == [h.id for h in b]
            assert np.allclose([h.score for h in a], [h.score for h in b], atol=1e-3)


def test_encode_corpus_streams_windows_in_order(docs, minilm, ray_cluster) -> None:
    """Windows come back in corpus order, each row where it belongs (several blocks per
    window, two actors, a last window shorter than the first); the vectors are the
    real sentences' float32 vectors (before the index's float16 cast), equal at 1e-5."""
    sentences, _ = split_corpus([d.text or d.title for d in docs[:12]])
    texts = sentences[:70]
    assert len(texts) > 40
    options = RayEncoding(num_actors=2, block_rows=7, batch_rows=5, window_rows=40)
    parts = list(encode_corpus(minilm, iter(texts), options))
    assert [(start, len(v)) for start, v in parts] == [(0, 40), (40, len(texts) - 40)]
    got = np.concatenate([v for _, v in parts])
    assert np.allclose(got, minilm.encode_documents(texts), atol=1e-5, rtol=0)


def _write_corpus(path, docs):
    with path.open("w", encoding="utf-8") as handle:
        for d in docs:
            handle.write(json.dumps({"_id": d.id, "title": d.title, "text": d.text}) + "\n")
    return path


def test_cli_index_with_ray(tmp_path, docs, built, ray_cluster, capsys) -> None:
    from logic_rag.cli import main
    from logic_rag.logic_retriever import LogicRetriever

    corpus = _write_corpus(tmp_path / "corpus.jsonl", docs)
    out = tmp_path / "index"
    code = main(
        ["index", "--docs", str(corpus), "--out", str(out), "--model", "minilm", "-q"]
        + ["--ray", "--ray-actors", "2"]
    )
    assert code == 0, capsys.readouterr().err
    assert "on Ray" in capsys.readouterr().err
    reopened = LogicRetriever.load(out)
    local, _ = built
    assert len(reopened) == len(local)
    assert np.allclose(reopened.dense.index.vectors(), local.dense.index.vectors(), atol=1e-5)
    got = reopened.search_batch(QUERIES, k=5, strategy="setops")
    want = local.search_batch(QUERIES, k=5, strategy="setops")
    assert [[h.id for h in hits] for hits in got] == [[h.id for h in hits] for hits in want]


def test_cli_index_with_ray_into_milvus(tmp_path, docs, built, ray_cluster, capsys) -> None:
    """`index --ray --store milvus://...`: vectors encoded on Ray land in a Milvus Lite file,
    and the reopened index ranks as the single-process FAISS one for every strategy."""
    pytest.importorskip(
        "pymilvus", reason="needs the milvus extra: pip install 'logic-rag[milvus]'"
    )
    from logic_rag.cli import main
    from logic_rag.logic_retriever import LogicRetriever

    corpus = _write_corpus(tmp_path / "corpus.jsonl", docs)
    out = tmp_path / "index"
    code = main(
        ["index", "--docs", str(corpus), "--out", str(out), "--model", "minilm", "-q"]
        + ["--ray", "--ray-actors", "2", "--store", f"milvus://{tmp_path}/ray.db"]
    )
    assert code == 0, capsys.readouterr().err
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["store"]["collection"] and not list(out.glob("*.faiss"))
    reopened = LogicRetriever.load(out)
    local, _ = built
    for strategy in ("vanilla", "rerank", "setops"):
        got = reopened.search_batch(QUERIES, k=5, strategy=strategy)
        want = local.search_batch(QUERIES, k=5, strategy=strategy)
        assert [[h.id for h in hits] for hits in got] == [[h.id for h in hits] for hits in want]
        for a, b in zip(got, want, strict=True):
            assert np.allclose([h.score for h in a], [h.score for h in b], atol=1e-3)


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="num_actors"):
        RayEncoding(num_actors=0)
    with pytest.raises(ValueError, match="window_rows"):
        RayEncoding(window_rows=0)


def test_missing_ray_names_the_extra(monkeypatch, tmp_path, capsys) -> None:
    """Without Ray, `index --ray` fails before embedding, naming the extra to install."""
    import sys

    from logic_rag.cli import main
    from logic_rag.encoders.ray_encoding import RayNotInstalledError, import_ray

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    with pytest.raises(RayNotInstalledError, match=r"logic-rag\[ray\]"):
        import_ray()
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "a", "title": "A", "text": "Some text."}\n', encoding="utf-8")
    code = main(["index", "--docs", str(corpus), "--out", str(tmp_path / "i"), "--ray", "-q"])
    assert code == 2
    assert "logic-rag[ray]" in capsys.readouterr().err


def test_encode_fills_windows_into_one_array(monkeypatch, ray_cluster) -> None:
    """With ``total``, windows are copied into one preallocated array; a count that does
    not match is an error, not a silently short index."""
    import logic_rag.encoders.ray_encoding as module

    windows = [(0, np.ones((3, 2), np.float32)), (3, np.full((2, 2), 2, np.float32))]
    monkeypatch.setattr(module, "encode_corpus", lambda *a: iter(windows))
    options = RayEncoding()
    got = options.encode(None, [], total=5)  # type: ignore[arg-type]
    assert got.tolist() == [[1, 1]] * 3 + [[2, 2]] * 2
    assert np.array_equal(options.encode(None, []), got)  # type: ignore[arg-type]
    with pytest.raises(module.LogicRagError, match="6 were announced"):
        options.encode(None, [], total=6)  # type: ignore[arg-type]
    with pytest.raises(module.LogicRagError, match="more than the 4"):
        options.encode(None, [], total=4)  # type: ignore[arg-type]
