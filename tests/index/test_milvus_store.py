"""Milvus-backed indexes (real Milvus Lite files in tmp_path) against the FAISS ones.

The ranking-equality tests compare ids and scores of the two backends: Milvus's FLAT
index is exact inner product over the same float32 vectors, so scores agree to 1e-5.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")

from logic_rag.corpus import Document  # noqa: E402
from logic_rag.errors import IndexMismatchError, StoreError  # noqa: E402
from logic_rag.index.faiss_index import DenseIndex  # noqa: E402
from logic_rag.index.milvus_store import (  # noqa: E402
    MilvusStore,
    check_collection_name,
    parse_store_uri,
)
from logic_rag.index.passages import PassageVectors  # noqa: E402
from logic_rag.logic_retriever import LogicRetriever  # noqa: E402
from logic_rag.retriever import DenseRetriever  # noqa: E402

QUERIES = [
    "Orchids of Indonesia but not Thailand",
    "Films set in Naples or Rome",
    "Japanese mystery novels",
    "Birds of Malaysia that are also birds of Borneo",
]
STRATEGIES = ["vanilla", "rerank", "setops", "fusion", "orthogonal"]

TEXTS = [
    "Orchids of Indonesia. It grows in Java. The flowers are white.",
    "Orchids of Thailand. It is found near Bangkok. It flowers in spring.",
    "Orchids of Indonesia and Thailand. It grows on trees.",
    "Films set in Naples. Directed by an Italian. It premiered in 1954.",
    "Films set in Rome. A comedy about a taxi driver.",
    "Mystery novels from Japan. Written in 1960 by a Tokyo author.",
    "Birds of Malaysia. It eats fruit. It is also found in Borneo.",
    "Birds of Borneo. It nests in caves.",
    "Orchids of Malaysia and Indonesia. It has purple flowers.",
    "Swedish horror novels. Set in a small village in winter.",
    "Films set in Warsaw in Polish. A war drama.",
    "Japanese novels about cats. A comic novel from 1905.",
]


def _docs(n: int | None = None) -> list[Document]:
    texts = TEXTS if n is None else [f"Entry number {i}." for i in range(n)]
    return [Document(id=f"d{i}", title=f"T{i}", text=t) for i, t in enumerate(texts)]


def _assert_same(a: LogicRetriever, b: LogicRetriever, strategies=STRATEGIES, k: int = 10):
    for strategy in strategies:
        for ha, hb in zip(
            a.search_batch(QUERIES, k, strategy=strategy),
            b.search_batch(QUERIES, k, strategy=strategy),
            strict=True,
        ):
            assert [h.id for h in ha] == [h.id for h in hb], strategy
            np.testing.assert_allclose(
                [h.score for h in ha], [h.score for h in hb], atol=1e-5, err_msg=strategy
            )
            assert [h.constraints for h in ha] == [h.constraints for h in hb]


@pytest.fixture(scope="module")
def local(minilm) -> LogicRetriever:
    return LogicRetriever.build(_docs(), model=minilm)


def test_milvus_ranks_like_faiss_real_model(local, tmp_path):
    milvus = local.to_store(f"milvus://{tmp_path}/store.db", collection="small")
    assert milvus.dense.index.store.location.collection == "small"
    _assert_same(local, milvus)


def test_build_save_load_and_search_unchanged(local, minilm, tmp_path):
    built = LogicRetriever.build(_docs(), model=minilm, store=f"milvus://{tmp_path}/s.db")
    folder = built.save(tmp_path / "idx")
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["documents.jsonl", "manifest.json"]  # no FAISS file, no npy
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["store"]["kind"] == "milvus"
    assert manifest["store"]["collection"] == "logic_rag"
    assert "token" not in json.dumps(manifest)
    loaded = LogicRetriever.load(folder, model=minilm)
    _assert_same(local, loaded, strategies=["rerank", "setops"])


def test_5k_random_vectors_rank_like_faiss(minilm, tmp_path):
    """5,000 documents with random unit vectors and 1-4 random sentences each."""
    rng = np.random.default_rng(0)
    n, dim = 5000, minilm.dimension
    docs = _docs(n)
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    counts = rng.integers(1, 5, n)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    sentences = rng.standard_normal((offsets[-1], dim)).astype(np.float32)
    sentences = (sentences / np.linalg.norm(sentences, axis=1, keepdims=True)).astype(np.float16)
    index = DenseIndex(dim)
    index.add(vectors)
    local = LogicRetriever(
        DenseRetriever(minilm, index, docs), passages=PassageVectors(sentences, offsets)
    )
    milvus = local.to_store(f"milvus://{tmp_path}/big.db", collection="big")

    queries = rng.standard_normal((8, dim)).astype(np.float32)
    s1, i1 = index.search(queries, 300)
    s2, i2 = milvus.dense.index.search(queries, 300)
    np.testing.assert_array_equal(i1, i2)
    np.testing.assert_allclose(s1, s2, atol=1e-5)
    rows = rng.choice(n, 700, replace=False)
    np.testing.assert_allclose(
        local.passages.max_sim(queries, rows), milvus.passages.max_sim(queries, rows), atol=1e-5
    )
    np.testing.assert_array_equal(milvus.resources.doc_vectors()[rows], vectors[rows])
    _assert_same(local, milvus, strategies=["vanilla", "rerank", "setops"], k=20)


def test_existing_collection_refused_then_replaced(local, tmp_path):
    uri = f"milvus://{tmp_path}/s.db"
    first = local.to_store(uri, collection="c")
    folder = first.save(tmp_path / "first")
    with pytest.raises(StoreError, match="already exists"):
        local.to_store(uri, collection="c")
    assert len(LogicRetriever.load(folder).search("Orchids of Indonesia", k=3)) == 3
    # replaced by another corpus: the first folder no longer matches its collection
    other = LogicRetriever.build(_docs()[:5], model=local.dense.encoder)
    other.to_store(uri, collection="c", overwrite=True)
    with pytest.raises(IndexMismatchError, match="holds another index"):
        LogicRetriever.load(folder)


def test_model_mismatch_with_collection_refused(local, tmp_path):
    milvus = local.to_store(f"milvus://{tmp_path}/s.db", collection="m")
    folder = milvus.save(tmp_path / "idx")
    manifest = json.loads((folder / "manifest.json").read_text())
    store = milvus.dense.index.store
    stored = dict(store.stored)
    stored["model"] = {"name": "other", "weights_sha256": "0" * 64}
    store.client.alter_collection_properties(
        "m", properties={"logic_rag.manifest": json.dumps(stored)}
    )
    with pytest.raises(IndexMismatchError, match="model"):
        LogicRetriever.load(folder)
    assert manifest["store"]["build_id"] == stored["build_id"]


def test_missing_collection(local, tmp_path):
    milvus = local.to_store(f"milvus://{tmp_path}/s.db", collection="gone")
    folder = milvus.save(tmp_path / "idx")
    store = milvus.dense.index.store
    store.client.drop_collection("gone__sentences")
    with pytest.raises(StoreError, match="sentence vectors.*missing"):
        LogicRetriever.load(folder)
    store.drop()
    with pytest.raises(StoreError, match="does not exist.*rebuild"):
        LogicRetriever.load(folder)


def test_store_uri_override(local, tmp_path):
    milvus = local.to_store(f"milvus://{tmp_path}/s.db", collection="moved")
    folder = milvus.save(tmp_path / "idx")
    with pytest.raises(StoreError, match="does not exist"):
        LogicRetriever.load(folder, store_uri=f"milvus://{tmp_path}/elsewhere.db")
    assert len(LogicRetriever.load(folder, store_uri=f"milvus://{tmp_path}/s.db")) == len(TEXTS)


def test_bounded_batches_write_every_row(tmp_path):
    store = MilvusStore(parse_store_uri(f"milvus://{tmp_path}/b.db", "batches"))
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((53, 8)).astype(np.float32)
    offsets = np.arange(0, 107, 2, dtype=np.int64)[:54]
    offsets[-1] = 106
    sentences = rng.standard_normal((106, 8)).astype(np.float32)
    calls = []
    original = store._insert

    def counting(name, batches):
        def spy():
            for rows in batches:
                calls.append(len(rows))
                yield rows

        original(name, spy())

    store._insert = counting
    stored = store.write(vectors, (sentences, offsets), {"model": None}, batch_size=7)
    assert max(calls) == 7 and sum(calls) == 53 + 106
    dense, passages = store.open({"build_id": stored["build_id"]})
    np.testing.assert_allclose(dense.fetch(np.array([52, 0, 7])), vectors[[52, 0, 7]])
    assert passages is not None and passages.n_documents == 53
    view = dense.vectors()
    assert view.shape == (53, 8) and len(view) == 53
    np.testing.assert_allclose(view[3], vectors[3])
    np.testing.assert_allclose(view[10:13], vectors[10:13])
    np.testing.assert_allclose(np.asarray(view), vectors)
    with pytest.raises(IndexError):
        dense.fetch(np.array([53]))
    expected = np.stack(
        [np.max(sentences[2 * d : 2 * d + 2] @ vectors[:2].T, axis=0) for d in (5, 0, 5)]
    ).T
    np.testing.assert_allclose(
        passages.max_sim(vectors[:2], np.array([5, 0, 5])), expected, atol=1e-5
    )
    assert sorted(store.client.list_collections()) == ["batches", "batches__sentences"]


@pytest.mark.parametrize(
    "uri",
    [
        "",
        "milvus://",
        "milvus://.db",
        "milvus://store.sqlite",
        "milvus://a.db?x=1",
        "file:///tmp/a.db",
        "ftp://host:19530",
        "/tmp/a.db",
        "http://user:secret@host:19530",
        "https://:tok@host:19530",
        "http://host:19530/db?token=x",
        "http://host:notaport",
        "http://",
        "milvus://a\n.db",
        "http://ho st:19530",
        "http://host:19530#frag",
    ],
)
def test_hostile_uris_refused(uri):
    with pytest.raises(ValueError):
        parse_store_uri(uri, "ok")


@pytest.mark.parametrize(
    "name",
    ["", "1abc", "a-b", "a b", "a/b", "a__b", "x" * 201, "ünïcode", "a;drop", None, "a\n"],
)
def test_hostile_collection_names_refused(name):
    with pytest.raises(ValueError, match="collection name"):
        check_collection_name(name)


def test_good_uris(tmp_path):
    assert parse_store_uri("http://localhost:19530", "c").uri == "http://localhost:19530"
    assert parse_store_uri("https://milvus.example.org:443/", "c").uri.endswith(":443")
    loc = parse_store_uri("milvus://rel/x.db", "_c1")
    assert loc.is_lite and loc.uri.startswith("/") and loc.sentences == "_c1__sentences"


def test_missing_pymilvus_names_the_extra(monkeypatch, tmp_path, capsys):
    from logic_rag import cli

    monkeypatch.setitem(sys.modules, "pymilvus", None)
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"id": "a", "title": "A", "text": "x"}) + "\n")
    code = cli.main(
        ["index", "--docs", str(docs), "--out", str(tmp_path / "o"), "--model", "minilm"]
        + ["--store", f"milvus://{tmp_path}/s.db", "-q"]
    )
    assert code == 2
    assert "logic-rag[milvus]" in capsys.readouterr().err


def test_help_does_not_import_pymilvus():
    code = "import sys, logic_rag.cli as c; c.build_parser(); print('pymilvus' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_cli_index_store_then_search(tmp_path, capsys):
    from logic_rag import cli

    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps(d.to_json()) + "\n" for d in _docs()))
    out = tmp_path / "my-index"
    args = ["index", "--docs", str(docs), "--out", str(out), "--model", "minilm", "-q"]
    assert cli.main(args + ["--store", f"milvus://{tmp_path}/cli.db"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["store"]["collection"] == "my_index"
    assert not (out / "index.faiss").exists()
    capsys.readouterr()
    assert cli.main(["search", str(out), "Orchids of Indonesia but not Thailand", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["id"] in {"d0", "d8"}
    # a second build into the same collection is refused with a clear message
    assert cli.main(args + ["--store", f"milvus://{tmp_path}/cli.db"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert cli.main(args + ["--collection", "x"]) == 2  # --collection without --store


def _edit_store_uri(folder, uri: str) -> None:
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["store"]["uri"] = uri
    path.write_text(json.dumps(manifest))


def test_hostile_manifest_server_is_never_contacted(local, tmp_path, monkeypatch):
    """A folder whose manifest names a server does not make us connect (and send the
    token there); the user has to name the server."""
    import pymilvus

    milvus = local.to_store(f"milvus://{tmp_path}/s.db", collection="hostile")
    folder = milvus.save(tmp_path / "idx")
    _edit_store_uri(folder, "http://evil.example:19530")
    monkeypatch.setenv("LOGIC_RAG_MILVUS_TOKEN", "secret")

    def no_connection(*args, **kwargs):
        raise AssertionError("a server named only by the manifest was contacted")

    monkeypatch.setattr(pymilvus, "MilvusClient", no_connection)
    with pytest.raises(StoreError, match="not contacted.*--store-uri"):
        LogicRetriever.load(folder)


def test_hostile_manifest_lite_path_is_never_created(local, tmp_path):
    milvus = local.to_store(f"milvus://{tmp_path}/s.db", collection="nofile")
    folder = milvus.save(tmp_path / "idx")
    target = tmp_path / "elsewhere" / "planted.db"
    _edit_store_uri(folder, str(target))
    with pytest.raises(StoreError, match="does not exist"):
        LogicRetriever.load(folder)
    assert not target.exists() and not target.parent.exists()


def test_cli_evals_reach_a_store_named_by_store_uri(tmp_path, capsys):
    """`eval beir` / `eval quest` over an index folder whose vectors live in Milvus: the store
    named by --store-uri is the one opened (a wrong one fails with the store's message)."""
    from logic_rag import cli

    data = tmp_path / "beir"
    (data / "qrels").mkdir(parents=True)
    (data / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d.id, "title": d.title, "text": d.text}) + "\n" for d in _docs())
    )
    (data / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "Orchids of Java"}) + "\n")
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td0\t1\n")
    out = tmp_path / "idx"
    build = ["index", "--docs", str(data / "corpus.jsonl"), "--out", str(out), "--model", "minilm"]
    assert cli.main(build + ["-q", "--store", f"milvus://{tmp_path}/ev.db"]) == 0
    capsys.readouterr()
    beir = ["eval", "beir", "--data", str(data), "--index", str(out), "--strategy", "vanilla"]
    assert cli.main(beir + ["--store-uri", f"milvus://{tmp_path}/elsewhere.db", "--json"]) == 2
    assert "elsewhere.db" in capsys.readouterr().err
    assert cli.main(beir + ["--store-uri", f"milvus://{tmp_path}/ev.db", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["documents"] == len(TEXTS) and result["strategies"]["vanilla"]["nDCG@10"] > 0

    quest = tmp_path / "q.jsonl"
    quest.write_text(
        json.dumps(
            {
                "query": "Orchids of Java",
                "docs": ["T0"],
                "original_query": "<mark>Orchids of Java</mark>",
                "metadata": {"template": "_"},
            }
        )
        + "\n"
    )
    run = [
        "eval",
        "quest",
        "--queries",
        str(quest),
        "--index",
        str(out),
        "--out",
        str(tmp_path / "eq"),
    ]
    assert cli.main(run + ["--store-uri", f"milvus://{tmp_path}/elsewhere.db"]) == 2
    assert "elsewhere.db" in capsys.readouterr().err


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_killed_writes_leftovers_are_dropped_by_the_next_write(tmp_path, caplog):
    """Temporary collections of a write whose process is gone are dropped before the next
    write of the same index from this machine; a running writer's, another machine's and
    another index's are kept (real Milvus Lite)."""
    import os

    from logic_rag.index.milvus_store import _host_tag

    store = MilvusStore(parse_store_uri(f"milvus://{tmp_path}/l.db", "idx"))
    host, dead, other_host = _host_tag(), _dead_pid(), "0" * 8
    assert host != other_host
    gone = [
        f"idx__tmp_{host}_{dead}_0123abcd",
        f"idx__sentences__tmp_{host}_{dead}_0123abcd",
        f"idx__tmp_{dead}_89abcdef",  # named before the host was recorded: a local file's
    ]
    kept = [
        f"idx__tmp_{host}_{os.getpid()}_0123abcd",  # a write still running
        f"idx__tmp_{other_host}_{dead}_0123abcd",  # another machine's
        f"other__tmp_{host}_{dead}_0123abcd",  # another index's
        f"idx_b__tmp_{host}_{dead}_0123abcd",  # an index whose name extends this one
    ]
    for name in gone + kept:
        store._create(name, 8, with_doc="sentences" in name)
    rng = np.random.default_rng(0)
    with caplog.at_level("WARNING", logger="logic_rag.index.milvus_store"):
        store.write(rng.standard_normal((3, 8)).astype(np.float32), None, {"model": None})
    assert sorted(store.client.list_collections()) == sorted(["idx", *kept])
    assert sum("interrupted write" in r.getMessage() for r in caplog.records) == len(gone)
    assert store.recover_leftovers() == []


def test_leftovers_on_a_server_are_judged_only_by_their_host():
    """On a server, names without a host tag (another machine may have written them) and
    other hosts' names are never dropped; this host's dead writer's are."""
    from logic_rag.index.milvus_store import _host_tag

    dead = _dead_pid()

    class Client:
        def __init__(self, names):
            self.names = list(names)

        def list_collections(self):
            return list(self.names)

        def drop_collection(self, name):
            self.names.remove(name)

    store = MilvusStore(parse_store_uri("http://localhost:19530", "idx"))
    legacy, mine = f"idx__tmp_{dead}_0123abcd", f"idx__tmp_{_host_tag()}_{dead}_0123abcd"
    store._client = Client(["idx", legacy, mine])
    assert len(store.recover_leftovers()) == 1
    assert store._client.names == ["idx", legacy]
