"""Explanations: a searched query's state becomes hits that say why they rank where they do.

Each hit carries its constraints as ✓ / ✗ / ? (``Hit.constraints``: True / False / None,
by :class:`~logic_rag.verifiers.verdicts.VerdictRule`), their degrees
(``Hit.constraint_scores``), which verifier gave each verdict (``constraint_sources``) and
the query's reading (``Hit.logic``). Both the retriever and the rerankers build their hits
here from the same :class:`~logic_rag.pipeline.state.QueryState`, so a reranker needs no
retriever to explain its ranking.

Embedding evidence calibrated on a handful of pages (a reranker's candidates, or a corpus
not much larger than the calibration's neighbour rank) is relative: it says where a page
stands among them, not whether it holds, so its band of "unsure" is wider and a verdict
calibration file (``LogicSettings.verdict_calibration``) is not applied to it.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from logic_rag.query.algebra import Atom, render, to_json
from logic_rag.retriever import Hit, make_hits
from logic_rag.verifiers.verdicts import VerdictRule

if TYPE_CHECKING:
    from logic_rag.pipeline.context import Resources
    from logic_rag.pipeline.state import QueryPlan, QueryState
    from logic_rag.strategy_settings import CheckedSettings
    from logic_rag.verifiers.verdicts import EvidenceCalibration

__all__ = [
    "DEFAULT_VERDICTS",
    "SMALL_CORPUS_RANKS",
    "constraint_name",
    "explained_hits",
    "outside_stacklevel",
]

#: Where a constraint's degree becomes ✓ / ✗ / ? (the ranking ignores it).
DEFAULT_VERDICTS = VerdictRule()

#: A corpus smaller than this many times ``threshold_rank`` gives relative evidence only.
SMALL_CORPUS_RANKS = 5


def constraint_name(atom: Atom, negated: bool) -> str:
    """How a hit names a constraint: the atom's text, ``NOT ...`` when negated."""
    return f"NOT {atom.text}" if negated else atom.text


def explained_hits(state: QueryState, resources: Resources, settings: CheckedSettings) -> list[Hit]:
    """The hits of one searched query, best first, each with its constraints explained.

    ``settings`` give the evidence's ``threshold_rank`` (whether a small corpus makes the
    evidence relative) and the ``logic`` group's verdict calibration, loaded once per
    ``resources`` and checked against their encoder and corpus.
    """
    order = state.ranked if state.ranked is not None else np.zeros(0, np.int64)
    ids = state.candidates[order]
    scores = state.score[order] if state.score is not None else np.zeros(len(order))
    if state.tail is not None:
        ids = np.concatenate([ids, state.tail[0]])
        scores = np.concatenate([scores, state.tail[1]])
    hits = make_hits(resources.documents, scores.astype(np.float32), ids)
    on_candidates = _calibration_of(state) == "candidates"
    relative = (
        on_candidates or len(resources) < SMALL_CORPUS_RANKS * settings.evidence.threshold_rank
    )
    calibrate = None if relative else _verdict_calibration(settings, resources)
    if relative and settings.logic.verdict_calibration is not None:
        _calibration_unused(settings, resources, None if on_candidates else len(resources))
    if state.probs is not None:
        sources = state.pair_source
        for hit, j in zip(hits, order.tolist(), strict=False):
            by = None if sources is None else sources[:, j]
            _annotate(hit, state.plan, state.probs[:, j], by, relative, calibrate)
    if state.set_aside is not None and state.set_aside[1] is not None:
        # Candidates a Cutoff set aside keep the evidence they had before the cut.
        aside_rows, aside_probs = state.set_aside
        where = {row: j for j, row in enumerate(aside_rows.tolist())}
        for hit, row in zip(hits[len(order) :], ids[len(order) :].tolist(), strict=False):
            if row in where:
                _annotate(hit, state.plan, aside_probs[:, where[row]], None, relative, calibrate)
    return _with_logic(state, hits)


