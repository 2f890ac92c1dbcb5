"""One run configuration, filled from the embedded defaults, a TOML file and CLI flags.

```toml
[decomposer]
name = "spacy"            # the remaining keys are the backend's arguments

[pruner]
name = "auto"             # embedding where it is expected to pay, none elsewhere (prune/auto.py); or embedding, none
threshold = 0.25          # the embedding pruner's arguments (auto passes them on)

[judge]
name = "nli"
model = "path/to/checkpoint"
batch_size = 64

[chunk]                   # long documents → passages (max_tokens, 8 to 1,000,000, defaults to the judge's window)
overlap = 1               # sentences shared by neighbouring passages (0 to 1000)

[aggregate]
threshold = 0.0           # (0 to 1) min probability for a passage to put its document in D+ / D− (labels
                          # without probabilities are exempt: see aggregate.document_judgment)
keep_both = false         # a document with supporting and contradicting passages counts on both sides
                          # (alone it does not make a claim conflicted: that takes two documents)
document_rule = "auto"    # which passages of a long document may decide it: max (any), relevant (the
                          # one with the lowest p(IRRELEVANT)), on_topic (sharing a word with the claim
                          # that not every passage holds); auto: the rule the judge was evaluated with
                          # (the nli checkpoint's conflictscore.json), else max
min_side_weight = 0.5     # cs_c_weighted: each side's documents must weigh this much in all (documents'
                          # "reliability", 1.0 where not given; only items with reliability are weighted)

[sample]                  # score only some claims of each item (the claim × document matrix is quadratic)
claims_per_item = 0       # 0: every claim; K: at most K claims of each item
selection = "first"       # which: first, longest, salient (numbers, dates, names, the question's words), random

[cache]
enabled = true
path = "~/.cache/conflictscore/judgments.sqlite"

[engine]
step_items = 1024         # items per engine step: the batching scope (1 to 10,000,000)
checkpoint_s = 60         # (0.001 to 86400) judge (and prune) in calls of about this many seconds; after each, the
                          # judgments are in the cache and finished items in OUTPUT.partial
seed = 0                  # bootstrap seed (0 to 2**63 - 1)
bootstrap = 1000          # bootstrap resamples for the 95% intervals (0: none; at most 1,000,000)
max_unscored_share = 0.1  # (0 to 1) above this share of unscored judgments the run warns and exits 3
max_fallback_share = 0.1  # (0 to 1) above this share of sentences the seq2seq / llm decomposer could not split
                          # (spaCy's claims used instead) the run warns and exits 3
```

Every value is checked when the configuration is built (types and the range each numeric field
declares, NaN and infinity never), so a bad setting stops the run before any file is touched or
any model is loaded.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..backends.arguments import check_ranges, make_config, ranged
from ..core.errors import ConfigError
from ..util.locations import default_cache_path

STAGES = ("decomposer", "pruner", "judge")


@dataclass
class StageConfig:
    """A backend chosen by name, plus its arguments."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, **self.args}


SEED_MAX = 2**63 - 1


@dataclass(frozen=True)
class ChunkConfig:
    max_tokens: int | None = ranged(None, 8, 1_000_000, what="max_tokens (or leave it unset: the judge's window)")
    overlap: int = ranged(1, 0, 1000, what="overlap (sentences)")

    def __post_init__(self) -> None:
        check_ranges(self, where="[chunk]")


@dataclass(frozen=True)
class AggregateConfig:
    threshold: float = ranged(0.0, 0.0, 1.0, what="threshold (a probability)")
    keep_both: bool = False
    document_rule: str = "auto"
    min_side_weight: float = ranged(0.5, 0.0, 1e6, what="min_side_weight (a sum of document reliabilities)")

    def __post_init__(self) -> None:
        check_ranges(self, where="[aggregate]")
        from ..backends.registry import REGISTRY

        rules = REGISTRY["document_rule"].names()  # installed plugins' rules too
        if self.document_rule not in ("auto", *rules):
            raise ConfigError(f"aggregate.document_rule {self.document_rule!r}; allowed: auto, {', '.join(rules)}")


@dataclass(frozen=True)
class SampleConfig:
    claims_per_item: int = ranged(0, 0, 1_000_000, what="claims_per_item (0: every claim)")
    selection: str = "first"

    def __post_init__(self) -> None:
        check_ranges(self, where="[sample]")
        from ..backends.registry import REGISTRY

        selections = REGISTRY["claim_selection"].names()  # installed plugins' selections too
        if self.selection not in selections:
            raise ConfigError(f"sample.selection {self.selection!r}; allowed: {', '.join(selections)}")


@dataclass(frozen=True)
class CacheConfig:
    enabled: bool = True
    path: str | None = None


