//! The DUMP payload: what DUMP returns, RESTORE accepts and MIGRATE sends.
//! It is one value exactly as it appears in an RDB file (type byte, then
//! the body in the same compact encodings the snapshot writer uses), then a
//! two-byte little-endian RDB version and a little-endian CRC64 of
//! everything before it. Encoding and decoding are the snapshot's own
//! (`save::write_value`, `load::read_value`), so a payload from redis-server
//! restores here and ours restore there.
use super::format::{Writer, CRC64, RDB_VERSION};
use super::load::{self, Limits3, Reader};
use super::save;
use crate::config::Config;
use crate::engine::Value;

/// Bytes after the value: RDB version (2) and CRC64 (8).
const FOOTER_LEN: usize = 10;

/// Why a payload was refused; each is one of RESTORE's error replies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DumpError {
    /// Too short for its footer, from a newer RDB version, or a CRC64 that
    /// does not match.
    Footer,
    /// The footer is fine but the value does not decode (corrupt, an empty
    /// collection, duplicates, or a type this server does not hold).
    Format,
}

/// Serialize `v` as a DUMP payload; `compress` is `rdbcompression` (LZF
/// for long strings, as Redis's DUMP follows that setting too).
pub fn dump_value(v: &Value, compress: bool) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), compress);
    let version = (RDB_VERSION as u16).to_le_bytes();
    w.byte(save::type_of(v))
        .and_then(|_| save::write_value(&mut w, v))
        .and_then(|_| w.raw(&version))
        .expect("writing into memory cannot fail");
    let (crc, mut out) = w.finish();
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Check the footer of `payload`: an RDB version this server reads and the
/// CRC64 of the rest. Returns the value's bytes.
pub fn verify(payload: &[u8]) -> Result<&[u8], DumpError> {
    let body_len = payload.len().checked_sub(FOOTER_LEN).ok_or(DumpError::Footer)?;
    let (body, footer) = payload.split_at(body_len);
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    if u32::from(version) > RDB_VERSION {
        return Err(DumpError::Footer);
    }
    let crc = CRC64.checksum(&payload[..body_len + 2]);
    if crc.to_le_bytes() != footer[2..] {
        return Err(DumpError::Footer);
    }
    Ok(body)
}

