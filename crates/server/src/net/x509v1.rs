//! X.509 version 1 certificates, which OpenSSL (so Redis) accepts and
//! webpki refuses: `openssl x509 -req` without extensions makes them, as
//! Redis's own test suite does. A v1 leaf is accepted when a configured CA
//! with its issuer's name signed it (signature checked with the CA's public
//! key) and both are within their validity dates; anything else (v3) stays
//! with webpki. Only what that check needs is read from the DER.
use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error};

/// One DER element: its tag, its contents, and the element whole.
struct Tlv<'a> {
    tag: u8,
    body: &'a [u8],
    whole: &'a [u8],
}

/// The first element of `input` and what follows it; None if malformed.
fn next(input: &[u8]) -> Option<(Tlv<'_>, &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        (rest[..n].iter().fold(0usize, |acc, &b| (acc << 8) | b as usize), &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    let head = input.len() - rest.len();
    Some((Tlv { tag, body: &rest[..len], whole: &input[..head + len] }, &rest[len..]))
}

/// An element that must carry `tag`.
fn expect(input: &[u8], tag: u8) -> Option<(Tlv<'_>, &[u8])> {
    next(input).filter(|(t, _)| t.tag == tag)
}

const SEQUENCE: u8 = 0x30;
const BIT_STRING: u8 = 0x03;

/// The fields of a certificate the v1 check reads.
struct Cert<'a> {
    v1: bool,
    tbs: &'a [u8],
    sig_alg: &'a [u8],
    signature: &'a [u8],
    issuer: &'a [u8],
    subject: &'a [u8],
    not_before: u64,
    not_after: u64,
    spki: &'a [u8],
    key_alg: &'a [u8],
    key: &'a [u8],
}

/// A BIT STRING's bits, which must be whole bytes here.
fn bits<'a>(t: &Tlv<'a>) -> Option<&'a [u8]> {
    match t.body.split_first() {
        Some((0, rest)) if t.tag == BIT_STRING => Some(rest),
        _ => None,
    }
}

fn parse(der: &[u8]) -> Option<Cert<'_>> {
    let (cert, _) = expect(der, SEQUENCE)?;
    let (tbs, rest) = expect(cert.body, SEQUENCE)?;
    let (sig_alg, rest) = expect(rest, SEQUENCE)?;
    let (sig, _) = expect(rest, BIT_STRING)?;
    let mut f = tbs.body;
    // The version is an explicit [0] element, absent for v1.
    let v1 = f.first() != Some(&0xa0);
    if !v1 {
        f = next(f)?.1;
    }
    let (_serial, f) = expect(f, 0x02)?;
    let (_inner_alg, f) = expect(f, SEQUENCE)?;
    let (issuer, f) = expect(f, SEQUENCE)?;
    let (validity, f) = expect(f, SEQUENCE)?;
    let (subject, f) = expect(f, SEQUENCE)?;
    let (spki, _) = expect(f, SEQUENCE)?;
    let (nb, v) = next(validity.body)?;
    let (na, _) = next(v)?;
    let (key_alg, k) = expect(spki.body, SEQUENCE)?;
    let (key, _) = next(k)?;
    Some(Cert {
        v1,
        tbs: tbs.whole,
        sig_alg: sig_alg.body,
        signature: bits(&sig)?,
        issuer: issuer.whole,
        subject: subject.whole,
        not_before: time(&nb)?,
        not_after: time(&na)?,
        spki: spki.whole,
        key_alg: key_alg.body,
        key: bits(&key)?,
    })
}

/// UTCTime (YYMMDDHHMMSSZ) or GeneralizedTime (YYYYMMDDHHMMSSZ) as Unix
/// seconds.
fn time(t: &Tlv<'_>) -> Option<u64> {
    let s = std::str::from_utf8(t.body).ok()?.strip_suffix('Z')?;
    let (year, rest) = match (t.tag, s.len()) {
        (0x17, 12) => {
            let yy: i64 = s[..2].parse().ok()?;
            (if yy >= 50 { 1900 + yy } else { 2000 + yy }, &s[2..])
        }
        (0x18, 14) => (s[..4].parse().ok()?, &s[4..]),
        _ => return None,
    };
    let n = |i: usize| rest.get(i..i + 2)?.parse::<i64>().ok();
    let (mon, day, h, m, sec) = (n(0)?, n(2)?, n(4)?, n(6)?, n(8)?);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if mon <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((mon + 9) % 12) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146097 + doe - 719468;
    u64::try_from(days * 86400 + h * 3600 + m * 60 + sec).ok()
}

/// Whether `der` is an X.509 v1 certificate (one this module checks).
pub fn is_v1(der: &CertificateDer<'_>) -> bool {
    parse(der).is_some_and(|c| c.v1)
}

