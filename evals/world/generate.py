"""Build a whole world (entities, documents, atoms, query splits) and write it to disk.

``generate_world`` is deterministic for a config: entities and documents are pure
functions of ``(seed, index)``, atoms are a fixed catalogue filtered by size, and queries
are drawn from a random stream seeded by the config seed. ``write_documents`` streams
documents to disk one at a time (bounded memory), for corpora of millions of documents.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from logic_rag.atomic import atomic_open, atomic_write_json, atomic_write_jsonl

from .atoms import AtomSpec, atom_catalogue, atom_members
from .entities import DOMAINS, Entity, make_entity
from .prose import render_document
from .queries import (
    MIN_ANSWERS,
    QueryPool,
    compose_queries,
    evaluate_template,
    original_query,
    paraphrase,
    partition_atoms,
)

__all__ = [
    "WorldConfig",
    "World",
    "WORLD_FORMAT_VERSION",
    "generate_world",
    "iter_entities",
    "iter_documents",
    "write_world",
    "write_documents",
]

WORLD_FORMAT_VERSION = 1
SPLITS = ("train", "val", "test")


def _default_queries() -> dict[str, int]:
    return {"train": 1000, "val": 150, "test": 350}


@dataclass(frozen=True)
class WorldConfig:
    """What to generate. ``n_queries_per_split`` maps split name to number of queries."""

    n_entities: int = 3000
    n_queries_per_split: Mapping[str, int] = field(default_factory=_default_queries)
    seed: int = 0
    domains: tuple[str, ...] = DOMAINS
    trap_rate: float = 0.7

    def __post_init__(self) -> None:
        if self.n_entities < len(self.domains):
            raise ValueError(f"n_entities={self.n_entities} is below the number of domains")
        unknown = set(self.domains) - set(DOMAINS)
        if unknown or not self.domains or len(set(self.domains)) != len(self.domains):
            raise ValueError(f"domains must be distinct names from {DOMAINS}, got {self.domains}")
        for split, n in self.n_queries_per_split.items():
            if n < 0:
                raise ValueError(f"n_queries_per_split[{split!r}] must be >= 0, got {n}")
        if not 0.0 <= self.trap_rate <= 1.0:
            raise ValueError(f"trap_rate must lie in [0, 1], got {self.trap_rate}")

    def to_json(self) -> dict[str, object]:
        """A JSON-ready copy (for ``world.json``)."""
        out = asdict(self)
        out["n_queries_per_split"] = dict(self.n_queries_per_split)
        out["domains"] = list(self.domains)
        return out


@dataclass
class World:
    """A generated world: entities, atoms with gold sets and splits, QUEST query records."""

    config: WorldConfig
    entities: list[Entity]
    atoms: list[AtomSpec]
    members: dict[str, frozenset[int]]
    atom_split: dict[str, str]
    queries: dict[str, list[dict[str, object]]]

    def document(self, entity: Entity) -> dict[str, str]:
        """The QUEST ``documents.jsonl`` row of ``entity``."""
        return {
            "title": entity.title,
            "text": render_document(entity, self.config.seed, self.config.trap_rate),
        }

    def documents(self) -> Iterator[dict[str, str]]:
        """All documents, in entity order."""
        for e in self.entities:
            yield self.document(e)

    def atom_rows(self) -> Iterator[dict[str, object]]:
        """Rows of ``atoms.jsonl``: every usable atom (>= 2 members) and its exact gold set."""
        for spec in self.atoms:
            if spec.name in self.atom_split:
                docs = sorted(self.entities[i].title for i in self.members[spec.name])
                yield {
                    "atom": spec.name,
                    "domain": spec.domain,
                    "facet": spec.facet,
                    "requires": [list(r) for r in spec.requires],
                    "split": self.atom_split[spec.name],
                    "docs": docs,
                }

    def manifest(self) -> dict[str, object]:
        """The ``world.json`` manifest: config, seed, counts per domain/split/template."""
        atom_counts = Counter(
            (self.atom_split[a], s.domain)
            for s in self.atoms
            for a in [s.name]
            if a in self.atom_split
        )
        return {
            "format": "quest",
            "version": WORLD_FORMAT_VERSION,
            "generator": "logic_rag.evals.world",
            "seed": self.config.seed,
            "config": self.config.to_json(),
            "counts": {
                "entities": len(self.entities),
                "entities_per_domain": dict(Counter(e.domain for e in self.entities)),
                "atoms": len(self.atom_split),
                "atoms_per_split_domain": {
                    f"{s}/{d}": n for (s, d), n in sorted(atom_counts.items())
                },
                "queries": {s: len(q) for s, q in self.queries.items()},
                "queries_per_template": {
                    s: dict(Counter(str(r["metadata"]["template"]) for r in q))  # type: ignore[index]
                    for s, q in self.queries.items()
                },
                "queries_per_domain": {
                    s: dict(Counter(str(r["metadata"]["domain"]) for r in q))  # type: ignore[index]
                    for s, q in self.queries.items()
                },
            },
        }


def iter_entities(config: WorldConfig) -> Iterator[Entity]:
    """Entities ``0 .. n_entities-1`` of the world, generated lazily."""
    for i in range(config.n_entities):
        yield make_entity(config.seed, i, config.domains)


def iter_documents(config: WorldConfig) -> Iterator[dict[str, str]]:
    """QUEST document rows of the world, generated lazily (constant memory)."""
    for e in iter_entities(config):
        yield {"title": e.title, "text": render_document(e, config.seed, config.trap_rate)}


def _query_rng(seed: int, split: str) -> random.Random:
    digest = hashlib.sha256(f"world-queries:{seed}:{split}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def generate_world(config: WorldConfig | None = None) -> World:
    """Generate the world of ``config`` (deterministic: same config, same world)."""
    config = config or WorldConfig()
    entities = list(iter_entities(config))
    specs = atom_catalogue(config.domains)
    members = atom_members(specs, entities)
    usable = {s.name: s for s in specs if len(members[s.name]) >= MIN_ANSWERS}
    by_domain: dict[str, list[str]] = {}
    for name, spec in usable.items():
        by_domain.setdefault(spec.domain, []).append(name)
    # Atoms are shared out by the square root of each split's query count: a small test
    # split still gets enough atoms to compose three-way intersections.
    weights = {s: float(n) ** 0.5 for s, n in config.n_queries_per_split.items()}
    if not any(weights.values()):
        weights = {s: 1.0 for s in config.n_queries_per_split} or {"test": 1.0}
    atom_split = partition_atoms(by_domain, weights, _query_rng(config.seed, "partition"))
    clauses = {name: spec.clause for name, spec in usable.items()}
    titles = [e.title for e in entities]
    queries: dict[str, list[dict[str, object]]] = {}
    for split, n in config.n_queries_per_split.items():
        rng = _query_rng(config.seed, split)
        pools = {
            d: QueryPool({a: members[a] for a in names if atom_split[a] == split})
            for d, names in sorted(by_domain.items())
        }
        rows = []
        for template, domain, atoms in compose_queries(pools, n, rng):
            gold = evaluate_template(template, [members[a] for a in atoms])
            rows.append(
                {
                    "query": paraphrase(template, atoms, clauses, rng),
                    "docs": sorted(titles[i] for i in gold),
                    "original_query": original_query(template, atoms),
                    "scores": None,
                    "metadata": {
                        "template": template,
                        "domain": domain,
                        "atoms": list(atoms),
                        "split": split,
                        "relevance_ratings": None,
                        "evidence_ratings": None,
                        "attributions": None,
                    },
                }
            )
        queries[split] = rows
    return World(config, entities, specs, members, atom_split, queries)


def write_world(world: World, out_dir: str | Path) -> dict[str, Path]:
    """Write ``documents.jsonl``, ``entities.jsonl``, ``atoms.jsonl``, one ``<split>.jsonl``
    per split and ``world.json`` into ``out_dir`` (each file atomically); returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "documents": out / "documents.jsonl",
        "entities": out / "entities.jsonl",
        "atoms": out / "atoms.jsonl",
    }
    atomic_write_jsonl(paths["documents"], world.documents())
    atomic_write_jsonl(paths["entities"], (e.to_json() for e in world.entities))
    atomic_write_jsonl(paths["atoms"], world.atom_rows())
    for split, rows in world.queries.items():
        paths[split] = out / f"{split}.jsonl"
        atomic_write_jsonl(paths[split], rows)
    paths["manifest"] = out / "world.json"
    atomic_write_json(paths["manifest"], world.manifest())
    return paths


def write_documents(config: WorldConfig, out_dir: str | Path) -> dict[str, object]:
    """Stream ``documents.jsonl`` of ``config`` to ``out_dir`` in bounded memory.

    Returns ``{"path", "documents", "seconds", "docs_per_second"}``. Titles are unique by
    construction (see :mod:`logic_rag.evals.world.names`), so nothing is remembered.
    """
    path = Path(out_dir) / "documents.jsonl"
    start = time.perf_counter()
    count = 0
    with atomic_open(path) as handle:
        for row in iter_documents(config):
            handle.write(json.dumps(row, ensure_ascii=False))
            handle.write("\n")
            count += 1
    seconds = time.perf_counter() - start
    return {
        "path": path,
        "documents": count,
        "seconds": seconds,
        "docs_per_second": count / seconds if seconds > 0 else float("inf"),
    }
