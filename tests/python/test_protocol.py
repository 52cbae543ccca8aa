"""The worker frame protocol's shared blobs (protocol.SharedBlob): large tensors travel as sealed
memfds; a receiver accepts only a memory file of the declared size sealed against writing."""
import fcntl
import os
import socket
import struct

import pytest
import torch

from kgym_worker import protocol, tensors


def _pair():
    return socket.socketpair()


def test_shared_blob_round_trip_and_decode():
    a, b = _pair()
    big = torch.arange(1 << 19, dtype=torch.float32)  # 2 MiB: above tensors.SHARED_MIN_BYTES
    small = torch.arange(10, dtype=torch.int64)
    blobs = []
    meta = tensors.encode([big, small], blobs)
    assert isinstance(blobs[0], protocol.SharedBlob) and not isinstance(blobs[1], protocol.SharedBlob)
    protocol.send(a, {"op": "x", "v": meta}, blobs)
    assert blobs[0].fd == -1  # send closed it
    header, got = protocol.recv(b)
    value = tensors.decode(header["v"], got, "cpu")
    assert torch.equal(value[0], big) and torch.equal(value[1], small)
    # The decoded tensor is a copy: writing it leaves the received mapping as it was, so a second
    # decode of the same blob still gives the sent values.
    value[0][0] = 5.0
    again = tensors.decode(header["v"], got, "cpu")
    assert float(again[0][0]) == 0.0 and torch.equal(again[0], big)


def test_sealed_mapping_is_private():
    """map_sealed's mapping is copy-on-write: a receiver writing into it changes neither the
    memory file (which other readers of the same fd see) nor what the sender holds."""
    fd = os.memfd_create("t", os.MFD_ALLOW_SEALING)
    os.write(fd, b"hello")
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW)
    keep = os.dup(fd)
    try:
        m = protocol.map_sealed(fd, 5)
        m[0:5] = b"HELLO"
        assert bytes(m[0:5]) == b"HELLO"
        assert os.pread(keep, 5, 0) == b"hello"
    finally:
        os.close(keep)


def test_decode_in_the_encoding_process():
    blobs = []
    t = torch.randn(1 << 19)
    meta = tensors.encode(t, blobs)
    assert torch.equal(tensors.decode(meta, blobs, "cpu"), t)


def _raw_frame(sock, fd, declared):
    head = struct.pack("<II", 2, 1)
    socket.send_fds(sock, [head], [fd])
    sock.sendall(b"{}")
    sock.sendall(struct.pack("<Q", declared | protocol.SHARED_BIT))


@pytest.mark.parametrize("seals,declared", [
    (0, 5),                                                     # not sealed
    (fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW, 5),               # still writable
    (fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW, 4),  # wrong size
])
def test_receiver_rejects_unsealed_or_mismatched(seals, declared):
    a, b = _pair()
    fd = os.memfd_create("t", os.MFD_ALLOW_SEALING)
    os.write(fd, b"hello")
    if seals:
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
    _raw_frame(a, fd, declared)
    os.close(fd)
    with pytest.raises(ValueError):
        protocol.recv(b)


def test_receiver_rejects_files_no_blob_declared():
    a, b = _pair()
    r, w = os.pipe()
    socket.send_fds(a, [struct.pack("<II", 2, 0)], [r])
    a.sendall(b"{}")
    with pytest.raises(ValueError):
        protocol.recv(b)
    os.close(r)
    os.close(w)


def test_sealed_blob_cannot_be_changed_by_the_sender():
    sb = protocol.SharedBlob.from_buffer(b"abcdef")
    with pytest.raises(PermissionError):
        os.pwrite(sb.fd, b"X", 0)
    sb.close()


def test_serve_never_collects_inside_a_request():
    """The cyclic collector is off inside every handler (a collection there was counted as the
    wall check's calls); the loop collects after the reply; a load freezes what it left alive."""
    import gc
    import threading

    a, b = _pair()
    seen = {}

    def load(req, blobs):
        seen["load"] = gc.isenabled()
        seen["cycle"] = []
        seen["cycle"].append(seen["cycle"])  # a reference cycle left alive by the load
        protocol.settle(freeze=True)
        return {"ok": True}

    def work(req, blobs):
        seen["work"] = gc.isenabled()
        for _ in range(3 * gc.get_threshold()[0]):  # well past the threshold: no collection runs
            x = []
            x.append(x)
        seen["count_in_request"] = gc.get_count()[0]
        return {"ok": True}

    was = gc.isenabled()
    frozen_before = gc.get_freeze_count()
    t = threading.Thread(target=protocol.serve, args=(b, {"load": load, "work": work}, lambda e: {"ok": False}))
    t.start()
    try:
        for op in ("load", "work", "work"):
            protocol.send(a, {"op": op}, [])
            assert protocol.recv(a)[0]["ok"] is True
        protocol.send(a, {"op": "exit"}, [])
        t.join(10)
        assert not t.is_alive()
        assert seen["load"] is False and seen["work"] is False
        assert seen["count_in_request"] >= 2 * gc.get_threshold()[0]
        assert gc.get_freeze_count() > frozen_before
    finally:
        gc.unfreeze()
        if was:
            gc.enable()
