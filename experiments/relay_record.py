"""Record every LLM check the issue-40/41 dev experiments can ask, for one batch on a GPU.

The experiments (``experiments.quality_curve``, ``experiments.rerankers_boolq``, ``adapt``)
ask the LLM tens of thousands of (constraint, page) questions; :mod:`experiments.llm_relay`
scores them in one batch elsewhere. Certified top-k asks adaptively, so it is recorded as
the superset it draws from: every atom (positive and negated) of every candidate of its
pool, and the whole query on every candidate (``llm-rerank``). The other askers do not
depend on the answers and are recorded by running them:

* ``quest``: QUEST-attr dev (seed-0 atom-disjoint split, every query), at k = 5 and 20,
  the quality pool and ``verify``'s all-pairs top 40; ``fit-cascade``'s sample of 1000
  pairs over the train queries (the calibrated bounds);
* ``boolq``: the boolq_not questions over a dense store's top ``--candidates``;
* ``adapt``: ``adapt``'s labelling plan for atoms from the train queries, at
  ``--max-pairs`` values.

    python -m experiments.relay_record quest --index IDX --out prompts.jsonl.gz
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from experiments.llm_relay import RecordingGenerator, write_prompts


def _record_pool(
    retriever: Any, verifier: Any, texts: list[str], k: int, per_batch: int = 1
) -> int:
    """Every atom and the whole query on every candidate of ``quality``'s pool.

    ``per_batch`` queries are searched together; the experiments search one at a time, and a
    batch encodes its texts with padding, which moves the last bits of the vectors and
    with them a near tie between two evidence sentences of a long page (another prompt).
    """
    from logic_rag.pipeline.context import SearchContext
    from logic_rag.pipeline.state import QueryState, SearchBatch
    from logic_rag.verifiers.base import CheckRequest
    from logic_rag.verifiers.certified import CertifiedTopK

    before, _ = retriever.pipeline("quality").until(CertifiedTopK)
    pairs = 0
    for start in range(0, len(texts), per_batch):
        part = texts[start : start + per_batch]
        batch = SearchBatch([QueryState(p) for p in retriever.plan(part)], k)
        ctx = SearchContext(retriever.resources)
        before(batch, ctx)
        requests = []
        for state in batch:
            atoms = tuple(dict.fromkeys([a.text for a in state.plan.atoms] + [state.plan.text]))
            requests.append(CheckRequest(atoms, state.candidates))
            pairs += len(atoms) * len(state.candidates)
        verifier.prepare([a for r in requests for a in r.atoms], ctx)
        ctx.run_wanted()
        verifier.check(requests, ctx)
    return pairs


def record_quest(index: str, recorder: RecordingGenerator, log: Any, side: str = "dev") -> None:
    import tempfile

    from experiments.quality_curve import dev_queries, train_queries
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.paths import shared_data_dir
    from logic_rag.strategy_settings import QualitySettings, VerifySettings
    from logic_rag.verifiers.cascade import fit_cascade
    from logic_rag.verifiers.llm import LLMVerifier

    data = shared_data_dir() / "quest" / "attr"
    if side == "dev":
        texts = [q.query for q in dev_queries(data, per_template=0)]
    else:
        texts = train_queries(data)
    verifier = LLMVerifier(generator=recorder)
    base = LogicRetriever.load(index)
    quality = base.with_settings(QualitySettings(verifier=verifier, bounds="hard", max_calls=None))
    for k in (5, 20):
        pairs = _record_pool(quality, verifier, texts, k)
        log(f"quest k={k}: {pairs} pool pairs, {len(recorder.asked)} prompts so far")
    verify = base.with_settings(VerifySettings(verifier=verifier, verifier_top=40))
    for k in (5, 20):
        for text in texts:  # one at a time, as the experiment searches
            verify.search(text, k, strategy="verify")
    log(f"quest verify top 40: {len(recorder.asked)} prompts so far")
    if side != "dev":
        return
    with tempfile.TemporaryDirectory() as tmp:
        fit_cascade(quality, train_queries(data), Path(tmp) / "fit.json", sample_size=1000)
    log(f"quest fit-cascade sample: {len(recorder.asked)} prompts so far")


def record_boolq(model: str, candidates: int, recorder: RecordingGenerator, log: Any) -> None:
    from experiments.rerankers_boolq import boolq_candidates
    from logic_rag.integrations._rerank import CandidateReranker
    from logic_rag.strategy_settings import LLMRerankSettings, VerifySettings
    from logic_rag.verifiers.llm import LLMVerifier

    case = boolq_candidates(model, candidates)
    encoder, texts, found, by_id = case.encoder, case.texts, case.found, case.by_id
    verifier = LLMVerifier(generator=recorder)
    # verify over every candidate with every atom, and llm-rerank over every candidate:
    # together the superset quality draws from at any top_n.
    for strategy, settings in (
        (
            "verify",
            VerifySettings(verifier=verifier, verifier_top=candidates, verifier_atoms="all"),
        ),
        ("llm-rerank", LLMRerankSettings(verifier=verifier, top=candidates)),
    ):
        reranker = CandidateReranker(encoder, strategy=strategy, settings=settings)
        for query, hits in zip(texts, found, strict=True):
            docs = [by_id[h.id] for h in hits]
            reranker.rerank(
                query,
                [d.text for d in docs],
                titles=[d.title for d in docs],
                scores=[h.score for h in hits],
            )
        log(f"boolq {strategy}: {len(recorder.asked)} prompts so far")


def record_adapt(index: str, queries: str, max_pairs: list[int], recorder: Any, log: Any) -> None:
    import tempfile

    from finetune.adapt.driver import adapt
    from finetune.adapt.state import AdaptSettings
    from logic_rag.verifiers.llm import LLMVerifier

    for n in max_pairs:
        settings = AdaptSettings(max_pairs=n)
        verifier = LLMVerifier(generator=recorder, max_chars=settings.max_chars)
        with tempfile.TemporaryDirectory() as tmp:
            adapt(
                index,
                Path(tmp) / "run",
                queries=queries,
                verifier=verifier,
                settings=settings,
                stop_after="labels",
                progress=False,
            )
        log(f"adapt max_pairs={n}: {len(recorder.asked)} prompts so far")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="relay_record", description=__doc__.split("\n")[0])
    p.add_argument("what", choices=["quest", "boolq", "adapt"])
    p.add_argument("--out", required=True, type=Path, help="prompts file (.jsonl or .jsonl.gz)")
    p.add_argument("--index", help="QUEST-attr index (quest, adapt)")
    p.add_argument(
        "--side", choices=["dev", "train"], default="dev", help="quest: which side of the split"
    )
    p.add_argument("--model", default="embeddinggemma", help="boolq: the store's encoder")
    p.add_argument("--candidates", type=int, default=20, help="boolq: candidates per question")
    p.add_argument("--queries", help="adapt: the question log (JSONL with 'query')")
    p.add_argument("--max-pairs", default="4000", help="adapt: comma-separated cost bounds")
    args = p.parse_args(argv)
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    recorder = RecordingGenerator()
    if args.what == "quest":
        record_quest(args.index, recorder, log, args.side)
    elif args.what == "boolq":
        record_boolq(args.model, args.candidates, recorder, log)
    else:
        pairs = [int(n) for n in args.max_pairs.split(",")]
        record_adapt(args.index, args.queries, pairs, recorder, log)
    added = write_prompts(args.out, recorder.asked)
    log(f"{added} new prompts written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
