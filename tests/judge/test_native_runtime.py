"""``runtime=native`` (the BERT forward without transformers) and ``runtime=auto`` by measurement.

The native runtime must give ``runtime=torch``'s token ids and probabilities exactly (same
operations, same order); ``auto``'s decision logic and its stored choice are tested with injected
times, never measured ones."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.core.errors import BackendUnavailable
from conflictscore_local.core.types import Claim, Pair, Passage
from conflictscore_local.judge.nli import calibrate
from conflictscore_local.judge.nli.calibrate import Choice, Trial, choice_key, choose, store, stored
from conflictscore_local.util.devices import native_cpu_bf16

REPO = Path(__file__).resolve().parents[2]

PASSAGES = (
    "The bridge opened to traffic in 1934 after four years of work.",
    "Records show the bridge opened in 1932. " * 30,  # past the tiny model's window: cut
    "Coffee is grown in Brazil.",
)
CLAIMS = ("The bridge opened in 1932.", "Coffee grows in Brazil.")


def pairs() -> list[Pair]:
    return [
        Pair(Claim("i", k, c), Passage("i", f"d{j}", 0, p))
        for k, c in enumerate(CLAIMS)
        for j, p in enumerate(PASSAGES)
    ]


def build(model: Path, **args: Any) -> Any:
    return registry.build("judge", "nli", {"model": str(model), "dtype": "float32", "max_length": 64, **args})


@pytest.mark.parametrize("batch_size", [1, 4, 64])
def test_native_gives_the_torch_judges_labels_probabilities_and_notes(tiny_nli_dir: Path, batch_size: int) -> None:
    torch_judge, native = (
        build(tiny_nli_dir, runtime="torch", batch_size=batch_size),
        build(tiny_nli_dir, runtime="native", batch_size=batch_size),
    )
    a, b = torch_judge.judge(pairs()), native.judge(pairs())
    assert [(j.label, j.probs, j.note) for j in b] == [(j.label, j.probs, j.note) for j in a]
    assert sum(j.note is not None for j in b) == 2  # the long passage, cut for both claims
    assert type(native.tokenizer()).__name__ == "NativeTokenizer"
    assert native.spec()["runtime"] == "native" and torch_judge.spec()["runtime"] == "torch"  # keyed apart
    assert native.describe()["resolved"]["runtime_reason"] == "given"
    texts = list(PASSAGES) + list(CLAIMS)
    assert native.encode(texts, texts[::-1]) == torch_judge.encode(texts, texts[::-1])


def test_native_refuses_an_architecture_it_does_not_reproduce(tiny_nli_factory: Any) -> None:
    judge = build(tiny_nli_factory(arch="deberta-v2"), runtime="native")
    with pytest.raises(
        BackendUnavailable,
        match=r"runtime=native cannot run .*: architectures "
        r"\['DebertaV2ForSequenceClassification'\] \(supported: BertForSequenceClassification\); "
        r"use runtime=torch$",
    ):
        judge.judge(pairs())


def trial(name: str, load: float, forward: float, labels: tuple[int, ...] = (0, 1, 2, 0)) -> Trial:
    return Trial(name, load, forward, labels)


def test_choose_takes_the_cheapest_at_torchs_labels_over_a_minute_of_judging() -> None:
    # torch: 4 pairs in 0.4 s → 600 pairs in 60 s; cost 3 + 60 = 63
    trials = [
        trial("torch", 3.0, 0.4),
        trial("native", 1.0, 0.4),  # 1 + 60 = 61: 0.968 of torch
        trial("compile", 20.0, 0.2),  # 20 + 30 = 50: cheaper than native
        trial("onnx", 1.0, 0.1, (0, 1, 1, 0)),
    ]  # cheapest, but one label differs
    got = choose(trials)
    assert got.runtime == "compile"
    assert got.reason == (
        "measured: compile, the cheapest at torch's labels on 4 probe pairs (load + 60 s of "
        "torch's judging); native 0.968x torch's cost; compile 0.794x torch's cost; "
        "onnx: 1 of 4 probe labels differ from torch's"
    )
    assert choose(trials, judging_s=6.0).runtime == "native"  # short runs: loading decides (1+6 vs 3+6, 20+3)


def test_choose_keeps_torch_within_the_margin_and_when_torch_failed() -> None:
    assert choose([trial("torch", 3.0, 0.4), trial("native", 2.0, 0.4)]).runtime == "torch"  # 62/63 > 0.95
    failed = choose([Trial("torch", error="OSError: no weights"), trial("native", 0.1, 0.1)])
    assert (failed.runtime, failed.reason) == (
        "torch",
        "calibration could not run runtime=torch (OSError: no weights): torch",
    )
    missing = choose([trial("torch", 3.0, 0.4), Trial("compile", error="no C compiler on PATH (cc, gcc, clang)")])
    assert missing.runtime == "torch" and missing.reason.endswith("; compile: no C compiler on PATH (cc, gcc, clang)")


def test_a_stored_choice_is_read_back_by_its_key_only(tmp_path: Path) -> None:
    config = {"architectures": ["BertForSequenceClassification"], "hidden_size": 384}
    key = choice_key(config, "cpu", "float32", flags=["avx2"])
    assert key != choice_key(config, "cpu", "float32", flags=["avx2", "avx512_bf16"])  # another CPU kind
    assert key != choice_key({**config, "hidden_size": 768}, "cpu", "float32", flags=["avx2"])
    store(tmp_path, key, Choice("native", "measured"))
    store(tmp_path, "other", Choice("onnx", "elsewhere"))
    assert stored(tmp_path, key) == Choice("native", "measured")
    assert stored(tmp_path, "missing") is None
    (tmp_path / calibrate.CHOICE_FILE).write_text("{not json", encoding="utf-8")
    assert stored(tmp_path, key) is None  # a damaged file is measured again, never a crash


def test_auto_calibrates_once_then_reads_the_stored_choice(
    tiny_nli_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CONFLICTSCORE_NLI_RUNTIME")
    times = {"torch": Trial("torch", 6.0, 0.4), "native": Trial("native", 0.5, 0.4)}
    measured = []

    def fake_measure(name: str, runtime: Any, tok: Any, encode: Any, **kw: Any) -> Trial:
        measured.append((name, type(runtime).__name__, type(tok).__name__))
        labels = tuple(0 for _ in encode(tok))
        return Trial(name, times[name].load_s, times[name].forward_s, labels)

    monkeypatch.setattr(calibrate, "measure", fake_measure)
    judge = build(tiny_nli_dir)
    judge.use_cache_dir(tmp_path)
    got = judge.judge(pairs())
    assert measured == [("torch", "TorchRuntime", "BertTokenizer"), ("native", "NativeRuntime", "NativeTokenizer")]
    resolved = judge.describe()["resolved"]
    assert resolved["runtime"] == "native"
    assert resolved["runtime_reason"].startswith("auto: calibrated now, stored as ")
    # the tokenizer's real load time is added to each injected load time: the ratio's last digit moves
    assert re.search(
        r": measured: native, the cheapest at torch's labels on 24 probe pairs \(load \+ 60 s of "
        r"torch's judging\); compile: opt-in only: not torch's output bit for bit \(runtime=compile asks "
        r"for it\); onnx: opt-in only: not torch's output bit for bit \(runtime=onnx asks for it\); "
        r"openvino: opt-in only: not torch's output bit for bit \(runtime=openvino asks for it\); "
        r"native 0\.9\d\dx torch's cost$",
        resolved["runtime_reason"],
    ), resolved["runtime_reason"]
    assert [j.probs for j in got] == [j.probs for j in build(tiny_nli_dir, runtime="torch").judge(pairs())]
    data = json.loads((tmp_path / calibrate.CHOICE_FILE).read_text(encoding="utf-8"))
    assert [c["runtime"] for c in data["choices"].values()] == ["native"]

    measured.clear()
    again = build(tiny_nli_dir)
    again.use_cache_dir(tmp_path)
    again.judge(pairs()[:1])
    assert measured == []  # read back, not measured again
    assert again.describe()["resolved"]["runtime_reason"].startswith("auto: stored choice ")


def test_the_environment_variable_and_other_dtypes_skip_calibration(tiny_nli_dir: Path) -> None:
    judge = build(tiny_nli_dir)  # CONFLICTSCORE_NLI_RUNTIME=torch (tests/conftest.py)
    assert judge.runtime_name() == "torch"
    assert judge.describe()["resolved"]["runtime_reason"] == "auto: $CONFLICTSCORE_NLI_RUNTIME=torch"


def test_scoring_given_claims_imports_neither_spacy_nor_transformers_under_native(
    tiny_nli_dir: Path, tmp_path: Path
) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text(
        json.dumps(
            {"id": "q", "claims": ["The bridge opened in 1932."], "documents": [{"id": "d", "text": PASSAGES[0]}]}
        )
        + "\n",
        encoding="utf-8",
    )
    code = (
        "import sys\nfrom conflictscore_local.cli.app import main\n"
        f"try:\n    sys.exit(main(['score', {str(items)!r}, '-o', {str(tmp_path / 'out.jsonl')!r}, '-q', '--no-cache',"
        f" '--pruner', 'none', '--judge-arg', 'model={tiny_nli_dir}', '--judge-arg', 'runtime=native']))\n"
        "except SystemExit as e:\n    assert not e.code, e.code\n"
        "print(sorted(m for m in ('spacy', 'transformers', 'scipy', 'thinc') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert json.loads((tmp_path / "out.jsonl").read_text(encoding="utf-8"))["claims"][0]["judgments"][0]["label"]


def test_auto_at_bfloat16_on_a_cpu_takes_native_where_it_runs_the_checkpoint(
    tiny_nli_dir: Path, tiny_nli_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CONFLICTSCORE_NLI_RUNTIME")
    judge = build(tiny_nli_dir, dtype="bfloat16", device="cpu")
    assert judge.runtime_name() == "native"
    assert (
        judge.describe()["resolved"]["runtime_reason"]
        == "auto: native at bfloat16 on the CPU (the fastest bfloat16 forward in PyTorch measured)"
    )
    other = build(tiny_nli_factory(arch="deberta-v2"), dtype="bfloat16", device="cpu")
    assert other.runtime_name() == "torch"
    assert re.fullmatch(
        r"auto: torch at bfloat16 \(judge nli: runtime=native cannot run .*: architectures "
        r"\['DebertaV2ForSequenceClassification'\] .*\)",
        other.describe()["resolved"]["runtime_reason"],
    )
    assert build(tiny_nli_dir, dtype="float16", device="cpu").runtime_name() == "torch"  # calibration is float32's


def test_prepacking_is_for_native_bfloat16_on_the_cpu_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from conflictscore_local.judge.nli.runtimes import native
    from conflictscore_local.util import devices

    cpu = torch.device("cpu")
    assert native.can_prepack(torch.float32, cpu) == (False, "F.linear")
    assert native.can_prepack(torch.bfloat16, torch.device("meta")) == (False, "F.linear")
    monkeypatch.setattr(devices, "native_cpu_bf16", lambda: (False, "no native bf16 here"))
    assert native.can_prepack(torch.bfloat16, cpu) == (False, "F.linear (no native bf16 here)")
    monkeypatch.setattr(devices, "native_cpu_bf16", lambda: (True, "native"))
    assert native.can_prepack(torch.bfloat16, cpu) == (True, "oneDNN, weights prepacked")


@pytest.mark.skipif(not native_cpu_bf16()[0], reason="bfloat16 is emulated on this CPU: nothing is prepacked")
def test_native_bfloat16_with_prepacked_weights_keeps_torch_bfloat16s_labels(tiny_nli_dir: Path) -> None:
    torch_judge = build(tiny_nli_dir, runtime="torch", dtype="bfloat16", device="cpu")
    native = build(tiny_nli_dir, runtime="native", dtype="bfloat16", device="cpu")
    a, b = torch_judge.judge(pairs()), native.judge(pairs())
    assert native.describe()["resolved"]["linear"] == "oneDNN, weights prepacked"
    assert native.runtime().model().packed  # the linear layers really run on the reordered weights
    assert [j.label for j in b] == [j.label for j in a]
    assert max(abs(x.probs[k] - y.probs[k]) for x, y in zip(a, b) for k in x.probs) <= 0.03  # BF16_TOLERANCE
