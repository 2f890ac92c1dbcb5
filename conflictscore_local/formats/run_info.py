"""What a run used, in words, from its summary's ``config``: the judge and its model (``score``
prints it; every page shows it at the top; ``view`` lists it per run)."""

from __future__ import annotations

import os
from typing import Any, Mapping

CHOOSING_A_JUDGE = "docs/pipeline.md#choosing-a-judge"
"""Where the documentation says which judge to use for what."""
GIVEN = "none (labels given)"
"""The judge of a run that built none: every label came with the items."""
DEFAULT_NOTE = (
    "the bundled default: a small CPU judge meant for smoke tests, not for numbers you publish; "
    f"choosing a judge: {CHOOSING_A_JUDGE}"
)


def judge_info(config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``{"name", "model", "default", "note"}`` of the judge a summary's ``config`` records
    (``model`` None where it names none; ``note`` set for the bundled default judge), or None
    when the config records no judge (a run with every label given, or no summary)."""
    if not config:
        return None
    run = (config.get("run") or {}).get("judge") or {}
    built = (config.get("backends") or {}).get("judge")
    if "backends" in config and (built is None or built.get("loaded") is False):
        # the run built no judge: every label was given (or nothing was to judge)
        return {"name": GIVEN, "model": None, "default": False, "note": None}
    backend = (config.get("backends") or {}).get("judge") or {}
    name = backend.get("name") or run.get("name")
    if not name:
        return None
    resolved = backend.get("resolved") or {}
    args = backend.get("args") or {k: v for k, v in run.items() if k != "name"}
    model = resolved.get("model_manifest") or _base(resolved.get("model_path")) or args.get("model")
    if name == "cascade":
        parts = [judge_info({"backends": {"judge": resolved.get(side) or {}}}) for side in ("first", "second")]
        shown = [f"{p['name']} {p['model']}" if p and p["model"] else (p["name"] if p else "?") for p in parts]
        model = model or (" then ".join(shown) if any(parts) else None)
    served = backend.get("generator") or {}  # a judge behind a server (openai): what it asked for and where
    model = model or served.get("model")
    host = _host(args.get("base_url"))
    if host and model is not None:
        model = f"{model} at {host}"
    elif host:
        model = f"at {host}"
    default = str(resolved.get("model_source", "")).startswith("bundled:")
    return {
        "name": str(name),
        "model": str(model) if model is not None else None,
        "default": default,
        "note": DEFAULT_NOTE if default else None,
    }


def _host(url: Any) -> str | None:
    """The host (and port) of a server's URL, nothing else of it (no credentials, no path)."""
    if not isinstance(url, str) or not url:
        return None
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not host:
        return None
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{port}" if port else host


def _base(path: Any) -> str | None:
    return os.path.basename(str(path).rstrip("/")) if path else None


def judge_text(config: Mapping[str, Any] | None) -> str | None:
    """One line: ``judge nli, model default-judge`` (and the default judge's note), or None."""
    info = judge_info(config)
    if info is None:
        return None
    line = f"judge {info['name']}" + (f", model {info['model']}" if info["model"] else "")
    return line + (f" ({info['note']})" if info["note"] else "")


__all__ = ["CHOOSING_A_JUDGE", "DEFAULT_NOTE", "GIVEN", "judge_info", "judge_text"]
