"""``runtime=onnx``: the ``nli`` judge's classifier exported to ONNX once, run by ONNX Runtime.

Opt-in (``runtime=onnx``), never what ``auto`` picks: on an idle 2-core CPU ONNX Runtime ran
the default judge at 0.82–0.89× PyTorch's pairs/s with identical labels; it won (1.35–1.6×)
only on a machine overloaded by other jobs (``benchmarks/speed/onnx_throughput.py``,
``benchmarks/results/speed/onnx_throughput.md``). Dynamic int8 (``int8=true``) is faster than both
and changes some labels.

Tooling: transformers' own exporter (``transformers.exporters.OnnxExporter``, on
``torch.onnx.export`` + onnxscript) writes the graph, ONNX Runtime runs it, and int8 is
ONNX Runtime's ``quantize_dynamic`` applied to that export. Optimum's
``ORTModelForSequenceClassification`` was the first choice but cannot be installed here:
``optimum-onnx`` 0.1.0 (the current release) requires ``transformers<4.58`` and the project
runs transformers 5.

Exports are cached in ``export_dir`` (default ``onnx/`` beside the judgment cache, i.e.
``~/.cache/conflictscore/onnx`` or the folder of ``$CONFLICTSCORE_CACHE``), one folder per
checkpoint named by the hash of its weights, its ``config.json`` and the exporting library
versions; a folder appears whole or not at all (built aside, then renamed), so concurrent
runs are safe. Each fp32 export is checked against PyTorch on sample pairs before use: the
class probabilities must agree within ``EXPORT_TOLERANCE`` or the export is refused.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any, Sequence

from ....backends.checkpoints import model_fingerprint
from ....backends.packed import from_pretrained
from ....core.errors import BackendUnavailable, ConfigError
from ....util.environment import library_versions
from ....util.extras import requires
from .base import Classifier, DoneFn, Features, Row, RuntimeBase, check_num_labels, run_batched

log = logging.getLogger(__name__)

EXPORT_FORMAT = 1
EXPORT_TOLERANCE = 1e-4
"""Largest difference in any class probability allowed between the fp32 export and PyTorch."""
EXPORT_INFO = "conflictscore-onnx.json"
FP32_FILE, INT8_FILE = "model.onnx", "model.int8.onnx"
INSTALL_HINT = "pip install 'conflictscore-local[onnx]'"
EXPORT_LIBRARIES: tuple[str, ...] = ("torch", "transformers", "onnx", "onnxscript", "onnxruntime")
INT8_NOTE = (
    "dynamic int8 quantization changes some labels (9-12.5% of the default judge's on real pairs in "
    "benchmarks/results/speed/onnx_throughput.md); measure it on your data with "
    "python -m benchmarks.speed.onnx_throughput --model DIR"
)
SAMPLE_PAIRS: tuple[tuple[str, str], ...] = (
    ("The bridge over the river opened in 1932 after four years of work.", "The bridge opened in 1932."),
    (
        "Local papers reported that the bridge opened in 1934, two years later than planned, "
        "after a dispute between the city council and the builders over the cost of the steel.",
        "The bridge opened in 1932.",
    ),
    ("Marie Curie was born in Warsaw.", "Curie was born in Paris in 1867 and moved to Warsaw."),
    ("Water boils at 100 degrees Celsius at sea level.", "It is painted red."),
)
"""Pairs of different lengths (so batches are padded) to trace the export and to check it."""


def default_export_dir() -> Path:
    """``onnx/`` in the folder of the default judgment cache."""
    from ....util.locations import default_cache_path

    return default_cache_path().parent / "onnx"


def export_versions() -> dict[str, str]:
    """The libraries an export depends on (part of its cache key and of its record)."""
    return library_versions(EXPORT_LIBRARIES, missing="missing")


def export_key(checkpoint: Path, revision: str | None) -> str:
    """What names a checkpoint's export: its weights' hash, its config.json, the exporting versions."""
    config = (checkpoint / "config.json").read_bytes()
    v = export_versions()
    ident = {
        "format": EXPORT_FORMAT,
        "weights": model_fingerprint(checkpoint),
        "config_sha256": hashlib.sha256(config).hexdigest(),
        "revision": revision,
        "versions": {k: v[k] for k in ("torch", "transformers", "onnx", "onnxscript")},
    }
    return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]


def import_ort() -> Any:
    return requires("onnxruntime", "judge nli: runtime=onnx", package="ONNX Runtime", install=INSTALL_HINT)


@contextlib.contextmanager
def quiet() -> Any:
    """Keep the exporter's and quantizer's chatter out of the run's output: stdout (the CLI's
    ``--json``), warnings, and the log lines of torch.onnx, transformers and ONNX Runtime."""
    loggers = [logging.getLogger(n) for n in ("", "torch.onnx", "torch.export", "transformers")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def _softmax(logits: Any) -> list[list[float]]:
    import numpy as np

    z = np.asarray(logits, dtype=np.float64)
    z = np.exp(z - z.max(axis=-1, keepdims=True))
    return (z / z.sum(axis=-1, keepdims=True)).tolist()


def export_classifier(checkpoint: Path, out: Path, tokenizer: Any, *, revision: str | None = None) -> dict[str, Any]:
    """Export a sequence classifier to ``out/model.onnx`` (fp32, dynamic batch and length) and
    check it against PyTorch on :data:`SAMPLE_PAIRS`; returns what is recorded about it.

    ``BackendUnavailable`` when the exporter fails or the export disagrees with PyTorch by
    more than :data:`EXPORT_TOLERANCE`.
    """
    ort = import_ort()
    torch = requires("torch", "judge nli: exporting to ONNX", install=INSTALL_HINT)
    Dim = requires("torch.export", "judge nli: exporting to ONNX", install=INSTALL_HINT).Dim
    AutoModelForSequenceClassification = requires(
        "transformers", "judge nli: exporting to ONNX", install=INSTALL_HINT
    ).AutoModelForSequenceClassification
    exporters = requires("transformers.exporters", "judge nli: exporting to ONNX", install=INSTALL_HINT)
    OnnxConfig, OnnxExporter = exporters.OnnxConfig, exporters.OnnxExporter
    with quiet():
        model = from_pretrained(
            AutoModelForSequenceClassification, checkpoint, revision=revision, dtype=torch.float32
        ).eval()
    keys = [k for k in tokenizer.model_input_names if k in ("input_ids", "token_type_ids", "attention_mask")]
    limit = min(512, getattr(model.config, "max_position_embeddings", 512) or 512)
    passages, claims = [p for p, _ in SAMPLE_PAIRS], [c for _, c in SAMPLE_PAIRS]
    sample = tokenizer(
        passages[:2], claims[:2], padding=True, truncation="only_first", max_length=limit, return_tensors="pt"
    )
    sample = {k: sample[k] for k in keys}
    batch, seq = Dim("batch", min=1, max=1 << 16), Dim("sequence", min=2, max=limit)
    config = OnnxConfig(dynamic_shapes={k: {0: batch, 1: seq} for k in sample})
    try:
        with quiet():
            OnnxExporter().export(model, sample, config).save_pretrained(out)
    except Exception as e:
        raise BackendUnavailable(
            f"judge nli: cannot export {checkpoint} to ONNX ({type(e).__name__}: {str(e)[:300]}); use runtime=torch"
        ) from e
    check = tokenizer(passages, claims, padding=True, truncation="only_first", max_length=limit, return_tensors="np")
    session = ort.InferenceSession(str(out / FP32_FILE), providers=["CPUExecutionProvider"])
    onnx_probs = _softmax(session.run(None, _inputs(_input_names(session), check))[0])
    with torch.inference_mode():
        torch_probs = _softmax(model(**{k: torch.from_numpy(check[k]) for k in keys}).logits.numpy())
    diff = max(abs(a - b) for ra, rb in zip(onnx_probs, torch_probs) for a, b in zip(ra, rb))
    if diff > EXPORT_TOLERANCE:
        raise BackendUnavailable(
            f"judge nli: the ONNX export of {checkpoint} disagrees with PyTorch (a class probability differs "
            f"by {diff:.2g} > {EXPORT_TOLERANCE:g} on sample pairs); use runtime=torch"
        )
    return {
        "format": EXPORT_FORMAT,
        "checkpoint": str(checkpoint),
        "weights": model_fingerprint(checkpoint),
        "versions": export_versions(),
        "max_prob_diff_vs_torch": diff,
        "tolerance": EXPORT_TOLERANCE,
    }


def quantize_int8(fp32: Path, out: Path) -> None:
    """ONNX Runtime's dynamic int8 quantization (int8 weights, activations quantized per batch)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with quiet():
        quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8)


