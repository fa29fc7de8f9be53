"""``adapt(INDEX, OUT)``: the LLM as teacher, phase by phase, resumable at every step.

Why this exists: users have a corpus and perhaps a log of questions, almost never gold
result sets. An LLM's yes/no verdicts on (constraint, page) pairs are a labelling signal
they can afford once, offline (GPL, InPars, Promptagator adapt retrievers that way); set
algebra over those verdicts gives AND / OR / NOT training queries with result sets for
free, which is what LogiCoL and SupCon learn from. The same verdicts distil a
cross-encoder verifier and calibrate the embedding evidence.

Phases (``DIR/state.json`` records each one finished, with its seconds):

1. ``atoms``: from the questions (rules decomposition) or generated from sampled pages
   (:mod:`.atoms`) -> ``atoms.json`` (and ``generated.jsonl``);
2. ``labels``: candidate plan and the teacher's verdicts (:mod:`.labels`) ->
   ``plan.jsonl``, ``labels.jsonl``;
3. ``composed``: set algebra and texts (:mod:`.composed`) -> ``composed.jsonl``,
   ``pages.jsonl``, ``teacher.jsonl``;
4. ``model``: the bi-encoder (:func:`.training.train_biencoder`) -> ``model/``;
5. ``verifier``: the distilled cross-encoder -> ``verifier/``;
6. ``calibration``: :mod:`.calibration` -> ``calibration.json``;
7. ``card``: :mod:`.card` -> ``README.md``.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logic_rag.atomic import atomic_write_json, atomic_write_jsonl, atomic_write_text

from .state import PHASES, AdaptError, AdaptSettings, RunState, settings_dict

__all__ = ["adapt", "AdaptResult", "DEFAULT_TEACHER"]

DEFAULT_TEACHER = "llm:qwen2.5-coder-1.5b"
"""The default teacher: Qwen2.5-1.5B-Instruct (llama.cpp where installed)."""


@dataclass(frozen=True)
class AdaptResult:
    """Where the products are, and the finished phases' facts (as in ``state.json``)."""

    folder: Path
    model: Path
    verifier: Path
    calibration: Path
    card: Path
    phases: dict[str, dict[str, Any]] = field(default_factory=dict)


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _make_verifier(spec: Any, settings: AdaptSettings, options: dict[str, Any]) -> Any:
    from logic_rag.verifiers.spec import make_verifier

    if isinstance(spec, str) and spec.strip().lower().startswith("llm:"):
        return make_verifier(spec, max_chars=settings.max_chars, generator_options=options)
    if options:
        raise AdaptError("teacher options (device, batch size) apply to llm: teachers only")
    return make_verifier(spec)


def _teacher_name(spec: Any) -> str:
    """The teacher as the run's state records it: a spec with any deprecated model alias
    resolved (``llm:qwen2.5-1.5b`` is ``llm:qwen2.5-coder-1.5b``), so both name one run."""
    from logic_rag.models import canonical_spec

    return canonical_spec(spec) if isinstance(spec, str) else type(spec).__name__


