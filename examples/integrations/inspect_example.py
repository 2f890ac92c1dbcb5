"""ConflictScore as an inspect_ai scorer on the bundled example (examples/items.jsonl).

    .venv-inspect/bin/python examples/integrations/inspect_example.py

mockllm/model replays each item's response, standing in for the model under evaluation.
"""

import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.solver import generate

from conflictscore_local.integrations.inspect import conflictscore

rows = [json.loads(line) for line in open("examples/items.jsonl", encoding="utf-8")]
samples = [Sample(id=r["id"], input=r["question"], metadata={"documents": r["documents"]}) for r in rows]
answers = {r["question"]: r["response"] for r in rows}


def replay(messages, tools, tool_choice, config):
    out = ModelOutput.from_content(model="mockllm", content=answers[messages[-1].text])
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
    return out


(log,) = eval(
    Task(dataset=samples, solver=generate(), scorer=conflictscore()),
    model=get_model("mockllm/model", custom_outputs=replay),
    log_dir="out/inspect-logs",
    display="none",
)
for score in log.results.scores:
    print(f"{score.name}: mean {score.metrics['mean'].value:.3f}")
for sample in log.samples:
    print(f"[{sample.id}] {sample.scores['conflictscore'].explanation}")
