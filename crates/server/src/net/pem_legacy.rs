//! Private keys in OpenSSL's legacy ("traditional") encrypted PEM form:
//! a `-----BEGIN RSA PRIVATE KEY-----` (or `EC`) block whose headers say
//! `Proc-Type: 4,ENCRYPTED` and `DEK-Info: <cipher>,<hex IV>`. OpenSSL 1.x
//! wrote every password-protected key this way and 3.x still does with
//! `-traditional`, so deployments carry many such files; Redis reads them
//! through OpenSSL with `tls-key-file-pass`.
//!
//! The format: the key material is the cipher's key derived from the
//! password by OpenSSL's `EVP_BytesToKey` (MD5, one round, the IV's first
//! 8 bytes as salt), the body is the DER key encrypted in CBC mode with
//! PKCS#7 padding. Only the CBC ciphers OpenSSL offers for it are read:
//! AES-128/192/256-CBC, DES-EDE3-CBC and DES-CBC.
use aes::cipher::{block_padding::Pkcs7, BlockDecryptMut, KeyIvInit};
use base64ct::{Base64, Encoding};
use md5::{Digest, Md5};
use rustls::pki_types::PrivateKeyDer;

/// Whether the PEM text holds a legacy encrypted key.
pub fn is_encrypted(text: &[u8]) -> bool {
    let marker = b"Proc-Type: 4,ENCRYPTED";
    text.windows(marker.len()).any(|w| w == marker)
}

/// The first key block of `text`: its label (`RSA`, `EC`, or empty), its
/// headers, and its base64 body.
struct Block<'a> {
    label: &'a str,
    headers: Vec<(&'a str, &'a str)>,
    body: String,
}

fn parse(text: &str) -> Result<Block<'_>, String> {
    let mut lines = text.lines().map(str::trim).skip_while(|l| !l.starts_with("-----BEGIN "));
    let begin = lines.next().ok_or("no PEM block")?;
    let label = begin
        .strip_prefix("-----BEGIN ")
        .and_then(|l| l.strip_suffix("PRIVATE KEY-----"))
        .ok_or("not a private key")?
        .trim();
    let (mut headers, mut body) = (Vec::new(), String::new());
    for line in lines.by_ref() {
        match line.split_once(':') {
            Some((name, value)) if body.is_empty() => headers.push((name.trim(), value.trim())),
            _ if line.starts_with("-----END ") => return Ok(Block { label, headers, body }),
            _ => body.push_str(line),
        }
    }
    Err("no END line".into())
}

/// OpenSSL's `EVP_BytesToKey` with MD5 and one iteration: digests of
/// (previous digest, password, salt) chained until `len` bytes.
fn derive_key(pass: &[u8], salt: &[u8], len: usize) -> Vec<u8> {
    let mut key = Vec::with_capacity(len + 16);
    let mut prev: Vec<u8> = Vec::new();
    while key.len() < len {
        let mut md = Md5::new();
        md.update(&prev);
        md.update(pass);
        md.update(salt);
        prev = md.finalize().to_vec();
        key.extend_from_slice(&prev);
    }
    key.truncate(len);
    key
}

fn hex(s: &str) -> Result<Vec<u8>, String> {
    // By bytes: a file is untrusted text, and a non-ASCII character would
    // put a str slice inside a code point.
    let digit = |c: u8| (c as char).to_digit(16).ok_or_else(|| "IV is not hex".to_string());
    let s = s.as_bytes();
    if !s.len().is_multiple_of(2) {
        return Err("odd-length IV".into());
    }
    s.chunks(2).map(|p| Ok((digit(p[0])? << 4 | digit(p[1])?) as u8)).collect()
}

/// Decrypts `buf` in place with the named cipher; the plaintext length.
fn cbc_decrypt(cipher: &str, pass: &[u8], iv: &[u8], buf: &mut [u8]) -> Result<usize, String> {
    fn run<C: BlockDecryptMut + KeyIvInit>(key: &[u8], iv: &[u8], buf: &mut [u8]) -> Result<usize, String> {
        let dec = C::new_from_slices(key, iv).map_err(|_| "wrong IV length".to_string())?;
        let plain = dec.decrypt_padded_mut::<Pkcs7>(buf).map_err(|_| "bad decrypt (wrong password?)".to_string())?;
        Ok(plain.len())
    }
    let key_len = match cipher {
        "AES-128-CBC" => 16,
        "AES-192-CBC" | "DES-EDE3-CBC" => 24,
        "AES-256-CBC" => 32,
        "DES-CBC" => 8,
        other => return Err(format!("unsupported cipher {other}")),
    };
    if iv.len() < 8 {
        return Err("IV too short".into());
    }
    let key = derive_key(pass, &iv[..8], key_len);
    match cipher {
        "AES-128-CBC" => run::<cbc::Decryptor<aes::Aes128>>(&key, iv, buf),
        "AES-192-CBC" => run::<cbc::Decryptor<aes::Aes192>>(&key, iv, buf),
        "AES-256-CBC" => run::<cbc::Decryptor<aes::Aes256>>(&key, iv, buf),
        "DES-EDE3-CBC" => run::<cbc::Decryptor<des::TdesEde3>>(&key, iv, buf),
        _ => run::<cbc::Decryptor<des::Des>>(&key, iv, buf),
    }
}

