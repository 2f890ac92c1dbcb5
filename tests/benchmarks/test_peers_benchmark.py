"""The parts of ``benchmarks/speed/peers.py`` (and what it reads from ``workloads.py``) that need no peer:
the plain float32 folder every peer loads, and the summary of timed passes (medians, the ratio to the
engine's default, labels, the paired auto ÷ none ratios, the table the docs render)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="module")
def P() -> Any:
    from benchmarks.speed import peers

    return peers


def _checkpoint(folder: Path, packed: bool) -> dict[str, Any]:
    import torch
    from safetensors.torch import save_file

    from conflictscore_local.backends.packed import pack, round_trip

    folder.mkdir()
    state = {
        "emb.weight": round_trip(torch.tensor([[0.5, -1.25], [3.0, 0.0]])),
        "dense.weight": torch.tensor([[0.1, 0.2]], dtype=torch.float16),
        "ids": torch.tensor([1, 2]),
    }
    if packed:
        pack(state, ("emb.weight",), folder)
    else:
        save_file(
            {k: v.to(torch.float16) if v.is_floating_point() else v for k, v in state.items()},
            str(folder / "model.safetensors"),
        )
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "dtype": "float16"}), encoding="utf-8")
    (folder / "tokenizer.json").write_text("{}", encoding="utf-8")
    return state


@pytest.mark.parametrize("packed", [False, True], ids=["float16", "packed"])
def test_plain_folder_is_float32_with_the_same_values(tmp_path: Path, packed: bool) -> None:
    import torch
    from safetensors.torch import load_file

    from benchmarks._lib import workloads as W

    state = _checkpoint(tmp_path / "judge", packed)
    out = W.plain_folder(tmp_path / "judge", tmp_path / "plain")
    got = load_file(str(out / "model.safetensors"))
    assert sorted(got) == sorted(state)
    assert got["emb.weight"].dtype == got["dense.weight"].dtype == torch.float32
    assert torch.equal(got["emb.weight"], state["emb.weight"])
    assert torch.equal(got["dense.weight"], state["dense.weight"].float())  # float16 → float32 is exact
    assert torch.equal(got["ids"], torch.tensor([1, 2]))
    assert json.loads((out / "config.json").read_text(encoding="utf-8")) == {"model_type": "bert", "dtype": "float32"}
    assert (out / "tokenizer.json").read_text(encoding="utf-8") == "{}"
    assert not (out / "model.packed.safetensors").exists()


class _Peer:
    def __init__(self, info: dict[str, Any]):
        self.info = info


class _Judge:
    """What ``summarise`` asks of ``throughput_peers.Peers``: the label count and the labels of rows."""

    labels = {0: "SUPPORT", 1: "CONTRADICT", 2: "IRRELEVANT"}

    def doc_labels_of(self, items: Any, pairs: Any, rows: list[list[float]]) -> dict[Any, str]:
        return {("q", 0, f"d{k}"): self.labels[max(range(3), key=r.__getitem__)] for k, r in enumerate(rows)}


def test_summary_medians_ratios_labels_and_table(P: Any) -> None:
    jobs = {"rag": ["item"]}
    ref = {("q", 0, "d0"): "SUPPORT", ("q", 0, "d1"): "IRRELEVANT"}
    running = {
        "engine_none": _Peer({"ready": True, "load_s": None}),
        "engine_default": _Peer({"load_s": None}),
        "st-onnx": _Peer({"ready": True, "load_s": 4.5, "versions": {"onnxruntime": "1.32.0"}}),
        "fastembed": _Peer({"load_s": 2.0}),
    }
    times = {
        "engine_none": {"rag": [2.0, 4.0, 3.0]},
        "engine_default": {"rag": [2.2, 3.6, 3.3]},
        "st-onnx": {"rag": [1.5, 1.2, 9.0]},
        "fastembed": {"rag": [3.0, 3.0, 3.0]},
    }
    rows = {
        "engine_none": {},
        "engine_default": {},
        "st-onnx": {"rag": [[0.8, 0.1, 0.1], [0.6, 0.1, 0.3]]},
        "fastembed": {"rag": [[2.5], [-1.0]]},
    }
    engine_labels = {"engine_none": {"rag": ref}, "engine_default": {"rag": dict(ref)}}
    engine_runs = {"engine_none": {"rag": {"wall_s": 3.0}}, "engine_default": {"rag": {"wall_s": 3.3}}}
    cold = {"engine_none": 5.0, "engine_default": 5.5, "st-onnx": 1.9, "fastembed": 3.1}
    out = P.summarise(
        jobs,
        {"rag": []},
        _Judge(),
        running,
        {"flashrank": {"reason": "no local folder"}},
        times,
        rows,
        cold,
        engine_labels,
        engine_runs,
    )
    onnx = out["peers"]["st-onnx"]["workloads"]["rag"]
    # medians 1.5 (st-onnx) and 3.3 (engine_default): 1.5 / 3.3 = 0.4545...
    assert (onnx["median_s"], onnx["fastest_s"], onnx["over_engine_default"]) == (1.5, 1.2, 0.455)
    # its second pair says SUPPORT where the engine said IRRELEVANT
    assert (onnx["labels_equal"], onnx["labels_total"]) == (1, 2)
    assert out["peers"]["st-onnx"]["load_s"] == 4.5 and out["peers"]["st-onnx"]["cold_s"] == 1.9
    assert "not comparable" in out["peers"]["fastembed"]["workloads"]["rag"]["labels"]
    assert out["peers"]["engine_default"]["workloads"]["rag"]["labels_equal"] == 2
    # auto ÷ none round by round: 2.2/2.0, 3.6/4.0, 3.3/3.0
    assert out["auto_over_none"]["rag"] == {"median": 1.1, "min": 0.9, "max": 1.1, "per_round": [1.1, 0.9, 1.1]}
    assert out["unavailable"] == {"flashrank": {"reason": "no local folder"}}
    assert out["table"]["rows"][2:] == [
        ["rag", "st-onnx", "1.500", "0.455", "1/2"],
        ["rag", "fastembed", "3.000", "0.909", "n/a (one score)"],
    ]


def test_infinity_rows_in_class_index_order_and_its_refusals_say_why(P: Any) -> None:
    """Infinity's ``/classify`` answers each text with its labels sorted by score: the peer sends one request
    per passage (its pairs as ``passage [SEP] claim``), puts each answer back at its pair's place, in the
    checkpoint's class-index order; an HTTP error is the peer's ``Unavailable`` with the server's reason."""
    import concurrent.futures as cf
    import http.server
    import threading

    seen: list[list[str]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the http.server name)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(body["input"])
            if len(body["input"]) > 2:
                reply, code = {"error": {"message": "batch too large for this stub"}}, 400
            else:  # CONTRADICT for a claim ending "no", SUPPORT otherwise; the labels sorted by score
                reply = {"data": [], "object": "classify"}
                for text in body["input"]:
                    top = "CONTRADICT" if text.endswith("no") else "SUPPORT"
                    rest = [x for x in ("SUPPORT", "CONTRADICT") if x != top][0]
                    scored = [{"label": top, "score": 0.7}, {"label": rest, "score": 0.2}]
                    reply["data"].append(scored + [{"label": "IRRELEVANT", "score": 0.1}])
                code = 200
            data = json.dumps(reply).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    peer = object.__new__(P.InfinityPeer)  # the requests and their reading, without starting a server
    peer.url = f"http://127.0.0.1:{server.server_address[1]}"
    peer.index = {"SUPPORT": 0, "IRRELEVANT": 1, "CONTRADICT": 2}
    peer.sep = " [SEP] "
    peer.pool = cf.ThreadPoolExecutor(4)
    peer.pairs = {"w": [["p1", "yes"], ["p2", "no"], ["p1", "no"]], "big": [["p", "a"], ["p", "b"], ["p", "c"]]}
    try:
        seconds, rows = peer.run("w")
        assert seconds > 0
        assert rows == [[0.7, 0.1, 0.2], [0.2, 0.1, 0.7], [0.2, 0.1, 0.7]]
        assert sorted(seen) == [["p1 [SEP] yes", "p1 [SEP] no"], ["p2 [SEP] no"]]  # one request per passage
        with pytest.raises(P.Unavailable, match="HTTP 400 from /classify: .*batch too large for this stub"):
            peer.run("big")
    finally:
        peer.pool.shutdown()
        server.shutdown()
        server.server_close()


