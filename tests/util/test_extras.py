"""``util/extras.requires``: the one way an optional package is imported, naming the extra that
installs it, and saying so when the package is there but does not import."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conflictscore_local.core.errors import BackendUnavailable
from conflictscore_local.generate.vllm import INSTALL_HINT, import_vllm
from conflictscore_local.util.extras import requires


def test_an_installed_module_is_returned() -> None:
    import json

    assert requires("json", "anything") is json


def test_a_missing_package_names_its_extra_and_the_alternative(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(BackendUnavailable) as e:
        requires("pandas", "Results.to_pandas()", alternative="use Results.to_records()")
    assert str(e.value) == (
        "Results.to_pandas() needs pandas: pip install 'conflictscore-local[pandas]', or use Results.to_records()"
    )


def test_a_submodule_of_a_missing_package_is_the_package_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(BackendUnavailable) as e:
        requires("ray.data.llm", "judge ray with vllm", install="pip install ray")
    assert str(e.value) == "judge ray with vllm needs ray: pip install ray"


def test_a_missing_package_is_named_even_when_one_of_its_submodules_was_imported_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # CI's order: another test imported ray.data; with ray then blocked, ray/data/llm.py runs and its own
    # `import ray.llm` fails ("No module named 'ray.llm'; 'ray' is not a package"): still ray missing.
    import types

    (tmp_path / "llm.py").write_text("import ray.llm\n")
    data = types.ModuleType("ray.data")
    data.__path__ = [str(tmp_path)]
    monkeypatch.setitem(sys.modules, "ray.data", data)
    monkeypatch.delitem(sys.modules, "ray.data.llm", raising=False)
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(BackendUnavailable) as e:
        requires("ray.data.llm", "judge ray with vllm", install="pip install ray")
    assert str(e.value) == "judge ray with vllm needs ray: pip install ray"


def test_a_package_that_does_not_import_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "brokenpkg").mkdir()
    (tmp_path / "brokenpkg" / "__init__.py").write_text("import not_a_module_anywhere\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(BackendUnavailable) as e:
        requires("brokenpkg", "the thing", package="Broken")
    assert str(e.value) == (
        "the thing needs Broken, which does not import here (No module named "
        "'not_a_module_anywhere'): pip install brokenpkg"
    )


def test_the_vllm_backends_give_their_own_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)
    with pytest.raises(BackendUnavailable) as e:
        import_vllm()
    assert str(e.value) == f"a vllm backend needs vLLM: {INSTALL_HINT}"
