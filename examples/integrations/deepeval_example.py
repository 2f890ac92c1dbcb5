"""ConflictScore as a DeepEval metric on the bundled example (examples/items.jsonl).

    .venv-deepeval/bin/python examples/integrations/deepeval_example.py
"""

import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")

from deepeval import evaluate
from deepeval.evaluate.configs import DisplayConfig
from deepeval.test_case import LLMTestCase
from deepeval.test_case.llm_test_case import RetrievedContextData

from conflictscore_local.integrations.deepeval import ConflictScoreMetric

rows = [json.loads(line) for line in open("examples/items.jsonl", encoding="utf-8")]
cases = [
    LLMTestCase(
        name=r["id"],
        input=r["question"],
        actual_output=r["response"],
        retrieval_context=[RetrievedContextData(source=d["id"], context=d["text"]) for d in r["documents"]],
    )
    for r in rows
]
result = evaluate(cases, [ConflictScoreMetric(threshold=0.5)], display_config=DisplayConfig(print_results=False))
for test in result.test_results:
    m = test.metrics_data[0]
    print(f"[{test.name}] CS-C {m.score:.3f} success={m.success} | {m.reason}")
