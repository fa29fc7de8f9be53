"""Settings of an ``adapt`` run and the ``state.json`` that makes every phase resumable.

Why a state file: labelling costs hours of LLM time on a CPU, so a run is a sequence of
phases (atoms -> labels -> composed -> model -> verifier -> calibration -> card), each
writing its products atomically and then recording itself as finished. A rerun skips the
finished phases and resumes the one that was interrupted. The state also holds the run's
fingerprint (the index manifest's hash, the queries file's hash, the teacher and the
settings): an output folder that holds another run is refused with what changed, so a
resumed run can never mix labels of two corpora or two teachers.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from logic_rag.atomic import atomic_write_json
from logic_rag.errors import LogicRagError

__all__ = ["AdaptError", "AdaptSettings", "RunState", "PHASES", "STATE_FILE"]

STATE_FILE = "state.json"

PHASES = ("atoms", "labels", "composed", "model", "verifier", "calibration", "card")
"""The phases in the order they run; each has its own progress bar and timing."""


class AdaptError(LogicRagError, ValueError):
    """Bad settings, a folder of another run, or inputs that give nothing to train on."""


TRAIN_QUERIES = ("composed", "questions", "both")
"""What the bi-encoder trains on (see :class:`AdaptSettings`)."""


@dataclass
class AdaptSettings:
    """What an ``adapt`` run does; every field is part of the run's fingerprint.

    ``max_pairs`` (default 4,000): the cost bound. Qwen2.5-1.5B on llama.cpp judges a pair
    in ~1.7 s on 2 CPU cores, so the default is about two hours there (a few seconds on a
    GPU with vLLM). Each atom's candidates are its own ``top_k`` nearest pages plus
    ``random_pages`` random pages (so not every negative is a hard one); atoms that come
    from one question (or one page) share their candidates, so the set algebra over them
    is exact. A pair is a member when the teacher's P(yes) >= ``yes_threshold``.

    Without queries, ``sample_pages`` pages are shown to the teacher, which names
    ``categories_per_page`` short categories for each; names whose embeddings have cosine
    >= ``merge_threshold`` are merged into one atom.

    Training queries (``train_queries``): ``composed`` (atoms combined by set algebra),
    ``questions`` (the user's own questions, each with the set its logic gives over the
    verdicts; needs queries) or ``both`` (the questions when there are any, then composed
    queries). ``hard_negatives`` adds, for each training query, the judged pages outside its
    set as explicit negatives (the teacher's "no"), beside the batch's other positives.
    The defaults (``both``, hard negatives, ``lr`` 1e-5) were chosen on an inner split of
    the QUEST-attr train questions (docs/experiments/2026-11-28-llm-teacher.md): training
    on composed sets alone at 5e-5 cost 0.09-0.14 R@20 on dev.

    Training: ``loss`` (``supcon`` or ``logicol``) on those sets via the existing
    recipe, ``base`` (default: the index's own model), ``query_only`` to keep the index
    valid; the cross-encoder verifier starts from ``verifier_base``.
    """

    max_pairs: int = 4000
    top_k: int = 16
    random_pages: int = 4
    yes_threshold: float = 0.5
    label_batch: int = 16
    max_chars: int = 1500
    sample_pages: int = 200
    categories_per_page: int = 3
    merge_threshold: float = 0.9
    max_composed: int = 2000
    min_set_size: int = 1
    max_set_size: int = 200
    train_queries: str = "both"
    hard_negatives: bool = True
    loss: str = "supcon"
    base: str | None = None
    query_only: bool = False
    epochs: float = 1.0
    max_steps: int = -1
    batch_size: int = 32
    lr: float = 1e-5
    max_seq_length: int = 128
    verifier_base: str = "minilm"
    verifier_epochs: float = 1.0
    verifier_max_steps: int = -1
    verifier_batch_size: int = 16
    seed: int = 0

    def validate(self) -> None:
        """Raise :class:`AdaptError` naming the setting that is out of range."""
        for name in (
            "max_pairs",
            "label_batch",
            "sample_pages",
            "categories_per_page",
            "max_composed",
            "min_set_size",
            "batch_size",
            "verifier_batch_size",
            "max_seq_length",
        ):
            if getattr(self, name) < 1:
                raise AdaptError(f"{name.replace('_', '-')} must be >= 1")
        if self.top_k < 1 or self.random_pages < 0:
            raise AdaptError("top-k must be >= 1 and random-pages >= 0")
        if not 0.0 < self.yes_threshold < 1.0:
            raise AdaptError("yes-threshold must lie strictly between 0 and 1")
        if not 0.0 < self.merge_threshold <= 1.0:
            raise AdaptError("merge-threshold must lie in (0, 1]")
        if self.max_set_size < self.min_set_size:
            raise AdaptError("max-set-size must be >= min-set-size")
        if self.max_chars < 50:
            raise AdaptError("max-chars must be >= 50")
        if self.train_queries not in TRAIN_QUERIES:
            raise AdaptError(
                f"train-queries {self.train_queries!r}: choose one of {', '.join(TRAIN_QUERIES)}"
            )
        if self.loss not in ("supcon", "logicol"):
            raise AdaptError(f"loss {self.loss!r}: choose supcon or logicol")
        if (self.epochs <= 0 and self.max_steps <= 0) or (
            self.verifier_epochs <= 0 and self.verifier_max_steps <= 0
        ):
            raise AdaptError("set epochs > 0 or max-steps > 0 (for the model and the verifier)")
        if self.lr <= 0:
            raise AdaptError("lr must be > 0")


class RunState:
    """``DIR/state.json``: the run's fingerprint and its finished phases (with seconds).

    Every update rewrites the whole file atomically, so a kill leaves the previous state.
    """

    def __init__(self, folder: Path, fingerprint: dict[str, Any]) -> None:
        self.folder = folder
        self.path = folder / STATE_FILE
        self.fingerprint = fingerprint
        self.phases: dict[str, dict[str, Any]] = {}
        #: Seconds already spent in unfinished phases by earlier, interrupted sessions.
        self.spent: dict[str, float] = {}

    @classmethod
    def open(cls, folder: str | Path, fingerprint: dict[str, Any]) -> RunState:
        """The state of ``folder``: new, or the earlier run's if its fingerprint matches."""
        folder = Path(folder)
        state = cls(folder, fingerprint)
        if state.path.is_file():
            try:
                old = json.loads(state.path.read_text(encoding="utf-8"))
                old_fp, phases = old["fingerprint"], old["phases"]
                spent = {str(k): float(v) for k, v in (old.get("spent") or {}).items()}
                if not isinstance(phases, dict):
                    raise TypeError("phases is not an object")
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise AdaptError(
                    f"{state.path} is unreadable ({exc}); use another --out or delete the folder"
                ) from None
            changed = _differences(_canonical(old_fp), fingerprint)
            if changed:
                raise AdaptError(
                    f"{folder} holds another adapt run ({'; '.join(changed)} changed); use "
                    f"another --out, or delete {folder} to start over"
                )
            state.phases = phases
            state.spent = spent
        elif folder.exists() and any(folder.iterdir()):
            raise AdaptError(
                f"{folder} is not empty and holds no {STATE_FILE}; pass an empty or new --out"
            )
        folder.mkdir(parents=True, exist_ok=True)
        state.save()
        return state

    def done(self, phase: str) -> bool:
        return phase in self.phases

    def checkpoint(self, phase: str, seconds: float) -> None:
        """Record ``seconds`` spent so far in an unfinished ``phase`` (all sessions)."""
        self.spent[phase] = round(seconds, 2)
        self.save()

    def finish(self, phase: str, seconds: float, **facts: Any) -> None:
        """Record ``phase`` as finished after ``seconds`` of work, with facts for the card."""
        self.spent.pop(phase, None)
        self.phases[phase] = {
            "seconds": round(seconds, 2),
            "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **facts,
        }
        self.save()

    def save(self) -> None:
        atomic_write_json(
            self.path, {"fingerprint": self.fingerprint, "phases": self.phases, "spent": self.spent}
        )


#: Settings that change how fast a run goes, not what it produces: a run may resume with
#: other values (e.g. a bigger labelling batch once it moves to a GPU).
FREE_TO_CHANGE = frozenset({"label_batch"})


def settings_dict(settings: AdaptSettings) -> dict[str, Any]:
    """The settings that are part of the fingerprint (all but :data:`FREE_TO_CHANGE`)."""
    return {k: v for k, v in asdict(settings).items() if k not in FREE_TO_CHANGE}


def _canonical(fingerprint: Any) -> Any:
    """A state written before the teacher's spec was made canonical names the model by its
    deprecated alias (``llm:qwen2.5-1.5b``); read it as today's key, so that run resumes."""
    if not isinstance(fingerprint, dict):
        return fingerprint
    from logic_rag.models import canonical_spec

    return {
        key: canonical_spec(value)
        if key in ("verifier", "teacher") and isinstance(value, str)
        else value
        for key, value in fingerprint.items()
    }


def _differences(old: Any, new: dict[str, Any]) -> list[str]:
    if not isinstance(old, dict):
        return ["the fingerprint"]
    changed = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            changed += [
                f"{key}.{k} ({a.get(k)!r} -> {b.get(k)!r})"
                for k in sorted(set(a) | set(b))
                if a.get(k) != b.get(k)
            ]
        else:
            changed.append(f"{key}")
    return changed
