"""Fixtures of the model-staging tests: a private manifest folder and store, manifests and model folders built here."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import pytest

COMMIT = "3b1f" * 10
MNLI = {"0": "entailment", "1": "neutral", "2": "contradiction"}
MNLI_MAP = {"0": "SUPPORT", "1": "IRRELEVANT", "2": "CONTRADICT"}


@dataclass
class Staging:
    manifests: Path
    store: Path

    def manifest(
        self,
        name: str,
        *,
        revision: str | None = COMMIT,
        id2label: Mapping[str, str] | None = MNLI,
        mapping: Mapping[str, str] | None = MNLI_MAP,
        files: tuple[str, ...] = (),
        role: str = "judge",
        backend: str = "nli",
        repo: str | None = None,
    ) -> Path:
        """Write ``<manifests>/<name>.toml`` for a hub model ``org/<name>``."""

        def table(d: Mapping[str, str]) -> str:
            return "{ " + ", ".join(f'"{k}" = "{v}"' for k, v in d.items()) + " }"

        pin = f'revision = "{revision}"' if revision else 'unpinned = "the repository has no release commit"'
        labels = f"[labels]\nid2label = {table(id2label)}\nmap = {table(mapping)}\n" if id2label and mapping else ""
        text = (
            f'name = "{name}"\nsummary = "a test model"\nlicense = "MIT"\nsize = "tiny"\nfigures = "none"\n'
            f'[source]\nkind = "hub"\nrepo = "{repo or "org/" + name}"\n{pin}\nfiles = {json.dumps(list(files))}\n'
            f'{labels}[[use]]\nrole = "{role}"\nbackend = "{backend}"\n'
        )
        path = self.manifests / f"{name}.toml"
        path.write_text(text)
        return path


@pytest.fixture
def staging(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Staging:
    """``$CONFLICTSCORE_MANIFESTS`` and ``$CONFLICTSCORE_MODELS`` pointed at empty folders of this test."""
    s = Staging(tmp_path / "manifests", tmp_path / "store")
    s.manifests.mkdir()
    monkeypatch.setenv("CONFLICTSCORE_MANIFESTS", str(s.manifests))
    monkeypatch.setenv("CONFLICTSCORE_MODELS", str(s.store))
    return s


def fake_checkpoint(folder: Path, id2label: Mapping[str, str] = MNLI) -> Path:
    """A small model folder (hashed, never loaded): config.json with ``id2label``, weights, tokenizer, a subfolder."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "id2label": dict(id2label)}))
    (folder / "model.safetensors").write_bytes(bytes(range(256)) * 64)
    (folder / "tokenizer.json").write_text('{"version": "1.0"}')
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": true}')
    return folder
