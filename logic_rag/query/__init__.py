"""Logical queries: the algebra, QUEST parsing and query decomposers.

``from logic_rag.query import And, Atom, Not, Or, RuleDecomposer`` gives everything a
caller needs; the submodules keep one job each (``algebra``, ``templates``, ``quest``,
``decompose``, ``rules`` with its ``heads`` heuristics, ``llm``, ``auto``).
"""

from logic_rag.query.algebra import (
    MAX_RELATION_ATOMS,
    QUERY_JSON_SCHEMA,
    And,
    Atom,
    LogicalQuery,
    Not,
    Or,
    Relation,
    atoms,
    canonical,
    evaluate,
    from_json,
    negated_atoms,
    positive_atoms,
    relation,
    render,
    sort_key,
    to_json,
    truth,
)
from logic_rag.query.auto import AutoDecomposer, make_decomposer
from logic_rag.query.decompose import Decomposer, Decomposition
from logic_rag.query.llm import LLMDecomposer, extract_json
from logic_rag.query.quest import parse_marked, parse_quest_record, read_quest_jsonl
from logic_rag.query.redundancy import drop_implied_conjuncts
from logic_rag.query.rules import RuleDecomposer
from logic_rag.query.templates import TEMPLATES, from_template, template_arity, to_template

__all__ = [
    "MAX_RELATION_ATOMS",
    "QUERY_JSON_SCHEMA",
    "TEMPLATES",
    "And",
    "Atom",
    "AutoDecomposer",
    "Decomposer",
    "Decomposition",
    "LLMDecomposer",
    "LogicalQuery",
    "Not",
    "Or",
    "Relation",
    "RuleDecomposer",
    "atoms",
    "canonical",
    "drop_implied_conjuncts",
    "evaluate",
    "extract_json",
    "from_json",
    "from_template",
    "make_decomposer",
    "negated_atoms",
    "parse_marked",
    "parse_quest_record",
    "positive_atoms",
    "read_quest_jsonl",
    "relation",
    "render",
    "sort_key",
    "template_arity",
    "to_json",
    "to_template",
    "truth",
]
