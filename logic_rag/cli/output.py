"""Hits as text for a terminal: each with its constraint verdicts, the LLM's cost, and the
pages a NOT pushed down; every string from the corpus escaped so it cannot drive the
terminal (``--json`` keeps the exact strings)."""

from __future__ import annotations

import re
from typing import Any

#: Characters a terminal acts on instead of showing: C0 controls (ESC, BEL, NUL, CR ...),
#: DEL, C1 controls (0x9b is a one-byte CSI) and the bidi embeddings, overrides and
#: isolates (U+202A-U+202E, U+2066-U+2069; U+202E shows "gnp.exe" as "exe.png"), plus the
#: invisible direction marks. Text output is for eyes; ``--json`` keeps the exact strings.
TERMINAL_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: object) -> str:
    """``text`` with every character a terminal would act on written as a visible escape
    (``\\x1b``, ``\\u202e``), so a corpus cannot drive or spoof the terminal (issue 42
    item 13: ids, titles and passages are someone else's text)."""

    def escape(m: re.Match[str]) -> str:
        code = ord(m.group(0))
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return TERMINAL_UNSAFE.sub(escape, str(text))


def llm_cost_line(cost: dict[str, Any]) -> str:
    """One line on what the LLM cost this query, beside what checking every pair would."""
    line = (
        f"LLM: {cost.get('calls', 0)} checks of {cost.get('all_pairs_calls', 0)} all-pairs, "
        f"{cost.get('prompt_tokens', 0)} prompt tokens, {cost.get('seconds', 0.0):.1f} s"
    )
    if "certified" in cost:
        from logic_rag.verifiers.certified import certificate_line

        line += f"; {certificate_line(cost)}"
    if cost.get("note"):
        line += f" ({cost['note']})"
    return line


def print_hits(hits: Any, *, explain: bool) -> None:
    """A query's hits, a line each, with their constraints' verdicts (and with ``explain``
    their scores and the pages a NOT pushed down)."""
    from logic_rag.verifiers.verdicts import mark

    safe = terminal_safe
    if hits and hits[0].logic:
        print(f"logic: {safe(hits[0].logic['query'])}")
    for hit in hits:
        snippet = safe(" ".join(hit.text.split())[:160])
        title = f"{safe(hit.title)} | " if hit.title else ""
        print(f"{hit.rank:>3}. {hit.score:.4f}  [{safe(hit.id)}] {title}{snippet}")
        if hit.constraints:
            marks = ", ".join(
                f"{mark(ok)} {safe(name)}"
                + (f" ({hit.constraint_scores[name]:.2f})" if explain else "")
                + (" [LLM]" if hit.constraint_sources.get(name) == "llm" else "")
                for name, ok in hit.constraints.items()
            )
            print(f"       {marks}")
    cost = hits[0].logic.get("llm") if hits and hits[0].logic else None
    if cost:
        print(f"  {llm_cost_line(cost)}")
    for page in getattr(hits, "pushed_down", []) if explain else []:
        title = f" {safe(page['title'])}" if page["title"] else ""
        where = f"now {page['rank']}" if page["rank"] is not None else "now below the candidates"
        by = ", ".join(f"{safe(c)} ({s:.2f})" for c, s in page["by"].items()) or "the NOT"
        print(
            f"  pushed down by {by}: [{safe(page['id'])}]{title} "
            f"(rank {page['rank_without_not']} without the NOT, {where})"
        )
