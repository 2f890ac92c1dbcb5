"""One registry with a namespace per kind of plugin, and a pip-installed plugin appearing without code here:
a fake distribution on ``sys.path`` declares entry points of the group ``conflictscore_local.backends``
(found by ``importlib.metadata``, as an installed wheel's would be)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.backends.arguments import field_help, ranged
from conflictscore_local.backends.registry import ENTRY_POINT_GROUP, REGISTRY

ROOT = Path(__file__).resolve().parents[2]

PLUGIN = '''
from dataclasses import dataclass
from conflictscore_local.judge._base import JudgeBase
from conflictscore_local.core.metrics import Metric
from conflictscore_local.core.types import IRRELEVANT, SUPPORT, Judgment


class FakeJudge(JudgeBase):
    """Says SUPPORT when the passage holds the claim's last word."""

    name = "fake"

    def judge(self, pairs, on_progress=None):
        return [Judgment(p, SUPPORT if p.claim.text.split()[-1].strip(".") in p.passage.text else IRRELEVANT)
                for p in pairs]

    def passage_budget(self):
        return None


def _claims(verdicts):
    return float(len(verdicts)) if verdicts else None


CLAIMS = Metric("claims_seen", "claims seen", "claims", "cl", "how many claims the item has", True, _claims)


def first_passage(passages):
    return {0}


def add_parser(sub):
    p = sub.add_parser("hello", help="say hello from a plugin")
    p.set_defaults(func=lambda args: print("hello from the plugin") or 0)
'''

ENTRY_POINTS = f'''[{ENTRY_POINT_GROUP}]
judge.fake = fake_plugin:FakeJudge
metric.claims_seen = fake_plugin:CLAIMS
document_rule.first_passage = fake_plugin:first_passage
command.hello = fake_plugin:add_parser
nonsense = fake_plugin:FakeJudge
'''


@pytest.fixture()
def plugin_path(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    info = site / "fake_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    (site / "fake_plugin.py").write_text(PLUGIN)
    return site


def run(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "conflictscore_local.cli", *args], env=env, capture_output=True,
                          text=True, timeout=120)


def test_an_installed_plugin_appears_in_its_namespaces(plugin_path: Path, tmp_path: Path) -> None:
    listed = run(plugin_path, "backends", "--role", "judge", "--json")
    assert listed.returncode == 0, listed.stderr
    fake = json.loads(listed.stdout)["judge"]["fake"]
    assert fake["description"] == "Says SUPPORT when the passage holds the claim's last word." and fake["args"] == {}
    assert "entry point 'nonsense' (fake_plugin:FakeJudge)" in listed.stderr  # not NAMESPACE.NAME: left out, said
    hello = run(plugin_path, "hello")
    assert (hello.returncode, hello.stdout) == (0, "hello from the plugin\n")
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "q", "response": "", "claims": ["The sky is blue.", "Grass is red."],
                                 "documents": [{"id": "d", "text": "blue and green"}]}) + "\n")
    scored = run(plugin_path, "score", str(items), "-o", str(tmp_path / "o.jsonl"), "--summary",
                 str(tmp_path / "s.json"), "--judge", "fake", "--pruner", "none", "--no-cache", "-q",
                 "--set", "aggregate.document_rule=first_passage")
    assert scored.returncode == 0, scored.stderr
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["macro"]["claims_seen"] == 2.0 and summary["pairs"]["judged"] == 2  # the plugin's metric
    assert summary["config"]["backends"]["judge"]["name"] == "fake"
    assert summary["stages"]["aggregate"]["document_rule"] == "first_passage"
    row = json.loads((tmp_path / "o.jsonl").read_text())
    assert [c["support"] for c in row["claims"]] == [["d"], []]


def test_without_the_plugin_its_names_are_unknown(tmp_path: Path) -> None:
    missing = run(tmp_path, "score", "x.jsonl", "-o", str(tmp_path / "o.jsonl"), "--judge", "fake")
    allowed = ", ".join(registry.available("judge"))
    assert missing.returncode == 2 and f"unknown judge 'fake'; allowed: {allowed}" in missing.stderr


def test_the_registry_has_one_namespace_per_kind() -> None:
    assert REGISTRY.kinds() == ["decomposer", "pruner", "judge", "generator", "document_rule", "claim_selection",
                                "runtime", "data_source", "metric", "detection_metric", "command"]
    assert REGISTRY["document_rule"].names()[:3] == ["max", "relevant", "on_topic"]  # what ships, first
    assert REGISTRY["claim_selection"].names()[:4] == ["first", "longest", "salient", "random"]
    assert REGISTRY["runtime"].names()[:3] == ["torch", "compile", "onnx"]
    assert REGISTRY["metric"].names()[:4] == ["cs_c", "cs_r", "cs_r_evidenced", "support_rate"]
    assert REGISTRY["detection_metric"].names()[:4] == ["precision", "recall", "f1", "false_positive_rate"]
    assert {"score", "bench", "merge", "compare", "report"} <= set(REGISTRY["command"].names())
    assert "ramdocs" in REGISTRY["data_source"].names()
    assert REGISTRY["judge"].get("nli") is registry.resolve("judge", "nli")
    with pytest.raises(Exception, match="unknown kind of plugin 'widget'; allowed: decomposer, pruner"):
        REGISTRY["widget"]
    with REGISTRY["document_rule"].registered("first", lambda passages: {0}):
        assert "first" in REGISTRY["document_rule"].names()
    assert "first" not in REGISTRY["document_rule"].names()


def test_each_argument_has_its_help_from_the_field_the_docstring_or_the_common_table() -> None:
    from dataclasses import dataclass, field

    @dataclass(frozen=True)
    class Config:
        """Arguments of a test backend.

        ``alpha``, ``beta``: share this sentence. ``gamma``: its own, with :mod:`.markup` and ``code``.
        """

        alpha: int = 1
        beta: int = 2
        gamma: str = "g"
        delta: int = ranged(4, 0, 9, help="from the field")
        device: str = "cpu"
        epsilon: dict = field(default_factory=dict)

    assert field_help(Config) == {"alpha": "share this sentence.", "beta": "share this sentence.",
                                  "gamma": "its own, with .markup and code.", "delta": "from the field",
                                  "device": "where the model runs: auto, cpu, cuda, cuda:N", "epsilon": ""}
    nli = field_help(registry.resolve("judge", "nli").Config)
    assert nli["batch_size"] == "at most this many pairs per forward" and all(nli.values())
