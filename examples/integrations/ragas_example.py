"""ConflictScore as a RAGAS metric on the bundled example (examples/items.jsonl).

    .venv-ragas/bin/python examples/integrations/ragas_example.py
"""

import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

from ragas import EvaluationDataset, evaluate

from conflictscore_local.integrations.ragas import ConflictScoreMetric, ConflictScoreSingleTurnMetric

rows = [json.loads(line) for line in open("examples/items.jsonl", encoding="utf-8")]
data = [
    {
        "user_input": r["question"],
        "response": r["response"],
        "retrieved_contexts": [d["text"] for d in r["documents"]],
        "retrieved_context_ids": [d["id"] for d in r["documents"]],
    }
    for r in rows
]

# ragas.evaluate(): values only, means over the dataset
metrics = [ConflictScoreSingleTurnMetric(), ConflictScoreSingleTurnMetric(name="cs_r", key="cs_r")]
print(evaluate(EvaluationDataset.from_list(data), metrics=metrics, show_progress=False))

# the current metric API: a value and a reason per row, the whole dataset in one engine step
for r, result in zip(rows, ConflictScoreMetric().batch_score(data)):
    print(f"[{r['id']}] {result.value:.3f} | {result.reason}")
