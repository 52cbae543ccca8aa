"""Synchronous kgym clients: `KgymClient` (HTTP, episodes by id) and `KgymSession` (one
WebSocket session holding one episode at a time). Standard library only; every request has a
timeout."""
from __future__ import annotations

import json
import socket
import struct
import urllib.error
import urllib.request
from typing import Any, Optional

from ._protocol import (OP_BINARY, OP_CLOSE, OP_CONT, OP_PING, OP_PONG, OP_TEXT, ConnectionClosed, KgymError,
                        StepResult, check_handshake, dumps, encode_frame, frame_header, handshake_request,
                        batch_item, parse_result, raise_for_error, reset_body, split_url, unmask)


class KgymClient:
    """HTTP client. Episodes are kept by the server under their `episode_id`.

    >>> c = KgymClient("http://127.0.0.1:8000")
    >>> r = c.reset(task_id="L1/19_ReLU", max_turns=2)
    >>> r = c.submit_kernel(r.episode_id, code)
    """

    def __init__(self, base_url: str = "http://127.0.0.1:8000", timeout: float = 600.0):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    def _request(self, method: str, path: str, body: Optional[dict] = None, timeout: Optional[float] = None) -> Any:
        data = None if body is None else dumps(body)
        req = urllib.request.Request(self.base_url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout or self.timeout) as res:
                return json.loads(res.read())
        except urllib.error.HTTPError as e:
            payload = e.read()
            try:
                parsed = json.loads(payload)
            except ValueError:
                raise KgymError("HTTP_ERROR", payload.decode(errors="replace")[:500], e.code) from None
            raise_for_error(parsed, e.code)
            raise KgymError("HTTP_ERROR", str(parsed)[:500], e.code) from None

    def health(self) -> dict:
        return self._request("GET", "/health")

    def metrics(self) -> dict:
        return self._request("GET", "/metrics.json")

    def metadata(self) -> dict:
        return self._request("GET", "/metadata")

    def schema(self) -> dict:
        return self._request("GET", "/schema")

    def reset(self, task_id: Optional[str] = None, split: Optional[str] = None, seed: Optional[int] = None,
              episode_id: Optional[str] = None, **options) -> StepResult:
        """Opens an episode. `options`: max_turns, single_turn, reward, return, gamma,
        roofline_floor_ms, backend, policy_profile, precision, prompt_style."""
        return parse_result(self._request("POST", "/reset", reset_body(task_id, split, seed, episode_id, **options)))

    def step(self, episode_id: str, action: dict, timeout: Optional[float] = None) -> StepResult:
        return parse_result(self._request("POST", "/step", {"episode_id": episode_id, "action": action}, timeout))

    def submit_kernel(self, episode_id: str, code: str, timeout: Optional[float] = None) -> StepResult:
        return self.step(episode_id, {"type": "submit_kernel", "code": code}, timeout)

    def inspect_evaluation(self, episode_id: str, turn: int) -> StepResult:
        return self.step(episode_id, {"type": "inspect_evaluation", "turn": turn})

    def finalize(self, episode_id: str) -> StepResult:
        return self.step(episode_id, {"type": "finalize"})

    def state(self, episode_id: str) -> dict:
        from urllib.parse import quote
        return self._request("GET", "/state?episode_id=" + quote(episode_id, safe=""))

    def close(self, episode_id: str) -> None:
        self._request("POST", "/close", {"episode_id": episode_id})

    def advantages(self, returns: list, method: str = "grpo") -> list:
        """Group-relative advantages ("grpo" or "dr_grpo") of one group's returns, computed by the gym."""
        return self._request("POST", "/advantages", {"returns": list(returns), "method": method})["advantages"]

    def _batch(self, path: str, body: dict, wait_s: float) -> list:
        answer = self._request("POST", path, {**body, "wait_s": wait_s}, timeout=wait_s + self.timeout)
        while answer.get("status") == "running":  # 202: still running; poll its handle
            answer = self._request("GET", f"/batch?handle={answer['handle']}&wait_s={wait_s}",
                                   timeout=wait_s + self.timeout)
        return [batch_item(x) for x in answer["results"]]

    def evaluate_many(self, task_id: str, codes: list, wait_s: float = 60.0, **options) -> list:
        """Judges a group of candidates for one task in one request (POST /evaluate_many): one
        single-turn episode per code. Returns one StepResult per code, in order, or a KgymError
        instance for a code whose evaluation failed on the trusted side. `options` as in reset
        (reward, policy_profile, ...). A batch not done within `wait_s` is polled (GET /batch)."""
        return self._batch("/evaluate_many", {"task_id": task_id, "codes": list(codes), "options": options}, wait_s)

    def step_many(self, steps: list, wait_s: float = 60.0) -> list:
        """One action per open episode in one request (POST /step_many); `steps` is a list of
        (episode_id, action dict). Returns StepResult or KgymError per step, in order."""
        body = {"steps": [{"episode_id": e, "action": a} for e, a in steps]}
        return self._batch("/step_many", body, wait_s)