def adapt(
    index: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    queries: str | os.PathLike[str] | None = None,
    verifier: Any = DEFAULT_TEACHER,
    settings: AdaptSettings | None = None,
    dev: dict[str, Any] | None = None,
    progress: bool = True,
    stop_after: str | None = None,
    teacher_options: dict[str, Any] | None = None,
) -> AdaptResult:
    """Adapt the retriever of ``index`` to its corpus with ``verifier`` as teacher.

    ``queries``: a log of questions (JSONL with ``query``, or one per line); without it the
    atoms are generated from the pages (the teacher must then be an ``llm:`` verifier).
    ``verifier``: a verifier spec or object. ``settings``: :class:`AdaptSettings` (cost bound,
    candidate depths, training). ``dev``: metrics measured elsewhere, written into the card.
    ``teacher_options``: constructor options of an ``llm:`` teacher's generator, e.g.
    ``{"device": "cuda", "batch_size": 64}`` for the transformers backend on a GPU (it
    runs on the CPU otherwise). They change speed, not verdicts, so they are not part of
    the fingerprint: a run labelled partly on a CPU may go on on a GPU.
    ``stop_after``: a phase name (:data:`~.state.PHASES`) after which to return, e.g.
    ``"labels"`` to inspect the verdicts before any training; a later call goes on.
    A rerun with the same inputs resumes; another run's folder is refused.
    """
    from logic_rag.index.snapshot import MANIFEST_NAME
    from logic_rag.logic_retriever import LogicRetriever

    settings = settings or AdaptSettings()
    settings.validate()
    if stop_after is not None and stop_after not in PHASES:
        raise AdaptError(f"stop_after {stop_after!r}: choose one of {', '.join(PHASES)}")
    index = Path(index)
    manifest = index / MANIFEST_NAME
    if not manifest.is_file():
        raise AdaptError(f"{index} has no {MANIFEST_NAME}: not an index folder (`logic-rag index`)")
    from logic_rag.outputs import check_outside_index

    check_outside_index(out)  # a run folder inside an index would damage it (item 15)
    queries_path = Path(queries) if queries is not None else None
    if queries_path is not None and not queries_path.is_file():
        raise AdaptError(f"--queries {queries_path}: no such file")
    if queries_path is None and settings.train_queries == "questions":
        raise AdaptError(
            f"train-queries {settings.train_queries!r} trains on the questions: pass "
            f"--queries LOG.jsonl (or train-queries 'composed' or 'both')"
        )
    teacher = _make_verifier(verifier, settings, dict(teacher_options or {}))
    fingerprint = {
        "index_manifest_sha256": _sha256(manifest),
        "queries_sha256": _sha256(queries_path) if queries_path is not None else None,
        "verifier": _teacher_name(verifier),
        "teacher": teacher.fingerprint() if hasattr(teacher, "fingerprint") else repr(teacher),
        "settings": settings_dict(settings),
    }
    folder = Path(out)
    state = RunState.open(folder, fingerprint)
    _forget_lost_outputs(folder, state)
    retriever = LogicRetriever.load(index)
    docs = retriever.documents

    # 1. atoms ---------------------------------------------------------------------------
    if not state.done("atoms"):
        start = time.perf_counter()
        if queries_path is not None:
            from .atoms import atoms_from_queries, read_queries

            found = atoms_from_queries(read_queries(queries_path))
        else:
            found = _generated_atoms(retriever, teacher, folder, settings, progress)
        if not found["groups"]:
            raise AdaptError("no atoms found: the questions decompose to nothing")
        atomic_write_json(folder / "atoms.json", found)
        state.finish(
            "atoms",
            time.perf_counter() - start,
            source=found["source"],
            how=found["how"],
            atoms=found["atoms"],
            groups=len(found["groups"]),
        )
    if stop_after == "atoms":
        return _result(folder, state)
    found = _read_json(folder / "atoms.json")

    # 2. labels --------------------------------------------------------------------------
    from .labels import label_pairs, plan_pairs, read_labels

    plan_path, labels_path = folder / "plan.jsonl", folder / "labels.jsonl"
    if not state.done("labels"):
        start = time.perf_counter()
        earlier = state.spent.get("labels", 0.0)  # seconds of interrupted sessions
        saved = [start]

        def tick() -> None:
            now = time.perf_counter()
            if now - saved[0] >= 10.0:  # a state write per 10 s, not per batch
                saved[0] = now
                state.checkpoint("labels", earlier + now - start)

        if plan_path.is_file():
            plan = _read_plan(plan_path)
        else:
            plan = plan_pairs(
                retriever,
                found["groups"],
                top_k=settings.top_k,
                random_pages=settings.random_pages,
                max_pairs=settings.max_pairs,
                seed=settings.seed,
            )
            atomic_write_jsonl(plan_path, plan)
        facts = label_pairs(
            retriever,
            teacher,
            plan,
            labels_path,
            batch=settings.label_batch,
            progress=progress,
            on_batch=tick,
        )
        labels = _planned_labels(plan, read_labels(labels_path))
        if len(labels) != len(plan):
            raise AdaptError(f"{labels_path} lacks {len(plan) - len(labels)} planned pairs")
        _check_scores(labels, labels_path)
        yes = sum(float(r["score"]) >= settings.yes_threshold for r in labels)
        facts.update(yes=yes, yes_rate=round(yes / max(1, len(labels)), 4))
        state.finish("labels", earlier + time.perf_counter() - start, **facts)
    plan = _read_plan(plan_path)
    labels = _planned_labels(plan, read_labels(labels_path))
    if stop_after == "labels":
        return _result(folder, state)

    # 3. composed sets -------------------------------------------------------------------
    from .composed import verdicts_from_labels
    from .training import train_biencoder, train_cross_encoder, training_set, write_training_files

    verdicts = verdicts_from_labels(labels, settings.yes_threshold)
    composed, stats = _training_queries(verdicts, queries_path, settings)
    if not state.done("composed"):
        start = time.perf_counter()
        if not composed:
            raise AdaptError(
                f"the teacher said yes to {sum(len(s) for s in verdicts.yes.values())} of "
                f"{len(labels)} pairs: no atom has a result set of {settings.min_set_size} to "
                f"{settings.max_set_size} pages, so there is nothing to train on (a weak "
                f"teacher? try a stronger --verifier or a lower yes threshold)"
            )
        files = write_training_files(folder, docs, labels, composed)
        state.finish("composed", time.perf_counter() - start, **stats, **files)
    if stop_after == "composed":
        return _result(folder, state)

    # 4. bi-encoder ----------------------------------------------------------------------
    if not state.done("model"):
        start = time.perf_counter()
        base = settings.base or retriever.dense.encoder.name
        ts = training_set(docs, labels, composed, hard_negatives=settings.hard_negatives)
        train_biencoder(folder, ts, settings, base)
        state.finish("model", time.perf_counter() - start, base=base)
    if stop_after == "model":
        return _result(folder, state)

    # 5. cross-encoder verifier ----------------------------------------------------------
    if not state.done("verifier"):
        start = time.perf_counter()
        train_cross_encoder(folder, settings)
        state.finish("verifier", time.perf_counter() - start, base=settings.verifier_base)
    if stop_after == "verifier":
        return _result(folder, state)

    # 6. calibration ---------------------------------------------------------------------
    from .calibration import CALIBRATION_FILE, fit_calibration

    if not state.done("calibration"):
        start = time.perf_counter()
        encoder = retriever.dense.encoder
        calibration = fit_calibration(
            retriever,
            labels,
            threshold=settings.yes_threshold,
            seed=settings.seed,
            fingerprint={
                "index_manifest_sha256": fingerprint["index_manifest_sha256"],
                "encoder": {"name": encoder.name, "weights_sha256": encoder.fingerprint},
                "teacher": fingerprint["teacher"],
            },
        )
        atomic_write_json(folder / CALIBRATION_FILE, calibration)
        state.finish(
            "calibration",
            time.perf_counter() - start,
            pairs=calibration["pairs"],
            held_out=calibration["held_out"],
        )
    if stop_after == "calibration":
        return _result(folder, state)

    # 7. card ----------------------------------------------------------------------------
    from .card import render_card

    start = time.perf_counter()
    phases = dict(state.phases)
    phases.pop("card", None)
    phases["card"] = {"seconds": 0.0}
    atomic_write_text(folder / "README.md", render_card(fingerprint, phases, dev=dev))
    state.finish("card", time.perf_counter() - start, dev=dev or None)
    return _result(folder, state)


