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
    "ALCE_PROMPT_FILES",
    "load_alce_prompt",
    "build_alce_prompt",
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


# --------------------------------------------------------------------------- ALCE
#: ALCE's prompt files (``prompts/<dataset>_default.json`` in princeton-nlp/ALCE), under the
#: shared data folder: instruction, demo template, document template and demos.
ALCE_PROMPT_FILES: dict[str, str] = {
    "asqa": "rag/alce/asqa_default.json",
    "eli5": "rag/alce/eli5_default.json",
    "qampari": "rag/alce/qampari_default.json",
}


def load_alce_prompt(dataset: str, path: str | None = None) -> dict[str, Any]:
    """ALCE's prompt file for ``dataset`` (``asqa``, ``eli5``, ``qampari`` or ``alce-*``).

    Raises ``FileNotFoundError`` naming the file when it is absent, and ``ValueError`` when
    the dataset has no ALCE prompt or the file lacks ALCE's fields.
    """
    import json
    from pathlib import Path

    from logic_rag.paths import shared_data_dir

    base = dataset.lower().removeprefix("alce-")
    if path is None:
        if base not in ALCE_PROMPT_FILES:
            raise ValueError(
                f"ALCE has no prompt for {dataset!r}; use --prompt default "
                f"(ALCE prompts: {', '.join(ALCE_PROMPT_FILES)})"
            )
        file = shared_data_dir() / ALCE_PROMPT_FILES[base]
    else:
        file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(
            f"{file}: no such file (ALCE's prompts/{base}_default.json; set LOGIC_RAG_DATA)"
        )
    data = json.loads(file.read_text(encoding="utf-8"))
    missing = [
        k
        for k in ("instruction", "demo_sep", "demo_prompt", "doc_prompt", "demos")
        if k not in data
    ]
    if missing:
        raise ValueError(f"{file}: not an ALCE prompt file (missing {', '.join(missing)})")
    return data


def _alce_docs(doc_prompt: str, passages: Sequence[Any], max_chars: int) -> str:
    parts = []
    for i, passage in enumerate(passages, start=1):
        text = " ".join(_field(passage, "text").split())
        if len(text) > max_chars:
            text = text[:max_chars].rsplit(" ", 1)[0] + " ..."
        parts.append(
            doc_prompt.replace("{ID}", str(i))
            .replace("{T}", _field(passage, "title"))
            .replace("{P}", text)
        )
    return "".join(parts)


def _alce_item(
    spec: dict[str, Any],
    question: str,
    passages: Sequence[Any],
    answer: str | None,
    max_chars: int,
) -> str:
    """One ALCE block: instruction, question, documents, then the answer (demos) or nothing."""
    prompt = spec["demo_prompt"].replace("{INST}", spec["instruction"]).replace("{Q}", question)
    if passages:
        prompt = prompt.replace("{D}", _alce_docs(spec["doc_prompt"], passages, max_chars))
    else:
        prompt = prompt.replace("{D}\n", "")
    prompt = prompt.replace("{A}", "").rstrip()
    if answer is not None:
        prompt += " " + answer.strip()
    return prompt


def build_alce_prompt(
    question: str,
    passages: Sequence[Any],
    spec: dict[str, Any],
    *,
    shots: int = 1,
    demo_docs: int = 2,
    max_chars: int = DEFAULT_PASSAGE_CHARS,
) -> str:
    """ALCE's generation prompt: ``shots`` demos, then the question with its passages.

    Built the way ALCE's ``make_demo`` builds it (instruction, ``Question:``, ``Document
    [n](Title: ...): ...`` lines, ``Answer:``; demos joined by ``demo_sep``). The demos are
    the file's first ``shots``, each with its first ``demo_docs`` documents: ALCE's own
    setting for short contexts (``--fewer_doc_in_demo --ndoc_in_demo``), which keeps a
    1.5B model's prompt near 900 tokens. The demo answers keep their citations, so the
    model learns to cite ``[n]``.
    """
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question must be a non-empty string")
    if shots < 0 or demo_docs < 0:
        raise ValueError("shots and demo_docs must be non-negative")
    demos = list(spec["demos"])[:shots]
    if len(demos) < shots:
        raise ValueError(f"the ALCE prompt file has {len(spec['demos'])} demos, not {shots}")
    blocks = [
        _alce_item(spec, d["question"], d.get("docs", [])[:demo_docs], d["answer"], max_chars)
        for d in demos
    ]
    blocks.append(_alce_item(spec, question.strip(), passages, None, max_chars))
    return spec["demo_sep"].join(blocks)
