"""The replication stream and the AOF as lists of commands, to compare a
Volley primary's with a redis-server primary's (PINGs and the primary's
keep-alive newlines left out; SELECTs, MULTI and EXEC kept)."""
import glob
import os
import socket
import time


def parse_commands(buf):
    """The RESP commands in `buf` (whole ones only), PINGs left out."""
    cmds, i = [], 0
    while i < len(buf):
        if buf[i:i + 1] == b"\n":  # a primary's keep-alive newline
            i += 1
            continue
        end = buf.index(b"\r\n", i)
        n, i, args = int(buf[i + 1:end]), end + 2, []
        for _ in range(n):
            end = buf.index(b"\r\n", i)
            size = int(buf[i + 1:end])
            args.append(buf[end + 2:end + 2 + size].decode())
            i = end + 2 + size + 2
        if args[0].upper() != "PING":
            cmds.append(args)
    return cmds


class SyncStream:
    """A raw SYNC, as the Tcl suite's attach_to_replication_stream."""

    def __init__(self, srv):
        self.sock = socket.create_connection((srv.host, srv.port), timeout=10)
        self.sock.sendall(b"SYNC\r\n")
        buf = b""
        while True:
            buf += self.sock.recv(65536)
            buf = buf.lstrip(b"\n")
            if b"\r\n" in buf:
                head, rest = buf.split(b"\r\n", 1)
                size = int(head[1:])
                break
        while len(rest) < size:
            rest += self.sock.recv(65536)
        self.buf = rest[size:]

    def commands(self, until):
        """What streamed, once a command equal to `until` arrived."""
        deadline = time.monotonic() + 10
        while until not in parse_commands(self.buf):
            assert time.monotonic() < deadline, parse_commands(self.buf)
            self.sock.settimeout(max(0.1, deadline - time.monotonic()))
            self.buf += self.sock.recv(65536)
        return parse_commands(self.buf)


def aof_commands(srv):
    """The commands of the server's one incremental AOF file."""
    files = sorted(glob.glob(os.path.join(srv.dir, "appendonlydir", "*.incr.aof")))
    assert len(files) == 1, files
    with open(files[0], "rb") as f:
        return parse_commands(f.read())
