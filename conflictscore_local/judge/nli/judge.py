"""``nli``: a local transformers sequence-classification checkpoint as the judge.

Any NLI-style cross-encoder works (DeBERTa-v3 MNLI/FEVER/ANLI fine-tunes, MiniCheck, the
project's default judge): its ``config.id2label`` names are mapped onto SUPPORT /
CONTRADICT / IRRELEVANT by name. Pairs are tokenized as (premise = passage, hypothesis =
claim), the NLI convention, truncating only the passage; a judgment whose input was cut
says how much of it the model saw in its note. All pairs of a job are de-duplicated, sorted
by length and batched with dynamic padding.

A checkpoint may carry ``conflictscore.json`` = ``{"format": CALIBRATION_FORMAT, "max_length": n, "claim_room":
n, "thresholds": {"SUPPORT": t, "CONTRADICT": t}}`` (written by ``conflictscore
train-judge``): the window it was trained with, the tokens it kept free for the claim when
it split long documents, and calibrated thresholds, which change the decision rule (see
:func:`labels.decide`). Each is used unless the judge's argument of the same name is given.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal, Mapping, Sequence

from ...backends.arguments import ranged
from ...backends.checkpoints import load_tokenizer, model_fingerprint, tokenizer_fingerprint
from ...core.errors import BackendUnavailable, ConfigError
from ...core.types import LABELS, Judgment, Label, Pair
from ...util.devices import check_device, torch_device
from .._base import JudgeBase, ProgressFn
from ..distinct import distinct
from ..labels import check_thresholds, decide, map_id2label, rule_text
from .calibrate import PROBE
from .encoding import encode_pairs, passage_budget
from .runtimes import AUTO, RuntimeFactory, check_runtime, declared, local_runtime, resolve_runtime, runtime_class
from .runtimes.base import RUNTIME_ENV, Classifier, ClassifierRuntime

DEFAULT_JUDGE_ENV = "CONFLICTSCORE_DEFAULT_JUDGE"
DEFAULT_JUDGE_MANIFEST = "default-judge"
CALIBRATION_FILE = "conflictscore.json"
CALIBRATION_FORMAT = 1
"""The ``format`` of a ``conflictscore.json`` this judge reads (what ``train-judge`` writes)."""
DEFAULT_CLAIM_ROOM = 64
"""Tokens kept free for the claim when a checkpoint's ``conflictscore.json`` does not say."""
_MAX_DEFAULT_LENGTH = 512


def default_judge_path() -> Path:
    """``$CONFLICTSCORE_DEFAULT_JUDGE``, else the default judge shipped inside the package
    (``models/default-judge`` of the repository, package data in a wheel)."""
    from ...backends.modelstore.manifest import shipped_dir

    env = os.environ.get(DEFAULT_JUDGE_ENV)
    return Path(env).expanduser() if env else shipped_dir() / DEFAULT_JUDGE_MANIFEST


