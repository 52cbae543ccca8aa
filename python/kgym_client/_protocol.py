"""Wire helpers shared by the sync and async clients: errors, results, WebSocket framing (RFC 6455).

Standard library only. The server's protocol is documented in docs/server.md.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
from dataclasses import dataclass, field
from typing import Any, Optional
from urllib.parse import urlsplit

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


class KgymError(Exception):
    """An error answered by the server: `code` (e.g. "EPISODE_DONE"), `message`, HTTP `status`
    (None over WebSocket)."""

    def __init__(self, code: str, message: str, status: Optional[int] = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status


class ConnectionClosed(Exception):
    """The WebSocket was closed by the server."""


@dataclass
class StepResult:
    """One reset/step answer: the observation dict, the reward (None for reset and inspections)
    and whether the episode is done."""

    observation: dict
    reward: Optional[float] = None
    done: bool = False
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def episode_id(self) -> str:
        return self.observation["episode_id"]

    @property
    def feedback(self) -> Optional[dict]:
        return self.observation.get("feedback")


def parse_result(payload: dict) -> StepResult:
    return StepResult(payload.get("observation", {}), payload.get("reward"), bool(payload.get("done", False)), payload)


def batch_item(payload: dict):
    """One answer of a batch: a StepResult, or the KgymError of an item that failed."""
    if isinstance(payload, dict) and payload.get("type") == "error":
        data = payload.get("data") or {}
        return KgymError(data.get("code", "UNKNOWN"), data.get("message", ""), payload.get("status"))
    return parse_result(payload)


def raise_for_error(payload: Any, status: Optional[int] = None) -> None:
    if isinstance(payload, dict) and payload.get("type") == "error":
        data = payload.get("data") or {}
        raise KgymError(data.get("code", "UNKNOWN"), data.get("message", ""), status)


def split_url(base_url: str) -> tuple[str, int, str]:
    """(host, port, path prefix) of an http:// or ws:// URL."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "ws"):
        raise ValueError(f"only http:// and ws:// URLs are supported, got {base_url!r}")
    return parts.hostname or "127.0.0.1", parts.port or 80, parts.path.rstrip("/")


def reset_body(task_id=None, split=None, seed=None, episode_id=None, **options) -> dict:
    """The /reset body. Episode options come as keyword arguments (``max_turns=2``) or, as in the
    wire format (docs/server.md), as one ``options={...}`` dict; both may be given (a keyword wins)."""
    nested = options.pop("options", None)
    if nested is not None:
        if not isinstance(nested, dict):
            raise TypeError("reset(options=...) takes a dict of episode options, e.g. {'max_turns': 2}")
        options = {**nested, **options}
    body: dict = {}
    if task_id is not None:
        body["task_id"] = task_id
    if split is not None:
        body["split"] = split
    if seed is not None:
        body["seed"] = seed
    if episode_id is not None:
        body["episode_id"] = episode_id
    if options:
        body["options"] = options
    return body


def handshake_request(host: str, port: int, path: str) -> tuple[bytes, str]:
    """The HTTP upgrade request and the Sec-WebSocket-Accept value the server must answer."""
    key = base64.b64encode(os.urandom(16)).decode()
    accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
    request = (
        f"GET {path}/ws HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    return request.encode(), accept


def check_handshake(response: bytes, accept: str) -> None:
    head = response.decode("latin-1")
    status_line = head.split("\r\n", 1)[0]
    if " 101 " not in status_line + " ":
        raise ConnectionError(f"WebSocket upgrade refused: {status_line}")
    for line in head.split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "sec-websocket-accept" and value.strip() == accept:
            return
    raise ConnectionError("WebSocket upgrade: wrong or missing Sec-WebSocket-Accept")


def encode_frame(opcode: int, payload: bytes) -> bytes:
    """A client frame: FIN set, masked (clients must mask)."""
    header = bytearray([0x80 | opcode])
    n = len(payload)
    if n < 126:
        header.append(0x80 | n)
    elif n < 1 << 16:
        header.append(0x80 | 126)
        header += struct.pack("!H", n)
    else:
        header.append(0x80 | 127)
        header += struct.pack("!Q", n)
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes(header) + mask + masked


def frame_header(first_two: bytes) -> tuple[bool, int, bool, int]:
    """(fin, opcode, masked, short length) from a frame's first two bytes."""
    b0, b1 = first_two[0], first_two[1]
    return bool(b0 & 0x80), b0 & 0x0F, bool(b1 & 0x80), b1 & 0x7F


def unmask(payload: bytes, mask: bytes) -> bytes:
    return bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def dumps(obj: Any) -> bytes:
    return json.dumps(obj).encode()
