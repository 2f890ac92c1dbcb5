"""One registry with a namespace per kind of plugin, and a pip-installed plugin appearing without code here:
a fake distribution on ``sys.path`` declares entry points of the group ``conflictscore_local.backends``
(found by ``importlib.metadata``, as an installed wheel's would be)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.backends.arguments import field_help, ranged
from conflictscore_local.backends.registry import ENTRY_POINT_GROUP, REGISTRY, Registry
from conflictscore_local.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]

PLUGIN = '''
from dataclasses import dataclass
from conflictscore_local import IRRELEVANT, SUPPORT, JudgeBase, Judgment, Metric


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


class HalfRuntime:
    """A runtime of the nli judge that answers 1/n for every class: the runtime namespace is open."""

    name = "half"

    def __init__(self, classifier):
        self.classifier = classifier

    def spec(self):
        return {"runtime": self.name}

    def classify(self, feats, on_done=None):
        n = len(self.classifier.labels)
        return [[1 / n] * n for _ in feats]
'''

ENTRY_POINTS = f"""[{ENTRY_POINT_GROUP}]
judge.fake = fake_plugin:FakeJudge
metric.claims_seen = fake_plugin:CLAIMS
document_rule.first_passage = fake_plugin:first_passage
command.hello = fake_plugin:add_parser
runtime.half = fake_plugin:HalfRuntime
nonsense = fake_plugin:FakeJudge
"""

BROKEN_ENTRY_POINTS = f"""[{ENTRY_POINT_GROUP}]
judge.broken = broken_plugin:Judge
metric.broken = broken_plugin:METRIC
command.broken = broken_plugin:add_parser
"""


@pytest.fixture()
def plugin_path(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    info = site / "fake_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    (site / "fake_plugin.py").write_text(PLUGIN)
    return site


@pytest.fixture()
def broken_path(tmp_path: Path) -> Path:
    """A distribution whose one module fails to import (its own missing dependency), declaring a judge,
    a metric (loaded when the registry is first read) and a command (built for --help)."""
    site = tmp_path / "broken-site"
    info = site / "broken_plugin-0.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text(BROKEN_ENTRY_POINTS)
    (site / "broken_plugin.py").write_text("import a_dependency_that_is_not_installed\n")
    return site


def run(site: Path, *args: str, module: str = "conflictscore_local.cli") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", module, *args], env=env, capture_output=True, text=True, timeout=120)


def python(site: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_an_installed_plugin_appears_in_its_namespaces(plugin_path: Path, tmp_path: Path) -> None:
    listed = run(plugin_path, "backends", "--role", "judge", "--json")
    assert listed.returncode == 0, listed.stderr
    fake = json.loads(listed.stdout)["judge"]["fake"]
    assert fake["description"] == "Says SUPPORT when the passage holds the claim's last word." and fake["args"] == {}
    assert "entry point 'nonsense' (fake_plugin:FakeJudge)" in listed.stderr  # not NAMESPACE.NAME: left out, said
    hello = run(plugin_path, "hello")
    assert (hello.returncode, hello.stdout) == (0, "hello from the plugin\n")
    items = tmp_path / "items.jsonl"
    items.write_text(
        json.dumps(
            {
                "id": "q",
                "response": "",
                "claims": ["The sky is blue.", "Grass is red."],
                "documents": [{"id": "d", "text": "blue and green"}],
            }
        )
        + "\n"
    )
    scored = run(
        plugin_path,
        "score",
        str(items),
        "-o",
        str(tmp_path / "o.jsonl"),
        "--summary",
        str(tmp_path / "s.json"),
        "--judge",
        "fake",
        "--pruner",
        "none",
        "--no-cache",
        "-q",
        "--set",
        "aggregate.document_rule=first_passage",
    )
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
    assert REGISTRY.kinds() == [
        "decomposer",
        "pruner",
        "judge",
        "generator",
        "document_rule",
        "claim_selection",
        "runtime",
        "data_source",
        "metric",
        "detection_metric",
        "command",
    ]
    assert REGISTRY["document_rule"].names()[:3] == ["max", "relevant", "on_topic"]  # what ships, first
    assert REGISTRY["claim_selection"].names()[:4] == ["first", "longest", "salient", "random"]
    import conflictscore_local.judge.nli.runtimes  # noqa: F401 (the owner of the runtimes table hands it over)

    assert REGISTRY["runtime"].names()[:3] == ["torch", "compile", "onnx"]
    assert REGISTRY["metric"].names()[:4] == ["cs_c", "cs_r", "cs_r_evidenced", "support_rate"]
    assert REGISTRY["detection_metric"].names()[:4] == ["precision", "recall", "f1", "false_positive_rate"]
    import conflictscore_local.cli.app  # noqa: F401 (the owner of the command table hands it over)

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

    assert field_help(Config) == {
        "alpha": "share this sentence.",
        "beta": "share this sentence.",
        "gamma": "its own, with .markup and code.",
        "delta": "from the field",
        "device": "where the model runs: auto, cpu, cuda, cuda:N",
        "epsilon": "",
    }
    nli = field_help(registry.resolve("judge", "nli").Config)
    assert nli["batch_size"] == "at most this many pairs per forward" and all(nli.values())


def test_an_installed_plugins_runtime_is_accepted_by_the_nli_judge(plugin_path: Path, tiny_nli_dir: Path) -> None:
    """The runtime namespace is open: a plugin's runtime is a name the nli judge's ``runtime`` argument
    takes (one table, no list of allowed names), and it runs the judge's forward pass."""
    done = python(
        plugin_path,
        f"""
import json
from conflictscore_local import Engine, parse_item
from conflictscore_local.backends import registry
from conflictscore_local.judge.nli import RUNTIMES
config = registry.config_for("judge", "nli", {{"runtime": "half"}})
judge = registry.build("judge", "nli", {{"model": {str(tiny_nli_dir)!r}, "runtime": "half"}})
item = parse_item({{"id": "q", "response": "", "claims": ["The sky is blue."],
                   "documents": [{{"id": "d", "text": "The sky is blue today."}}]}})
results, summary = Engine(judge=judge, pruner="none").score_all([item])
probs = results[0].verdicts[0].judgments[0].probs
print(json.dumps([config.runtime, RUNTIMES["half"].__name__, list(RUNTIMES)[-1], judge.spec()["runtime"], probs]))
""",
    )
    assert done.returncode == 0, done.stderr
    runtime, target, last, spec, probs = json.loads(done.stdout.splitlines()[-1])
    assert (runtime, target, last, spec) == ("half", "HalfRuntime", "half", "half")
    assert sorted(probs.values()) == [round(1 / 3, 6)] * 3  # three classes, a third each: the plugin ran
    refused = python(
        plugin_path,
        "from conflictscore_local.backends import registry\n"
        "registry.config_for('judge', 'nli', {'runtime': 'quarter'})",
    )
    assert refused.returncode == 1
    assert (
        "judge 'nli': argument 'runtime': 'quarter' is not allowed; allowed: auto, torch, compile, onnx, native, "
        "openvino, vllm, serve, half"
    ) in refused.stderr


