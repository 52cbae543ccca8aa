"""Framed messages between the C++ engine and the Python workers.

A frame is: u32 header length (little-endian), u32 blob count, the UTF-8 JSON header, then for
each blob a u64 length and its bytes. The JSON header is an object with an ``op`` field; blobs
carry raw tensor bytes (see ``tensors.py``). Nothing is ever unpickled.
"""
import json
import socket
import struct

_HEAD = struct.Struct("<II")
_BLOB = struct.Struct("<Q")
MAX_HEADER = 64 << 20


class ChannelClosed(Exception):
    """The peer closed the channel."""


def _recv_exact(sock: socket.socket, n: int) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ChannelClosed()
        got += k
    return buf


def send(sock: socket.socket, header: dict, blobs=()) -> None:
    """Sends one frame. ``blobs`` is a sequence of bytes-like objects."""
    data = json.dumps(header, allow_nan=True).encode()
    parts = [_HEAD.pack(len(data), len(blobs)), data]
    for b in blobs:
        mv = memoryview(b).cast("B")
        parts.append(_BLOB.pack(mv.nbytes))
        parts.append(mv)
    for p in parts:
        sock.sendall(p)


def recv(sock: socket.socket):
    """Receives one frame; returns (header dict, list of bytearray blobs)."""
    hlen, nblobs = _HEAD.unpack(_recv_exact(sock, _HEAD.size))
    if hlen > MAX_HEADER:
        raise ValueError(f"frame header of {hlen} bytes is too large")
    header = json.loads(_recv_exact(sock, hlen))
    blobs = []
    for _ in range(nblobs):
        (blen,) = _BLOB.unpack(_recv_exact(sock, _BLOB.size))
        blobs.append(_recv_exact(sock, blen))
    return header, blobs


def serve(sock: socket.socket, handlers: dict, on_error) -> None:
    """The request loop of a worker: answers each request with ``handlers[op](header, blobs)``
    (a reply dict, or a (dict, blobs) tuple) until ``exit`` or the channel closes. An unknown op
    or a handler exception is answered with ``on_error(exc)``; the loop goes on."""
    while True:
        try:
            req, blobs = recv(sock)
        except ChannelClosed:
            return
        op = req.get("op")
        if op == "exit":
            return
        try:
            if op not in handlers:
                raise ValueError(f"unknown op {op!r}")
            reply = handlers[op](req, blobs)
        except Exception as exc:  # noqa: BLE001 - reported on the channel, never silent
            reply = on_error(exc)
        out_blobs = []
        if isinstance(reply, tuple):
            reply, out_blobs = reply
        send(sock, reply, out_blobs)
