"""Shared by the integration tests: the bundled examples, telemetry off, the network refused.

Each framework test runs in its own virtualenv (``make test-integrations``); in the main one the
framework is missing and those tests skip. Frameworks that phone home do so through sockets: any
connection to a non-loopback address during a test is refused and fails the test.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
from pathlib import Path
from typing import Any, Iterator, Mapping

import pytest

# the documented opt-outs (inspect_ai sends none unless INSPECT_TELEMETRY names a hook), set before any framework import
os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _local(host: Any) -> bool:
    if host in (None, "", "localhost"):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Refuse (and record) every connection or name lookup that would leave this machine."""
    attempts: list[str] = []
    real_connect, real_connect_ex, real_getaddrinfo = (
        socket.socket.connect,
        socket.socket.connect_ex,
        socket.getaddrinfo,
    )

    def check(sock: socket.socket | None, address: Any) -> None:
        if sock is not None and sock.family == socket.AF_UNIX:
            return
        host = address[0] if isinstance(address, tuple) else address
        if not _local(host):
            attempts.append(str(address))
            raise OSError(f"network access refused in tests: {address}")

    def connect(self: socket.socket, address: Any) -> Any:
        check(self, address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> Any:
        check(self, address)
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        check(None, (host,))
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield attempts
    assert not attempts, f"the test tried to reach the network: {attempts}"


def read_jsonl(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (EXAMPLES / name).read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="session")
def example_rows() -> list[dict[str, Any]]:
    """examples/items.jsonl: three responses to decompose and judge with the default pipeline."""
    return read_jsonl("items.jsonl")


@pytest.fixture(scope="session")
def labeled_row() -> dict[str, Any]:
    """examples/labeled.jsonl: one item with given claims and labels (no model needed).

    By hand: claim 0 is supported by d1 and contradicted by d2 (conflicted, ratio 1/2); claims 1
    and 2 are supported only. CS-C 1/3, CS-R 1/2, cs_r_evidenced (1/2 + 0 + 0)/3 = 1/6, support 1.
    """
    (row,) = read_jsonl("labeled.jsonl")
    return row


LABELED_VALUES = {"cs_c": 1 / 3, "cs_r": 0.5, "cs_r_evidenced": 1 / 6, "support_rate": 1.0}
LABELED_EXPLANATION = (
    "CS-C 0.333 (1 of 3 claims conflicted), CS-R 0.500, cs_r_evidenced 0.167, support rate 1.000\n"
    "conflicted: 'Candidate A won the 2018 election.' supported by [d1]; contradicted by [d2]"
)
KNOWN_LABELS = ("CS-C", "CS-R", "cs_r_evidenced", "support rate")


def known(values: Mapping[str, Any]) -> dict[str, Any]:
    """The four ConflictScore metrics of ``values``: a metric added to the table adds a key, and
    no expectation here has to change."""
    return {k: values[k] for k in LABELED_VALUES}


def known_explanation(text: str) -> str:
    """An explanation without the parts of metrics other than the four ConflictScore ones."""
    head, sep, rest = text.partition("\n")
    parts = [p for p in head.split(", ") if p.split(" (")[0].rsplit(" ", 1)[0] in KNOWN_LABELS]
    return ", ".join(parts) + sep + rest