def test_a_name_registered_before_the_owner_hands_its_table_over_is_kept(logged: Any) -> None:
    """A namespace whose table lives in a room above the registry (the runtimes, the commands) gets it from
    its owner when the owner is imported: a name registered before (a script, a test) is added to it, a
    name the table has keeps the table's target, and the owner's table is the namespace's from then on."""
    fresh = Registry({"runtime": (None, True)})
    fresh["runtime"].register("early", "my_pkg:Early")
    fresh["runtime"].register("torch", "my_pkg:NotTorch")
    table = {"torch": "theirs:TorchRuntime", "onnx": "theirs:OnnxRuntime"}
    with logged.expect("runtime 'torch' is already registered; the registered one is kept"):
        assert fresh.provide("runtime", table) is table
    assert fresh["runtime"].table() is table and list(table) == ["torch", "onnx", "early"]
    assert table["torch"] == "theirs:TorchRuntime"
    assert fresh.provide("runtime", table) is table  # the owner imported again: nothing changes
    with pytest.raises(ConfigError, match="the runtime namespace already has its table"):
        fresh.provide("runtime", {})
    from conflictscore_local.judge.nli.runtimes import RUNTIMES

    assert REGISTRY["runtime"].table() is RUNTIMES


def test_a_plugin_that_fails_to_import_warns_and_the_rest_carries_on(broken_path: Path, tmp_path: Path) -> None:
    helped = run(broken_path, "--help")
    assert helped.returncode == 0, helped.stderr
    assert "usage: conflictscore" in helped.stdout and "  score " in helped.stdout
    assert (
        "entry point 'metric.broken' (broken_plugin:METRIC) of conflictscore_local.backends in the plugin "
        "broken-plugin: cannot be loaded (ModuleNotFoundError: No module named "
        "'a_dependency_that_is_not_installed'); left out"
    ) in helped.stderr
    assert "  broken " in helped.stdout and "a command of the plugin broken-plugin" in helped.stdout  # not imported
    named = run(broken_path, "broken")
    assert named.returncode == 2
    assert (
        "command 'broken' of the plugin broken-plugin (broken_plugin:add_parser) cannot be loaded: "
        "ModuleNotFoundError: No module named 'a_dependency_that_is_not_installed'; left out"
    ) in named.stderr
    assert "conflictscore: error: argument COMMAND: invalid choice: 'broken'" in named.stderr
    listed = run(broken_path, "backends", "--role", "judge", "--json")
    assert listed.returncode == 0, listed.stderr
    judges = json.loads(listed.stdout)["judge"]
    assert "nli" in judges and "description" in judges["nli"]
    assert judges["broken"] == {
        "unavailable": "judge 'broken' of the plugin broken-plugin (broken_plugin:Judge) "
        "cannot be loaded: ModuleNotFoundError: No module named "
        "'a_dependency_that_is_not_installed'"
    }
    items = tmp_path / "items.jsonl"
    items.write_text(
        json.dumps(
            {
                "id": "q",
                "response": "",
                "claims": ["A."],
                "documents": [{"id": "d", "text": "A."}],
                "labels": [["SUPPORT"]],
            }
        )
        + "\n"
    )
    scored = run(broken_path, "score", str(items), "-o", str(tmp_path / "o.jsonl"), "--no-cache", "-q")
    assert scored.returncode == 0, scored.stderr
    assert json.loads((tmp_path / "o.jsonl").read_text())["claims"][0]["support"] == ["d"]


def test_a_plugin_imports_the_role_bases_from_the_package() -> None:
    """Every role's Protocol and base class (its optional members with their defaults) are public: a plugin
    author imports no private ``_base`` module."""
    import conflictscore_local

    for role, (proto, base) in {
        "judge": ("Judge", "JudgeBase"),
        "pruner": ("Pruner", "PrunerBase"),
        "decomposer": ("Decomposer", "DecomposerBase"),
        "generator": ("Generator", "GeneratorBase"),
    }.items():
        assert getattr(conflictscore_local, proto) is registry.protocol(role), role
        assert getattr(conflictscore_local, base) is registry.role_base(role), role
        assert {proto, base} <= set(conflictscore_local.__all__), role
    from conflictscore_local.judge.nli.runtimes.base import RuntimeBase

    assert conflictscore_local.RuntimeBase is RuntimeBase and "RuntimeBase" in conflictscore_local.__all__
