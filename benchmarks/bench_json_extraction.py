"""``extract_json`` time against answer size (issue 42 item 3): linear.

Answer shapes of the issue's probes and their neighbours: all ``{`` (400 KB took 54 s
before), ``x{`` repeated, an unclosed ``{"a": `` nest, a valid object after prose, many
small objects after an unclosed one, unclosed fences, and an object nested inside
thousands of braces. Each is timed at growing sizes (median of ``repeats``); reported per
size: characters, seconds and nanoseconds per character (flat when linear). The
decomposer itself refuses answers over ``MAX_ANSWER_CHARS`` before parsing; this measures
the parser alone, far past that cap.

Run: ``python -m benchmarks.run --only json`` or ``python -m
benchmarks.bench_json_extraction [--sizes 25000,100000,400000]``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["SHAPES", "format_table", "run"]

#: Answer shapes, by name: size in characters (about) -> answer text.
SHAPES: dict[str, Callable[[int], str]] = {
    "all-open-braces": lambda n: "{" * n,
    "x-brace": lambda n: "x{" * (n // 2),
    "unclosed-nest": lambda n: '{"a": ' * (n // 6),
    "prose-then-object": lambda n: "word " * (n // 5) + '{"atom": "orchids"}',
    "objects-after-unclosed": lambda n: '{"a": [' + '{"k": 1}, ' * (n // 10),
    "open-fences": lambda n: "```" * (n // 3),
    "object-in-braces": lambda n: "{" * (n // 2) + '{"atom": "x"}' + "}" * (n // 2),
}

DEFAULT_SIZES = (25_000, 100_000, 400_000)


def run(
    sizes: Sequence[int] = DEFAULT_SIZES,
    *,
    repeats: int = 3,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Time :func:`~logic_rag.query.llm.extract_json` on every shape at every size."""
    from logic_rag.query.llm import MAX_ANSWER_CHARS, extract_json

    shapes: dict[str, Any] = {}
    for name, shape in SHAPES.items():
        rows = []
        for n in sizes:
            text = shape(n)
            times = []
            found = False
            for _ in range(repeats):
                began = time.perf_counter()
                try:
                    extract_json(text)
                    found = True
                except ValueError:
                    found = False
                times.append(time.perf_counter() - began)
            seconds = statistics.median(times)
            rows.append(
                {
                    "chars": len(text),
                    "seconds": seconds,
                    "ns_per_char": 1e9 * seconds / len(text),
                    "found_object": found,
                }
            )
            if log:
                log(f"extract_json {name}: {len(text)} chars {seconds:.4f} s")
        shapes[name] = {
            "rows": rows,
            "per_char_growth": rows[-1]["ns_per_char"] / rows[0]["ns_per_char"],
        }
    return {"max_answer_chars": MAX_ANSWER_CHARS, "repeats": repeats, "shapes": shapes}


def format_table(result: dict[str, Any]) -> str:
    lines = [
        f"extract_json (the decomposer refuses answers over {result['max_answer_chars']:,} "
        f"characters before parsing); median of {result['repeats']}",
        f"{'shape':<24}{'chars':>9}{'seconds':>10}{'ns/char':>9}{'object':>8}",
    ]
    for name, shape in result["shapes"].items():
        for row in shape["rows"]:
            lines.append(
                f"{name:<24}{row['chars']:>9,}{row['seconds']:>10.4f}{row['ns_per_char']:>9.1f}"
                f"{'yes' if row['found_object'] else 'no':>8}"
            )
        lines.append(f"{'':<24}per-char growth {shape['per_char_growth']:.2f}x")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from benchmarks.common import scaling_main

    return scaling_main(
        "python -m benchmarks.bench_json_extraction", run, format_table, DEFAULT_SIZES, argv
    )


if __name__ == "__main__":
    raise SystemExit(main())
