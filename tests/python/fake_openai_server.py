#!/usr/bin/env python3
"""A small OpenAI-compatible chat-completions server for tests (standard library only).

Usage: fake_openai_server.py PORT_FILE LOG_FILE [--fail-first N] [--mixed]

Listens on 127.0.0.1 on a free port (written to PORT_FILE), answers POST <any>/chat/completions
with canned completions and appends one JSON line per request to LOG_FILE. The canned answer is
the task's reference `Model` (the code block after "Your task" in the first user message) renamed to `ModelNew`, inside a
```python block: a correct plain-PyTorch candidate. On a turn after feedback, it answers the
same module with a comment naming the turn. The first N requests get HTTP 503 with Retry-After: 0
(to exercise retries).

With --mixed (for the ReLU task, L1/19_ReLU), the answers cover every outcome instead: the k-th
first-turn request of a run gets MIXED[0][k % 3] (wrong, crashing, not parsing), the k-th
second-turn request MIXED[1][k % 3] (hacking, slow, fast). Each answer's code starts with
`# kind: <name>`; the log line records the kind and the `Outcome: ...` line of the feedback the request
carried (the last user message), so a test can check that each turn saw the previous verdict.
"""
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STATE = {"count": 0, "fail_first": 0, "mixed": False, "per_turn": {}}

_RELU = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return {expr}
"""
_HACK = """import time

import torch
import torch.nn as nn

# rebinds the harness's timer at import: the identity check names it ([tamper])
_orig = time.perf_counter_ns
time.perf_counter_ns = lambda: _orig() // 100


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
"""
_SLOW = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        for _ in range(30):  # the same answer thirty times over
            y = torch.relu(x)
        return y
"""
MIXED = [
    [("wrong", _RELU.format(expr="torch.relu(x) + 1.0")),
     ("crashing", _RELU.format(expr="torch.relu(x)[x.shape[0] + 5]  # past the last row: IndexError")),
     ("not_parsing", None)],
    [("hacking", _HACK), ("slow", _SLOW), ("fast", _RELU.format(expr="torch.relu(x)"))],
]


def mixed(messages):
    """The --mixed answer for this request: (kind, completion text)."""
    turn = min(1, sum(1 for x in messages if x["role"] == "assistant"))
    with LOCK:
        k = STATE["per_turn"].get(turn, 0)
        STATE["per_turn"][turn] = k + 1
    kind, code = MIXED[turn][k % 3]
    if code is None:  # no fenced block: kgym takes the text itself as the code, which does not parse
        return kind, "I would rather not write this kernel: the reference is fast enough already."
    return kind, "Here it is.\n\n```python\n# kind: %s\n%s```\n" % (kind, code)


def canned(messages):
    first_user = next(m["content"] for m in messages if m["role"] == "user")
    # the task's reference is the block after "Your task" (kgym's prompt may show an example first)
    tail = first_user[first_user.find("Your task"):] if "Your task" in first_user else first_user
    m = re.search(r"```python\n(.*?)```", tail, re.S)
    ref = m.group(1) if m else ""
    code = re.sub(r"\bModel\b", "ModelNew", ref)
    turns = sum(1 for x in messages if x["role"] == "assistant")
    return "Here is a faster version.\n\n```python\n# attempt %d\n%s```\n" % (turns + 1, code)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        msgs = body.get("messages", [])
        with LOCK:
            STATE["count"] += 1
            n = STATE["count"]
        kind, content = (None, None)
        if STATE["mixed"] and self.path.endswith("/chat/completions") and n > STATE["fail_first"]:
            kind, content = mixed(msgs)
        users = [m["content"] for m in msgs if m.get("role") == "user"]
        with LOCK:
            with open(LOG, "a") as f:
                f.write(json.dumps({"path": self.path, "n": n, "model": body.get("model"),
                                    "messages": len(msgs), "kind": kind,
                                    "feedback": next((l for l in users[-1].splitlines() if l.startswith("Outcome: ")), users[-1][:80])
                                    if len(users) > 1 else None}) + "\n")
        if not self.path.endswith("/chat/completions"):
            self.send_response(404)
            self.end_headers()
            return
        if n <= STATE["fail_first"]:
            self.send_response(503)
            self.send_header("Retry-After", "0")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")
            return
        if content is None:
            content = canned(body["messages"])
        reply = {"id": "cmpl-%d" % n, "object": "chat.completion", "model": body.get("model"),
                 "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                              "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


if __name__ == "__main__":
    port_file, LOG = sys.argv[1], sys.argv[2]
    if "--fail-first" in sys.argv:
        STATE["fail_first"] = int(sys.argv[sys.argv.index("--fail-first") + 1])
    STATE["mixed"] = "--mixed" in sys.argv
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.replace(port_file + ".tmp", port_file)
    server.serve_forever()
