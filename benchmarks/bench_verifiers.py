"""Cost of one (atom, document) check for each constraint verifier, on this machine.

Every verifier scores the same pairs: generated-world pages (a few sentences each) and
three atoms per page. The pair cache is cleared before each timed run, so the numbers are
cold costs. The cross-encoder is MiniLM-L6 with a fresh one-logit head: a verifier
trained by ``logic-rag finetune verifier`` from MiniLM has exactly this shape and cost.
The LLM verifier uses ``llm_spec`` (Qwen2.5-1.5B on llama.cpp by default) on a handful of
pairs, since each costs about a second on two cores; it is skipped, with the reason in
the output, when its model or runtime is missing.

The embedding verifier's marginal cost is not a per-pair model call: it reads cached
document and sentence vectors, so it is measured as a whole ``rerank`` search minus a
``vanilla`` one in :mod:`benchmarks.bench_logic_latency`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from benchmarks.common import Log, world_documents

__all__ = ["run"]


def _pairs(n_pairs: int, seed: int) -> list[tuple[str, str]]:
    docs = world_documents(max(1, n_pairs // 3 + 1), seed)
    atoms = ("Italian films", "1970s crime films", "films set in Rome")
    pairs = [(atom, d.content) for d in docs for atom in atoms]
    return pairs[:n_pairs]


def _time(verifier: Any, pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    verifier.verify_pairs(pairs[:2])  # load the model outside the timing
    verifier.cache.clear()
    start = time.perf_counter()
    probabilities = verifier.verify_pairs(pairs)
    seconds = time.perf_counter() - start
    return {
        "pairs": len(pairs),
        "seconds": seconds,
        "ms_per_pair": 1000.0 * seconds / len(pairs),
        "pairs_per_s": len(pairs) / seconds,
        "mean_probability": float(probabilities.mean()),
    }


def _tiny_cross_encoder(folder: str, base: str = "minilm") -> str:
    """``base`` (MiniLM) with a one-logit head, saved to ``folder`` (a trained one's shape)."""
    from sentence_transformers import CrossEncoder

    from logic_rag.models import resolve_model

    model = CrossEncoder(str(resolve_model(base).path), num_labels=1, local_files_only=True)
    model.save(folder)
    return folder


def run(
    *,
    cross_encoder_pairs: int = 512,
    llm_pairs: int = 6,
    llm_spec: str = "qwen2.5-1.5b",
    seed: int = 0,
    device: str | None = None,
    cross_encoder_base: str = "minilm",
    log: Log | None = None,
) -> dict[str, Any]:
    """Time the cross-encoder and the LLM verifier per (atom, document) pair.

    ``device`` (a torch device) runs the cross-encoder and a ``transformers:`` LLM there;
    ``cross_encoder_base`` is the MiniLM-shaped model (name or folder) the head goes on.
    """
    import tempfile

    from benchmarks.common import llm_generator
    from logic_rag.verifiers.cross_encoder import CrossEncoderVerifier
    from logic_rag.verifiers.llm import LLMVerifier

    say = log if log is not None else (lambda _msg: None)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        say(f"verifiers: cross-encoder (MiniLM-L6 shape) on {cross_encoder_pairs} pairs")
        ce = CrossEncoderVerifier(
            model=_tiny_cross_encoder(tmp, cross_encoder_base), device=device or "cpu"
        )
        out["cross-encoder"] = _time(ce, _pairs(cross_encoder_pairs, seed))
    if llm_spec in ("", "none"):
        out["llm"] = {"generator": None, "skipped": "not requested (--llm-verifier none)"}
        return out
    say(f"verifiers: LLM ({llm_spec}) on {llm_pairs} pairs")
    try:
        out["llm"] = {
            "generator": llm_spec,
            **_time(
                LLMVerifier(generator=llm_generator(llm_spec, device)), _pairs(llm_pairs, seed)
            ),
        }
    except Exception as error:  # a missing model or runtime is a reported skip
        out["llm"] = {"generator": llm_spec, "skipped": f"{type(error).__name__}: {error}"}
    return out
