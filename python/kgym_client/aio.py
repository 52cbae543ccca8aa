"""Asynchronous kgym clients on asyncio streams: `AsyncKgymClient` (HTTP) and
`AsyncKgymSession` (WebSocket). Standard library only; every request has a timeout."""
from __future__ import annotations

import asyncio
import json
import struct
from typing import Any, Optional
from urllib.parse import quote

from ._protocol import (OP_BINARY, OP_CLOSE, OP_CONT, OP_PING, OP_PONG, OP_TEXT, ConnectionClosed, KgymError,
                        StepResult, check_handshake, dumps, encode_frame, frame_header, handshake_request,
                        batch_item, parse_result, raise_for_error, reset_body, split_url, unmask)


class AsyncKgymClient:
    """HTTP client for asyncio; one connection per request. Same methods as KgymClient, awaitable."""

    def __init__(self, base_url: str = "http://127.0.0.1:8000", timeout: float = 600.0):
        self.host, self.port, self.prefix = split_url(base_url)
        self.timeout = timeout

    async def _request(self, method: str, path: str, body: Optional[dict] = None,
                       timeout: Optional[float] = None) -> Any:
        return await asyncio.wait_for(self._exchange(method, path, body), timeout or self.timeout)

    async def _exchange(self, method: str, path: str, body: Optional[dict]) -> Any:
        reader, writer = await asyncio.open_connection(self.host, self.port)
        try:
            data = b"" if body is None else dumps(body)
            head = (f"{method} {self.prefix}{path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\nConnection: close\r\n\r\n")
            writer.write(head.encode() + data)
            await writer.drain()
            raw = await reader.read()  # the server closes after answering (Connection: close)
        finally:
            writer.close()
        header, _, payload = raw.partition(b"\r\n\r\n")
        status = int(header.split(b" ", 2)[1])
        parsed = json.loads(payload)
        if status >= 400:
            raise_for_error(parsed, status)
            raise KgymError("HTTP_ERROR", str(parsed)[:500], status)
        return parsed

    async def health(self) -> dict:
        return await self._request("GET", "/health")

    async def metrics(self) -> dict:
        return await self._request("GET", "/metrics.json")

    async def metadata(self) -> dict:
        return await self._request("GET", "/metadata")

    async def schema(self) -> dict:
        return await self._request("GET", "/schema")

    async def reset(self, task_id: Optional[str] = None, split: Optional[str] = None, seed: Optional[int] = None,
                    episode_id: Optional[str] = None, **options) -> StepResult:
        return parse_result(await self._request("POST", "/reset", reset_body(task_id, split, seed, episode_id, **options)))

    async def step(self, episode_id: str, action: dict, timeout: Optional[float] = None) -> StepResult:
        return parse_result(await self._request("POST", "/step", {"episode_id": episode_id, "action": action}, timeout))

    async def submit_kernel(self, episode_id: str, code: str, timeout: Optional[float] = None) -> StepResult:
        return await self.step(episode_id, {"type": "submit_kernel", "code": code}, timeout)

    async def inspect_evaluation(self, episode_id: str, turn: int) -> StepResult:
        return await self.step(episode_id, {"type": "inspect_evaluation", "turn": turn})

    async def finalize(self, episode_id: str) -> StepResult:
        return await self.step(episode_id, {"type": "finalize"})

    async def state(self, episode_id: str) -> dict:
        return await self._request("GET", "/state?episode_id=" + quote(episode_id, safe=""))

    async def close(self, episode_id: str) -> None:
        await self._request("POST", "/close", {"episode_id": episode_id})

    async def advantages(self, returns: list, method: str = "grpo") -> list:
        reply = await self._request("POST", "/advantages", {"returns": list(returns), "method": method})
        return reply["advantages"]

    async def _batch(self, path: str, body: dict, wait_s: float) -> list:
        answer = await self._request("POST", path, {**body, "wait_s": wait_s}, timeout=wait_s + self.timeout)
        while answer.get("status") == "running":  # 202: still running; poll its handle
            answer = await self._request("GET", f"/batch?handle={answer['handle']}&wait_s={wait_s}",
                                         timeout=wait_s + self.timeout)
        return [batch_item(x) for x in answer["results"]]

    async def evaluate_many(self, task_id: str, codes: list, wait_s: float = 60.0, **options) -> list:
        """As KgymClient.evaluate_many: one group of candidates for one task, answers in order."""
        return await self._batch("/evaluate_many", {"task_id": task_id, "codes": list(codes), "options": options},
                                 wait_s)

    async def step_many(self, steps: list, wait_s: float = 60.0) -> list:
        """As KgymClient.step_many: `steps` is a list of (episode_id, action dict)."""
        return await self._batch("/step_many", {"steps": [{"episode_id": e, "action": a} for e, a in steps]}, wait_s)


