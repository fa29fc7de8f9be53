"""Query decomposition with any text generator, validated against a JSON schema.

Rules cover the connectives people usually write; an LLM copes with the rest ("1912 films
set in England" is an implicit conjunction). Small local models often answer with prose,
code fences or broken JSON, so the answer is extracted, validated against
:data:`~logic_rag.query.algebra.QUERY_JSON_SCHEMA`, retried with the validation error
appended, and if it is still invalid the query is kept whole (an atom) with confidence 0.0
and source ``"fallback"``: retrieval then behaves exactly like plain dense retrieval.

An answer must also be grounded in the query's words
(:func:`~logic_rag.query.grounding.ungrounded_atoms`): every atom needs at least half of
its content words from the query. An ungrounded answer (a copied few-shot example, a
prompt-injected query) is treated like an invalid one: retried with the reason, then the
fallback, so ``auto`` keeps the rules' reading.

Answers are bounded for every backend, not only by the llama.cpp grammar (issue 42 items
3 and 5): an answer over :data:`MAX_ANSWER_CHARS` characters is refused before it is
parsed; one nested more than :data:`MAX_ANSWER_DEPTH` JSON levels, with more than
:data:`~logic_rag.query.rules.MAX_QUERY_ATOMS` atoms or an atom over
:data:`MAX_ATOM_CHARS` characters is invalid. Each is retried with the reason, then falls
back like any invalid answer. :func:`extract_json` is linear in the answer's length. A
query over :data:`~logic_rag.query.rules.MAX_QUERY_CHARS` characters is refused
(:class:`~logic_rag.query.rules.QueryTooLargeError`) before the model is asked.

Successful answers are cached in memory and, optionally, in a JSONL file (one
``{"text", "query", "confidence", "source"}`` object per line, rewritten atomically).
Fallbacks are not cached, so a later run with a better model tries again.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from logic_rag.atomic import atomic_write_jsonl
from logic_rag.query.algebra import QUERY_JSON_SCHEMA, Atom, LogicalQuery, from_json, to_json
from logic_rag.query.decompose import Decomposition, require_text
from logic_rag.query.grounding import DEFAULT_MIN_SHARE, ungrounded_atoms
from logic_rag.query.redundancy import drop_implied_conjuncts
from logic_rag.query.rules import MAX_QUERY_ATOMS, MAX_QUERY_CHARS, check_query_chars

__all__ = [
    "LLMDecomposer",
    "MAX_ANSWER_CHARS",
    "MAX_ANSWER_DEPTH",
    "MAX_ATOM_CHARS",
    "PROMPT_TEMPLATE",
    "QUERY_GBNF",
    "check_answer_shape",
    "extract_json",
]

#: Longest answer the decomposer parses, in characters. It asks for 160 tokens (well under
#: 1,000 characters); the cap leaves room for prose around the JSON while refusing the
#: megabytes a broken or hostile server may send (a 400 KB answer took 54 s to parse).
MAX_ANSWER_CHARS = 16_384
#: Deepest JSON nesting (objects and lists) of an answer: an operator level is two JSON
#: levels, so 16 allows seven nested operators. QUEST's templates need three; a deeper
#: answer would only exhaust the recursion of the validator (300 levels did).
MAX_ANSWER_DEPTH = 16
#: Longest atom of an answer, in characters: :data:`QUERY_GBNF`'s limit, for every backend.
MAX_ATOM_CHARS = 80

PROMPT_TEMPLATE = """\
Decompose the search query into a logical query over simple searchable atoms.
Answer with JSON only, no prose, using this schema:
  atom:      {{"atom": "<a simple category or topic>"}}
  and/or:    {{"op": "and", "args": [<query>, <query>, ...]}}  (or "op": "or")
  not:       {{"op": "not", "args": [<query>]}}
Write every atom as a complete category name (repeat shared nouns).

Query: Orchids of Indonesia and Malaysia but not Thailand
JSON: {{"op": "and", "args": [{{"atom": "Orchids of Indonesia"}}, \
{{"atom": "Orchids of Malaysia"}}, {{"op": "not", "args": [{{"atom": "Orchids of Thailand"}}]}}]}}

Query: Jazz albums or live albums by Miles Davis
JSON: {{"op": "or", "args": [{{"atom": "Jazz albums"}}, {{"atom": "Live albums by Miles Davis"}}]}}

Query: 1985 novels set in Paris
JSON: {{"op": "and", "args": [{{"atom": "1985 novels"}}, {{"atom": "Novels set in Paris"}}]}}

