"""The project's measurements, run from the repository root as ``python -m benchmarks.GROUP.SCRIPT``
(``README.md`` here lists every script, the question it answers and its results file)."""