def _calibration_of(state: QueryState) -> str | None:
    """What the state's embedding evidence was calibrated against (``corpus`` or
    ``candidates``): the state's typed field, else (until every verifier stage fills it)
    the note :class:`~logic_rag.verifiers.base.Verify` leaves in ``info``."""
    if state.calibration is not None:
        return state.calibration
    return state.info.get("calibration")


def _annotate(
    hit: Hit,
    plan: QueryPlan,
    probs: np.ndarray,
    sources: np.ndarray | None,
    relative: bool,
    calibrate: EvidenceCalibration | None,
) -> None:
    rule = DEFAULT_VERDICTS
    for i, (atom, p) in enumerate(zip(plan.atoms, probs.tolist(), strict=True)):
        is_neg = atom in plan.negated
        source = str(sources[i]) if sources is not None and sources[i] else "embedding"
        if calibrate is not None and source == "embedding":
            p = float(calibrate(np.array([p]))[0])
        degree = 1.0 - p if is_neg else p
        name = constraint_name(atom, is_neg)
        hit.constraints[name] = rule.verdict(degree, relative=relative and source == "embedding")
        hit.constraint_scores[name] = round(float(degree), 4)
        hit.constraint_sources[name] = source


def _verdict_calibration(
    settings: CheckedSettings, resources: Resources
) -> EvidenceCalibration | None:
    """The settings' verdict calibration, loaded once per ``resources`` (None: none)."""
    path = settings.logic.verdict_calibration
    if path is None:
        return None
    from logic_rag.verifiers.verdicts import EvidenceCalibration

    def load() -> EvidenceCalibration:
        encoder = resources.dense.encoder
        calibration = EvidenceCalibration.load(path)
        calibration.check_for(
            encoder_sha256=encoder.fingerprint,
            encoder_name=str(getattr(encoder, "name", "encoder")),
            corpus=resources.corpus_fingerprint(),
        )
        return calibration

    stamp = str(Path(path).stat().st_mtime_ns) if Path(path).is_file() else "missing"
    return resources.loaded(("verdict-calibration", str(path), stamp), load)


def _calibration_unused(
    settings: CheckedSettings, resources: Resources, corpus_size: int | None
) -> None:
    """Say once per ``resources`` that the verdict calibration is not applied: evidence
    calibrated against a small corpus (or a reranker's candidates) is relative, and its
    band is the wide one (issue 51 item 16: it was ignored without a word)."""
    path = settings.logic.verdict_calibration
    why = (
        f"the index holds {corpus_size} documents, under the "
        f"{SMALL_CORPUS_RANKS * settings.evidence.threshold_rank} a calibrated verdict needs"
        if corpus_size is not None
        else "the evidence is calibrated on the given candidates only"
    )

    def warn() -> bool:
        warnings.warn(
            f"the verdict calibration {path} is not used: {why}; verdicts use the wide "
            f"band of relative evidence",
            UserWarning,
            stacklevel=outside_stacklevel(),
        )
        return True

    resources.loaded(("verdict-calibration-unused", str(path)), warn)


def outside_stacklevel() -> int:
    """The ``stacklevel`` (for a ``warnings.warn`` in the caller of this function) of the
    first frame outside ``logic_rag``: a warning names the user's line even when it
    passed through an adapter (a reranker -> its core). A warning pointed at a library
    line is hidden by Python's default filters."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and _in_library(str(frame.f_globals.get("__name__", ""))):
        frame, level = frame.f_back, level + 1
    return level


def _in_library(module: str) -> bool:
    return module == "logic_rag" or module.startswith("logic_rag.")


def _with_logic(state: QueryState, hits: list[Hit]) -> list[Hit]:
    """Every hit's ``logic``: the query's reading (rendered and as JSON), the
    decomposition's confidence and source, and the notes the stages left."""
    plan = state.plan
    if len(plan.atoms) > 1 or plan.decomposition is not None:
        info: dict[str, Any] = {"query": render(plan.logic), "json": to_json(plan.logic)}
        if plan.decomposition is not None:
            info["confidence"] = plan.decomposition.confidence
            info["source"] = plan.decomposition.source
        info.update(state.info)
        for hit in hits:
            hit.logic = {**info, **hit.logic}
    return hits