def test_onnx_engine_rows_pass_their_judge_arguments_and_a_refused_runtime_is_unavailable(
    P: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    from conflictscore_local.core.errors import BackendUnavailable

    built: list[dict[str, Any]] = []

    class FakePeers:
        threads = 2

        def __init__(self, tmp: Path, threads: int, runtime: str = "auto", judge_args: Any = None):
            built.append({"tmp": tmp.name, "threads": threads, "runtime": runtime, "judge_args": judge_args})
            if judge_args.get("int8") and (tmp.parent / "refuse").exists():
                raise BackendUnavailable("judge nli: runtime=onnx needs onnxruntime")
            # what the ONNX runtime's spec says it ran (a judge that ignored int8 would say None)
            spec = {"runtime": "onnx", "quantization": "dynamic-int8" if judge_args.get("int8") else None}
            self.judge = SimpleNamespace(
                describe=lambda: {"resolved": {"runtime": "onnx"}},
                runtime=lambda: SimpleNamespace(spec=lambda: spec),
            )

        def new_cache(self) -> Path:
            return tmp_path / "cache.sqlite"

        def run_engine(self, items: Any, *, pruner: Any, cache: Path) -> dict[str, Any]:
            return {"wall_s": 0.0}

    monkeypatch.setattr(P, "Peers", FakePeers)
    monkeypatch.setattr(P, "ramdocs_questions", lambda root: ["q1", "q2", "q3"])
    monkeypatch.setattr(P, "rag_job", lambda questions, n: list(questions))
    args = SimpleNamespace(threads=2, data_dir=str(tmp_path))
    plain = P.onnx_engine("engine_onnx", tmp_path, args, {}, {})
    int8 = P.onnx_engine("engine_onnx_int8", tmp_path, args, {}, {})
    export = {n: str(tmp_path / n / "onnx") for n in ("engine_onnx", "engine_onnx_int8")}  # in the run's folder
    assert built == [
        {"tmp": "engine_onnx", "threads": 2, "runtime": "onnx", "judge_args": {"export_dir": export["engine_onnx"]}},
        {
            "tmp": "engine_onnx_int8",
            "threads": 2,
            "runtime": "onnx",
            "judge_args": {"int8": True, "export_dir": export["engine_onnx_int8"]},
        },
    ]
    assert (plain.name, int8.name) == ("engine_onnx", "engine_onnx_int8")
    assert "quantization" not in plain.info["resolved"]
    assert int8.info["resolved"]["quantization"] == "dynamic-int8"
    assert set(P.ONNX_ENGINE) <= set(P.ENGINE) <= set(P.ALL)

    (tmp_path / "again" / "refuse").mkdir(parents=True)
    with pytest.raises(P.Unavailable, match="runtime=onnx needs onnxruntime"):
        P.onnx_engine("engine_onnx_int8", tmp_path / "again", args, {}, {})


def test_infinity_refuses_a_tokenizer_without_separator_before_it_opens_a_log(
    P: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, folder = tmp_path / "repo", tmp_path / "model"
    (root / ".venv-peer-infinity" / "bin").mkdir(parents=True)
    (root / ".venv-peer-infinity" / "bin" / "infinity_emb").write_text("", encoding="utf-8")
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"id2label": {"0": "SUPPORT"}}), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps({"cls_token": "[CLS]"}), encoding="utf-8")
    monkeypatch.setattr(P, "repo_root", lambda: root)
    log = tmp_path / "infinity.log"
    with pytest.raises(P.Unavailable, match="names no sep_token"):
        P.InfinityPeer("infinity-torch", "torch", ".venv-peer-infinity", folder, {}, 2, log)
    assert not log.exists()  # refused before the server's log was opened: nothing left open or behind