/// Decode a DUMP payload into a value whose encodings follow `cfg`'s
/// listpack/intset limits. Nothing is half-built: the value is returned
/// whole or not at all.
pub fn restore_value(payload: &[u8], cfg: &Config) -> Result<Value, DumpError> {
    let body = verify(payload)?;
    let mut r = Reader::new(body);
    let kind = r.u8().map_err(|_| DumpError::Format)?;
    // Bytes left after the value are ignored, as redis-server does.
    let value = load::read_value(&mut r, kind, &Limits3::of(cfg), &mut Vec::new()).map_err(|_| DumpError::Format)?;
    if load::is_empty(&value) {
        return Err(DumpError::Format);
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::hash::HashLimits;
    use crate::engine::list::{End, Fill, List};
    use crate::engine::zset::{Limits, ZSet};
    use crate::engine::{Hash, Set, Str};

    fn cfg() -> Config {
        Config::default()
    }

    fn round_trip(v: &Value) -> Value {
        let payload = dump_value(v, true);
        restore_value(&payload, &cfg()).expect("own payload restores")
    }

    fn list_of(n: usize, f: impl Fn(usize) -> String) -> Value {
        let mut l = List::new();
        for i in 0..n {
            l.push(End::Tail, f(i).as_bytes(), Fill(-2));
        }
        Value::List(l)
    }

    fn hash_of(n: usize) -> Value {
        let mut h = Hash::default();
        let c = cfg();
        let lim = HashLimits { entries: c.hash_max_listpack_entries, value: c.hash_max_listpack_value };
        for i in 0..n {
            h.insert_many(&[(format!("f{i}").as_bytes(), format!("v{i}").as_bytes())], lim);
        }
        Value::Hash(h)
    }

    fn zset_of(n: usize) -> Value {
        let c = cfg();
        let lim = Limits { entries: c.zset_max_listpack_entries as usize, value: c.zset_max_listpack_value as usize };
        let mut z = ZSet::for_size(n, 8, lim);
        for i in 0..n {
            z.set(format!("m{i}").as_bytes(), i as f64 / 3.0, lim);
        }
        Value::ZSet(Box::new(z))
    }

    fn set_of(members: &[&[u8]]) -> Value {
        let mut s = Set::new_intset();
        s.insert_many(members, 512);
        Value::Set(s)
    }

    #[test]
    fn small_strings_match_redis_bytes() {
        // DUMP of "bar" and of the integer 7 on redis-server 7.0.15.
        let bar = dump_value(&Value::Str(Str::from_bytes(b"bar")), true);
        assert_eq!(bar, b"\x00\x03bar\x0a\x00\xe6\xbe\x49\x60\xee\x66\xfd\x17");
        let seven = dump_value(&Value::Str(Str::Int(7)), true);
        assert_eq!(seven, b"\x00\xc0\x07\x0a\x00\x74\xcd\x48\xa2\x83\xab\xce\x92");
    }

    #[test]
    fn every_type_and_encoding_round_trips() {
        let values = vec![
            Value::Str(Str::Int(-123456789)),
            Value::Str(Str::from_bytes(b"short")),
            Value::Str(Str::from_vec(b"long and compressible ".repeat(50))),
            list_of(10, |i| i.to_string()),
            list_of(20_000, |i| format!("element {i}")),
            set_of(&[b"1", b"2", b"-300000"]),
            set_of(&[b"a", b"b", b"1"]),
            hash_of(5),
            hash_of(1000),
            zset_of(5),
            zset_of(500),
        ];
        let encodings: Vec<&str> = values.iter().map(Value::encoding).collect();
        for want in ["int", "embstr", "raw", "quicklist", "intset", "hashtable", "listpack", "skiplist"] {
            assert!(encodings.contains(&want), "{want} is covered");
        }
        for v in &values {
            let back = round_trip(v);
            assert_eq!(&back, v, "{}", v.encoding());
            assert_eq!(back.encoding(), v.encoding());
        }
    }

    #[test]
    fn damaged_footers_are_refused() {
        let good = dump_value(&Value::Str(Str::from_bytes(b"bar")), true);
        assert_eq!(restore_value(&good[..9], &cfg()), Err(DumpError::Footer));
        assert_eq!(restore_value(b"", &cfg()), Err(DumpError::Footer));
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x20;
            assert_eq!(restore_value(&bad, &cfg()), Err(DumpError::Footer), "flipped byte {i}");
        }
        // A newer RDB version is refused even with a matching checksum.
        let mut newer = good[..good.len() - 8].to_vec();
        let n = newer.len();
        newer[n - 2] = 11;
        let crc = CRC64.checksum(&newer);
        newer.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(restore_value(&newer, &cfg()), Err(DumpError::Footer));
    }

    /// A payload around `body` with a correct footer.
    fn sealed(body: &[u8], version: u16) -> Vec<u8> {
        let mut p = body.to_vec();
        p.extend_from_slice(&version.to_le_bytes());
        let crc = CRC64.checksum(&p);
        p.extend_from_slice(&crc.to_le_bytes());
        p
    }

    #[test]
    fn bad_values_with_good_footers_are_refused() {
        let cases: &[&[u8]] = &[
            b"",                                         // no type byte
            b"\x00\x05ab",                               // string shorter than its length
            b"\x02\x00",                                 // empty set
            b"\x02\x02\x01a\x01a",                       // duplicate set member
            b"\x04\x02\x01f\x01v\x01f\x01w",             // duplicate hash field
            b"\x0f\x00",                                 // a truncated stream
            b"\x63",                                     // unknown type
            b"\x00\xc3\x02\x80\xff\xff\xff\xff\x00a",    // LZF with an absurd length
            b"\x0b\x08\x03\x00\x00\x00\x00\x00\x00\x00", // intset with a bad width
        ];
        for body in cases {
            assert_eq!(restore_value(&sealed(body, 10), &cfg()), Err(DumpError::Format), "{body:?}");
        }
    }

    #[test]
    fn older_versions_and_trailing_bytes_are_accepted() {
        let v = restore_value(&sealed(b"\x00\x03bar", 9), &cfg()).unwrap();
        assert_eq!(v, Value::Str(Str::from_bytes(b"bar")));
        let v = restore_value(&sealed(b"\x00\x03barjunk", 10), &cfg()).unwrap();
        assert_eq!(v, Value::Str(Str::from_bytes(b"bar")));
    }
}
