"""The raw-netcat pipelining example from the Redis pipelining docs:
three inline PINGs in one write must give exactly three +PONG lines.
Debian's netcat-openbsd keeps the socket open after stdin ends, so -q 1
makes it quit one second after the seed's `sleep 1` closes its input."""
from .conftest import run


def test_three_pings_in_one_write(server):
    cmd = f'(printf "PING\\r\\nPING\\r\\nPING\\r\\n"; sleep 1) | nc -q 1 {server.host} {server.port}'
    assert run(cmd, timeout=20, text=False).stdout == b"+PONG\r\n" * 3
