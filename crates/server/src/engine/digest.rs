//! DEBUG DIGEST / DIGEST-VALUE: a SHA1-based signature of values and of the
//! whole dataset, computed exactly as Redis 7.0 does so the two servers give
//! the same hex string for the same data (Redis's test suite compares
//! digests before and after reloads, and across servers).
//!
//! Unordered collections (sets, hashes, sorted sets, the keys of a
//! database) combine their members' digests by xor, so iteration order does
//! not matter; ordered data (a list, the parts of one entry) is "mixed":
//! the running digest is hashed again after each part.
use sha1_smol::Sha1;

use super::db::{Db, Keyspace};
use super::numeric;
use super::value::Value;

/// A 20-byte digest.
pub type Digest = [u8; 20];

fn sha1(data: &[u8]) -> Digest {
    Sha1::from(data).digest().bytes()
}

/// Order-independent combination: `digest ^= SHA1(data)`.
fn xor_in(digest: &mut Digest, data: &[u8]) {
    for (d, h) in digest.iter_mut().zip(sha1(data)) {
        *d ^= h;
    }
}

/// Order-dependent combination: `digest = SHA1(digest ^ SHA1(data))`.
fn mix_in(digest: &mut Digest, data: &[u8]) {
    xor_in(digest, data);
    *digest = sha1(digest);
}

/// Redis's type codes (`OBJ_STRING` ...), which the digest includes.
fn type_code(v: &Value) -> u32 {
    match v {
        Value::Str(_) => 0,
        Value::List(_) => 1,
        Value::Set(_) => 2,
        Value::ZSet(_) => 3,
        Value::Hash(_) => 4,
        Value::Stream(_) => 6,
    }
}

/// Mix the digest of `value` (and whether it has an expiry) into `digest`.
pub fn mix_value(digest: &mut Digest, value: &Value, volatile: bool) {
    mix_in(digest, &type_code(value).to_be_bytes());
    let mut scratch = Vec::new();
    match value {
        Value::Str(s) => mix_in(digest, s.bytes(&mut scratch)),
        Value::List(l) => {
            for e in l.iter() {
                mix_in(digest, &e.to_vec());
            }
        }
        Value::Set(s) => {
            for m in s.members() {
                xor_in(digest, &m);
            }
        }
        Value::ZSet(z) => {
            for (score, member) in z.items() {
                scratch.clear();
                numeric::format_double(&mut scratch, score);
                xor_in_pair(digest, &member, &scratch);
            }
        }
        Value::Hash(h) => {
            for (field, val) in h.iter() {
                xor_in_pair(digest, field, val);
            }
        }
        Value::Stream(s) => mix_stream(digest, s),
    }
    if volatile {
        xor_in(digest, b"!!expire!!");
    }
}

/// A member made of two parts (field and value, member and score): its own
/// mixed digest, hashed and xored into `digest`.
fn xor_in_pair(digest: &mut Digest, a: &[u8], b: &[u8]) {
    let mut pair = [0u8; 20];
    mix_in(&mut pair, a);
    mix_in(&mut pair, b);
    xor_in(digest, &pair);
}

/// The digest DEBUG DIGEST-VALUE gives `key` of `db` (all zeros if absent;
/// logically expired keys still count, as in Redis).
pub fn key_value(db: &Db, key: &[u8]) -> Digest {
    let mut d = [0u8; 20];
    if let Some(e) = db.find(key) {
        mix_value(&mut d, &e.value, db.expire_of(key).is_some());
    }
    d
}

/// The digest of every database (all zeros when all are empty).
pub fn dataset(ks: &Keyspace) -> Digest {
    let mut total = [0u8; 20];
    for (i, db) in ks.dbs.iter().enumerate() {
        if db.is_empty() {
            continue;
        }
        // The database number is part of it: the same data elsewhere differs.
        mix_in(&mut total, &(i as u32).to_be_bytes());
        for (key, e) in db.iter() {
            let mut d = [0u8; 20];
            mix_in(&mut d, key);
            mix_value(&mut d, &e.value, db.expire_of(key).is_some());
            xor_in(&mut total, &d);
        }
    }
    total
}

/// Lowercase hex, as DEBUG DIGEST prints it.
pub fn hex(d: &Digest) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// A stream's digest, as Redis's: each live entry in order, its ID as
/// `<ms>.<seq>` text then every field and value as text. Counters and
/// consumer groups are not part of it (Redis leaves them out too).
fn mix_stream(digest: &mut Digest, s: &crate::engine::stream::Stream) {
    use crate::engine::stream::StreamId;
    for e in s.range(StreamId::MIN, StreamId::MAX, false) {
        mix_in(digest, format!("{}.{}", e.id.ms, e.id.seq).as_bytes());
        for (f, v) in e.pairs() {
            mix_in(digest, &f.to_vec());
            mix_in(digest, &v.to_vec());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Str;

    #[test]
    fn empty_dataset_is_zero_and_order_of_keys_does_not_matter() {
        let mut ks = Keyspace::new(2);
        assert_eq!(hex(&dataset(&ks)), "0".repeat(40));
        let v = |s: &str| Value::Str(Str::from_bytes(s.as_bytes()));
        ks.dbs[0].set(b"a", v("1"), None, false, 0);
        ks.dbs[0].set(b"b", v("2"), None, false, 0);
        let one = dataset(&ks);
        let mut other = Keyspace::new(2);
        other.dbs[0].set(b"b", v("2"), None, false, 0);
        other.dbs[0].set(b"a", v("1"), None, false, 0);
        assert_eq!(dataset(&other), one);
        // The same data in another database gives another digest.
        let mut moved = Keyspace::new(2);
        moved.dbs[1].set(b"a", v("1"), None, false, 0);
        moved.dbs[1].set(b"b", v("2"), None, false, 0);
        assert_ne!(dataset(&moved), one);
    }
}
