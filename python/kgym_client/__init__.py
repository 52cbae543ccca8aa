"""kgym_client: Python client of the kgym RL environment server (docs/server.md).

Standard library only. Sync: KgymClient (HTTP), KgymSession (WebSocket). Async: AsyncKgymClient,
AsyncKgymSession. Errors answered by the server raise KgymError(code, message, status).
"""
from ._protocol import ConnectionClosed, KgymError, StepResult
from .aio import AsyncKgymClient, AsyncKgymSession
from .client import KgymClient, KgymSession

__all__ = ["KgymClient", "KgymSession", "AsyncKgymClient", "AsyncKgymSession", "KgymError", "StepResult",
           "ConnectionClosed"]
