"""``runtime=openvino``: the ``nli`` judge's ONNX export (:mod:`.onnx`) compiled by OpenVINO for the CPU.

Opt-in (``runtime=openvino``, the ``openvino`` extra), never what ``auto`` picks: its float32
probabilities differ from PyTorch's in the last digits (about 4e-6 on real pairs), so a label on a
threshold could move. Measured against the other runtimes on one machine in
``benchmarks/results/speed/forward_peak-*.md`` (``benchmarks/speed/forward_peak.py``).

Precision is always set, never left to OpenVINO: its CPU plugin picks a default by CPU (``bf16`` on
the AMX Xeon measured here), which would make ``dtype=auto`` change labels by machine kind. ``auto``
and ``float32`` compile with ``INFERENCE_PRECISION_HINT=f32``; ``bfloat16`` asks for ``bf16`` and is
refused on a CPU without native bf16 (OpenVINO would run float32 and the record would lie). What
ran is read back from the compiled model and recorded (``resolved.openvino_precision``).

The graph is the ONNX runtime's export, cached and checked against PyTorch the same way
(``export_dir``); OpenVINO reads it as it is, one stream with as many threads as this process may use.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

from ....core.errors import ConfigError
from ....util.extras import requires
from .base import Classifier, DoneFn, Features, Row, check_num_labels, run_batched
from .onnx import OnnxRuntime, _inputs, _softmax

INSTALL_HINT = "pip install 'conflictscore-local[openvino]'"
PRECISION = {"auto": "f32", "float32": "f32", "bfloat16": "bf16"}
"""The judge's ``dtype`` → OpenVINO's ``INFERENCE_PRECISION_HINT``."""
DTYPE_OF = {"f32": "float32", "bf16": "bfloat16"}


def import_openvino() -> Any:
    return requires("openvino", "judge nli: runtime=openvino", package="OpenVINO", install=INSTALL_HINT)


def threads() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class OpenVinoRuntime(OnnxRuntime):
    """The judge's ONNX export compiled by OpenVINO's CPU plugin at float32 or (native) bfloat16."""

    name = "openvino"
    auto = "opt-in"
    takes_int8 = False

    def __init__(self, classifier: Classifier):
        self.classifier = c = classifier
        self._session: Any = None
        self._inputs: list[str] = []
        if c.device not in ("auto", "cpu"):
            raise ConfigError(
                f"judge nli: runtime=openvino runs on the CPU; device={c.device} needs runtime=torch "
                "(or the vllm judge)"
            )
        if c.dtype not in PRECISION:
            raise ConfigError(
                f"judge nli: runtime=openvino runs dtype=float32 or bfloat16 (auto: float32); "
                f"dtype={c.dtype} needs runtime=torch"
            )
        if c.int8:
            raise ConfigError(
                "judge nli: int8=true needs runtime=onnx (dynamic int8 quantization); runtime is openvino"
            )

    def precision(self) -> str:
        """The ``INFERENCE_PRECISION_HINT`` asked for; ``ConfigError`` for bf16 on a CPU without it."""
        hint = PRECISION[self.classifier.dtype]
        if hint == "bf16":
            from ....util.devices import native_cpu_bf16

            native, why = native_cpu_bf16()
            if not native:
                raise ConfigError(
                    f"judge nli: runtime=openvino dtype=bfloat16 needs a CPU with native bf16, and {why}; "
                    "use dtype=float32"
                )
        return hint

    def spec(self) -> dict[str, Any]:
        return {"runtime": self.name, "dtype": DTYPE_OF[PRECISION[self.classifier.dtype]], "quantization": None}

    def session(self) -> Any:
        """The compiled model (exported first if needed), its precision read back and recorded."""
        if self._session is None:
            hint = self.precision()
            ov = import_openvino()
            c = self.classifier
            path: Path = self.ensure_export()
            compiled = ov.Core().compile_model(
                str(path),
                "CPU",
                {"INFERENCE_PRECISION_HINT": hint, "NUM_STREAMS": 1, "INFERENCE_NUM_THREADS": threads()},
            )
            found = compiled.get_property("INFERENCE_PRECISION_HINT")
            ran = found.get_type_name() if hasattr(found, "get_type_name") else str(found)
            if ran != hint:
                raise ConfigError(
                    f"judge nli: OpenVINO compiled the judge at {ran}, not the {hint} asked for; use runtime=torch"
                )
            out = compiled.outputs[0].get_partial_shape()
            if out.rank.is_static and out[out.rank.get_length() - 1].is_static:
                check_num_labels(out[out.rank.get_length() - 1].get_length(), c.labels, c.path)
            self._inputs = [i.get_any_name() for i in compiled.inputs]
            self._session = compiled
            c.record(
                device="cpu",
                dtype=DTYPE_OF[ran],
                onnx_model=str(path),
                quantization=None,
                openvino_precision=ran,
                openvino=ov.__version__,
            )
        return self._session

    def classify(self, feats: Sequence[Features], on_done: DoneFn | None = None) -> list[Row]:
        compiled = self.session()
        request = compiled.create_infer_request()
        c = self.classifier
        tok = c.tokenizer()

        def forward(batch: list[Features]) -> list[list[float]]:
            padded = tok.pad(batch, return_tensors="np")
            c.count("batches")
            return _softmax(request.infer(_inputs(self._inputs, padded))[compiled.outputs[0]])

        return run_batched(
            feats, forward, max_pairs=c.batch_size, max_tokens=c.max_batch_tokens or 2048, on_done=on_done
        )