class KgymSession:
    """One WebSocket session (`/ws`): reset, then steps on that episode. Closing the session
    closes its episode and cancels its queued evaluation. Use as a context manager."""

    def __init__(self, base_url: str = "http://127.0.0.1:8000", timeout: float = 600.0):
        host, port, path = split_url(base_url)
        self.timeout = timeout
        self._sock = socket.create_connection((host, port), timeout=timeout)
        request, accept = handshake_request(host, port, path)
        self._sock.sendall(request)
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self._sock.recv(4096)
            if not chunk:
                raise ConnectionError("connection closed during the WebSocket handshake")
            head += chunk
        head, _, self._buffer = head.partition(b"\r\n\r\n")
        check_handshake(head, accept)

    def __enter__(self) -> "KgymSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _read_exact(self, n: int) -> bytes:
        while len(self._buffer) < n:
            chunk = self._sock.recv(65536)
            if not chunk:
                raise ConnectionClosed("the server closed the connection")
            self._buffer += chunk
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out

    def _read_message(self) -> Any:
        parts = []
        while True:
            fin, opcode, masked, n = frame_header(self._read_exact(2))
            if n == 126:
                n = struct.unpack("!H", self._read_exact(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._read_exact(8))[0]
            mask = self._read_exact(4) if masked else b""
            payload = self._read_exact(n)
            if masked:
                payload = unmask(payload, mask)
            if opcode == OP_PING:
                self._sock.sendall(encode_frame(OP_PONG, payload))
                continue
            if opcode == OP_CLOSE:
                raise ConnectionClosed("the server closed the WebSocket")
            if opcode in (OP_TEXT, OP_BINARY, OP_CONT):
                parts.append(payload)
                if fin:
                    return json.loads(b"".join(parts))

    def _send(self, message: dict, timeout: Optional[float] = None) -> dict:
        self._sock.settimeout(timeout or self.timeout)
        self._sock.sendall(encode_frame(OP_TEXT, dumps(message)))
        reply = self._read_message()
        raise_for_error(reply)
        return reply

    def reset(self, task_id: Optional[str] = None, split: Optional[str] = None, seed: Optional[int] = None,
              episode_id: Optional[str] = None, **options) -> StepResult:
        reply = self._send({"type": "reset", "data": reset_body(task_id, split, seed, episode_id, **options)})
        return parse_result(reply["data"])

    def step(self, action: dict, timeout: Optional[float] = None) -> StepResult:
        return parse_result(self._send({"type": "step", "data": action}, timeout)["data"])

    def submit_kernel(self, code: str, timeout: Optional[float] = None) -> StepResult:
        return self.step({"type": "submit_kernel", "code": code}, timeout)

    def inspect_evaluation(self, turn: int) -> StepResult:
        return self.step({"type": "inspect_evaluation", "turn": turn})

    def finalize(self) -> StepResult:
        return self.step({"type": "finalize"})

    def state(self) -> dict:
        return self._send({"type": "state"})["data"]

    def close(self) -> None:
        if self._sock is None:
            return
        try:
            self._sock.settimeout(5)
            self._sock.sendall(encode_frame(OP_TEXT, dumps({"type": "close"})))
        except OSError:
            pass
        finally:
            self._sock.close()
            self._sock = None