@dataclass(frozen=True)
class NLIConfig:
    """Arguments of the ``nli`` judge.

    ``model``: checkpoint directory, model name from ``conflictscore models list``, or cached
    hub id (None → the project's default judge).
    ``batch_size``: at most this many pairs per forward; ``max_batch_tokens``: and at most
    this many (padded) tokens per forward (None → 2048 on CPU, where small batches of long
    inputs run fastest, 65536 on a GPU). Inputs are sorted by length, so short pairs go in
    large batches and long ones in small batches.
    ``max_length``: tokens per (passage, claim) input (None → the window the checkpoint
    was trained with, else the model's own limit, at most 512). ``claim_room``: tokens kept free for the
    claim when long documents are split (None → what the checkpoint was trained with, else
    ``DEFAULT_CLAIM_ROOM``). ``negative_label``: what the negative class of a
    2-way model means. ``id2label``: overrides the checkpoint's class names.
    ``thresholds``: override the calibrated ones in ``conflictscore.json``;
    ``calibration=false`` ignores them.
    ``runtime``: where the forward pass runs, any name of the runtimes table (:mod:`.runtimes`: a plugin's too):
    ``torch``, ``native`` (the same forward of a BERT checkpoint without transformers, which starts seconds sooner:
    :mod:`.runtimes.native`), ``compile`` (``torch`` under ``torch.compile``: the same labels, for long runs),
    ``onnx`` (ONNX Runtime on the CPU, the ``onnx`` extra; exported once per checkpoint into ``export_dir``, default
    ``onnx/`` beside the judgment cache), ``openvino`` (that export compiled by OpenVINO, float32 or native
    bfloat16, the ``openvino`` extra: :mod:`.runtimes.openvino`), ``vllm`` (``vllm.LLM(runner="pooling")`` in this
    process) or ``serve`` (``vllm serve``'s ``/classify``), both configured with ``runtime_args``
    (:mod:`.runtimes.engine`), or ``auto``: on a CPU at float32 the runtime measured fastest here at ``torch``'s
    labels (:mod:`.calibrate`), at bfloat16 ``native`` where it runs the checkpoint, else ``torch``;
    ``$CONFLICTSCORE_NLI_RUNTIME`` names another.
    ``dtype``: ``auto`` is bfloat16 on GPUs that have it and float32 on every CPU, so a CPU
    run gives the same labels on every CPU kind; ``bfloat16`` on a CPU is opt-in (faster where
    the CPU has AVX512-BF16 or AMX, and it changes a few labels; several times slower where it
    is emulated: ``docs/speed.md``); the choice and its reason go into the summary
    (``resolved.dtype``, ``resolved.dtype_reason``) and the dtype into the spec.
    ``int8``: dynamic int8 quantization of the ONNX export, faster
    but it changes some labels (measured in ``benchmarks/results/speed/onnx_throughput.md``).
    ``runtime_args``: the settings of ``runtime=vllm`` (vLLM engine arguments) or ``runtime=serve``
    (the server's ``base_url``, ``model``, batching and retries); refused with any other runtime.
    """

    model: str | None = None
    revision: str | None = None
    batch_size: int = ranged(64, 1, 1_000_000)
    max_batch_tokens: int | None = ranged(None, 1, 1_000_000_000)
    max_length: int | None = ranged(None, 16, 1_000_000)
    device: str = "auto"
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    negative_label: Literal["IRRELEVANT", "CONTRADICT"] | None = None
    id2label: dict | None = None
    thresholds: dict | None = None
    calibration: bool = True
    claim_room: int | None = ranged(None, 0, 1_000_000)
    runtime: str = AUTO
    int8: bool = False
    export_dir: str | None = None
    runtime_args: dict | None = None

    def __post_init__(self) -> None:
        check_device(self.device)
        if self.thresholds is not None:
            check_thresholds(self.thresholds, source="judge nli: thresholds")
        check_runtime(self.runtime, self.runtime_args, self.int8)


