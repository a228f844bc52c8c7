//! Certificate verifiers for both sides of TLS: webpki for X.509 v3, the
//! [`V1Check`] for v1 certificates (accepted by OpenSSL, so by Redis), and
//! no host name check on outgoing links (Redis checks none either).
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, Error, SignatureScheme};

use super::x509v1::{is_v1, V1Check};

/// A handshake signature: the v1 check's for a v1 certificate, else
/// `webpki`'s.
fn handshake(
    v1: &V1Check,
    message: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
    tls13: bool,
    webpki: impl FnOnce() -> Result<HandshakeSignatureValid, Error>,
) -> Result<HandshakeSignatureValid, Error> {
    if is_v1(cert) {
        return v1.verify_signature(message, cert, dss, tls13);
    }
    webpki()
}

/// The server's check of client certificates.
#[derive(Debug)]
pub struct ClientCerts {
    pub inner: Arc<dyn ClientCertVerifier>,
    pub v1: Arc<V1Check>,
}

impl ClientCertVerifier for ClientCerts {
    fn offer_client_auth(&self) -> bool {
        self.inner.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.inner.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, Error> {
        if is_v1(end_entity) {
            return self.v1.verify_leaf(end_entity, now).map(|_| ClientCertVerified::assertion());
        }
        self.inner.verify_client_cert(end_entity, intermediates, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        handshake(&self.v1, message, cert, dss, false, || self.inner.verify_tls12_signature(message, cert, dss))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        handshake(&self.v1, message, cert, dss, true, || self.inner.verify_tls13_signature(message, cert, dss))
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// An outgoing link's check of the server: the chain, any host name.
#[derive(Debug)]
pub struct ServerCerts {
    pub inner: Arc<WebPkiServerVerifier>,
    pub v1: Arc<V1Check>,
}

impl ServerCertVerifier for ServerCerts {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        use rustls::CertificateError::{NotValidForName, NotValidForNameContext};
        if is_v1(end_entity) {
            return self.v1.verify_leaf(end_entity, now).map(|_| ServerCertVerified::assertion());
        }
        match self.inner.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(Error::InvalidCertificate(NotValidForName | NotValidForNameContext { .. })) => {
                Ok(ServerCertVerified::assertion())
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        handshake(&self.v1, message, cert, dss, false, || self.inner.verify_tls12_signature(message, cert, dss))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        handshake(&self.v1, message, cert, dss, true, || self.inner.verify_tls13_signature(message, cert, dss))
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}