@dataclass(frozen=True)
class EngineConfig:
    step_items: int = ranged(1024, 1, 10_000_000)
    checkpoint_s: float = ranged(60.0, 0.001, 86400.0, what="checkpoint_s (seconds)")
    seed: int = ranged(0, 0, SEED_MAX)
    bootstrap: int = ranged(1000, 0, 1_000_000, what="bootstrap (0: no intervals)")
    max_unscored_share: float = ranged(0.1, 0.0, 1.0)
    max_fallback_share: float = ranged(0.1, 0.0, 1.0)

    def __post_init__(self) -> None:
        check_ranges(self, where="[engine]")


_SECTIONS: dict[str, type] = {
    "chunk": ChunkConfig,
    "aggregate": AggregateConfig,
    "sample": SampleConfig,
    "cache": CacheConfig,
    "engine": EngineConfig,
}

DEFAULT_STAGES: dict[str, str] = {"decomposer": "spacy", "pruner": "auto", "judge": "nli"}


@dataclass
class RunConfig:
    """Everything that decides a run's results; written into every summary."""

    decomposer: StageConfig = field(default_factory=lambda: StageConfig(DEFAULT_STAGES["decomposer"]))
    pruner: StageConfig = field(default_factory=lambda: StageConfig(DEFAULT_STAGES["pruner"]))
    judge: StageConfig = field(default_factory=lambda: StageConfig(DEFAULT_STAGES["judge"]))
    chunk: ChunkConfig = field(default_factory=ChunkConfig)
    aggregate: AggregateConfig = field(default_factory=AggregateConfig)
    sample: SampleConfig = field(default_factory=SampleConfig)
    cache: CacheConfig = field(default_factory=CacheConfig)
    engine: EngineConfig = field(default_factory=EngineConfig)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, where: str = "config") -> "RunConfig":
        """Build from a dict shaped like the TOML file; unknown sections or keys are errors."""
        cfg = cls()
        return cfg.updated(data, where=where)

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> "RunConfig":
        try:
            with open(path, "rb") as fh:
                data = tomllib.load(fh)
        except OSError as e:
            raise ConfigError(f"{path}: cannot read: {e.strerror}") from None
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path}: invalid TOML: {e}") from None
        except UnicodeDecodeError as e:
            raise ConfigError(
                f"{path}: not UTF-8 text (byte {e.start + 1}: {e.reason}); TOML files are UTF-8"
            ) from None
        except RecursionError:
            raise ConfigError(f"{path}: invalid TOML: arrays or tables nested too deeply") from None
        except ValueError as e:  # an integer beyond Python's int-string conversion limit
            raise ConfigError(f"{path}: invalid TOML: {str(e).split('; use sys.')[0]}") from None
        return cls.from_mapping(data, where=str(path))

    def updated(self, data: Mapping[str, Any], *, where: str = "config") -> "RunConfig":
        """A copy with ``data`` (TOML-shaped) laid over this config.

        Choosing another backend name for a stage drops the arguments given for the old one.
        """
        new = copy.deepcopy(self)
        allowed = list(STAGES) + list(_SECTIONS)
        for section, body in data.items():
            if section not in allowed:
                raise ConfigError(f"{where}: unknown section [{section}]; allowed: {', '.join(allowed)}")
            if not isinstance(body, Mapping):
                raise ConfigError(f"{where}: [{section}] must be a table")
            if section in STAGES:
                stage: StageConfig = getattr(new, section)
                body = dict(body)
                name = body.pop("name", None)
                if name is not None:
                    if not isinstance(name, str):
                        raise ConfigError(f"{where}: [{section}] name must be a string")
                    if name != stage.name:
                        stage = StageConfig(name)
                stage.args.update(body)
                setattr(new, section, stage)
            else:
                cur = dataclasses.asdict(getattr(new, section))
                cur.update(body)
                setattr(new, section, make_config(_SECTIONS[section], cur, where=f"{where}: [{section}]"))
        return new

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {s: getattr(self, s).to_json() for s in STAGES}
        for s in _SECTIONS:
            out[s] = dataclasses.asdict(getattr(self, s))
        return json.loads(json.dumps(out, default=str))

    def cache_path(self) -> Path:
        return Path(os.path.expanduser(self.cache.path)) if self.cache.path else default_cache_path()


def parse_assignment(text: str, *, flag: str) -> tuple[str, Any]:
    """``key=value`` from a CLI flag; the value is read as JSON when it parses, else a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"{flag} expects KEY=VALUE, got {text!r}")
    try:
        value: Any = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON (or an integer too long to convert): the text itself
        value = raw
    return key.strip(), value


def apply_overrides(cfg: RunConfig, sets: list[str]) -> RunConfig:
    """Apply ``--set section.key=value`` overrides."""
    data: dict[str, dict[str, Any]] = {}
    for s in sets:
        key, value = parse_assignment(s, flag="--set")
        section, dot, k = key.partition(".")
        if not dot:
            raise ConfigError(f"--set expects SECTION.KEY=VALUE, got {s!r}")
        data.setdefault(section, {})[k] = value
    return cfg.updated(data, where="--set")


def load_config(path: str | os.PathLike[str] | None = None) -> RunConfig:
    """The embedded defaults, overlaid with a TOML file when given."""
    return RunConfig.from_toml(path) if path else RunConfig()
