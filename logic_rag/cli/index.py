"""``logic-rag index``: embed a corpus into an index folder, whole or chunk by chunk, on
this machine or a Ray cluster, with the vectors in FAISS or Milvus."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from logic_rag.cli.common import positive_int


def add_parser(sub: Any) -> None:
    """``index`` on the sub-command parsers ``sub``."""
    p = sub.add_parser("index", help="embed a corpus and write an index folder")
    p.add_argument(
        "--docs", required=True, help="corpus: QUEST/BEIR/plain JSONL, text, or a BEIR folder"
    )
    p.add_argument("--out", required=True, help="index folder to write (replaced atomically)")
    p.add_argument(
        "--model",
        default=None,
        help="registry name or local folder (default: embeddinggemma-300m; minilm is the fast "
        "option; LOGIC_RAG_DEFAULT_MODEL overrides)",
    )
    p.add_argument(
        "--index", default="flat", choices=["flat", "hnsw", "ivfpq"], help="FAISS index kind"
    )
    p.add_argument("--format", default="auto", choices=["auto", "quest", "beir", "jsonl", "text"])
    p.add_argument(
        "--no-passages",
        action="store_true",
        help="skip sentence vectors (half the indexing time; weaker constraint checks)",
    )
    p.add_argument(
        "--sentence-dtype",
        default="float16",
        choices=["float16", "int8", "float32"],
        help="how sentence vectors are stored (default float16; int8 halves them again, "
        "with one scale per sentence); loaded indexes map them from disk",
    )
    p.add_argument(
        "--sparse-model", default=None, help="also build a SPLADE index (e.g. splade-tiny)"
    )
    p.add_argument(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        metavar="ADDRESS",
        help="encode on a Ray cluster (needs logic-rag[ray]): no ADDRESS starts a local one, "
        "else ray.init(address=ADDRESS), e.g. auto or ray://head:10001",
    )
    p.add_argument(
        "--ray-actors",
        type=int,
        default=None,
        metavar="N",
        help="encoder actors with --ray (default: one per GPU, else one per CPU)",
    )
    p.add_argument(
        "--store",
        default=None,
        metavar="URI",
        help="keep the vectors in Milvus: milvus://FILE.db (Milvus Lite) or http(s)://HOST:PORT "
        "(token in $LOGIC_RAG_MILVUS_TOKEN); needs logic-rag[milvus]",
    )
    p.add_argument(
        "--collection", default=None, help="Milvus collection (default: the --out folder's name)"
    )
    p.add_argument(
        "--overwrite-store", action="store_true", help="replace an existing Milvus collection"
    )
    p.add_argument(
        "--max-doc-chars",
        type=positive_int,
        default=100_000,
        metavar="N",
        help="characters of each document that are embedded (default 100000; longer ones "
        "are cut, reported, and stored whole)",
    )
    p.add_argument(
        "--chunk-size",
        type=positive_int,
        default=None,
        metavar="N",
        help="embed N documents at a time into shards beside --out (memory bounded by N, "
        "not the corpus); a killed run resumes from the last finished chunk when run "
        "again with the same inputs (e.g. 10000)",
    )
    p.add_argument(
        "--restart",
        action="store_true",
        help="with --chunk-size: discard an interrupted build's shards and start over",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build the index in memory and save it (``--chunk-size``: :func:`streamed`)."""
    from logic_rag.corpus import load_documents
    from logic_rag.errors import CorpusFormatError
    from logic_rag.index.store import check_out_dir
    from logic_rag.logic_retriever import LogicRetriever

    # Refuse a --out that is not ours before reading or embedding anything.
    check_out_dir(args.out)
    if args.chunk_size is not None:
        return streamed(args)
    if args.restart:
        raise ValueError("--restart resumes nothing without --chunk-size")
    docs = load_documents(args.docs, args.format)
    if not docs:
        raise CorpusFormatError(args.docs, None, "holds no documents")
    print(f"read {len(docs):,} documents from {args.docs}", file=sys.stderr)
    encode_with = ray_encoding(args)
    retriever = LogicRetriever.build(
        docs,
        model=args.model,
        index=args.index,
        passages=not args.no_passages,
        sparse_model=args.sparse_model,
        show_progress_bar=not args.quiet,
        encode_with=encode_with,
        max_document_chars=args.max_doc_chars,
        sentence_dtype=args.sentence_dtype,
        **store_options(args),
    )
    out = retriever.save(args.out)
    from logic_rag.index.streaming import discard_stale_build, work_folder

    # This index supersedes an interrupted chunked build of the same --out; its work
    # folder would make the next chunked build refuse to start (issue 42 item 15).
    if discard_stale_build(out):
        print(
            f"removed {work_folder(out)}, the work folder of an interrupted chunked build "
            f"that this index replaces",
            file=sys.stderr,
        )
    extras = "" if args.no_passages else f" + {args.sentence_dtype} sentence vectors"
    extras += f" + {args.sparse_model}" if args.sparse_model else ""
    extras += " on Ray" if encode_with is not None else ""
    print(
        f"indexed {len(docs):,} documents with {retriever.dense.encoder.name} "
        f"({retriever.dense.index.dim}-d, {args.index}{extras}) into {out}",
        file=sys.stderr,
    )
    return 0


def streamed(args: argparse.Namespace) -> int:
    """``index --chunk-size N``: chunk by chunk, bounded memory, resumable after a kill."""
    from logic_rag.index.streaming import stream_index, work_folder

    unsupported = [
        flag
        for flag, given in (
            ("--ray", args.ray is not None),
            ("--store", args.store is not None),
            ("--sparse-model", args.sparse_model is not None),
        )
        if given
    ]
    if unsupported:
        raise ValueError(
            f"--chunk-size builds dense and sentence vectors only; drop {', '.join(unsupported)} "
            f"or --chunk-size"
        )
    print(
        f"building {args.out} in chunks of {args.chunk_size:,} documents (work folder "
        f"{work_folder(args.out)}; a killed run resumes from it)",
        file=sys.stderr,
    )
    out = stream_index(
        args.docs,
        args.out,
        model=args.model,
        format=args.format,
        chunk_size=args.chunk_size,
        passages=not args.no_passages,
        sentence_dtype=args.sentence_dtype,
        index=args.index,
        max_document_chars=args.max_doc_chars,
        restart=args.restart,
        progress=None if args.quiet else (lambda line: print(line, file=sys.stderr)),
    )
    print(f"indexed {args.docs} ({args.index}) into {out}", file=sys.stderr)
    return 0


def ray_encoding(args: argparse.Namespace) -> Any:
    """``--ray [ADDRESS]``: a RayEncoding (Ray is imported only when asked for)."""
    if args.ray is None:
        return None
    from logic_rag.encoders.ray_encoding import RayEncoding, import_ray

    import_ray()  # fail before reading the model when the extra is missing
    address = None if args.ray == "local" else args.ray
    return RayEncoding(address=address, num_actors=args.ray_actors, show_progress=not args.quiet)


def store_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--store``: vectors in Milvus; the collection defaults to the --out folder's name."""
    if args.store is None:
        if args.collection is not None or args.overwrite_store:
            raise ValueError("--collection and --overwrite-store need --store milvus://FILE.db")
        return {}
    import re

    name = args.collection
    if name is None:
        name = re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_]", "_", Path(args.out).absolute().name))
        if not re.match(r"[A-Za-z_]", name):
            name = f"logic_rag_{name}"
        name = name[:200]
    return {"store": args.store, "collection": name, "overwrite_store": args.overwrite_store}
