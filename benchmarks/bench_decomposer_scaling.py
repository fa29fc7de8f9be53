"""Rule decomposer time against query length (issue 42 item 2): linear up to the caps.

The shapes of the issue's probes: "w0 or w1 or ..." (one disjunction of n atoms),
"a and b or c but not d" repeated n times, n "except" clauses, a list of n places after
one head ("Orchids of P0 and P1 and ..."), and a question with n "apart from" clauses.
Each shape is decomposed at growing sizes with the caps lifted (``max_query_chars=None,
max_atoms=None``) so the passes themselves are measured, then once at the default caps,
where a query past them is refused in microseconds. Reported per size: characters,
median seconds of ``repeats`` runs, and microseconds per character (flat when linear).

Run: ``python -m benchmarks.run --only decomposer`` or ``python -m
benchmarks.bench_decomposer_scaling [--sizes 250,500,1000,2000,4000]``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["SHAPES", "format_table", "run"]

#: Query shapes of issue 42's probes, by name: n -> query text.
SHAPES: dict[str, Callable[[int], str]] = {
    "or-list": lambda n: " or ".join(f"w{i}" for i in range(n)),
    "and-or-but-not": lambda n: " ".join(["a and b or c but not d"] * n),
    "except-clauses": lambda n: "Films " + " ".join(f"except x{i}," for i in range(n)),
    "head-and-list": lambda n: "Orchids of " + " and ".join(f"Place{i}" for i in range(n)),
    "question-apart-from": lambda n: (
        "What films did X make, " + ", ".join(f"apart from Film{i}" for i in range(n)) + "?"
    ),
}

DEFAULT_SIZES = (250, 500, 1000, 2000, 4000)


def _median_seconds(call: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        call()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def run(
    sizes: Sequence[int] = DEFAULT_SIZES,
    *,
    repeats: int = 3,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Time every shape at every size (caps lifted), and each shape at the default caps."""
    from logic_rag.query.rules import (
        MAX_QUERY_ATOMS,
        MAX_QUERY_CHARS,
        QueryTooLargeError,
        RuleDecomposer,
    )

    lifted = RuleDecomposer(max_query_chars=None, max_atoms=None)
    capped = RuleDecomposer()
    shapes: dict[str, Any] = {}
    for name, shape in SHAPES.items():
        rows = []
        for n in sizes:
            text = shape(n)
            seconds = _median_seconds(lambda t=text: lifted.decompose(t), repeats)
            rows.append(
                {
                    "n": n,
                    "chars": len(text),
                    "seconds": seconds,
                    "us_per_char": 1e6 * seconds / len(text),
                }
            )
            if log:
                log(f"decomposer {name} n={n}: {len(text)} chars {seconds:.4f} s")
        # the longest query of this shape under the character cap: read, or refused for
        # its atoms (the refusal is what a user past the cap sees)
        lo, hi = 1, max(sizes)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if len(shape(mid)) <= MAX_QUERY_CHARS else (lo, mid - 1)
        big = shape(lo)
        began = time.perf_counter()
        try:
            capped.decompose(big)
            refusal = None
        except QueryTooLargeError as exc:
            refusal = str(exc)
        shapes[name] = {
            "rows": rows,
            # how much slower per character the largest size is than the smallest
            "per_char_growth": rows[-1]["us_per_char"] / rows[0]["us_per_char"],
            "at_default_caps": {
                "n": lo,
                "chars": len(big),
                "seconds": time.perf_counter() - began,
                "refused": refusal,
            },
        }
    return {
        "caps": {"max_query_chars": MAX_QUERY_CHARS, "max_atoms": MAX_QUERY_ATOMS},
        "repeats": repeats,
        "shapes": shapes,
    }


def format_table(result: dict[str, Any]) -> str:
    caps = result["caps"]
    lines = [
        f"rule decomposer, caps lifted (defaults: {caps['max_query_chars']:,} characters, "
        f"{caps['max_atoms']} atoms); median of {result['repeats']}",
        f"{'shape':<22}{'n':>6}{'chars':>9}{'seconds':>10}{'us/char':>9}",
    ]
    for name, shape in result["shapes"].items():
        for row in shape["rows"]:
            lines.append(
                f"{name:<22}{row['n']:>6}{row['chars']:>9,}{row['seconds']:>10.4f}"
                f"{row['us_per_char']:>9.2f}"
            )
        capped = shape["at_default_caps"]
        what = "refused (atoms)" if capped["refused"] else "read"
        lines.append(
            f"{'':<22}per-char growth {shape['per_char_growth']:.2f}x; default caps: n="
            f"{capped['n']} ({capped['chars']:,} chars) {what} in "
            f"{capped['seconds'] * 1e3:.1f} ms"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from benchmarks.common import scaling_main

    return scaling_main(
        "python -m benchmarks.bench_decomposer_scaling", run, format_table, DEFAULT_SIZES, argv
    )


if __name__ == "__main__":
    raise SystemExit(main())
