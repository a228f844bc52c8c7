//! TLS settings: the `tls-*` options turned into rustls server and client
//! configurations (ring provider), built at start and again by CONFIG SET
//! of any `tls-*` option, as Redis 7.0 reconfigures OpenSSL without a
//! restart. A configuration that fails to build leaves the old one in place.
//!
//! Differences from OpenSSL, named: TLSv1 and TLSv1.1 are not available
//! (rustls implements 1.2 and 1.3 only; naming them is an error that says
//! so); X.509 v1 certificates, which webpki refuses, are checked by
//! `x509v1` as OpenSSL accepts them; encrypted keys are read in PKCS#8
//! form (`ENCRYPTED PRIVATE KEY`, OpenSSL 3's default) and in the legacy
//! `Proc-Type: 4,ENCRYPTED` form with the CBC ciphers OpenSSL writes there
//! (`pem_legacy`); `tls-dh-params-file` is accepted and unused (rustls has
//! no finite-field DH).
use std::io;
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::sign::{CertifiedKey, SingleCertAndKey};
use rustls::{RootCertStore, ServerConfig, SupportedProtocolVersion};

use super::listen::bind_all;
use super::pem_legacy;
use super::tls_session;
use super::tls_verify::{ClientCerts, ServerCerts};
use super::x509v1::{self, V1Check};
use crate::config::Config;
use crate::server::Server;

/// A `tls-*` option as text (its default when never set).
pub fn opt<'a>(cfg: &'a Config, name: &str) -> &'a str {
    cfg.other.get(name).map(String::as_str).unwrap_or_else(|| match name {
        "tls-port" | "tls-session-cache-size" | "tls-session-cache-timeout" => "0",
        "tls-auth-clients" => "yes",
        "tls-session-caching" => "yes",
        _ => "",
    })
}

pub fn tls_port(cfg: &Config) -> u16 {
    opt(cfg, "tls-port").parse().unwrap_or(0)
}

fn yes(cfg: &Config, name: &str) -> bool {
    opt(cfg, name) == "yes"
}

/// Whether TLS must be configured: a TLS port, or TLS links to replicas
/// and cluster peers.
pub fn wanted(cfg: &Config) -> bool {
    tls_port(cfg) != 0 || yes(cfg, "tls-replication") || yes(cfg, "tls-cluster")
}

fn fail(msg: String) -> io::Error {
    crate::log_at!(Warning, "{msg}");
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

fn load_certs(path: &str) -> io::Result<Vec<CertificateDer<'static>>> {
    let certs: Result<Vec<_>, _> = CertificateDer::pem_file_iter(path)
        .map_err(|e| fail(format!("Failed to load certificate: {path}: {e}")))?
        .collect();
    let certs = certs.map_err(|e| fail(format!("Failed to load certificate: {path}: {e}")))?;
    if certs.is_empty() {
        return Err(fail(format!("Failed to load certificate: {path}: no certificate found")));
    }
    Ok(certs)
}

/// A private key from a PEM file. An `ENCRYPTED PRIVATE KEY` (PKCS#8
/// PBES2, what OpenSSL 3 writes for `openssl rsa -aes256 -passout ...`) is
/// decrypted with `pass` (`tls-key-file-pass`), as OpenSSL's password
/// callback does; without the right one the key cannot be loaded. So is
/// a legacy `Proc-Type: 4,ENCRYPTED` key (`pem_legacy`).
fn load_key(path: &str, pass: &str) -> io::Result<PrivateKeyDer<'static>> {
    let bad = |e: String| fail(format!("Failed to load private key: {path}: {e}"));
    let text = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    let encrypted = b"-----BEGIN ENCRYPTED PRIVATE KEY-----";
    let at = text.windows(encrypted.len()).position(|w| w == encrypted);
    let legacy = pem_legacy::is_encrypted(&text);
    if at.is_none() && !legacy {
        return PrivateKeyDer::from_pem_slice(&text).map_err(|e| bad(e.to_string()));
    }
    if pass.is_empty() {
        return Err(bad("the key is encrypted and no password is configured".into()));
    }
    let Some(at) = at else {
        return pem_legacy::decrypt(&text, pass).map_err(bad);
    };
    let (_, der) = pkcs8::der::pem::decode_vec(&text[at..]).map_err(|e| bad(e.to_string()))?;
    let info = pkcs8::EncryptedPrivateKeyInfo::try_from(der.as_slice()).map_err(|e| bad(e.to_string()))?;
    let plain = info.decrypt(pass).map_err(|e| bad(format!("bad password or unsupported encryption ({e})")))?;
    Ok(PrivateKeyDer::Pkcs8(plain.as_bytes().to_vec().into()))
}

