"""Framed messages between the C++ engine and the Python workers.

A frame is: u32 header length (little-endian), u32 blob count, the UTF-8 JSON header, then for
each blob a u64 length and its bytes. The JSON header is an object with an ``op`` field; blobs
carry raw tensor bytes (see ``tensors.py``). Nothing is ever unpickled.

A length with bit 63 set is a blob passed as a sealed memfd (``SharedBlob``): its size in the low
bits and no bytes on the stream; the frame's memfds travel as SCM_RIGHTS with its first 8 bytes,
in blob order. The receiver (the supervisor, and again the reference worker) accepts only a
regular file of the declared size sealed against writing, shrinking and growing, so the sender
cannot change the bytes once sent; the reference maps it copy-on-write.
"""
import fcntl
import gc
import json
import mmap
import os
import socket
import stat
import struct

_HEAD = struct.Struct("<II")
_BLOB = struct.Struct("<Q")
MAX_HEADER = 64 << 20
SHARED_BIT = 1 << 63
MAX_SHARED = 64  # memfd blobs per frame (the supervisor's limit too)
_SEALS = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW


class SharedBlob:
    """A blob's bytes in a sealed memfd (``fd``, owned; closed by ``send`` once sent)."""

    def __init__(self, fd: int, nbytes: int):
        self.fd = fd
        self.nbytes = nbytes

    @staticmethod
    def from_buffer(buf) -> "SharedBlob":
        """The bytes of ``buf`` (a bytes-like object) in a new memfd, sealed against writing,
        shrinking, growing and further sealing. Raises OSError where memfds or seals are not
        available (the caller sends the bytes inline instead)."""
        mv = memoryview(buf).cast("B")
        fd = os.memfd_create("kgym-blob", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            done = 0
            while done < mv.nbytes:
                done += os.write(fd, mv[done:done + (1 << 30)])
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SEALS | fcntl.F_SEAL_SEAL)
        except BaseException:
            os.close(fd)
            raise
        return SharedBlob(fd, mv.nbytes)

    def __del__(self):
        self.close()

    def read(self) -> bytearray:
        """A copy of the bytes (for a value decoded in the process that encoded it)."""
        out = bytearray(self.nbytes)
        view = memoryview(out)
        done = 0
        while done < self.nbytes:
            k = os.preadv(self.fd, [view[done:]], done)
            if k <= 0:
                raise OSError(f"shared blob: short read at {done} of {self.nbytes} bytes")
            done += k
        return out

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def map_sealed(fd: int, nbytes: int):
    """A private (copy-on-write, so writable for torch.frombuffer) mapping of a received memfd
    after checking it is a regular file of ``nbytes`` bytes sealed against writing, shrinking
    and growing; closes ``fd``. Raises ValueError otherwise."""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size != nbytes:
            raise ValueError(f"shared blob: not a memory file of {nbytes} bytes")
        if fcntl.fcntl(fd, fcntl.F_GET_SEALS) & _SEALS != _SEALS:
            raise ValueError("shared blob: not sealed against writing")
        if nbytes == 0:
            return bytearray()
        return mmap.mmap(fd, nbytes, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    finally:
        os.close(fd)


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
    """Sends one frame. ``blobs`` is a sequence of bytes-like objects and ``SharedBlob``s (whose
    descriptors this closes once sent, or on failure)."""
    try:
        data = json.dumps(header, allow_nan=True).encode()
        head = _HEAD.pack(len(data), len(blobs))
        fds = [b.fd for b in blobs if isinstance(b, SharedBlob)]
        if len(fds) > MAX_SHARED:
            raise ValueError(f"{len(fds)} shared blobs in one frame (at most {MAX_SHARED})")
        if fds:
            n = socket.send_fds(sock, [head], fds)
            if n < len(head):
                sock.sendall(head[n:])
        else:
            sock.sendall(head)
        sock.sendall(data)
        for b in blobs:
            if isinstance(b, SharedBlob):
                sock.sendall(_BLOB.pack(b.nbytes | SHARED_BIT))
                continue
            mv = memoryview(b).cast("B")
            sock.sendall(_BLOB.pack(mv.nbytes))
            sock.sendall(mv)
    finally:
        for b in blobs:
            if isinstance(b, SharedBlob):
                b.close()


def _recv_head(sock: socket.socket):
    """The frame's first 8 bytes and the descriptors that came with them."""
    buf = bytearray()
    fds = []
    while len(buf) < _HEAD.size:
        msg, got, flags, _ = socket.recv_fds(sock, _HEAD.size - len(buf), MAX_SHARED)
        if not msg:
            for f in fds + got:
                os.close(f)
            raise ChannelClosed()
        fds.extend(got)
        buf += msg
        if flags & socket.MSG_CTRUNC:
            for f in fds:
                os.close(f)
            raise ValueError(f"more than {MAX_SHARED} shared blobs in one frame")
    return bytes(buf), fds


def recv(sock: socket.socket):
    """Receives one frame; returns (header dict, list of blobs): bytearrays, and for shared
    blobs a private mapping of the sealed memfd (see ``map_sealed``)."""
    head, fds = _recv_head(sock)
    try:
        hlen, nblobs = _HEAD.unpack(head)
        if hlen > MAX_HEADER:
            raise ValueError(f"frame header of {hlen} bytes is too large")
        header = json.loads(_recv_exact(sock, hlen))
        blobs = []
        for _ in range(nblobs):
            (blen,) = _BLOB.unpack(_recv_exact(sock, _BLOB.size))
            if blen & SHARED_BIT:
                if not fds:
                    raise ValueError("a shared blob was declared without its file")
                blobs.append(map_sealed(fds.pop(0), blen & ~SHARED_BIT))
            else:
                blobs.append(_recv_exact(sock, blen))
        if fds:
            raise ValueError("files were sent that no blob declared")
        return header, blobs
    finally:
        for f in fds:
            os.close(f)


def settle(freeze: bool = False) -> None:
    """A full garbage collection now, so that none is pending for the next request (see serve);
    with ``freeze`` (after loading a task or a candidate) everything still alive is then frozen
    (``gc.freeze``), so that later collections look only at what requests create."""
    gc.collect()
    if freeze:
        gc.freeze()


def serve(sock: socket.socket, handlers: dict, on_error, after=None) -> None:
    """The request loop of a worker: answers each request with ``handlers[op](header, blobs)``
    (a reply dict, or a (dict, blobs) tuple) until ``exit`` or the channel closes. An unknown op
    or a handler exception is answered with ``on_error(exc)``; the loop goes on. ``after(req)``
    (the request's header), when given, runs once the reply is sent and the request's objects
    are dropped, outside any clock the supervisor runs on the request (the workers return cached
    device memory there).

    Python's cyclic garbage collector never runs inside a request: the supervisor times some
    requests with its own clock (the wall-clock floor and its calibration, docs/timing.md), and a
    full collection, which lands wherever an allocation crosses the threshold, cost them up to
    about 10 ms on the H200's host. The loop collects after sending a reply instead, when the
    allocations since the last collection passed the threshold. A request that must leave no
    collection pending for the next one calls ``settle()`` (loads: ``settle(freeze=True)``)."""
    gc.disable()
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
        del reply, out_blobs, blobs
        if gc.get_count()[0] >= gc.get_threshold()[0]:
            gc.collect()
        if after is not None:
            try:
                after(req)
            except Exception:  # noqa: BLE001 - housekeeping; the next request reports real trouble
                pass