Query: {query}
JSON:"""

#: A llama.cpp grammar for the few-shot JSON format above: an atom, or and/or over 2-4
#: atoms, negated atoms and one level of nested and/or (every QUEST template fits); atoms
#: of at most 80 characters, so an answer always closes within max_tokens. Output it
#: admits is always valid under QUERY_JSON_SCHEMA, so a constrained model cannot produce
#: broken JSON; it can still pick the wrong structure or atoms.
QUERY_GBNF = r"""
root  ::= atom | op
atom  ::= "{\"atom\": \"" text "\"}"
op    ::= "{\"op\": \"" ("and" | "or") "\", \"args\": [" arg (", " arg){1,3} "]}"
arg   ::= atom | neg | inner
inner ::= "{\"op\": \"" ("and" | "or") "\", \"args\": [" atom (", " atom){1,3} "]}"
neg   ::= "{\"op\": \"not\", \"args\": [" atom "]}"
text  ::= [^"\\\x00-\x1f]{1,80}
"""

_RETRY_SUFFIX = """
Your previous answer was invalid: {error}
Previous answer: {answer}
Answer again with JSON only."""

_FENCE_LANG = re.compile(r"(?:json|JSON)?\s*")
# What the brace matcher of _object_spans stops at; everything else is skipped in C.
_STRUCTURAL = re.compile(r'[{}"\\]')
# A brace that can open a JSON object: "{" then a key or the closing brace.
_OPENS_OBJECT = re.compile(r'\{\s*["}]')
_NOT_JSON = object()


def _decode(text: str) -> Any:
    """``json.loads(text)``, or ``_NOT_JSON`` when it is not JSON or nests too deep to decode
    (a RecursionError is a bad answer here, not a crash)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _NOT_JSON


def _fenced_blocks(text: str) -> list[str]:
    """The bodies of ```-fenced blocks (a ``json`` tag dropped), found in one pass."""
    blocks: list[str] = []
    pos = 0
    while True:
        start = text.find("```", pos)
        end = text.find("```", start + 3) if start != -1 else -1
        if end == -1:
            return blocks
        body = text[start + 3 : end]
        blocks.append(body[_FENCE_LANG.match(body).end() :].strip())  # type: ignore[union-attr]
        pos = end + 3


def _object_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every balanced ``{...}`` that starts like a JSON object, in order
    of start, from one pass: braces inside JSON strings (escapes honoured) do not count, and
    outside any candidate quotes and braces are prose."""
    spans: list[tuple[int, int]] = []
    stack: list[tuple[int, bool]] = []  # (position, whether it can open an object)
    in_string = False
    skip = -1
    for m in _STRUCTURAL.finditer(text):
        i = m.start()
        if i < skip:
            continue  # the character after a backslash in a string
        ch = text[i]
        if not stack:
            if ch == "{" and _OPENS_OBJECT.match(text, i):
                stack.append((i, True))
                in_string = False
            continue
        if in_string:
            if ch == "\\":
                skip = i + 2
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            stack.append((i, _OPENS_OBJECT.match(text, i) is not None))
        elif ch == "}":
            start, opens = stack.pop()
            if opens:
                spans.append((start, i + 1))
    spans.sort()
    return spans


def extract_json(answer: str) -> Any:
    """The first JSON object in ``answer``: the whole text, a fenced block, or embedded in prose.

    Raises ``ValueError`` when there is none. Linear in the answer's length: the whole
    text and each fenced block are decoded once, then the balanced ``{...}`` spans one pass
    finds, first to last, until the characters handed to the decoder reach twice the
    answer's length (spans nested thousands deep would otherwise be decoded again and
    again; issue 42 item 3: a 400 KB answer of "{" took 54 s).
    """
    text = answer.strip()
    obj = _decode(text)
    if obj is not _NOT_JSON:
        return obj
    for block in _fenced_blocks(text):
        obj = _decode(block)
        if obj is not _NOT_JSON:
            return obj
    budget = 2 * len(text) + 4096
    for start, end in _object_spans(text):
        budget -= end - start
        if budget < 0:
            break
        obj = _decode(text[start:end])
        if isinstance(obj, dict):
            return obj
    raise ValueError("the answer contains no JSON object")


def check_answer_shape(
    obj: Any,
    *,
    max_depth: int = MAX_ANSWER_DEPTH,
    max_atoms: int = MAX_QUERY_ATOMS,
    max_atom_chars: int = MAX_ATOM_CHARS,
) -> None:
    """``ValueError`` when a decoded answer nests deeper than ``max_depth`` JSON levels, holds
    more than ``max_atoms`` atoms or an atom over ``max_atom_chars`` characters.

    Walked without recursion, before the schema validator (which recurses) sees it.
    """
    atoms = 0
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, dict | list):
            continue
        if depth > max_depth:
            raise ValueError(
                f"the answer is nested more than {max_depth} levels deep; write a flatter query"
            )
        if isinstance(node, dict):
            text = node.get("atom")
            if isinstance(text, str):
                atoms += 1
                if len(text) > max_atom_chars:
                    raise ValueError(
                        f"an atom has {len(text):,} characters, over the cap of "
                        f"{max_atom_chars}; atoms are short category names"
                    )
            stack.extend((value, depth + 1) for value in node.values())
        else:
            stack.extend((value, depth + 1) for value in node)
    if atoms > max_atoms:
        raise ValueError(f"the answer has {atoms:,} atoms, over the cap of {max_atoms}")


class LLMDecomposer:
    """Decompose queries by prompting ``generate(prompt) -> str`` for schema-valid JSON.

    ``retries`` extra attempts are made after an invalid answer, each with the error
    appended to the prompt. Exceptions raised by ``generate`` itself propagate: an
    unreachable model is an operational error the caller must see, not a bad answer.
    ``min_grounding`` is the share of each atom's content words that must come from the
    query (``None`` turns the check off); cached answers are checked too.
    ``max_query_chars`` bounds the query (past it :class:`~logic_rag.query.rules.QueryTooLargeError`
    before the model is asked); ``max_answer_chars``, ``max_depth``, ``max_atoms`` and
    ``max_atom_chars`` bound an answer (past them it is invalid: retried, then the fallback).
    """

    source = "llm"
    #: Set by :meth:`from_generator`: whether decoding is grammar-constrained, and by whom.
    constrained = False
    model: str | None = None

    def __init__(
        self,
        generate: Callable[[str], str],
        *,
        cache_path: str | Path | None = None,
        retries: int = 1,
        prompt_template: str = PROMPT_TEMPLATE,
        min_grounding: float | None = DEFAULT_MIN_SHARE,
        max_query_chars: int | None = MAX_QUERY_CHARS,
        max_answer_chars: int = MAX_ANSWER_CHARS,
        max_depth: int = MAX_ANSWER_DEPTH,
        max_atoms: int = MAX_QUERY_ATOMS,
        max_atom_chars: int = MAX_ATOM_CHARS,
    ) -> None:
        if not callable(generate):
            raise TypeError("generate must be a callable taking a prompt and returning text")
        if retries < 0:
            raise ValueError(f"retries must be >= 0, got {retries}")
        if "{query}" not in prompt_template:
            raise ValueError("prompt_template must contain the placeholder {query}")
        if min_grounding is not None and not 0.0 <= min_grounding <= 1.0:
            raise ValueError(f"min_grounding must be in [0, 1] or None, got {min_grounding}")
        self.min_grounding = min_grounding
        caps = {
            "max_answer_chars": max_answer_chars,
            "max_depth": max_depth,
            "max_atoms": max_atoms,
            "max_atom_chars": max_atom_chars,
        }
        if max_query_chars is not None:
            caps["max_query_chars"] = max_query_chars
        for name, value in caps.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        self.max_query_chars = max_query_chars
        self.max_answer_chars = max_answer_chars
        self.max_depth = max_depth
        self.max_atoms = max_atoms
        self.max_atom_chars = max_atom_chars
        import jsonschema  # lazy: only this decomposer needs it

        self._validator = jsonschema.Draft202012Validator(QUERY_JSON_SCHEMA)
        self.generate = generate
        self.retries = retries
        self.prompt_template = prompt_template
        self.cache_path = Path(cache_path) if cache_path is not None else None
        self._cache: dict[str, Decomposition] = {}
        self._lock = threading.Lock()
        if self.cache_path is not None and self.cache_path.exists():
            self._load_cache(self.cache_path)

    def __repr__(self) -> str:
        return f"LLMDecomposer(retries={self.retries}, cache_path={self.cache_path!r})"

    @classmethod
    def from_generator(
        cls,
        generator: Any,
        *,
        constrained: bool = True,
        max_tokens: int = 160,
        **options: Any,
    ) -> LLMDecomposer:
        """An LLM decomposer over a logic-rag generator (``make_generator(spec)``).

        With ``constrained`` and a backend that takes a ``grammar`` (llama.cpp), decoding
        follows :data:`QUERY_GBNF`, so every answer is schema-valid JSON; other backends
        write free text, which is validated and retried as usual. Greedy decoding.
        """
        import inspect

        try:
            takes_grammar = "grammar" in inspect.signature(generator.generate).parameters
        except (TypeError, ValueError):
            takes_grammar = False
        extra = {"grammar": QUERY_GBNF} if constrained and takes_grammar else {}

        def generate(prompt: str) -> str:
            return generator.generate([prompt], max_tokens=max_tokens, temperature=0.0, **extra)[0]

        decomposer = cls(generate, **options)
        decomposer.constrained = bool(extra)
        decomposer.model = getattr(generator, "name", repr(generator))
        return decomposer

    # ----------------------------------------------------------------------------- public

    def decompose(self, text: str) -> Decomposition:
        """Decompose ``text``; empty or whitespace-only text raises ``ValueError``.

        The model's reading is cached as it answered; what is returned has conjuncts that
        a sibling implies removed (:func:`~logic_rag.query.redundancy.drop_implied_conjuncts`:
        small models turn "Dave Eggers books" into ``Dave Eggers books AND books``).
        """
        key = _cache_key(check_query_chars(require_text(text), self.max_query_chars))
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None and not self._ungrounded(cached.query, key):
            return _simplified(cached)
        result = self._ask(text.strip())
        if result.source != "fallback":
            with self._lock:
                self._cache[key] = result
                self._save_cache()
        return _simplified(result)

    # ---------------------------------------------------------------------------- helpers

    def _ask(self, text: str) -> Decomposition:
        prompt = self.prompt_template.format(query=text)
        for attempt in range(self.retries + 1):
            answer = self.generate(prompt)
            if not isinstance(answer, str):
                raise TypeError(f"generate() must return str, got {type(answer).__name__}")
            try:
                query = self._parse(answer)
                missing = self._ungrounded(query, text)
                if missing:
                    raise ValueError(
                        "atoms not taken from the query's words: "
                        + ", ".join(repr(m) for m in missing[:3])
                    )
            except ValueError as exc:
                snippet = answer.strip().replace("\n", " ")[:500]
                prompt = self.prompt_template.format(query=text) + _RETRY_SUFFIX.format(
                    error=exc, answer=snippet
                )
                continue
            confidence = 0.9 if attempt == 0 else 0.7
            return Decomposition(query, confidence, self.source)
        return Decomposition(Atom(text), 0.0, "fallback")

    def _ungrounded(self, query: LogicalQuery, text: str) -> list[str]:
        if self.min_grounding is None:
            return []
        return ungrounded_atoms(query, text, self.min_grounding)

    def _parse(self, answer: str) -> LogicalQuery:
        if len(answer) > self.max_answer_chars:
            raise ValueError(
                f"the answer has {len(answer):,} characters, over the cap of "
                f"{self.max_answer_chars:,}; answer with the JSON only"
            )
        obj = extract_json(answer)
        self._check_shape(obj)
        errors = sorted(self._validator.iter_errors(obj), key=lambda e: list(e.path))
        if errors:
            err = errors[0]
            where = "$" + "".join(f"[{p!r}]" for p in err.path)
            raise ValueError(f"JSON does not match the schema at {where}: {err.message}")
        return from_json(obj)

    def _check_shape(self, obj: Any) -> None:
        check_answer_shape(
            obj,
            max_depth=self.max_depth,
            max_atoms=self.max_atoms,
            max_atom_chars=self.max_atom_chars,
        )

    def _load_cache(self, path: Path) -> None:
        with path.open(encoding="utf-8") as handle:
            for lineno, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    if not isinstance(row, dict):
                        raise ValueError("expected a JSON object")
                    text = row["text"]
                    if not isinstance(text, str) or not text.strip():
                        raise ValueError("'text' must be a non-empty string")
                    self._check_shape(row["query"])
                    self._validator.validate(row["query"])
                    entry = Decomposition(
                        from_json(row["query"]), float(row["confidence"]), str(row["source"])
                    )
                except Exception as exc:  # noqa: BLE001 - any corrupt line is skipped
                    warnings.warn(
                        f"{path}:{lineno}: skipping corrupt decomposition cache line"
                        f" ({type(exc).__name__}: {exc})",
                        RuntimeWarning,
                        stacklevel=3,
                    )
                    continue
                self._cache[_cache_key(text)] = entry

    def _save_cache(self) -> None:
        if self.cache_path is None:
            return
        rows = (
            {
                "text": key,
                "query": to_json(d.query),
                "confidence": d.confidence,
                "source": d.source,
            }
            for key, d in self._cache.items()
        )
        atomic_write_jsonl(self.cache_path, rows)


def _simplified(result: Decomposition) -> Decomposition:
    return dataclasses.replace(result, query=drop_implied_conjuncts(result.query))


def _cache_key(text: str) -> str:
    return " ".join(text.split())