/// A certificate chain with its key. rustls checks that they match by
/// parsing the certificate with webpki, which refuses X.509 v1: those are
/// matched here instead.
fn certified_key(cert: &str, (key, pass): (&str, &str), provider: &CryptoProvider) -> io::Result<Arc<CertifiedKey>> {
    let (certs, der) = (load_certs(cert)?, load_key(key, pass)?);
    let mismatch = |e: String| fail(format!("Failed to load private key: {key}: {e}"));
    if !x509v1::is_v1(&certs[0]) {
        return CertifiedKey::from_der(certs, der, provider).map(Arc::new).map_err(|e| mismatch(e.to_string()));
    }
    let signer = provider.key_provider.load_private_key(der).map_err(|e| mismatch(e.to_string()))?;
    match signer.public_key() {
        Some(spki) if !x509v1::v1_has_key(&certs[0], &spki) => Err(mismatch("key does not match certificate".into())),
        _ => Ok(Arc::new(CertifiedKey::new(certs, signer))),
    }
}

/// The CA certificates of `tls-ca-cert-file` and every file of
/// `tls-ca-cert-dir`, as webpki's trust anchors and as the v1 check's.
fn load_roots(cfg: &Config, provider: &CryptoProvider) -> io::Result<(Arc<RootCertStore>, Arc<V1Check>)> {
    let mut roots = RootCertStore::empty();
    let mut cas = Vec::new();
    let mut files = Vec::new();
    let file = opt(cfg, "tls-ca-cert-file");
    if !file.is_empty() {
        files.push(std::path::PathBuf::from(file));
    }
    let dir = opt(cfg, "tls-ca-cert-dir");
    if !dir.is_empty() {
        let entries = std::fs::read_dir(dir)
            .map_err(|e| fail(format!("Failed to configure CA certificate(s) file/directory: {dir}: {e}")))?;
        files.extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_file()));
    }
    for path in files {
        let Ok(iter) = CertificateDer::pem_file_iter(&path) else {
            return Err(fail(format!("Failed to configure CA certificate(s) file/directory: {}", path.display())));
        };
        for cert in iter.flatten() {
            cas.push(cert.clone());
            roots.add(cert).map_err(|e| fail(format!("Failed to configure CA certificate(s) file/directory: {e}")))?;
        }
    }
    Ok((Arc::new(roots), Arc::new(V1Check::new(cas, provider.signature_verification_algorithms))))
}

fn protocols(cfg: &Config) -> io::Result<Vec<&'static SupportedProtocolVersion>> {
    let text = opt(cfg, "tls-protocols");
    if text.is_empty() {
        return Ok(vec![&rustls::version::TLS12, &rustls::version::TLS13]);
    }
    let mut out = Vec::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        match word.to_ascii_lowercase().as_str() {
            "tlsv1.2" => out.push(&rustls::version::TLS12),
            "tlsv1.3" => out.push(&rustls::version::TLS13),
            "tlsv1" | "tlsv1.1" => {
                return Err(fail(format!("{word} is specified in tls-protocols but not supported by this build.")))
            }
            _ => return Err(fail(
                "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'."
                    .into(),
            )),
        }
    }
    Ok(out)
}