def _read_json(path: Path) -> Any:
    """A JSON file of the run folder; a damaged one is named (issue 51 item 14)."""
    from logic_rag.json_limits import loads_bounded

    try:
        found = loads_bounded(path.read_bytes())
    except (ValueError, UnicodeDecodeError) as exc:
        raise AdaptError(
            f"{path} is damaged ({exc}); delete it (and state.json) to redo that phase"
        ) from None
    if not isinstance(found, dict):
        raise AdaptError(f"{path} is damaged (not a JSON object); delete it to redo that phase")
    return found


def _read_plan(path: Path) -> list[dict[str, Any]]:
    """``plan.jsonl``, each line an object; a damaged line is named with ``file:line``."""
    from logic_rag.json_limits import loads_bounded

    plan = []
    for lineno, line in enumerate(path.read_bytes().splitlines(), 1):
        try:
            row = loads_bounded(line)
        except (ValueError, UnicodeDecodeError) as exc:
            raise AdaptError(
                f"{path}:{lineno}: damaged ({exc}); delete {path} to plan again"
            ) from None
        if not isinstance(row, dict):
            raise AdaptError(f"{path}:{lineno}: not a JSON object; delete {path} to plan again")
        plan.append(row)
    return plan


def _check_scores(labels: list[dict[str, Any]], path: Path) -> None:
    """Every label a finite number in [0, 1]: a NaN was blamed on a "weak teacher"."""
    import math

    for row in labels:
        score = row.get("score")
        ok = isinstance(score, int | float) and not isinstance(score, bool)
        if not ok or not math.isfinite(score) or not 0.0 <= score <= 1.0:
            raise AdaptError(
                f"{path}: the label of {str(row.get('key'))[:40]!r} is {score!r:.40}, not a "
                f"number in [0, 1] (the teacher returned no usable verdict); delete the "
                f"line to label it again"
            )


