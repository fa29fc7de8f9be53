"""Distributed document encoding with Ray Data.

Why: embedding a corpus is the slow part of ``logic-rag index`` and it is embarrassingly
parallel. With Ray Data the corpus streams through a pool of encoder actors (one per GPU,
or one per CPU slot), each of which loads the dense model once; the driver only scatters
the returned vectors back into corpus order. The single-process path
(:meth:`DenseEncoder.encode_documents`) stays the default; this module is used only when
asked for (``logic-rag index --ray [ADDRESS]`` or ``LogicRetriever.build(...,
encode_with=RayEncoding(...))``).

Memory: the corpus goes to Ray in windows of ``window_rows`` texts (one copy of one window
in the object store at a time); each window's vectors come back in bounded batches and are
yielded as soon as the window is complete, so a caller that writes them elsewhere (a vector
database) never holds more than one window of vectors. :func:`encode_corpus` is that
streaming interface; :meth:`RayEncoding.encode` collects it into one array.

Every row carries its corpus position, and vectors are scattered back by that position, so
the result does not depend on the order in which Ray returns blocks.

Ray is imported only inside these functions: ``import logic_rag`` and ``logic-rag --help``
stay fast, and a missing Ray raises an error that names the ``ray`` extra.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from logic_rag.encoders.dense import DenseEncoder, check_unicode
from logic_rag.errors import LogicRagError

if TYPE_CHECKING:
    from types import ModuleType

__all__ = [
    "EncoderSpec",
    "RayEncoding",
    "RayNotInstalledError",
    "encode_corpus",
    "import_ray",
]

#: Offline switches every actor sets before loading a model (a remote node may not have
#: the driver's environment; logic-rag never downloads weights).
_OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


class RayNotInstalledError(LogicRagError, ModuleNotFoundError):
    """Ray Data is needed but not installed."""


def import_ray() -> ModuleType:
    """``ray`` with ``ray.data`` loaded, or :class:`RayNotInstalledError` naming the extra."""
    try:
        import ray
        import ray.data  # noqa: F401 - the sub-package is what we use
    except ImportError as exc:
        raise RayNotInstalledError(
            f"distributed encoding needs Ray Data ({exc}); install it with: "
            f"pip install 'logic-rag[ray]'"
        ) from None
    return ray


@dataclass(frozen=True)
class EncoderSpec:
    """What an actor needs to rebuild the driver's :class:`DenseEncoder`.

    Why not ship the encoder itself: a loaded encoder carries its torch model, which Ray
    would serialise to every actor; the spec is a few strings, and each actor loads the
    weights from its own disk (a registry name resolves on every node, a folder path
    must exist on every node).
    """

    model: str
    batch_size: int
    normalize: bool
    query_prompt: str | None
    document_prompt: str | None
    max_seq_length: int | None
    dtype: str
    trust_remote_code: bool

    @classmethod
    def from_encoder(cls, encoder: DenseEncoder) -> EncoderSpec:
        """The spec of ``encoder`` (its model is not loaded)."""
        return cls(
            model=encoder.resolved.name,
            batch_size=encoder.batch_size,
            normalize=bool(encoder.normalize),
            query_prompt=encoder._query_prompt,
            document_prompt=encoder._document_prompt,
            max_seq_length=encoder._max_seq_length,
            dtype=encoder.dtype,
            trust_remote_code=encoder._trust_remote_code,
        )

    def make(self, device: str | None = None) -> DenseEncoder:
        """A new encoder with these settings on ``device``."""
        return DenseEncoder(
            self.model,
            device=device,
            batch_size=self.batch_size,
            normalize=self.normalize,
            query_prompt=self.query_prompt,
            document_prompt=self.document_prompt,
            trust_remote_code=self.trust_remote_code,
            max_seq_length=self.max_seq_length,
            dtype=self.dtype,  # type: ignore[arg-type]
        )


class _EncodeActor:
    """A Ray Data actor: loads the encoder once, then embeds batches of ``text`` rows.

    Module level so that Ray workers import it by name (``logic-rag`` must be installed
    on every node).
    """

    def __init__(self, spec: EncoderSpec, use_gpu: bool, threads: int | None) -> None:
        for key, value in _OFFLINE_ENV.items():
            os.environ.setdefault(key, value)
        import torch

        if threads:
            # Without this every CPU actor starts one torch thread per core of the node
            # and the actors fight over the cores.
            torch.set_num_threads(threads)
        self.encoder = spec.make("cuda" if use_gpu else "cpu")
        self.encoder.model  # noqa: B018 - load the weights once, at actor start

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        texts = [str(t) for t in batch["text"]]
        vectors = self.encoder.encode_documents(texts, show_progress_bar=False)
        return {"row": np.asarray(batch["row"], dtype=np.int64), "vector": vectors}


def _cluster_gpus(ray: Any) -> int:
    return int(ray.cluster_resources().get("GPU", 0))


def _default_actors(ray: Any, cpus_per_actor: float) -> int:
    gpus = _cluster_gpus(ray)
    if gpus:
        return gpus
    cpus = float(ray.cluster_resources().get("CPU", 1))
    return max(1, int(cpus // max(cpus_per_actor, 1e-9)))


@dataclass
class RayEncoding:
    """How to encode with Ray: where the cluster is and how many actors to run.

    Args:
        address: a Ray cluster address (``"auto"``, ``"ray://host:10001"``, ...); ``None``
            starts a local cluster with ``num_cpus`` CPUs (or uses the one already
            started in this process by ``ray.init``).
        num_actors: encoder actors; default one per GPU of the cluster, or one per
            ``cpus_per_actor`` CPUs when there is no GPU.
        num_cpus: CPUs of a local cluster (``None``: all cores of this machine).
        cpus_per_actor: CPUs reserved by (and torch threads of) each CPU actor.
        use_gpu: ``None`` uses GPUs when the cluster has any (one GPU per actor).
        batch_rows: texts per ``map_batches`` call (the encoder batches inside it by
            length and tokens, see :class:`DenseEncoder`).
        block_rows: texts per Ray block (the unit of scheduling).
        window_rows: texts handed to Ray at a time; bounds driver and object-store
            memory for very large corpora (each window restarts the actor pool).
        show_progress: Ray Data's progress bars.
    """

    address: str | None = None
    num_actors: int | None = None
    num_cpus: int | None = None
    cpus_per_actor: float = 1.0
    use_gpu: bool | None = None
    batch_rows: int = 256
    block_rows: int = 1024
    window_rows: int = 200_000
    show_progress: bool = False

    def __post_init__(self) -> None:
        for name in ("batch_rows", "block_rows", "window_rows"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.num_actors is not None and (
            isinstance(self.num_actors, bool)
            or not isinstance(self.num_actors, int)
            or self.num_actors < 1
        ):
            raise ValueError(f"num_actors must be a positive integer, got {self.num_actors!r}")
        if not self.cpus_per_actor > 0:
            raise ValueError(f"cpus_per_actor must be positive, got {self.cpus_per_actor!r}")

    def connect(self) -> bool:
        """Start or join the Ray cluster; True when this call started (or joined) it.

        A cluster already initialised in this process is reused as is.
        """
        ray = import_ray()
        if ray.is_initialized():
            return False
        kwargs: dict[str, Any] = {
            "include_dashboard": False,
            "logging_level": "WARNING",
            "log_to_driver": False,
        }
        if self.address:
            ray.init(address=self.address, **kwargs)
        else:
            ray.init(num_cpus=self.num_cpus or os.cpu_count() or 1, **kwargs)
        return True

    def encode(
        self, encoder: DenseEncoder, texts: Iterable[str], total: int | None = None
    ) -> np.ndarray:
        """All vectors of ``texts`` in corpus order, shape ``(n, dimension)``, float32.

        ``total`` (the number of texts, when known) lets windows be copied straight into
        one preallocated array instead of concatenated (which holds the vectors twice).
        Starts (and afterwards shuts down) a cluster unless one is already running in
        this process.
        """
        started = self.connect()
        out: np.ndarray | None = None
        parts: list[np.ndarray] = []
        count = 0
        try:
            for start, vectors in encode_corpus(encoder, texts, self):
                count = start + len(vectors)
                if total is None:
                    parts.append(vectors)
                    continue
                if count > total:
                    raise LogicRagError(f"got more than the {total} texts announced")
                if out is None:
                    out = np.empty((total, vectors.shape[1]), dtype=np.float32)
                out[start:count] = vectors
        finally:
            if started:
                import_ray().shutdown()
        if count == 0:
            raise ValueError("cannot encode zero texts")
        if total is not None:
            if count != total:
                raise LogicRagError(f"got {count} texts, {total} were announced")
            assert out is not None
            return out
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


def encode_corpus(
    encoder: DenseEncoder, texts: Iterable[str], options: RayEncoding | None = None
) -> Iterator[tuple[int, np.ndarray]]:
    """Embed ``texts`` (document side) on the running Ray cluster, in corpus order.

    Yields ``(start, vectors)``: the float32 vectors of texts ``start .. start +
    len(vectors)``, one window at a time, windows in order. The caller must have
    connected (``RayEncoding.connect()`` or ``ray.init``). This is the interface for
    writers that stream vectors elsewhere (a vector database) instead of FAISS.
    """
    options = options or RayEncoding()
    ray = import_ray()
    if not ray.is_initialized():
        raise LogicRagError("Ray is not initialised: call RayEncoding.connect() or ray.init()")
    spec = EncoderSpec.from_encoder(encoder)
    use_gpu = options.use_gpu if options.use_gpu is not None else _cluster_gpus(ray) > 0
    actors = options.num_actors or _default_actors(ray, options.cpus_per_actor)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = options.show_progress
    context.print_on_execution_start = False
    if not options.show_progress:
        logging.getLogger("ray.data").setLevel(logging.WARNING)
    iterator = iter(texts)
    start = 0
    while True:
        window = list(itertools.islice(iterator, options.window_rows))
        if not window:
            return
        for i, text in enumerate(window):
            if not isinstance(text, str):
                window[i] = text = str(text)
            check_unicode(text, f"document {start + i}")
        yield start, _encode_window(ray, spec, window, start, options, actors, use_gpu)
        start += len(window)


def _encode_window(
    ray: Any,
    spec: EncoderSpec,
    window: list[str],
    start: int,
    options: RayEncoding,
    actors: int,
    use_gpu: bool,
) -> np.ndarray:
    """One window through the actor pool; vectors scattered back by row id."""
    import pyarrow as pa

    size = len(window)
    blocks = max(min(size, 2 * actors), math.ceil(size / options.block_rows))
    table = pa.table(
        {"row": pa.array(np.arange(start, start + size, dtype=np.int64)), "text": window}
    )
    step = math.ceil(size / blocks)
    # One Arrow table sliced into blocks (zero-copy slices): no per-row dicts, no shuffle.
    dataset = ray.data.from_arrow([table.slice(i, step) for i in range(0, size, step)])
    del table
    threads = None if use_gpu else max(1, int(options.cpus_per_actor))
    encoded = dataset.map_batches(
        _EncodeActor,
        fn_constructor_kwargs={"spec": spec, "use_gpu": use_gpu, "threads": threads},
        batch_size=options.batch_rows,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=actors),
        num_gpus=1 if use_gpu else 0,
        num_cpus=0 if use_gpu else options.cpus_per_actor,
    )
    out: np.ndarray | None = None
    seen = np.zeros(size, dtype=bool)
    for batch in encoded.iter_batches(batch_size=None, batch_format="numpy"):
        local = np.asarray(batch["row"], dtype=np.int64) - start
        vectors = np.asarray(batch["vector"], dtype=np.float32)
        if out is None:
            out = np.empty((size, vectors.shape[1]), dtype=np.float32)
        out[local] = vectors
        seen[local] = True
    if out is None or not seen.all():
        missing = int((~seen).sum())
        raise LogicRagError(f"Ray returned no vector for {missing} of {size} texts")
    return out
