"""A stand-in for the ``vllm`` package, shaped like its public API (vLLM ≥ 0.8).

``LLM(**engine_args)`` records its arguments and every ``generate`` call; the test sets
``LLM.answer(prompt, params) -> RequestOutput``. Outputs have the real shapes:
``RequestOutput.outputs[0]`` is a ``CompletionOutput`` whose ``logprobs`` is a list (one
entry per generated token) of ``{token_id: Logprob(logprob, rank, decoded_token)}``.
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


class LLM:
    instances: list["LLM"] = []
    answer: Callable[[Any, SamplingParams], RequestOutput] = staticmethod(lambda p, sp: output("", []))

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.calls: list[tuple[list[Any], SamplingParams]] = []
        LLM.instances.append(self)

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
