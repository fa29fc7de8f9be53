"""What a QUEST evaluation cannot score fairly, found before scoring and never silent.

Two things distort the metrics without any error: gold pages that are not in the corpus
(no ranking can retrieve them, so recall is capped below 1 for reasons that have nothing
to do with the retriever) and queries that appear twice (their weight in every average
doubles). :func:`check_queries` finds both, applies the ``missing_gold`` policy and
returns a record that the runner prints as a warning and stores in ``results.json``.

Policies for gold pages missing from the corpus:

- ``keep`` (default): score them as misses, as the published QUEST numbers do (the
  official corpus holds every gold page; a subset corpus does not);
- ``drop``: score each query against the gold pages the corpus holds; a query left with
  none is left out (and counted).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass, field
from typing import Any, Literal

from logic_rag.evals.quest.data import QuestQuery

__all__ = ["MissingGold", "MISSING_GOLD_POLICIES", "QueryChecks", "check_queries"]

MissingGold = Literal["keep", "drop"]
MISSING_GOLD_POLICIES: tuple[MissingGold, ...] = ("keep", "drop")
_SHOWN = 5


@dataclass
class QueryChecks:
    """Counts (and a few examples) of missing gold pages and duplicate queries."""

    policy: MissingGold
    queries: int = 0
    gold_pages: int = 0
    gold_missing: int = 0
    queries_with_missing_gold: int = 0
    queries_dropped: int = 0
    duplicate_groups: list[list[str]] = field(default_factory=list)
    examples: list[dict[str, Any]] = field(default_factory=list)

    @property
    def duplicate_queries(self) -> int:
        """Queries beyond the first of each group of identical query texts."""
        return sum(len(group) - 1 for group in self.duplicate_groups)

    def record(self) -> dict[str, Any]:
        """The JSON stored under ``extra.query_checks`` of ``results.json``."""
        out = dataclasses.asdict(self)
        out["duplicate_queries"] = self.duplicate_queries
        out["duplicate_groups"] = self.duplicate_groups[:50]
        return out

    def warnings(self) -> list[str]:
        """One line per problem found, empty when there is none."""
        lines = []
        if self.gold_missing:
            action = (
                "scored as misses (--missing-gold keep)"
                if self.policy == "keep"
                else f"left out of the gold sets (--missing-gold drop; "
                f"{self.queries_dropped} queries left with no gold were skipped)"
            )
            shown = ", ".join(
                f"{e['qid']}: {', '.join(e['missing'])}" for e in self.examples[:_SHOWN]
            )
            lines.append(
                f"{self.gold_missing} of {self.gold_pages} gold pages of "
                f"{self.queries_with_missing_gold} of {self.queries} queries are not in the "
                f"corpus and are {action} (e.g. {shown})"
            )
        if self.duplicate_groups:
            shown = "; ".join(", ".join(g) for g in self.duplicate_groups[:_SHOWN])
            lines.append(
                f"{self.duplicate_queries} queries repeat the text of an earlier one and "
                f"weigh twice in every average (query ids: {shown})"
            )
        return lines


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


def check_queries(
    queries: Sequence[QuestQuery], corpus_ids: Set[str] | Iterable[str], policy: str = "keep"
) -> tuple[list[QuestQuery], QueryChecks]:
    """The queries the metrics should use under ``policy``, and what was found.

    ``corpus_ids`` are the ids of the documents that can be retrieved. Duplicates are
    queries whose texts are equal up to case and spacing; they are reported, not removed.
    """
    if policy not in MISSING_GOLD_POLICIES:
        raise ValueError(
            f"--missing-gold must be one of {', '.join(MISSING_GOLD_POLICIES)}, got {policy!r}"
        )
    ids = corpus_ids if isinstance(corpus_ids, Set) else set(corpus_ids)
    checks = QueryChecks(policy=policy)  # type: ignore[arg-type]
    kept: list[QuestQuery] = []
    by_text: dict[str, list[str]] = {}
    for query in queries:
        checks.queries += 1
        by_text.setdefault(_key(query.query), []).append(query.qid)
        missing = sorted(d for d in query.docs if d not in ids)
        checks.gold_pages += len(query.docs)
        if missing:
            checks.gold_missing += len(missing)
            checks.queries_with_missing_gold += 1
            if len(checks.examples) < 20:
                checks.examples.append({"qid": query.qid, "missing": missing[:5]})
        if missing and policy == "drop":
            present = query.docs - set(missing)
            if not present:
                checks.queries_dropped += 1
                continue
            query = dataclasses.replace(query, docs=frozenset(present))
        kept.append(query)
    checks.duplicate_groups = [qids for qids in by_text.values() if len(qids) > 1]
    return kept, checks