#: What each finished phase left in the run folder: a phase whose output was deleted
#: since is run again on resume, instead of reporting files that are not there.
_PHASE_OUTPUTS = {
    "atoms": ("atoms.json",),
    "labels": ("plan.jsonl", "labels.jsonl"),
    "model": ("model",),
    "verifier": ("verifier",),
    "calibration": ("calibration.json",),
    "card": ("README.md",),
}


def _forget_lost_outputs(folder: Path, state: RunState) -> None:
    """Mark undone every finished phase whose output is gone, and the card; when the
    atoms or labels are gone, every phase after them too (they are built from them)."""
    from .state import PHASES

    lost = [
        phase
        for phase in PHASES
        if state.done(phase)
        and any(not _present(folder / name) for name in _PHASE_OUTPUTS.get(phase, ()))
    ]
    if not lost:
        return
    if {"atoms", "labels"} & set(lost):
        first = min(PHASES.index(p) for p in lost)
        lost = list(PHASES[first:])
    for phase in (*lost, "card"):
        state.phases.pop(phase, None)
    state.save()


def _present(path: Path) -> bool:
    """A non-empty file, or a folder holding something."""
    if path.is_dir():
        return any(path.iterdir())
    return path.is_file() and path.stat().st_size > 0


def _training_queries(
    verdicts: Any, queries_path: Path | None, settings: AdaptSettings
) -> tuple[list[Any], dict[str, Any]]:
    """The bi-encoder's training queries (``settings.train_queries``) and their counts:
    the user's questions first, then composed queries up to ``max_composed`` in all."""
    from .atoms import read_queries
    from .composed import compose_queries, question_queries

    out: list[Any] = []
    stats: dict[str, Any] = {}
    if settings.train_queries in ("questions", "both") and queries_path is not None:
        out, stats = question_queries(
            read_queries(queries_path)[: settings.max_composed],
            verdicts,
            min_size=settings.min_set_size,
            max_size=settings.max_set_size,
        )
        stats = {"from_questions": stats}
    if settings.train_queries in ("composed", "both") and len(out) < settings.max_composed:
        composed, composed_stats = compose_queries(
            verdicts,
            max_queries=settings.max_composed - len(out),
            min_size=settings.min_set_size,
            max_size=settings.max_set_size,
            seed=settings.seed,
        )
        out += composed
        stats.update(composed_stats)
    stats["queries"] = len(out)
    return out, stats


def _result(folder: Path, state: RunState) -> AdaptResult:
    from .calibration import CALIBRATION_FILE

    return AdaptResult(
        folder=folder,
        model=folder / "model",
        verifier=folder / "verifier",
        calibration=folder / CALIBRATION_FILE,
        card=folder / "README.md",
        phases=dict(state.phases),
    )


def _planned_labels(plan: list[dict[str, Any]], rows: Any) -> list[dict[str, Any]]:
    """The labels of the planned pairs, in plan order (one row per key)."""
    by_key: dict[str, dict[str, Any]] = {}
    for row in rows:
        by_key.setdefault(row["key"], row)
    return [by_key[p["key"]] for p in plan if p["key"] in by_key]


def _generated_atoms(
    retriever: Any, teacher: Any, folder: Path, settings: AdaptSettings, progress: bool
) -> dict[str, Any]:
    """Atoms named by the teacher's own generator for sampled pages."""
    from .atoms import atoms_from_pages

    get = getattr(teacher, "_generator", None)
    generator = get() if callable(get) else None
    if generator is None or not callable(getattr(generator, "generate", None)):
        raise AdaptError(
            "without --queries the atoms are generated by the teacher, which must be an "
            "llm: verifier (e.g. --verifier llm:qwen2.5-coder-1.5b); or pass --queries LOG.jsonl"
        )
    encoder = retriever.dense.encoder
    return atoms_from_pages(
        retriever.documents,
        generator,
        lambda names: encoder.encode_queries(names),
        folder / "generated.jsonl",
        sample_pages=settings.sample_pages,
        per_page=settings.categories_per_page,
        merge_threshold=settings.merge_threshold,
        max_chars=min(settings.max_chars, 600),
        seed=settings.seed,
        progress=progress,
    )
