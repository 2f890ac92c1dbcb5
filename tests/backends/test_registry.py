"""One way to build a backend: ``registry.build``, which checks the role's Protocol; nested
generator configs spelled flat; registrations that come and go."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, Sequence

import pytest

from conflictscore_local import Engine
from conflictscore_local.backends import registry
from conflictscore_local.backends.arguments import argument_names, config_dict
from conflictscore_local.backends.backend import Backend, NoConfig
from conflictscore_local.core.errors import ConfigError
from conflictscore_local.core.types import Judgment, Pair
from conflictscore_local.generate.openai import OpenAIConfig
from conflictscore_local.generate.vllm import VLLMConfig
from conflictscore_local.judge.openai import OpenAIJudgeConfig
from conflictscore_local.judge.vllm import VLLMJudgeConfig

PACKAGE = Path(registry.__file__).parents[1]


class HalfJudge:
    """Judges, but is no Backend and has none of the optional members."""

    name = "half"
    Config = NoConfig

    def __init__(self, config: Any = None) -> None:
        self.config = config

    def judge(self, pairs: Sequence[Pair], on_progress: Any = None) -> list[Judgment]:
        return []


class NoBudgetJudge(Backend):
    name, role = "no-budget", "judge"

    def judge(self, pairs: Sequence[Pair], on_progress: Any = None) -> list[Judgment]:
        return []


def test_build_checks_the_role_and_names_what_is_missing(register_backend: Any) -> None:
    register_backend("judge", "half", HalfJudge)
    with pytest.raises(
        ConfigError,
        match=r"judge 'half': HalfJudge is not a judge: it has no spec, describe, "
        r"stats, use_cache_dir, close, passage_budget \(subclass ",
    ):
        registry.build("judge", "half")
    register_backend("judge", "no-budget", NoBudgetJudge)
    with pytest.raises(ConfigError, match="NoBudgetJudge is not a judge: it has no passage_budget"):
        registry.build("judge", "no-budget")
    with pytest.raises(ConfigError, match="judge HalfJudge: HalfJudge is not a judge"):
        Engine(judge=HalfJudge())
    register_backend("judge", "bare", type("Bare", (), {}))
    with pytest.raises(ConfigError, match="judge 'bare': Bare has no Config dataclass of its arguments"):
        registry.build("judge", "bare")


def test_build_takes_arguments_or_a_ready_config() -> None:
    nli = registry.build("judge", "nli", {"batch_size": "8", "device": "cpu"})
    again = registry.build("judge", "nli", nli.config)
    assert again.config is nli.config and nli.config.batch_size == 8


def test_library_code_builds_registered_backends_only_through_the_registry() -> None:
    classes = {registry.resolve(role, name).__name__ for role in registry.ROLES for name in registry.available(role)}
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in classes:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.func.id}(...)")
    assert found == []


def test_a_judge_holds_its_generator_config_nested_and_takes_its_arguments_flat() -> None:
    judge = registry.build("judge", "vllm", {"model": "/m", "dtype": "bfloat16", "top_logprobs": "5"})
    assert isinstance(judge.config.generator, VLLMConfig)
    assert (judge.config.generator.model, judge.config.generator.dtype, judge.config.top_logprobs) == (
        "/m",
        "bfloat16",
        5,
    )
    # one flat set of names, the generator's first, as the summary records and a replay reads them
    args = judge.describe()["args"]
    assert list(args)[:3] == ["model", "revision", "tokenizer"] and args["top_logprobs"] == 5
    assert list(args) == argument_names(VLLMJudgeConfig)
    assert registry.build("judge", "vllm", args).config == judge.config
    assert (
        registry.build("judge", "vllm", {"generator": {"model": "/m", "dtype": "bfloat16"}, "top_logprobs": 5}).config
        == judge.config
    )
    with pytest.raises(ConfigError, match=r"judge 'vllm': unknown argument 'modle'; allowed: model, revision, "):
        registry.build("judge", "vllm", {"modle": "/m"})
    with pytest.raises(ConfigError, match=r"gpu_memory_utilization must be a finite number in \(0, 1\]"):
        registry.build("judge", "vllm", {"model": "/m", "gpu_memory_utilization": 2})
    openai = registry.build("judge", "openai", {"base_url": "http://judge:8000/v1", "passage_words": 100})
    assert openai.config.generator == OpenAIConfig(base_url="http://judge:8000/v1")
    assert config_dict(openai.config)["base_url"] == "http://judge:8000/v1"
    assert not set(argument_names(OpenAIConfig)) & {
        f for f in OpenAIJudgeConfig.__dataclass_fields__ if f != "generator"
    }


def test_a_registration_lasts_for_its_with_block() -> None:
    with registry.registered("judge", "nli", HalfJudge):
        assert registry.resolve("judge", "nli") is HalfJudge
        with registry.registered("judge", "extra", HalfJudge):
            assert "extra" in registry.available("judge")
        assert "extra" not in registry.available("judge")
    assert registry.resolve("judge", "nli").__name__ == "NLIJudge"


class PlainJudge(Backend):
    """A judge written against the base of every role only (as before the role bases)."""

    name, role = "plain", "judge"

    def judge(self, pairs: Sequence[Pair], on_progress: Any = None) -> list[Judgment]:
        return []

    def passage_budget(self) -> None:
        return None


def test_every_role_base_declares_its_optional_members_with_their_defaults(register_backend: Any) -> None:
    from conflictscore_local.judge._base import Judge, JudgeBase
    from conflictscore_local.prune._base import Pruner, PrunerBase

    for role in registry.ROLES:  # each optional member is on the Protocol and defined on the base
        base = registry.role_base(role)
        assert base.role == role and set(base.OPTIONAL) <= set(registry.protocol_members(registry.protocol(role)))
        assert all(name in vars(base) for name in base.OPTIONAL), role
    assert JudgeBase.OPTIONAL == ("document_rule", "flops_per_token", "use_judgment_cache", "generator_engines")
    assert PrunerBase.OPTIONAL == ("cache_selections", "selection_spec", "decide", "use_vector_store")
    pruner = registry.build("pruner", "none")
    assert isinstance(pruner, (PrunerBase, Pruner)) and pruner.cache_selections is False
    assert pruner.selection_spec() == pruner.spec() and pruner.decide([[]]) is True
    assert pruner.use_vector_store(lambda: None) is None
    register_backend("judge", "plain", PlainJudge)
    judge = registry.build("judge", "plain")  # a plain Backend gets its role's defaults when built
    assert not isinstance(judge, JudgeBase) and isinstance(judge, Judge)
    assert (judge.document_rule(), judge.flops_per_token(), judge.generator_engines()) == (None, None, None)
    assert judge.use_judgment_cache("x.sqlite") is None


def test_the_engine_and_the_ray_judge_ask_no_backend_what_it_has() -> None:
    """Every optional member is called as declared: no getattr / hasattr probe, no isinstance by judge type."""
    probes = {}
    for rel in ("pipeline/engine.py", "prune/auto.py", "judge/llm.py", "judge/ray_data.py"):
        tree = ast.parse((PACKAGE / rel).read_text(encoding="utf-8"))
        found = [
            n.lineno
            for n in ast.walk(tree)
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and (
                n.func.id in ("hasattr", "callable")
                or (
                    n.func.id == "getattr"
                    and n.args
                    and isinstance(n.args[1], ast.Constant)
                    and n.args[1].value
                    in {
                        "document_rule",
                        "flops_per_token",
                        "use_judgment_cache",
                        "cache_selections",
                        "selection_spec",
                        "decide",
                        "use_vector_store",
                        "logprobs_refused",
                    }
                )
                or (n.func.id == "isinstance" and "Judge" in ast.unparse(n.args[1]))
            )
        ]
        if found:
            probes[rel] = found
    assert probes == {}