class NLIJudge(JudgeBase):
    """SUPPORT / CONTRADICT / IRRELEVANT from a local sequence classifier, batched."""

    name = "nli"
    role = "judge"
    Config = NLIConfig

    def __init__(self, config: NLIConfig | None = None):
        super().__init__(config)
        self._path: Path | None = None
        self._manifest: Any = None
        self._labels: dict[int, Label] | None = None
        self._tokenizer: Any = None
        self._make_runtime: RuntimeFactory | None = None
        self._runtime: ClassifierRuntime | None = None
        self._runtime_name: str | None = None
        self.cache_dir: Path | None = None
        self._spec: dict[str, Any] | None = None
        self._files: dict[str, dict[str, Any]] = {}

    # -- resolution (no weights loaded) ---------------------------------------------------
    def checkpoint(self) -> Path:
        """The checkpoint directory; ``BackendUnavailable`` when it is missing or has no config.json.

        ``model`` may be a directory, a model name from ``models/*.toml`` or a cached hub id;
        what identifies it (manifest, revision, lock digest) goes into ``resolved``.
        """
        if self._path is None:
            from ...backends.modelstore.store import locate

            cfg = self.config
            if cfg.model is None:
                path = default_judge_path()
                how = (
                    "restore it with `git checkout -- models/default-judge` (it is built by "
                    "`SHIP=1 models/build_default_judge.sh`), or pass a local sequence-classification "
                    f"checkpoint with --judge-arg model=PATH (or set {DEFAULT_JUDGE_ENV})"
                )
                if not path.is_dir():
                    raise BackendUnavailable(
                        f"judge nli: no model given and the default judge is not installed at {path}; {how}"
                    )
                path = path.resolve()
                if not (path / "config.json").is_file():
                    raise BackendUnavailable(
                        f"judge nli: no model given and the default judge at {path} is incomplete: no config.json "
                        f"({_listing(path)}); {how}"
                    )
                found = locate(
                    str(path) if os.environ.get(DEFAULT_JUDGE_ENV) else DEFAULT_JUDGE_MANIFEST, what="judge nli"
                )
            else:
                found = locate(cfg.model, cfg.revision, what="judge nli", use=("judge", "nli"))
                if not (found.path / "config.json").is_file():
                    raise BackendUnavailable(
                        f"judge nli: {found.path} is not a complete checkpoint: no config.json "
                        f"({_listing(found.path)}); a sequence-classification checkpoint holds config.json, "
                        "its weights and tokenizer files"
                    )
            self._path, self._manifest = found.path, found.manifest
            self.resolved.update(found.identity)
        return self._path

    def labels(self) -> dict[int, Label]:
        """Class index → label, from the checkpoint's ``id2label`` (or the ``id2label`` argument)."""
        if self._labels is None:
            path = self.checkpoint()
            manifest_labels = self._manifest.labels if self._manifest is not None else None
            if self.config.id2label is not None:
                raw, source = self.config.id2label, "judge nli: id2label argument"
            elif manifest_labels is not None:
                found = {str(k): v for k, v in (self._json("config.json").get("id2label") or {}).items()}
                if found != dict(manifest_labels.id2label):
                    raise ConfigError(
                        f"judge nli: {path / 'config.json'} has id2label {found}, but manifest "
                        f"{self._manifest.name!r} pins {dict(manifest_labels.id2label)}: these files are not the "
                        f"model the manifest names (check them with `conflictscore models verify {path}`)"
                    )
                raw, source = manifest_labels.map, f"judge nli: manifest {self._manifest.name!r}"
            else:
                raw, source = self._json("config.json").get("id2label") or {}, f"judge nli: checkpoint {path}"
            self._labels = map_id2label(raw, negative_label=self.config.negative_label, source=source)
            self.resolved["labels"] = {str(k): v for k, v in sorted(self._labels.items())}
        return self._labels

    def _json(self, name: str, *, required: bool = True) -> dict[str, Any]:
        """A JSON object from the checkpoint directory (read once); {} when optional and absent."""
        if name not in self._files:
            file = self.checkpoint() / name
            if not required and not file.is_file():
                self._files[name] = {}
            else:
                try:
                    data = json.loads(file.read_text(encoding="utf-8"))
                except (OSError, json.JSONDecodeError) as e:
                    raise ConfigError(f"judge nli: cannot read {file}: {e}") from None
                if not isinstance(data, dict):
                    raise ConfigError(f"judge nli: {file} does not hold a JSON object")
                self._files[name] = data
        return self._files[name]

    def checkpoint_meta(self) -> dict[str, Any]:
        """The checkpoint's ``conflictscore.json`` (training window, calibrated thresholds), or {}."""
        data = self._json(CALIBRATION_FILE, required=False)
        if data and data.get("format") != CALIBRATION_FORMAT:
            raise ConfigError(
                f"{self.checkpoint() / CALIBRATION_FILE}: unsupported calibration format {data.get('format')!r}; "
                f"expected {CALIBRATION_FORMAT}"
            )
        return data

    def thresholds(self) -> dict[Label, float] | None:
        """The decision thresholds in force: the argument, else the checkpoint's calibration."""
        if self.config.thresholds is not None:
            return check_thresholds(self.config.thresholds, source="judge nli: thresholds")
        if not self.config.calibration:
            return None
        found = self.checkpoint_meta().get("thresholds")
        if found is None:
            return None
        return check_thresholds(found, source=str(self.checkpoint() / CALIBRATION_FILE))

    def document_rule(self) -> str | None:
        """The document rule this checkpoint's thresholds were calibrated with (``document_rule``
        in ``conflictscore.json``, written by ``python -m benchmarks.judge.judge_eval --apply-best``), or None;
        the engine uses it when ``aggregate.document_rule`` is ``auto``."""
        if not self.config.calibration or self.config.thresholds is not None:
            return None  # thresholds not the checkpoint's: its rule does not go with them
        rule = self.checkpoint_meta().get("document_rule")
        if rule is not None and not isinstance(rule, str):
            raise ConfigError(f"{self.checkpoint() / CALIBRATION_FILE}: document_rule must be a string, got {rule!r}")
        return rule

    def runtime_name(self) -> str | None:
        """The local runtime the ``runtime`` argument names, ``auto`` resolved (None where another
        backend hands the runtime in: :meth:`use_runtime`); why goes into ``resolved.runtime_reason``.

        ``auto`` on a CPU at float32 is the runtime measured fastest here at ``torch``'s labels
        (:mod:`.calibrate`: measured on first use, then read from ``runtime-choice.json`` in the
        cache folder); at bfloat16 on a CPU, ``native`` where it runs the checkpoint
        (:meth:`_bfloat16_cpu_runtime`); ``$CONFLICTSCORE_NLI_RUNTIME`` overrides it."""
        if self._make_runtime is not None:
            return None
        if self._runtime_name is None:
            cfg = self.config
            if cfg.runtime != AUTO:
                name, why = cfg.runtime, "given"
            elif os.environ.get(RUNTIME_ENV):
                name = resolve_runtime(cfg.runtime, cfg.device, cfg.dtype)
                why = f"auto: ${RUNTIME_ENV}={name}"
            elif cfg.dtype == "bfloat16" and not cfg.int8 and torch_device(cfg.device).type == "cpu":
                name, why = self._bfloat16_cpu_runtime()
            elif cfg.dtype not in ("auto", "float32") or cfg.int8:
                name, why = "torch", f"auto: torch (calibration measures float32 runs; dtype={cfg.dtype})"
            elif torch_device(cfg.device).type != "cpu":
                name, why = "torch", "auto: torch on a GPU (calibration measures CPU runtimes)"
            else:
                name, why = self._calibrated()
            self._runtime_name = name
            self.resolved["runtime_reason"] = why
        return self._runtime_name

    def _bfloat16_cpu_runtime(self) -> tuple[str, str]:
        """``auto`` at ``dtype=bfloat16`` on a CPU: ``native`` where it runs the checkpoint (its linear
        layers' weights prepacked for oneDNN where the CPU has native bf16, the fastest bf16 forward
        in PyTorch measured: ``benchmarks/results/speed/forward_peak-amx.md``), else ``torch``, saying why. bfloat16 is
        opt-in and moves probabilities already, so no calibration against float32 is asked of it."""
        try:
            declared(runtime_class("native"), "supports")(self._json("config.json"), self.checkpoint())
        except BackendUnavailable as e:
            return "torch", f"auto: torch at bfloat16 ({e})"
        return "native", "auto: native at bfloat16 on the CPU (the fastest bfloat16 forward in PyTorch measured)"

    def _calibrated(self) -> tuple[str, str]:
        """``runtime=auto``'s stored choice for this machine and checkpoint shape, measured first if none."""
        from ...util.locations import cache_home
        from .calibrate import calibrate, choice_key, store, stored

        folder = self.cache_dir if self.cache_dir is not None else cache_home()
        key = choice_key(self._json("config.json"), "cpu", "float32")
        found = stored(folder, key)
        if found is not None:
            return found.runtime, f"auto: stored choice {key} in {folder}: {found.reason}"
        self._runtime_name = "torch"  # the reference's tokenizer while measuring
        passages, claims = [p for p, _ in PROBE], [c for _, c in PROBE]
        choice = calibrate(
            self.classifier(),
            lambda name, c: local_runtime(c, name),
            lambda tok: encode_pairs(tok, passages, claims, self.max_length())[0],
        )
        if choice.runtime != "torch":
            self._tokenizer = None
        try:
            store(folder, key, choice)
            where = f"stored as {key} in {folder}"
        except OSError as e:
            where = f"not stored ({e})"
        return choice.runtime, f"auto: calibrated now, {where}: {choice.reason}"

    def tokenizer(self) -> Any:
        """The checkpoint's tokenizer, loaded once: the runtime's own where it brings one (under
        ``runtime=native`` the ``tokenizer.json`` in the ``tokenizers`` library: the same ids), else
        transformers' ``AutoTokenizer``."""
        if self._tokenizer is None:
            path = self.checkpoint()
            name = self.runtime_name()
            try:
                own = declared(runtime_class(name), "load_tokenizer")(self._json("config.json"), path) if name else None
                self._tokenizer = own if own is not None else load_tokenizer(path, self.config.revision)
            except BackendUnavailable:
                raise
            except Exception as e:
                raise BackendUnavailable(
                    f"judge nli: cannot load the tokenizer of {path}: {type(e).__name__}: {e}"
                ) from e
        return self._tokenizer

    def max_length(self) -> int:
        """Tokens per input: the argument, else the window the checkpoint was trained with,
        else the smallest limit the model declares (at most 512)."""
        if self.config.max_length is not None:
            return self.config.max_length
        trained = self.checkpoint_meta().get("max_length")
        if isinstance(trained, int) and trained > 0:
            return trained
        limits = [_MAX_DEFAULT_LENGTH]
        tok_max = getattr(self.tokenizer(), "model_max_length", None)
        if isinstance(tok_max, int) and tok_max < 1_000_000:
            limits.append(tok_max)
        pos = self._json("config.json").get("max_position_embeddings")
        if isinstance(pos, int) and pos > 0:
            limits.append(pos)
        return min(limits)

    def claim_room(self) -> int:
        """Tokens kept free for the claim: the argument, else the checkpoint's training setting,
        else ``DEFAULT_CLAIM_ROOM``."""
        if self.config.claim_room is not None:
            return self.config.claim_room
        trained = self.checkpoint_meta().get("claim_room", DEFAULT_CLAIM_ROOM)
        if isinstance(trained, bool) or not isinstance(trained, int) or trained < 0:
            raise ConfigError(
                f"{self.checkpoint() / CALIBRATION_FILE}: claim_room must be a whole number >= 0, got {trained!r}"
            )
        return trained

    def use_cache_dir(self, folder: Path) -> None:
        """The judgment cache's folder: derived files such as ONNX exports default to it, so
        ``--cache PATH`` moves them too (where they are kept never changes a label)."""
        self.cache_dir = Path(folder)

    def use_runtime(self, factory: "RuntimeFactory") -> None:
        """Run the forward pass elsewhere: ``factory(classifier)`` builds the runtime (the ``vllm``
        and ``openai`` judges' classify mode hand theirs in); default :func:`local_runtime`."""
        if self._runtime is not None:
            raise RuntimeError("judge nli: the runtime is chosen before the judge first runs")
        self._make_runtime = factory

    def classifier(self) -> Classifier:
        """What a runtime may use of this judge: the checkpoint, its labels and tokenizer, the
        batch limits, where to count and record."""
        cfg = self.config
        if cfg.export_dir:
            export_dir: Path | None = Path(cfg.export_dir).expanduser()
        else:
            export_dir = self.cache_dir / "onnx" if self.cache_dir is not None else None
        return Classifier(
            path=self.checkpoint(),
            labels=self.labels(),
            tokenizer=self.tokenizer,
            revision=cfg.revision,
            config=self._json("config.json"),
            device=cfg.device,
            dtype=cfg.dtype,
            batch_size=cfg.batch_size,
            max_batch_tokens=cfg.max_batch_tokens,
            int8=cfg.int8,
            export_dir=export_dir,
            count=self.count,
            record=self.resolved.update,
            runtime_args=cfg.runtime_args or {},
            max_length=self.max_length(),
        )

    def runtime(self) -> ClassifierRuntime:
        """Where the forward pass runs (built once, loads nothing)."""
        if self._runtime is None:
            factory = self._make_runtime or (lambda c: local_runtime(c, self.runtime_name() or "auto"))
            self._runtime = factory(self.classifier())
        return self._runtime

    def spec(self) -> Mapping[str, Any]:
        """Everything that changes labels: the weights and tokenizer, label mapping, thresholds,
        length, and the runtime with its dtype or quantization."""
        if self._spec is None:
            path = self.checkpoint()
            fingerprint = model_fingerprint(path)
            self.resolved["model_fingerprint"] = fingerprint
            self._spec = {
                "backend": "nli",
                "model": fingerprint,
                "tokenizer": tokenizer_fingerprint(path),
                "revision": self.config.revision,
                "labels": {str(k): v for k, v in sorted(self.labels().items())},
                "thresholds": self.thresholds(),
                "max_length": self.max_length(),
                **self.runtime().spec(),
            }
        return self._spec

    def resume_spec(self) -> Mapping[str, Any]:
        """:meth:`spec` as a resume compares it: ``torch`` and ``native`` at float32 give the same output bit
        for bit (what lets ``runtime=auto`` choose between them per machine and cache folder), so a resume
        whose stored choice differs (another ``--cache``) is not refused for it."""
        spec = dict(self.spec())
        if spec.get("runtime") in ("torch", "native") and spec.get("dtype") == "float32":
            spec["runtime"] = "torch or native (the same output at float32)"
        return spec

    def flops_per_token(self) -> float | None:
        """Matmul FLOPs per token of the checkpoint's encoder, from its config (loads no weights):
        what the ``auto`` pruner scales its judge-cost prior by."""
        from ...util.flops import flops_per_token

        return flops_per_token(self._json("config.json"))

    def passage_budget(self) -> tuple[Callable[[str], int], int]:
        """Count with the judge's own tokenizer; passages get the window minus the claim's room."""
        room = self.claim_room()
        self.resolved["claim_room"] = room
        return passage_budget(self.tokenizer(), self.max_length(), room)

    def encode(self, passages: list[str], claims: list[str]) -> tuple[list[dict[str, list[int]]], list[str | None]]:
        """:func:`encode_pairs` with this judge's tokenizer and window; truncations are counted."""
        feats, cuts = encode_pairs(self.tokenizer(), passages, claims, self.max_length())
        for cut in cuts:
            if cut is not None:
                self.count(cut[0])
        return feats, [cut[1] if cut else None for cut in cuts]

    def judge(self, pairs: Sequence[Pair], on_progress: ProgressFn | None = None) -> list[Judgment]:
        """Label every pair (input order kept); identical (passage, claim) texts are judged once.
        A pair whose input was cut to fit the window says so in its note."""
        if not pairs:
            return []
        labels = self.labels()
        thresholds = self.thresholds()
        runtime = self.runtime()
        self.resolved.update(runtime=runtime.name, max_length=self.max_length(), thresholds=thresholds)
        rule = rule_text(thresholds)

        uniq = distinct(pairs)
        firsts = [pairs[i] for i in uniq.first]
        feats, notes = self.encode([p.passage.text for p in firsts], [p.claim.text for p in firsts])

        def done(idx: Sequence[int]) -> None:
            if on_progress is not None:
                on_progress(sum(uniq.weight[i] for i in idx))

        def judgment(u: int, p: Pair, row: Any) -> Judgment:
            if isinstance(row, str):
                self.count("unscored")
                return Judgment(p, None, None, "judge", row)
            if len(row) != len(labels):
                raise RuntimeError(
                    f"runtime {runtime.name} returned {len(row)} class probabilities for {len(labels)} classes"
                )
            probs: dict[str, float] = dict.fromkeys(LABELS, 0.0)
            for k, v in enumerate(row):
                probs[labels[k]] += v
            probs = {k: round(v, 6) for k, v in probs.items()}
            return Judgment(p, decide(probs, thresholds), probs, "judge", notes[u], rule=rule)

        try:
            rows = runtime.classify(feats, done)
        except KeyboardInterrupt as stop:  # Ctrl-C: the finished batches' judgments go with it (the engine keeps them)
            finished = getattr(stop, "rows", None) or ()
            kept = [judgment(u, firsts[u], r) for u, r in enumerate(finished) if r != ()]
            stop.judged = (self.spec(), kept)  # type: ignore[attr-defined]
            raise
        if len(rows) != len(firsts):
            raise RuntimeError(f"runtime {runtime.name} returned {len(rows)} rows for {len(firsts)} inputs")
        judged = [judgment(u, p, row) for u, (p, row) in enumerate(zip(firsts, rows))]
        self.count("pairs", len(pairs))
        self.count("forward_inputs", len(firsts))
        return uniq.spread(pairs, judged)


def _listing(path: Path) -> str:
    """What a directory holds, for an error message: ``it holds: last/, notes.txt`` or ``it is empty``."""
    names = sorted(p.name + ("/" if p.is_dir() else "") for p in path.iterdir())
    if not names:
        return "it is empty"
    return "it holds: " + ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