/// Whether `der` is exactly one DER SEQUENCE: what a right password gives
/// (a wrong one passes the padding check about once in 256 tries).
fn is_one_sequence(der: &[u8]) -> bool {
    let (Some(&0x30), Some(&first)) = (der.first(), der.get(1)) else {
        return false;
    };
    let (len, header) = match first {
        n if n < 0x80 => (n as usize, 2),
        0x81..=0x84 => {
            let n = (first & 0x7f) as usize;
            let Some(bytes) = der.get(2..2 + n) else { return false };
            (bytes.iter().fold(0usize, |acc, &b| acc << 8 | b as usize), 2 + n)
        }
        _ => return false,
    };
    header + len == der.len()
}

/// The decrypted key of a legacy encrypted PEM file.
pub fn decrypt(text: &[u8], pass: &str) -> Result<PrivateKeyDer<'static>, String> {
    let text = std::str::from_utf8(text).map_err(|_| "not a PEM text file".to_string())?;
    let block = parse(text)?;
    let header = |name: &str| block.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| *v);
    if header("Proc-Type") != Some("4,ENCRYPTED") {
        return Err("not an encrypted key".into());
    }
    let (cipher, iv) = header("DEK-Info").and_then(|v| v.split_once(',')).ok_or("no DEK-Info header")?;
    let iv = hex(iv.trim())?;
    let mut buf = Base64::decode_vec(&block.body).map_err(|e| format!("bad base64: {e}"))?;
    let n = cbc_decrypt(&cipher.trim().to_ascii_uppercase(), pass.as_bytes(), &iv, &mut buf)?;
    buf.truncate(n);
    if !is_one_sequence(&buf) {
        return Err("bad decrypt (wrong password?)".into());
    }
    match block.label {
        "RSA" => Ok(PrivateKeyDer::Pkcs1(buf.into())),
        "EC" => Ok(PrivateKeyDer::Sec1(buf.into())),
        "" => Ok(PrivateKeyDer::Pkcs8(buf.into())),
        other => Err(format!("unsupported key type {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_derivation_matches_openssl() {
        // `openssl enc -aes-256-cbc -P -md md5 -S 0001020304050607 -pass pass:1234`
        let key = derive_key(b"1234", &[0, 1, 2, 3, 4, 5, 6, 7], 32);
        let hexed: String = key.iter().map(|b| format!("{b:02X}")).collect();
        assert_eq!(hexed, OPENSSL_KEY);
    }

    fn encrypted(dek: Option<&str>) -> String {
        let dek = dek.map(|d| format!("DEK-Info: {d}\n")).unwrap_or_default();
        format!("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n{dek}\nAAAAAAAAAAAAAAAAAAAAAA==\n-----END RSA PRIVATE KEY-----\n")
    }

    fn error_of(text: &str) -> String {
        decrypt(text.as_bytes(), "pw").expect_err("must not decrypt")
    }

    #[test]
    fn header_errors_are_named() {
        assert!(is_encrypted(encrypted(None).as_bytes()));
        assert_eq!(error_of(&encrypted(None)), "no DEK-Info header");
        assert_eq!(error_of(&encrypted(Some("AES-128-CBC"))), "no DEK-Info header");
        assert_eq!(error_of(&encrypted(Some("BF-CBC,0001020304050607"))), "unsupported cipher BF-CBC");
        assert_eq!(error_of(&encrypted(Some("AES-128-CBC,000"))), "odd-length IV");
        assert_eq!(error_of(&encrypted(Some("AES-128-CBC,00zz"))), "IV is not hex");
        assert_eq!(error_of(&encrypted(Some("AES-128-CBC,0001"))), "IV too short");
        // A multibyte character where a hex pair is expected.
        assert_eq!(error_of(&encrypted(Some("AES-128-CBC,a\u{e9}b"))), "IV is not hex");
        assert_eq!(
            error_of(&encrypted(Some("AES-128-CBC,00010203040506070001020304050607"))),
            "bad decrypt (wrong password?)"
        );
        let plain = encrypted(None).replace("Proc-Type: 4,ENCRYPTED\n", "");
        assert_eq!(error_of(&plain), "not an encrypted key");
        assert_eq!(error_of("no pem here"), "no PEM block");
    }

    #[test]
    fn hex_reads_pairs() {
        assert_eq!(hex("00ff7A").unwrap(), vec![0, 255, 0x7a]);
    }

    const OPENSSL_KEY: &str = "693DB01693CA4E83FB30FAF1A596C87CC97F9222C383D6256E0D6306A47D612D";

    #[test]
    fn der_sequence_check() {
        assert!(is_one_sequence(&[0x30, 0x03, 1, 2, 3]));
        assert!(!is_one_sequence(&[0x30, 0x04, 1, 2, 3]));
        assert!(is_one_sequence(&[&[0x30, 0x81, 0x80][..], &[0u8; 128]].concat()));
        assert!(!is_one_sequence(&[0x31, 0x00]));
    }
}