/// Whether a v1 certificate carries the public key `spki` (DER, with or
/// without its outer SEQUENCE); rustls's own check parses with webpki.
pub fn v1_has_key(der: &CertificateDer<'_>, spki: &[u8]) -> bool {
    parse(der).is_some_and(|c| c.spki == spki || next(c.spki).is_some_and(|(t, _)| t.body == spki))
}

fn bad(e: CertificateError) -> Error {
    Error::InvalidCertificate(e)
}

/// The configured CAs, kept as DER for checking v1 leaves.
#[derive(Debug, Default)]
pub struct V1Check {
    cas: Vec<CertificateDer<'static>>,
    algs: Option<WebPkiSupportedAlgorithms>,
}

impl V1Check {
    pub fn new(cas: Vec<CertificateDer<'static>>, algs: WebPkiSupportedAlgorithms) -> V1Check {
        V1Check { cas, algs: Some(algs) }
    }

    /// Chain a v1 leaf to a configured CA: issuer name, signature, dates.
    pub fn verify_leaf(&self, der: &CertificateDer<'_>, now: UnixTime) -> Result<(), Error> {
        let leaf = parse(der).ok_or(bad(CertificateError::BadEncoding))?;
        let now = now.as_secs();
        if now < leaf.not_before {
            return Err(bad(CertificateError::NotValidYet));
        }
        if now > leaf.not_after {
            return Err(bad(CertificateError::Expired));
        }
        let algs = self.algs.as_ref().ok_or(bad(CertificateError::UnknownIssuer))?;
        let mut found = Err(bad(CertificateError::UnknownIssuer));
        for ca in self.cas.iter().filter_map(|c| parse(c)).filter(|c| c.subject == leaf.issuer) {
            let signed = algs.all.iter().any(|a| {
                a.signature_alg_id().as_ref() == leaf.sig_alg
                    && a.public_key_alg_id().as_ref() == ca.key_alg
                    && a.verify_signature(ca.key, leaf.tbs, leaf.signature).is_ok()
            });
            found = match (signed, now >= ca.not_before && now <= ca.not_after) {
                (true, true) => return Ok(()),
                (true, false) => Err(bad(CertificateError::Expired)),
                (false, _) => found.and(Err(bad(CertificateError::BadSignature))),
            };
        }
        found
    }

    /// A handshake signature made with a v1 certificate's key.
    pub fn verify_signature(
        &self,
        message: &[u8],
        der: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
        tls13: bool,
    ) -> Result<HandshakeSignatureValid, Error> {
        let cert = parse(der).ok_or(bad(CertificateError::BadEncoding))?;
        let algs = self.algs.as_ref().ok_or(bad(CertificateError::BadSignature))?;
        // TLS 1.3 forbids PKCS#1 v1.5 and SHA-1 in handshake signatures.
        use rustls::SignatureScheme as S;
        let legacy = matches!(
            dss.scheme,
            S::RSA_PKCS1_SHA1 | S::RSA_PKCS1_SHA256 | S::RSA_PKCS1_SHA384 | S::RSA_PKCS1_SHA512 | S::ECDSA_SHA1_Legacy
        );
        if tls13 && legacy {
            return Err(rustls::PeerMisbehaved::SignedHandshakeWithUnadvertisedSigScheme.into());
        }
        let candidates = algs.mapping.iter().filter(|(s, _)| *s == dss.scheme).flat_map(|(_, a)| a.iter());
        for a in candidates.filter(|a| a.public_key_alg_id().as_ref() == cert.key_alg) {
            if a.verify_signature(cert.key, message, dss.signature()).is_ok() {
                return Ok(HandshakeSignatureValid::assertion());
            }
        }
        Err(bad(CertificateError::BadSignature))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_unix_seconds() {
        let utc = Tlv { tag: 0x17, body: b"700101000000Z", whole: b"" };
        assert_eq!(time(&utc), Some(0));
        let utc = Tlv { tag: 0x17, body: b"261128001752Z", whole: b"" };
        assert_eq!(time(&utc), Some(1_795_825_072));
        let gen = Tlv { tag: 0x18, body: b"20500101000000Z", whole: b"" };
        assert_eq!(time(&gen), Some(2_524_608_000));
        assert_eq!(time(&Tlv { tag: 0x17, body: b"2611280017Z", whole: b"" }), None);
    }

    #[test]
    fn malformed_der_is_not_a_certificate() {
        assert!(!is_v1(&CertificateDer::from(vec![0x30, 0x84, 0xff])));
        assert!(!is_v1(&CertificateDer::from(Vec::new())));
    }
}
