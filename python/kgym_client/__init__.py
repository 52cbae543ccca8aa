"""kgym_client: Python client of the kgym RL environment server (docs/server.md).

Standard library only. Sync: KgymClient (HTTP), KgymSession (WebSocket). Async: AsyncKgymClient,
AsyncKgymSession. Errors answered by the server raise KgymError(code, message, status).
`evaluate_many` / `step_many` judge a group in one request (the batch routes). Trainer adapters:
kgym_client.trl, .verl, .skyrl, .openrlhf (docs/trainers.md); `feedback.observation_text` renders a
verdict within a token budget. Install with `pip install ./python` from the checkout.
"""
from ._protocol import ConnectionClosed, KgymError, StepResult
from .aio import AsyncKgymClient, AsyncKgymSession
from .client import KgymClient, KgymSession

__all__ = ["KgymClient", "KgymSession", "AsyncKgymClient", "AsyncKgymSession", "KgymError", "StepResult",
           "ConnectionClosed"]
