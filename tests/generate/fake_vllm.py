"""A stand-in for the ``vllm`` package, shaped like its public API (vLLM ≥ 0.8).

``LLM(**engine_args)`` records its arguments and every ``generate`` call; the test sets
``LLM.answer(prompt, params) -> RequestOutput``. Outputs have the real shapes:
``RequestOutput.outputs[0]`` is a ``CompletionOutput`` whose ``logprobs`` is a list (one
entry per generated token) of ``{token_id: Logprob(logprob, rank, decoded_token)}``.

``LLM(runner="pooling").classify(prompts, pooling_params=...)`` runs the checkpoint in
``model`` with transformers, one unpadded input at a time as vLLM's pooling runner sees it:
token ids from ``{"prompt_token_ids": ids}``, segment ids rebuilt from
``PoolingParams.extra_kwargs["compressed_token_type_ids"]`` (0 before that index, 1 from it;
all 0 without it), and returns ``ClassificationRequestOutput``s whose ``outputs.probs`` are
the softmaxed logits — so a test comparing it with the ``nli`` judge compares two real
forward passes (vLLM ≥ 0.11 shapes).
Loaded by path from the conftests of ``tests/generate`` and ``tests/judge``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

__version__ = "0.0.0-fake"


@dataclass
class Logprob:
    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: Sequence[int]
    cumulative_logprob: float | None
    logprobs: list[dict[int, Logprob]] | None
    finish_reason: str | None = None


@dataclass
class RequestOutput:
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int] | None
    outputs: list[CompletionOutput] = field(default_factory=list)
    finished: bool = True


class SamplingParams:
    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        for k, v in kwargs.items():
            setattr(self, k, v)


class PoolingParams:
    def __init__(self, task: str | None = None, extra_kwargs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        self.task, self.extra_kwargs, self.kwargs = task, extra_kwargs, kwargs


@dataclass
class ClassificationOutput:
    probs: list[float]


@dataclass
class ClassificationRequestOutput:
    request_id: str
    outputs: ClassificationOutput
    prompt_token_ids: list[int]
    finished: bool = True


class LLM:
    instances: list["LLM"] = []
    answer: Callable[[Any, SamplingParams], RequestOutput] = staticmethod(lambda p, sp: output("", []))

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.calls: list[tuple[list[Any], SamplingParams]] = []
        self.classify_calls: list[tuple[list[Any], list[PoolingParams]]] = []
        self._classifier: Any = None
        LLM.instances.append(self)

    def classify(
        self, prompts: Sequence[Any], *, pooling_params: Any = None, use_tqdm: Any = True, **kwargs: Any
    ) -> list[ClassificationRequestOutput]:
        import torch
        from transformers import AutoModelForSequenceClassification

        if self.kwargs.get("runner") != "pooling":
            raise ValueError("LLM.encode() is only supported for pooling models. Try passing `--runner pooling`.")
        params = list(pooling_params) if isinstance(pooling_params, Sequence) else [pooling_params] * len(prompts)
        if len(params) != len(prompts):
            raise ValueError(f"The lengths of prompts ({len(prompts)}) and params ({len(params)}) must be the same.")
        self.classify_calls.append((list(prompts), params))
        if self._classifier is None:
            dtype = self.kwargs.get("dtype", "auto")  # "auto": the checkpoint's own, as vLLM keeps it
            self._classifier = AutoModelForSequenceClassification.from_pretrained(
                self.kwargs["model"], dtype=dtype if dtype == "auto" else getattr(torch, dtype)
            ).eval()
        outputs = []
        for k, (prompt, param) in enumerate(zip(prompts, params)):
            ids = list(prompt["prompt_token_ids"])
            start = ((param.extra_kwargs if param is not None else None) or {}).get("compressed_token_type_ids")
            types = [0] * len(ids) if start is None else [int(i >= start) for i in range(len(ids))]
            with torch.inference_mode():
                logits = self._classifier(input_ids=torch.tensor([ids]), token_type_ids=torch.tensor([types])).logits
            probs = torch.softmax(logits.float(), dim=-1)[0].tolist()
            outputs.append(ClassificationRequestOutput(str(k), ClassificationOutput(probs), ids))
        return outputs

    def generate(
        self, prompts: Sequence[Any], sampling_params: SamplingParams, use_tqdm: bool | Callable[..., Any] = True
    ) -> list[RequestOutput]:
        """Answers every prompt; a callable ``use_tqdm`` is used as vLLM's ``LLM._run_engine``
        uses it (an iterable bar while adding requests, then a counting bar updated per
        finished request, whose ``format_dict`` and ``postfix`` are touched too)."""
        self.calls.append((list(prompts), sampling_params))
        bar = use_tqdm if callable(use_tqdm) else None
        for _ in bar(prompts, desc="Adding requests") if bar else prompts:
            pass
        pbar = bar(total=len(prompts), desc="Processed prompts", dynamic_ncols=True, postfix="") if bar else None
        outputs = []
        for p in prompts:
            out = LLM.answer(p, sampling_params)
            outputs.append(out)
            if pbar is not None:
                pbar.postfix = f"elapsed {pbar.format_dict['elapsed']:.2f}s"
                pbar.update(len(out.outputs))
        if pbar is not None:
            pbar.close()
        return outputs


def output(text: str, steps: list[list[tuple[int, str, float]]], finish: str = "stop") -> RequestOutput:
    """A RequestOutput whose completion generated one token per step; each step lists
    ``(token_id, decoded_token, logprob)`` alternatives, the chosen (most probable) first."""
    logprobs = [{tid: Logprob(lp, rank, tok) for rank, (tid, tok, lp) in enumerate(step, start=1)} for step in steps]
    completion = CompletionOutput(0, text, [s[0][0] for s in steps], None, logprobs if steps else None, finish)
    return RequestOutput("0", None, None, [completion])


# First-token alternatives as a Qwen3 judge emits them (token ids of the Qwen2 BPE vocabulary).
RECORDED: dict[str, list[tuple[int, str, float]]] = {
    "SUPPORT": [(50, "SUP", -0.0412), (5790, "CON", -3.6031), (2801, "IR", -4.5544), (334, "**", -8.125)],
    "CONTRADICT": [(5790, "CON", -0.1019), (50, "SUP", -2.9347), (2801, "IR", -3.3083), (785, "The", -7.51)],
    "IRRELEVANT": [(2801, "IR", -0.2231), (5790, "CON", -1.8971), (50, "SUP", -3.2189), (40, "I", -6.9)],
    "OFF": [(785, "The", -0.01), (334, "**", -5.2), (40, " I", -6.0), (13, ".", -7.7)],
}
