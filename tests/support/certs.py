"""A throw-away TLS test PKI for tests and benchmarks: a CA and a server and
a client certificate it signed, with the v3 extensions strict clients check
(Go and Java refuse a v1 certificate as a CA; the SAN is what they match
127.0.0.1 against), plus the client's key and certificate as PKCS#12 (for
Java's KeyStore, password P12_PASS)."""
import subprocess
from pathlib import Path

P12_PASS = "p12-pass"

CERTS = r"""
set -e
printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n' > ext.cnf
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj '/CN=volley test CA'
for n in server client; do
  openssl req -newkey rsa:2048 -nodes -keyout $n.key -out $n.csr -subj "/CN=$n"
  openssl x509 -req -in $n.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out $n.crt -days 2 -extfile ext.cnf
done
openssl pkcs12 -export -in client.crt -inkey client.key -out client.p12 -passout pass:$P12_PASS
"""


def make_certs(d):
    """Write ca.crt, server.{crt,key} and client.{crt,key,p12} into directory
    d; returns d as a Path."""
    proc = subprocess.run(["sh", "-c", CERTS], cwd=d, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin:/usr/local/bin", "P12_PASS": P12_PASS})
    if proc.returncode != 0:
        raise RuntimeError(f"openssl failed: {proc.stderr}")
    return Path(d)


def server_args(d, tls_port):
    """Redis-style arguments for a TLS port serving make_certs(d)'s files;
    clients must present a certificate (tls-auth-clients defaults to yes)."""
    d = Path(d)
    return ["--tls-port", str(tls_port), "--tls-cert-file", str(d / "server.crt"),
            "--tls-key-file", str(d / "server.key"), "--tls-ca-cert-file", str(d / "ca.crt")]