def _inputs(names: Sequence[str], batch: Any) -> dict[str, Any]:
    """The arrays of ``batch`` the graph takes (its input ``names``), as int64; ``ConfigError`` naming one it lacks."""
    import numpy as np

    out = {}
    for name in names:
        if name not in batch:
            raise ConfigError(f"judge nli: the ONNX graph needs input {name!r}, which the tokenizer does not give")
        out[name] = np.asarray(batch[name], dtype=np.int64)
    return out


def _input_names(session: Any) -> list[str]:
    """An ONNX Runtime session's input names."""
    return [spec.name for spec in session.get_inputs()]


class OnnxRuntime(RuntimeBase):
    """The judge's checkpoint as an ONNX graph in an ONNX Runtime CPU session."""

    name = "onnx"
    auto = "opt-in"  # float sums reassociated: probabilities within about 1e-6 of torch's
    takes_int8 = True

    def __init__(self, classifier: Classifier):
        self.classifier = c = classifier
        self._session: Any = None
        if c.device not in ("auto", "cpu"):
            raise ConfigError(
                f"judge nli: runtime=onnx runs on the CPU; device={c.device} needs runtime=torch (or the vllm judge)"
            )
        if c.dtype not in ("auto", "float32"):
            raise ConfigError(
                f"judge nli: runtime=onnx runs float32 (int8 with int8=true); dtype={c.dtype} needs runtime=torch"
            )

    def spec(self) -> dict[str, Any]:
        return {
            "runtime": self.name,
            "dtype": "float32",
            "quantization": "dynamic-int8" if self.classifier.int8 else None,
        }

    def export_dir(self) -> Path:
        """This checkpoint's export folder (not created)."""
        c = self.classifier
        root = c.export_dir if c.export_dir is not None else default_export_dir()
        return root / f"{c.path.name}-{export_key(c.path, c.revision)}"

    def ensure_export(self) -> Path:
        """The ONNX file to run: exported (and quantized) now unless already there."""
        folder = self.export_dir()
        c = self.classifier
        if not (folder / EXPORT_INFO).is_file():
            try:
                folder.parent.mkdir(parents=True, exist_ok=True)
                tmp = Path(tempfile.mkdtemp(prefix=".export-", dir=folder.parent))
            except OSError as e:
                raise ConfigError(
                    f"judge nli: cannot write the ONNX export into {folder.parent}: {e.strerror or e}; set "
                    "export_dir=DIR to a writable folder, or use runtime=torch"
                ) from None
            log.info(f"judge nli: exporting {c.path} to ONNX once, into {folder}")
            tmp.chmod(0o755)
            try:
                info = export_classifier(c.path, tmp, c.tokenizer(), revision=c.revision)
                (tmp / EXPORT_INFO).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
                try:
                    os.rename(tmp, folder)
                except OSError:
                    if not (folder / EXPORT_INFO).is_file():  # not another process's finished export
                        raise
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            c.count("onnx_exported")
        if not c.int8:
            return folder / FP32_FILE
        int8 = folder / INT8_FILE
        if not int8.is_file():
            part = folder / f".{INT8_FILE}.{os.getpid()}"
            try:
                quantize_int8(folder / FP32_FILE, part)
                os.replace(part, int8)
            finally:
                part.unlink(missing_ok=True)
        return int8

    def session(self) -> Any:
        """The ONNX Runtime session (export first if needed), with as many threads as this process may use."""
        if self._session is None:
            ort = import_ort()
            c = self.classifier
            path = self.ensure_export()
            if c.int8:
                log.warning(f"judge nli: int8=true: {INT8_NOTE}")
            options = ort.SessionOptions()
            options.intra_op_num_threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
            options.log_severity_level = 3
            self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
            out = self._session.get_outputs()[0].shape
            if isinstance(out[-1], int):
                check_num_labels(out[-1], c.labels, c.path)
            c.record(
                device="cpu",
                dtype="float32",
                onnx_model=str(path),
                quantization=self.spec()["quantization"],
                onnxruntime=ort.__version__,
            )
        return self._session

    def classify(self, feats: Sequence[Features], on_done: DoneFn | None = None) -> list[Row]:
        session = self.session()
        c = self.classifier
        tok = c.tokenizer()

        names = _input_names(session)

        def forward(batch: list[Features]) -> list[list[float]]:
            padded = tok.pad(batch, return_tensors="np")
            c.count("batches")
            return _softmax(session.run(None, _inputs(names, padded))[0])

        return run_batched(
            feats, forward, max_pairs=c.batch_size, max_tokens=c.max_batch_tokens or 2048, on_done=on_done
        )
