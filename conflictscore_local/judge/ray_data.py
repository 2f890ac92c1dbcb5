"""``ray``: any judge, its pairs spread over Ray Data workers (several GPUs, several machines).

Only the judge calls are distributed. The engine's own stages (decomposition, chunking,
pruning, the judgment cache, aggregation) run where ``conflictscore score`` runs, on the
same code as always, so the output has the same rows as a single-process run: the wrapped
judge's ``spec()`` is this judge's spec (the cache is shared with single-process runs of the
same judge) and its ``passage_budget()`` splits the documents.

- ``nli`` (and any judge doing its work in-process): the distinct (passage, claim) texts of
  an engine call, longest first, go through ``Dataset.map_batches`` to ``workers`` actors
  (:class:`JudgeWorker`, a stateful class: each builds the judge once and keeps its model
  loaded), each with ``cpus_per_worker`` CPUs and ``gpus_per_worker`` GPUs.
- ``vllm``: Ray's own LLM batch API (``ray.data.llm``: ``vLLMEngineProcessorConfig`` and
  ``build_processor``, ``workers`` vLLM engine replicas), fed with the prompts the ``vllm``
  judge renders and read back by its own code (:class:`RayVLLMGenerator`).

A local Ray instance is started when none is running and ``address`` is not given, with
``num_cpus`` logical CPUs: by default the workers' CPUs plus ``READER_CPUS`` for Ray Data's
read and collect tasks. Measured here (Ray 2.60): ``ray.init(num_cpus=2)`` with two actors of
one CPU deadlocked (the actors held both CPUs, the read tasks never ran); with four logical
CPUs the same pipeline ran in 6 s. So a ``num_cpus`` that leaves no CPU beside the workers is
refused. ``address="auto"`` (or ``ray://...``) joins a running cluster instead, whose nodes
must have this package (and the model paths) installed.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..backends.arguments import ranged
from ..core.types import Claim, Judgment, Pair, Passage
from ..generate._base import Generation, Prompt
from ..generate.text import strip_thinking
from ..generate.vllm import VLLMGenerator, alternatives
from ..util.extras import requires
from ._base import JudgeBase, ProgressFn
from .distinct import distinct

INSTALL_HINT = "pip install 'conflictscore-local[ray]' (and ray[llm] with vLLM for the vllm judge)"
READER_CPUS = 2
"""Logical CPUs a local Ray instance gets beside the workers' own: Ray Data's read and
collect tasks need a CPU each, or the pipeline waits for ever."""


def import_ray() -> Any:
    """The ``ray`` module (with Ray Data), or ``BackendUnavailable`` naming the extra."""
    ray = requires("ray", "judge ray", package="Ray Data", install=INSTALL_HINT)
    requires("ray.data", "judge ray", package="Ray Data", install=INSTALL_HINT)
    return ray


@dataclass(frozen=True)
class RayJudgeConfig:
    """Arguments of the ``ray`` judge.

    ``judge``: the judge to distribute, ``{"name": ..., **its arguments}`` (default: the
    ``nli`` judge with its defaults). ``workers``: actors (``nli``) or vLLM engine replicas
    (``vllm``). ``cpus_per_worker``, ``gpus_per_worker``: what each one reserves (give
    ``gpus_per_worker=1`` for one GPU each). ``threads_per_worker``: torch threads in each
    ``nli`` worker (None: ``cpus_per_worker``, at least 1). ``batch_size``: pairs per
    ``map_batches`` call (``nli``) or per engine batch (``vllm``). ``address``: a running
    cluster to join (``auto``, ``ray://host:10001``); None starts a local instance with
    ``num_cpus`` logical CPUs (None: the workers' CPUs + ``READER_CPUS``).
    ``accelerator_type``: the GPU type vLLM replicas must get (``H100``, ...).
    """

    judge: dict = field(default_factory=lambda: {"name": "nli"})
    workers: int = ranged(2, 1, 100_000)
    cpus_per_worker: float = ranged(1.0, 0.0, 4096.0, low_open=True)
    gpus_per_worker: float = ranged(0.0, 0.0, 64.0)
    threads_per_worker: int | None = ranged(None, 1, 4096)
    batch_size: int = ranged(256, 1, 1_000_000)
    address: str | None = None
    num_cpus: int | None = ranged(None, 1, 1_000_000)
    accelerator_type: str | None = None

    def __post_init__(self) -> None:
        name = self.judge.get("name")
        if not isinstance(name, str):
            raise ValueError(f'judge must name the judge to distribute, e.g. {{"name": "nli"}}; got {self.judge!r}')
        if name == "ray":
            raise ValueError("judge: the ray judge cannot distribute itself; name the judge to run on the workers")
        if self.num_cpus is not None and self.num_cpus < self.worker_cpus() + 1:
            raise ValueError(
                f"num_cpus={self.num_cpus} leaves no CPU for Ray Data's read tasks beside {self.workers} workers of "
                f"{self.cpus_per_worker:g} CPU (they would wait for ever); "
                f"give at least {math.ceil(self.worker_cpus()) + 1}"
            )
        inner_config(self)  # the wrapped judge's arguments are checked now, not on the workers

    def worker_cpus(self) -> float:
        return self.workers * self.cpus_per_worker

    def local_cpus(self) -> int:
        """Logical CPUs of a local instance: ``num_cpus``, else the workers' + ``READER_CPUS``."""
        return self.num_cpus if self.num_cpus is not None else math.ceil(self.worker_cpus()) + READER_CPUS


def inner_config(cfg: RayJudgeConfig) -> Any:
    """The wrapped judge's checked ``Config``."""
    from ..backends import registry

    args = {k: v for k, v in cfg.judge.items() if k != "name"}
    return registry.config_for("judge", cfg.judge["name"], args, where=f"judge ray: judge {cfg.judge['name']!r}")


class RayJudge(JudgeBase):
    """A judge whose pairs are judged by Ray Data workers; see the module docstring."""

    name = "ray"
    role = "judge"
    Config = RayJudgeConfig

    def __init__(self, config: RayJudgeConfig | None = None):
        super().__init__(config)
        self._inner: Any = None
        self._by_generator = False
        self._ray: Any = None
        self._started = False

    def inner(self) -> Any:
        """The wrapped judge, built here (driver side) for its spec and passage budget; on
        the ``nli`` path its model is never loaded here."""
        if self._inner is None:
            from ..backends import registry

            judge = registry.build("judge", self.config.judge["name"], inner_config(self.config))
            engines = judge.generator_engines()
            if engines is not None:  # it labels through a generator: Ray's engine replicas
                local = registry.build("generator", *engines)
                judge.use_generator(RayEngineGenerator(local, ray_config=self.config, start=self.start))
                self._by_generator = True
            self._inner = judge
        return self._inner

    def spec(self) -> Mapping[str, Any]:
        """The wrapped judge's spec: the same labels whichever processes compute them."""
        return self.inner().spec()

    def passage_budget(self) -> tuple[Callable[[str], int], int] | None:
        return self.inner().passage_budget()

    def start(self) -> Any:
        """Ray, started or joined once (see the module docstring)."""
        if self._ray is None:
            ray = import_ray()
            if not ray.is_initialized():
                kw: dict[str, Any] = {"include_dashboard": False, "logging_level": "WARNING"}
                if self.config.address:
                    ray.init(address=self.config.address, **kw)
                else:
                    ray.init(num_cpus=self.config.local_cpus(), **kw)
                self._started = True
            ctx = ray.data.DataContext.get_current()
            ctx.enable_progress_bars = False  # the engine draws its own
            logging.getLogger("ray.data").setLevel(logging.WARNING)
            self.resolved.update(
                ray=ray.__version__,
                started_local=self._started,
                cluster_resources={k: v for k, v in ray.cluster_resources().items() if k in ("CPU", "GPU", "memory")},
            )
            self._ray = ray
        return self._ray

    def judge(self, pairs: Sequence[Pair], on_progress: ProgressFn | None = None) -> list[Judgment]:
        """Label every pair (input order kept): each distinct (passage, claim) text once."""
        if not pairs:
            return []
        inner = self.inner()
        if self._by_generator:  # its generator is the engine replicas'
            return inner.judge(pairs, on_progress)
        ray = self.start()
        uniq = distinct(pairs)
        firsts = [pairs[i] for i in uniq.first]
        order = sorted(range(len(firsts)), key=lambda u: -(len(firsts[u].passage.text) + len(firsts[u].claim.text)))
        rows = [{"u": u, "passage": firsts[u].passage.text, "claim": firsts[u].claim.text} for u in order]
        cfg = self.config
        blocks = max(cfg.workers, math.ceil(len(rows) / cfg.batch_size))
        threads = cfg.threads_per_worker or max(1, int(cfg.cpus_per_worker))
        from ..backends import registry

        name = cfg.judge["name"]
        ds = ray.data.from_items(rows, override_num_blocks=blocks).map_batches(
            JudgeWorker,
            fn_constructor_kwargs={
                "name": name,
                "target": registry.resolve("judge", name),
                "config": inner_config(cfg),
                "threads": threads,
            },
            compute=ray.data.ActorPoolStrategy(size=cfg.workers),
            num_cpus=cfg.cpus_per_worker,
            num_gpus=cfg.gpus_per_worker or None,
            batch_size=cfg.batch_size,
            batch_format="pandas",
        )
        judged: list[Judgment | None] = [None] * len(firsts)
        for batch in ds.iter_batches(batch_size=None, batch_format="pandas"):
            done = 0
            for u, payload in zip(batch["u"], batch["judgment"]):
                d = json.loads(payload)
                judged[int(u)] = Judgment(
                    firsts[int(u)], d["label"], d["probs"], "judge", d["note"], rule=d.get("rule")
                )
                done += uniq.weight[int(u)]
            self.count("batches")
            if on_progress is not None:
                on_progress(done)
        lost = [u for u, j in enumerate(judged) if j is None]
        if lost:
            raise RuntimeError(f"judge ray: {len(lost)} of {len(firsts)} pairs came back from no worker")
        self.count("pairs", len(pairs))
        self.count("distinct_pairs", len(firsts))
        return uniq.spread(pairs, judged)  # type: ignore[arg-type]  # lost was empty: every pair judged

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        if self._inner is not None:
            out["judge"] = self._inner.describe()
        return out

    def stats(self) -> dict[str, Any]:
        out = super().stats()
        if self._inner is not None and self._inner.stats():
            out["judge"] = self._inner.stats()
        return out

    def close(self) -> None:
        """Shut down the Ray instance this judge started (a joined cluster stays up)."""
        if self._started and self._ray is not None:
            self._ray.shutdown()
        self._ray, self._started = None, False


class JudgeWorker:
    """A Ray Data actor: builds the judge once, then labels batches of (passage, claim) texts.

    Returns one JSON ``judgment`` per row (label or null, probabilities, note), which the
    driver turns back into the judgment of its own pair.
    """

    def __init__(self, name: str, target: type, config: Any, threads: int) -> None:
        """``target``: the judge class the driver resolved ``name`` to, registered here too when
        this process does not know the name (a judge registered by the user's code)."""
        from ..backends import registry

        try:
            import torch

            torch.set_num_threads(threads)
        except ImportError:
            pass
        if name not in registry.available("judge"):
            registry.register("judge", name, target)
        self.judge = registry.build("judge", name, config)

    def __call__(self, batch: Any) -> Any:
        pairs = [
            Pair(Claim("", 0, str(c)), Passage("", "", 0, str(p))) for p, c in zip(batch["passage"], batch["claim"])
        ]
        out = self.judge.judge(pairs)
        if len(out) != len(pairs):
            raise RuntimeError(f"judge returned {len(out)} judgments for {len(pairs)} pairs")
        return batch.assign(
            judgment=[
                json.dumps(
                    {
                        "label": j.label,
                        "probs": dict(j.probs) if j.probs is not None else None,
                        "note": j.note,
                        "rule": j.rule,
                    }
                )
                for j in out
            ]
        )[["u", "judgment"]]


class RayEngineGenerator:
    """The ``vllm`` generator with its generation done by vLLM engine replicas through Ray's LLM
    batch API (``ray.data.llm``): handed to the ``vllm`` judge the ``ray`` judge distributes.

    Everything but :meth:`generate` is the wrapped in-process generator's (``local``, built by
    the registry, whose engine never starts): prompts are rendered exactly as it renders them
    (chat prompts to token ids, so no second BOS) and go to the engines with the chat-template,
    tokenize and detokenize stages off; the engines' arguments are its ``engine_kwargs()``. A
    row the engine fails on comes back unscored (``should_continue_on_error``), never guessed.
    """

    def __init__(self, local: VLLMGenerator, *, ray_config: RayJudgeConfig, start: Callable[[], Any]):
        self.local = local
        self._ray_config = ray_config
        self._start = start

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "local":
            raise AttributeError(name)
        return getattr(self.local, name)

    def llm(self) -> Any:
        raise RuntimeError("the ray judge's vllm generator runs no engine in this process")

    def processor_config(self) -> dict[str, Any]:
        """The arguments of ``ray.data.llm.vLLMEngineProcessorConfig``."""
        engine = self.local.engine_kwargs()
        model = engine.pop("model")
        rc = self._ray_config
        out: dict[str, Any] = {
            "model_source": model,
            "engine_kwargs": engine,
            "concurrency": rc.workers,
            "batch_size": rc.batch_size,
            "chat_template_stage": False,
            "tokenize_stage": False,
            "detokenize_stage": False,
            "should_continue_on_error": True,
        }
        if rc.accelerator_type:
            out["accelerator_type"] = rc.accelerator_type
        if not rc.gpus_per_worker:
            # Ray's default placement asks each replica for a GPU; on CPU workers it would wait for ever
            out["placement_group_config"] = {"bundle_per_worker": {"CPU": rc.cpus_per_worker}}
            out["log_engine_metrics"] = False  # the engine metrics are GPU-serving gauges
        return out

    def rows(self, prompts: Sequence[Prompt]) -> list[dict[str, Any]]:
        """One input row per prompt: ``idx``, and the text (``prompt``) or token ids (``tokenized_prompt``)."""
        out = []
        for i, p in enumerate(prompts):
            enc = self.local.encode(p)
            out.append(
                {"idx": i, "prompt": enc}
                if isinstance(enc, str)
                else {"idx": i, "tokenized_prompt": list(enc["prompt_token_ids"])}
            )
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
        """One completion per prompt, in input order; ``on_progress(n)`` as rows come back."""
        if not prompts:
            return []
        ray = self._start()
        ray_llm = requires("ray.data.llm", "judge ray with vllm", install=INSTALL_HINT)
        build = getattr(ray_llm, "build_processor", None) or ray_llm.build_llm_processor
        params = {
            k: v
            for k, v in {
                "max_tokens": max_tokens,
                "temperature": temperature,
                "seed": self.local.config.seed,
                "stop": list(stop) if stop else None,
                "logprobs": logprobs,
            }.items()
            if v is not None
        }
        processor = build(
            ray_llm.vLLMEngineProcessorConfig(**self.processor_config()),
            preprocess=partial(with_sampling_params, params=params),
            postprocess=from_engine_row,
        )
        out: list[Generation | None] = [None] * len(prompts)
        for row in processor(ray.data.from_items(self.rows(prompts))).iter_rows():
            out[int(row["idx"])] = generation_from_row(row)
            if on_progress is not None:
                on_progress(1)
        if any(g is None for g in out):
            raise RuntimeError(f"ray.data.llm returned {sum(g is not None for g in out)} of {len(prompts)} answers")
        self.local.count("prompts", len(prompts))
        return out  # type: ignore[return-value]  # checked above: no None left


def with_sampling_params(row: dict[str, Any], *, params: Mapping[str, Any]) -> dict[str, Any]:
    """Preprocess: the row plus the engine's ``sampling_params`` (the same for every row)."""
    return {**row, "sampling_params": dict(params)}


def from_engine_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """Postprocess: the answer's text and its per-token alternatives (as JSON: Arrow cannot
    hold dicts keyed by token id) next to the prompt's ``idx``."""
    steps = [alternatives(_step_items(step)) for step in row.get("logprobs") or ()]
    return {
        "idx": row["idx"],
        "text": row.get("generated_text", ""),
        "top_logprobs": json.dumps(steps) if row.get("logprobs") is not None else None,
    }


def _step_items(step: Any) -> Iterable[tuple[Any, float, str | None]]:
    """``(token id, logprob, decoded text)`` of one position of ``vLLMOutputData.logprobs``
    (``{token_id: {"logprob", "rank", "decoded_token"}}``, or its items as pairs)."""
    items = step.items() if isinstance(step, Mapping) else step
    for tid, info in items:
        yield tid, float(info["logprob"]), info.get("decoded_token")


def generation_from_row(row: Mapping[str, Any]) -> Generation:
    """The :class:`Generation` of one output row; a row the engine failed on has no answer."""
    error = row.get("__inference_error__")
    if error:
        return Generation(None, error=f"ray.data.llm: {error}")
    top = row.get("top_logprobs")
    steps = tuple(json.loads(top)) if top else None
    return Generation(strip_thinking(str(row.get("text") or "")), steps, None, None)
