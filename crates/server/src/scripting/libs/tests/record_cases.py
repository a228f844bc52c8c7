#!/usr/bin/env python3
"""Re-record the expectations in cases_*.rs from a live redis-server 7.0.15.

Usage: start a fresh server (`redis-server --port 47391 --save ""`), then
    python3 record_cases.py 47391 [cases_cjson.rs ...]
Every snippet already in the files is sent as `EVAL "<PRELUDE> <snippet>" 0`
(PRELUDE must equal `PRELUDE` in mod.rs) and its reply is written back. To add
a case, append `(b"<snippet>", b""),` to a file and re-run. Use a fresh
server: cases run in order on one connection, like the Rust test's one state.
"""
import glob, os, re, socket, sys

PRELUDE = ("local function hex(s) return (string.gsub(s, '.', function(c) return string.format('%02x', string.byte(c)) end)) end "
           "local function J(...) local t = {} for i = 1, select('#', ...) do t[i] = tostring((select(i, ...))) end return table.concat(t, ',') end ")

HEADER = """//! Expectations recorded from redis-server 7.0.15 by `record_cases.py`
//! (generated; re-record rather than edit). Each reply is what
//! `redis-cli -p PORT eval "$PRELUDE <snippet>" 0` returned, with PRELUDE as
//! in `super::PRELUDE`. Integers are Redis's integer replies, `(nil)` a nil
//! reply, and errors are `ERR <Lua error message>` (Redis's ` script: <sha>,
//! on @user_script:1.` suffix dropped).

pub(super) const CASES: &[(&[u8], &[u8])] = &[
"""

def read_reply(f):
    line = f.readline()
    t, rest = line[:1], line[1:-2]
    if t == b"+" or t == b":":
        return rest
    if t == b"-":
        return re.sub(rb" script: [0-9a-f]{40}, on @user_script:\d+\.$", b"", rest)
    if t == b"$":
        n = int(rest)
        return b"(nil)" if n < 0 else f.read(n + 2)[:-2]
    raise SystemExit("unexpected reply %r (snippets must return one scalar)" % line)

def rust_bytes(b):
    out = ""
    for c in b:
        ch = chr(c)
        if ch in "\\\"":
            out += "\\" + ch
        elif 32 <= c < 127:
            out += ch
        else:
            out += "\\x%02x" % c
    return 'b"' + out + '"'

def parse_bytes(lit):
    """Inverse of rust_bytes for the literals this script writes."""
    return re.sub(rb"\\(x[0-9a-f]{2}|.)", lambda m: bytes([int(m.group(1)[1:], 16)]) if m.group(1)[:1] == b"x" else m.group(1), lit)

def main():
    port = int(sys.argv[1])
    here = os.path.dirname(os.path.abspath(__file__))
    files = sys.argv[2:] or sorted(glob.glob(os.path.join(here, "cases_*.rs")))
    sock = socket.create_connection(("127.0.0.1", port))
    f = sock.makefile("rb")
    for path in files:
        src = open(path, "rb").read()
        snippets = [parse_bytes(m.group(1)) for m in re.finditer(rb'^    \(b"((?:[^"\\]|\\.)*)", b"(?:[^"\\]|\\.)*"\),$', src, re.M)]
        rows = []
        for s in snippets:
            args = [b"EVAL", PRELUDE.encode() + s, b"0"]
            sock.sendall(b"*3\r\n" + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args))
            rows.append((s, read_reply(f)))
        with open(path, "w") as out:
            out.write(HEADER)
            for s, r in rows:
                out.write("    (%s, %s),\n" % (rust_bytes(s), rust_bytes(r)))
            out.write("];\n")
        print(os.path.basename(path), len(rows))

main()
