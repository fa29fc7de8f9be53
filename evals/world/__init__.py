"""A generated QUEST-format world: films, books, plants and animals with exact gold sets.

Entities carry facets drawn from real vocabularies (countries, genres, plant families,
animal groups); atoms are Wikipedia-style categories over those facets ("Italian crime
films", "Flora of Malaysia"); documents are encyclopedic prose with negated and near-miss
mentions (traps) that never change gold membership; queries compose atoms with QUEST's
seven templates, with train/val/test splits that share no atom.

Typical use::

    from logic_rag.evals.world import WorldConfig, generate_world, write_world
    world = generate_world(WorldConfig(n_entities=3000, seed=0))
    write_world(world, "data/world")
"""

from .atoms import AtomSpec, atom_catalogue, atom_members
from .cli import main
from .entities import DOMAINS, Entity, make_entity
from .generate import (
    World,
    WorldConfig,
    generate_world,
    iter_documents,
    iter_entities,
    write_documents,
    write_world,
)
from .mentions import find_mentions, trap_violations, unstated_facts
from .prose import render_document
from .queries import (
    TEMPLATES,
    evaluate_template,
    original_query,
    size_rule_violation,
)

__all__ = [
    "AtomSpec",
    "DOMAINS",
    "Entity",
    "TEMPLATES",
    "World",
    "WorldConfig",
    "atom_catalogue",
    "atom_members",
    "evaluate_template",
    "find_mentions",
    "generate_world",
    "iter_documents",
    "iter_entities",
    "main",
    "make_entity",
    "original_query",
    "render_document",
    "size_rule_violation",
    "trap_violations",
    "unstated_facts",
    "write_documents",
    "write_world",
]