/// OpenSSL's TLS 1.2 cipher names for the suites rustls has.
const TLS12_NAMES: &[(&str, &str)] = &[
    ("ECDHE-ECDSA-AES128-GCM-SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"),
    ("ECDHE-ECDSA-AES256-GCM-SHA384", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"),
    ("ECDHE-ECDSA-CHACHA20-POLY1305", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"),
    ("ECDHE-RSA-AES128-GCM-SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
    ("ECDHE-RSA-AES256-GCM-SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"),
    ("ECDHE-RSA-CHACHA20-POLY1305", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"),
];

/// The ring provider with its cipher suites narrowed by `tls-ciphers`
/// (TLS 1.2, OpenSSL names joined by `:`) and `tls-ciphersuites` (TLS 1.3
/// names). Names rustls lacks are skipped, as OpenSSL skips unknown ones;
/// a list that leaves nothing is an error, as in OpenSSL.
fn provider(cfg: &Config) -> io::Result<Arc<CryptoProvider>> {
    let mut p = rustls::crypto::ring::default_provider();
    let ciphers = opt(cfg, "tls-ciphers");
    let suites13 = opt(cfg, "tls-ciphersuites");
    let wanted12: Vec<&str> = ciphers
        .split(':')
        .filter_map(|n| TLS12_NAMES.iter().find(|(o, _)| o.eq_ignore_ascii_case(n)).map(|(_, r)| *r))
        .collect();
    let wanted13: Vec<&str> = suites13.split(':').filter(|n| !n.is_empty()).collect();
    if !ciphers.is_empty() && wanted12.is_empty() && !ciphers.contains("DEFAULT") && !ciphers.contains("HIGH") {
        return Err(fail(format!("Failed to configure ciphers: {ciphers}")));
    }
    p.cipher_suites.retain(|s| {
        let name = format!("{:?}", s.suite());
        match s {
            rustls::SupportedCipherSuite::Tls12(_) => wanted12.is_empty() || wanted12.contains(&name.as_str()),
            rustls::SupportedCipherSuite::Tls13(_) => wanted13.is_empty() || wanted13.contains(&name.as_str()),
        }
    });
    if !suites13.is_empty() && !p.cipher_suites.iter().any(|s| matches!(s, rustls::SupportedCipherSuite::Tls13(_))) {
        return Err(fail(format!("Failed to configure ciphersuites: {suites13}")));
    }
    Ok(Arc::new(p))
}

/// Build the server side from the options; errors are logged as Redis
/// logs them.
pub fn server_config(cfg: &Config) -> io::Result<Arc<ServerConfig>> {
    let cert_file = opt(cfg, "tls-cert-file");
    let key_file = opt(cfg, "tls-key-file");
    if cert_file.is_empty() {
        return Err(fail("No tls-cert-file configured!".into()));
    }
    if key_file.is_empty() {
        return Err(fail("No tls-key-file configured!".into()));
    }
    let auth = opt(cfg, "tls-auth-clients");
    let has_ca = !opt(cfg, "tls-ca-cert-file").is_empty() || !opt(cfg, "tls-ca-cert-dir").is_empty();
    if (auth != "no" || yes(cfg, "tls-cluster") || yes(cfg, "tls-replication")) && !has_ca {
        return Err(fail(
            "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or \
             tls-auth-clients are enabled!"
                .into(),
        ));
    }
    let versions = protocols(cfg)?;
    let provider = provider(cfg)?;
    let verifier = if auth == "no" {
        WebPkiClientVerifier::no_client_auth()
    } else {
        let (roots, v1) = load_roots(cfg, &provider)?;
        let b = WebPkiClientVerifier::builder_with_provider(roots, provider.clone());
        let b = if auth == "optional" { b.allow_unauthenticated() } else { b };
        let inner =
            b.build().map_err(|e| fail(format!("Failed to configure CA certificate(s) file/directory: {e}")))?;
        Arc::new(ClientCerts { inner, v1 })
    };
    let ck = certified_key(cert_file, (key_file, opt(cfg, "tls-key-file-pass")), &provider)?;
    let mut sc = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions)
        .map_err(|e| fail(format!("Failed to configure TLS: {e}")))?
        .with_client_cert_verifier(verifier)
        .with_cert_resolver(Arc::new(SingleCertAndKey::from(ck)));
    sc.ignore_client_order = yes(cfg, "tls-prefer-server-ciphers");
    if yes(cfg, "tls-session-caching") {
        let size: usize = opt(cfg, "tls-session-cache-size").parse().unwrap_or(20480);
        let timeout: u32 = opt(cfg, "tls-session-cache-timeout").parse().unwrap_or(300);
        let inner = rustls::server::ServerSessionMemoryCache::new(size.max(1));
        sc.session_storage = Arc::new(tls_session::Cache { inner, timeout });
        let inner = rustls::crypto::ring::Ticketer::new().map_err(|e| fail(format!("TLS tickets: {e}")))?;
        sc.ticketer = Arc::new(tls_session::Tickets { inner, timeout });
    } else {
        sc.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
        sc.send_tls13_tickets = 0;
    }
    Ok(Arc::new(sc))
}

/// The client side, for outgoing links (replication, cluster): the
/// server's certificate checked against the configured CAs without a host
/// name check (Redis does not check one either; v1 certificates too, as
/// OpenSSL), presenting
/// `tls-client-cert-file` (or `tls-cert-file`) when set.
pub fn client_config(cfg: &Config) -> io::Result<Arc<rustls::ClientConfig>> {
    let provider = provider(cfg)?;
    let versions = protocols(cfg)?;
    let (roots, v1) = load_roots(cfg, &provider)?;
    let inner = rustls::client::WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
        .build()
        .map_err(|e| fail(format!("Failed to configure CA certificate(s) file/directory: {e}")))?;
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| fail(format!("Failed to configure TLS: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(ServerCerts { inner, v1 }));
    let (cert, key) = match (opt(cfg, "tls-client-cert-file"), opt(cfg, "tls-client-key-file")) {
        ("", _) | (_, "") => (opt(cfg, "tls-cert-file"), (opt(cfg, "tls-key-file"), opt(cfg, "tls-key-file-pass"))),
        (cert, key) => (cert, (key, opt(cfg, "tls-client-key-file-pass"))),
    };
    let cc = if cert.is_empty() || key.0.is_empty() {
        builder.with_no_client_auth()
    } else {
        builder.with_client_cert_resolver(Arc::new(SingleCertAndKey::from(certified_key(cert, key, &provider)?)))
    };
    Ok(Arc::new(cc))
}

/// Both contexts, as Redis configures its server and client SSL_CTX
/// together. The client one is needed only for `tls-replication` (without
/// CAs it cannot be built, and a TLS port alone does not need it).
pub type Contexts = (Arc<ServerConfig>, Option<Arc<rustls::ClientConfig>>);

pub fn contexts(cfg: &Config) -> io::Result<Contexts> {
    let server = server_config(cfg)?;
    let has_ca = !opt(cfg, "tls-ca-cert-file").is_empty() || !opt(cfg, "tls-ca-cert-dir").is_empty();
    let client = if has_ca || yes(cfg, "tls-replication") { Some(client_config(cfg)?) } else { None };
    Ok((server, client))
}

/// The first `tls-*` option CONFIG SET named, if any. Naming one is
/// enough, changed or not: the files are read again (Redis's volatile
/// options), so new certificates at the same paths take effect.
fn named_tls(named: &[&[u8]]) -> Option<&'static str> {
    let name = named.iter().find(|n| n.len() > 4 && n[..4].eq_ignore_ascii_case(b"tls-"))?;
    let name = String::from_utf8_lossy(name).to_ascii_lowercase();
    TLS_OPTIONS.iter().copied().find(|o| *o == name)
}

const TLS_OPTIONS: &[&str] = &[
    "tls-port",
    "tls-session-cache-size",
    "tls-session-cache-timeout",
    "tls-cluster",
    "tls-replication",
    "tls-auth-clients",
    "tls-prefer-server-ciphers",
    "tls-session-caching",
    "tls-cert-file",
    "tls-key-file",
    "tls-key-file-pass",
    "tls-client-cert-file",
    "tls-client-key-file",
    "tls-client-key-file-pass",
    "tls-dh-params-file",
    "tls-ca-cert-file",
    "tls-ca-cert-dir",
    "tls-protocols",
    "tls-ciphers",
    "tls-ciphersuites",
];

/// CONFIG SET's side of TLS (`named`: the options it set): a new context
/// when any `tls-*` option was set, new listeners for a new `tls-port`. On
/// failure nothing changes and the error is Redis's.
pub fn apply(srv: &mut Server, before: &Config, named: &[&[u8]]) -> Result<(), String> {
    let Some(name) = named_tls(named) else { return Ok(()) };
    let failed = |why: &str| format!("ERR CONFIG SET failed (possibly related to argument '{name}') - {why}");
    let cfg = &srv.config;
    let context = if wanted(cfg) {
        Some(contexts(cfg).map_err(|_| failed("Unable to update TLS configuration. Check server logs."))?)
    } else {
        None
    };
    let port = tls_port(cfg);
    if port != tls_port(before) {
        let listeners = if port == 0 { Ok(Vec::new()) } else { bind_all(&cfg.bind, port, cfg.tcp_backlog) };
        let listeners = listeners.map_err(|e| {
            crate::log_at!(Warning, "CONFIG SET tls-port: {e}");
            failed("Unable to listen on this port. Check server logs.")
        })?;
        srv.rebound_tls = Some(listeners);
    }
    if let Some((server, client)) = context {
        srv.tls = Some(server);
        srv.tls_client = client;
    }
    Ok(())
}
