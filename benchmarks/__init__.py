"""logic-rag's benchmarks: run with ``python -m benchmarks.run [--quick]``.

They are measurements, never assertions: ``tests/test_benchmarks_smoke.py`` only checks
that each benchmark runs at tiny scale and reports the documented JSON shape.
"""

__all__: list[str] = []
