"""Generation prompts for retrieval-augmented answering, one variant per dataset.

The prompt numbers the retrieved passages, asks for an answer grounded in them and says
how long the answer should be: ELI5 wants a short plain-language explanation, ASQA a
paragraph that covers every reading of an ambiguous question, QUEST a list of entities
and NQ a short factoid. Passages are clipped so that a small generator's context window
holds the whole prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "SYSTEM_PROMPT",
    "INSTRUCTIONS",
    "DEFAULT_PASSAGE_CHARS",
    "format_passages",
    "build_rag_prompt",
    "instruction_for",
]

SYSTEM_PROMPT = (
    "You answer questions using the passages you are given. Rely on the passages, do not "
    "invent facts, and answer in plain English without repeating the question."
)

_GENERIC = "Answer the question concisely, using the passages above."

#: Per-dataset task instructions (ALCE names map to their base dataset).
INSTRUCTIONS: dict[str, str] = {
    "eli5": (
        "Explain the answer simply, as you would to a curious non-expert, in three to five "
        "sentences. Use the passages above where they help."
    ),
    "asqa": (
        "The question may be ambiguous. Write one short paragraph that answers every "
        "plausible reading of it, using facts from the passages above."
    ),
    "quest": (
        "List the entities that satisfy every condition in the question, one per line, "
        "using only the passages above. Respect words such as 'and', 'or' and 'not'."
    ),
    "nq": (
        "Answer with a short phrase (a name, date or number) taken from the passages above, "
        "then stop."
    ),
    "qampari": (
        "Answer with a comma-separated list of every entity that answers the question, "
        "using the passages above."
    ),
}

#: Characters kept from each passage (about 100 tokens), so that five passages fit easily.
DEFAULT_PASSAGE_CHARS = 600


def instruction_for(dataset: str) -> str:
    """The task instruction for ``dataset`` (``alce-asqa`` uses ASQA's, and so on)."""
    base = dataset.lower().removeprefix("alce-")
    return INSTRUCTIONS.get(base, _GENERIC)


def _field(passage: Any, name: str) -> str:
    value = passage.get(name, "") if isinstance(passage, dict) else getattr(passage, name, "")
    return str(value or "").strip()


def format_passages(passages: Sequence[Any], max_chars: int = DEFAULT_PASSAGE_CHARS) -> str:
    """Numbered passages ``[1] Title: text``; accepts hits, documents or dicts."""
    lines = []
    for i, passage in enumerate(passages, start=1):
        title, text = _field(passage, "title"), _field(passage, "text")
        if len(text) > max_chars:
            text = text[:max_chars].rsplit(" ", 1)[0] + " ..."
        head = f"[{i}] {title}: " if title else f"[{i}] "
        lines.append(head + " ".join(text.split()))
    return "\n".join(lines)


def build_rag_prompt(
    question: str,
    passages: Sequence[Any],
    dataset: str = "generic",
    *,
    max_chars: int = DEFAULT_PASSAGE_CHARS,
) -> str:
    """The user prompt: passages, question, then the dataset's instruction."""
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question must be a non-empty string")
    body = format_passages(passages, max_chars) if passages else "(no passages were retrieved)"
    return (
        f"Passages:\n{body}\n\nQuestion: {question.strip()}\n\n{instruction_for(dataset)}\nAnswer:"
    )