class AsyncKgymSession:
    """One WebSocket session for asyncio. Create with `await AsyncKgymSession.connect(url)`, or
    `async with AsyncKgymSession(url) as s:`."""

    def __init__(self, base_url: str = "http://127.0.0.1:8000", timeout: float = 600.0):
        self.host, self.port, self.prefix = split_url(base_url)
        self.timeout = timeout
        self._reader: Optional[asyncio.StreamReader] = None
        self._writer: Optional[asyncio.StreamWriter] = None

    @classmethod
    async def connect(cls, base_url: str = "http://127.0.0.1:8000", timeout: float = 600.0) -> "AsyncKgymSession":
        s = cls(base_url, timeout)
        await asyncio.wait_for(s._open(), timeout)
        return s

    async def __aenter__(self) -> "AsyncKgymSession":
        if self._writer is None:
            await asyncio.wait_for(self._open(), self.timeout)
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def _open(self) -> None:
        self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        request, accept = handshake_request(self.host, self.port, self.prefix)
        self._writer.write(request)
        await self._writer.drain()
        head = await self._reader.readuntil(b"\r\n\r\n")
        check_handshake(head[:-4], accept)

    async def _read_message(self) -> Any:
        parts = []
        while True:
            fin, opcode, masked, n = frame_header(await self._reader.readexactly(2))
            if n == 126:
                n = struct.unpack("!H", await self._reader.readexactly(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", await self._reader.readexactly(8))[0]
            mask = await self._reader.readexactly(4) if masked else b""
            payload = await self._reader.readexactly(n)
            if masked:
                payload = unmask(payload, mask)
            if opcode == OP_PING:
                self._writer.write(encode_frame(OP_PONG, payload))
                continue
            if opcode == OP_CLOSE:
                raise ConnectionClosed("the server closed the WebSocket")
            if opcode in (OP_TEXT, OP_BINARY, OP_CONT):
                parts.append(payload)
                if fin:
                    return json.loads(b"".join(parts))

    async def _send(self, message: dict, timeout: Optional[float] = None) -> dict:
        async def exchange():
            self._writer.write(encode_frame(OP_TEXT, dumps(message)))
            await self._writer.drain()
            return await self._read_message()
        reply = await asyncio.wait_for(exchange(), timeout or self.timeout)
        raise_for_error(reply)
        return reply

    async def reset(self, task_id: Optional[str] = None, split: Optional[str] = None, seed: Optional[int] = None,
                    episode_id: Optional[str] = None, **options) -> StepResult:
        reply = await self._send({"type": "reset", "data": reset_body(task_id, split, seed, episode_id, **options)})
        return parse_result(reply["data"])

    async def step(self, action: dict, timeout: Optional[float] = None) -> StepResult:
        return parse_result((await self._send({"type": "step", "data": action}, timeout))["data"])

    async def submit_kernel(self, code: str, timeout: Optional[float] = None) -> StepResult:
        return await self.step({"type": "submit_kernel", "code": code}, timeout)

    async def inspect_evaluation(self, turn: int) -> StepResult:
        return await self.step({"type": "inspect_evaluation", "turn": turn})

    async def finalize(self) -> StepResult:
        return await self.step({"type": "finalize"})

    async def state(self) -> dict:
        return (await self._send({"type": "state"}))["data"]

    async def close(self) -> None:
        if self._writer is None:
            return
        try:
            self._writer.write(encode_frame(OP_TEXT, dumps({"type": "close"})))
            await asyncio.wait_for(self._writer.drain(), 5)
        except (OSError, asyncio.TimeoutError):
            pass
        finally:
            self._writer.close()
            self._writer = None
