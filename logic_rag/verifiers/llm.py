"""LLM verifier: ask a generator "is this page a <constraint>?" and read P(Yes).

Any generator that implements ``choice_logprobs`` (see
:class:`logic_rag.generators.base.ScoresChoices`: the llama.cpp, transformers and vLLM
backends and OpenAI-compatible servers with ``logprobs``) can verify constraints: the
prompt shows the page, then asks the yes/no question, and the verifier reads the
log-probabilities of "Yes" and "No" as the answer's first token. No text is generated, so
nothing needs parsing. The page comes first so that a runtime with prefix caching
(llama.cpp, vLLM) reuses it across a query's atoms; pairs are sent grouped by page.

Cost: one prompt of ~100-300 tokens per (atom, page) pair. On 2 CPU cores that is about a
second per pair with Qwen2.5-1.5B in llama.cpp, so on a CPU the LLM re-ranks only the
best candidates of a cheaper ranking (a cascade: ``… >> Combine >> Cutoff(40) >>
Verify(LLMVerifier()) >> SoftLogic() >> Combine``, what ``VerifySettings(verifier_top=40)``
builds; ~1 min per QUEST query); on a GPU with vLLM it checks hundreds of pairs per second.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from logic_rag.verifiers.base import PairVerifier

__all__ = ["LLMVerifier", "DEFAULT_PROMPT", "DEFAULT_SYSTEM"]

DEFAULT_SYSTEM = (
    "You check whether a Wikipedia page belongs to a category. Answer with Yes or No only."
)
DEFAULT_PROMPT = (
    'Page:\n{page}\n\nQuestion: Is the subject of this page one of the "{atom}"? Answer Yes or No.'
)


@dataclass(frozen=True, eq=True)
class LLMVerifier(PairVerifier):
    """P(page satisfies atom) = P(Yes) / (P(Yes) + P(No)) from a generator's logprobs.

    Attributes:
        generator: a generator spec (``qwen2.5-coder-1.5b``, ``llamacpp:…``, ``vllm:…``,
            ``openai:http://host:8000/v1#model``), a generator object, or the LLM a
            pipeline already holds: a LlamaIndex ``LLM`` or a LangChain chat model / LLM
            (wrapped in :class:`~logic_rag.generators.framework.FrameworkLLM`: logprobs
            where it returns them, else a strict one-word Yes / No).
        prompt: the user message; ``{page}`` and ``{atom}`` are filled in.
        system: the system message.
        max_chars: pages are cut to this many characters (prompt length bounds cost).
        evidence_sentences: a page longer than ``max_chars`` is shown as its title and
            the sentences most similar to the atom (from the index's sentence vectors,
            at most this many, in page order, still within ``max_chars``) instead of its
            first ``max_chars`` characters; 0 always cuts from the start. A page that
            fits is shown whole, so every atom of it shares one cached prompt prefix.
        generator_options: constructor options for a generator given as a spec, e.g.
            ``{"tensor_parallel_size": 2}`` for ``vllm:`` (stored as sorted pairs so the
            verifier stays hashable; left out of :meth:`fingerprint`: they change speed,
            not scores).
    """

    generator: Any = "qwen2.5-coder-1.5b"
    prompt: str = DEFAULT_PROMPT
    system: str | None = DEFAULT_SYSTEM
    max_chars: int = 1500
    evidence_sentences: int = 4
    name: str = "llm"
    generator_options: Any = ()
    _loaded: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if "{page}" not in self.prompt or "{atom}" not in self.prompt:
            raise ValueError("the prompt needs both {page} and {atom} placeholders")
        if self.max_chars < 50:
            raise ValueError("max_chars must be >= 50")
        options = self.generator_options
        pairs = tuple(sorted((options.items() if isinstance(options, dict) else options) or ()))
        object.__setattr__(self, "generator_options", pairs)
        if not isinstance(self.generator, str):
            from logic_rag.generators.framework import as_choice_scorer

            try:  # a framework LLM is wrapped; anything else is checked when it loads
                object.__setattr__(self, "generator", as_choice_scorer(self.generator))
            except TypeError:
                pass

    def _generator(self) -> Any:
        if "generator" not in self._loaded:
            gen = self.generator
            if isinstance(gen, str):
                from logic_rag.generators.factory import make_generator

                gen = make_generator(gen, **dict(self.generator_options))
            if not callable(getattr(gen, "choice_logprobs", None)):
                raise TypeError(
                    f"generator {getattr(gen, 'name', gen)!r} cannot return log-probabilities "
                    f"(no choice_logprobs); use the llama.cpp, transformers or vLLM backend"
                )
            self._loaded["generator"] = gen
        return self._loaded["generator"]

    def warm_up(self) -> None:
        self._generator()

    def stats(self) -> dict[str, int]:
        """Pairs scored by the model (cache misses), the answers among them that named
        neither Yes nor No (``unusable``: NaN, never a verdict) and the generator's
        counters (prompt tokens where it counts them)."""
        out = {
            "pairs": int(self._loaded.get("pairs", 0)),
            "unusable": int(self._loaded.get("unusable", 0)),
        }
        generator = self._loaded.get("generator")
        counters = getattr(generator, "counters", None)
        if isinstance(counters, dict):
            out.update({k: int(v) for k, v in counters.items()})
        return out

    def shown_page(self, atom: str, row: int, ctx: Any) -> str:
        """The text the model sees for ``row``: the whole page, or its evidence for ``atom``."""
        resources = ctx.resources
        doc = resources.documents[row]
        content = doc.content
        passages = resources.passages
        if len(content) <= self.max_chars or not self.evidence_sentences or passages is None:
            return content
        from logic_rag.index.passages import split_sentences

        sentences = split_sentences(doc.text or doc.title)
        start, end = int(passages.offsets[row]), int(passages.offsets[row + 1])
        if len(sentences) != end - start:
            return content  # an index written by another sentence splitter
        vector = ctx.vectors([atom])[0].astype(np.float32)
        sims = passages.decode(start, end) @ vector
        chosen: list[int] = []
        budget = self.max_chars - len(doc.title) - 2
        for i in np.argsort(-sims, kind="stable")[: self.evidence_sentences].tolist():
            if len(sentences[i]) + 1 <= budget:
                chosen.append(i)
                budget -= len(sentences[i]) + 1
        if not chosen:
            return content
        body = " ".join(sentences[i] for i in sorted(chosen))
        return f"{doc.title}\n{body}" if doc.title else body

    def check(self, requests: Sequence[Any], ctx: Any) -> list[Any]:
        pairs: list[tuple[str, str]] = []
        for request in requests:
            for atom in request.atoms:
                for row in request.rows.tolist():
                    pairs.append((atom, self.shown_page(atom, row, ctx)))
        raw = self.cached_scores(pairs) if pairs else np.zeros(0)
        return self.blocks(raw, requests)

    def fingerprint(self) -> str:
        from logic_rag.models import canonical_spec

        name = self.generator if isinstance(self.generator, str) else self.generator.name
        name = canonical_spec(str(name))  # an alias and its model share the cache
        digest = hashlib.sha1(f"{self.system}\x00{self.prompt}\x00{self.max_chars}".encode())
        # evidence_sentences changes which text is shown, and the cache keys hash that text.
        return f"llm:{name}:{digest.hexdigest()[:16]}"

    def render(self, atom: str, page: str) -> str:
        return self.prompt.format(page=page[: self.max_chars].strip(), atom=atom.strip())

    def score_texts(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        # Page-major order so consecutive prompts share the longest prefix (KV reuse).
        order = sorted(range(len(pairs)), key=lambda i: (pairs[i][1], pairs[i][0]))
        self._loaded["pairs"] = self._loaded.get("pairs", 0) + len(pairs)
        prompts = [self.render(*pairs[i]) for i in order]
        generator = self._generator()
        # Chunks in the same page-major order (the KV reuse holds across them), so that a
        # long batch shows progress; a handful of pairs shows no bar.
        chunk = 32
        from tqdm.auto import tqdm

        parts = []
        with tqdm(
            total=len(prompts),
            desc="LLM checks",
            unit="pair",
            leave=False,
            disable=len(prompts) <= chunk,
        ) as bar:
            for start in range(0, len(prompts), chunk):
                batch = prompts[start : start + chunk]
                parts.append(
                    np.asarray(
                        generator.choice_logprobs(batch, ("Yes", "No"), system=self.system),
                        dtype=np.float64,
                    ).reshape(len(batch), 2)
                )
                bar.update(len(batch))
        logprobs = np.concatenate(parts) if parts else np.zeros((0, 2))
        # An answer that named neither choice is a NaN row; Yes or No at -inf (the one-word
        # path) is a decided answer. NaN log-odds mark an unusable answer: not a check.
        yes, no = logprobs[:, 0], logprobs[:, 1]
        unusable = np.isnan(yes) | np.isnan(no) | (np.isneginf(yes) & np.isneginf(no))
        with np.errstate(invalid="ignore"):
            odds = np.where(unusable, np.nan, yes - no)  # log-odds of Yes against No
        self._loaded["unusable"] = self._loaded.get("unusable", 0) + int(unusable.sum())
        raw = np.empty(len(pairs))
        raw[order] = odds
        return raw
