"""Minimal raw RESP client for differential testing.

This module owns the wire: encoding commands as RESP multibulk requests and
reading back *exactly one complete reply* as its raw bytes, without decoding
it into Python values. Replies are compared byte for byte by the caller, so the
parser here only has to know where a reply ends. It understands RESP2 and
RESP3 types: + - : $ * % ~ , # _ ( = | > !
"""
import socket

LINE_TYPES = b"+-:,#_("      # a single CRLF-terminated line
BULK_TYPES = b"$=!"          # length line, payload, CRLF
AGG_TYPES = b"*~>"           # count line, then that many replies
PAIR_TYPES = b"%|"           # count line, then 2*count replies


class ProtocolError(Exception):
    pass


def encode(cmd):
    """Encode a command (sequence of str/bytes/int) as a RESP multibulk."""
    out = [b"*%d\r\n" % len(cmd)]
    for arg in cmd:
        if isinstance(arg, str):
            arg = arg.encode()
        elif isinstance(arg, int):
            arg = str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(out)


def reply_end(buf, pos=0):
    """Return the index just past the reply starting at buf[pos], or None if
    buf does not yet hold the whole reply. Raises ProtocolError on garbage."""
    nl = buf.find(b"\r\n", pos)
    if nl < 0:
        return None
    kind = buf[pos]
    after = nl + 2
    if kind in LINE_TYPES:
        return after
    try:
        n = int(buf[pos + 1:nl])
    except ValueError:
        raise ProtocolError(f"bad length line {bytes(buf[pos:nl])!r}")
    if kind in BULK_TYPES:
        if n < 0:
            return after
        end = after + n + 2
        if len(buf) < end:
            return None
        if buf[end - 2:end] != b"\r\n":
            raise ProtocolError(f"bulk not CRLF-terminated at {end}")
        return end
    if kind in AGG_TYPES or kind in PAIR_TYPES:
        items = n * 2 if kind in PAIR_TYPES else n
        p = after
        for _ in range(max(items, 0)):
            p = reply_end(buf, p)
            if p is None:
                return None
        if kind == ord("|"):        # attribute: the real reply follows it
            return reply_end(buf, p)
        return p
    raise ProtocolError(f"unknown reply type byte {bytes([kind])!r} in {bytes(buf[pos:pos + 40])!r}")


class Conn:
    """One TCP connection speaking raw RESP."""

    def __init__(self, host, port, timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, cmd):
        self.sock.sendall(encode(cmd))

    def read_reply(self):
        """Read exactly one complete reply and return its raw bytes."""
        while True:
            end = reply_end(self.buf) if self.buf else None
            if end is not None:
                raw = bytes(self.buf[:end])
                del self.buf[:end]
                return raw
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError(f"server closed the connection; partial reply {bytes(self.buf[:200])!r}")
            self.buf += chunk

    def call(self, *cmd):
        self.send(cmd)
        return self.read_reply()

    def send_pipeline(self, cmds, out=None):
        """Write all commands in one sendall, then read one reply per command.
        Replies are appended to `out` as they arrive (if given), so a caller
        catching an error can tell how many replies came back."""
        out = [] if out is None else out
        self.sock.sendall(b"".join(encode(c) for c in cmds))
        for _ in cmds:
            out.append(self.read_reply())
        return out
