//! The byte-level RDB format shared by the writer and the reader: type and
//! opcode numbers, and [`Writer`], which encodes lengths, strings (integer,
//! LZF or raw) and doubles while keeping the CRC64 of everything written.
use std::io::{self, Write};

use crc::{Crc, Digest, Table};

use super::lzf;
use crate::engine::numeric::parse_i64;

/// Redis's CRC64 (Jones polynomial, reflected), as in the dump trailer.
pub static CRC64: Crc<u64, Table<16>> = Crc::<u64, Table<16>>::new(&crc::CRC_64_REDIS);

/// The version Redis 7.0 writes and the newest this reader accepts.
pub const RDB_VERSION: u32 = 10;

pub const TYPE_STRING: u8 = 0;
pub const TYPE_LIST: u8 = 1;
pub const TYPE_SET: u8 = 2;
pub const TYPE_ZSET: u8 = 3;
pub const TYPE_HASH: u8 = 4;
pub const TYPE_ZSET_2: u8 = 5;
pub const TYPE_MODULE: u8 = 6;
pub const TYPE_MODULE_2: u8 = 7;
pub const TYPE_HASH_ZIPMAP: u8 = 9;
pub const TYPE_LIST_ZIPLIST: u8 = 10;
pub const TYPE_SET_INTSET: u8 = 11;
pub const TYPE_ZSET_ZIPLIST: u8 = 12;
pub const TYPE_HASH_ZIPLIST: u8 = 13;
pub const TYPE_LIST_QUICKLIST: u8 = 14;
pub const TYPE_STREAM_LISTPACKS: u8 = 15;
pub const TYPE_HASH_LISTPACK: u8 = 16;
pub const TYPE_ZSET_LISTPACK: u8 = 17;
pub const TYPE_LIST_QUICKLIST_2: u8 = 18;
pub const TYPE_STREAM_LISTPACKS_2: u8 = 19;

pub const OP_FUNCTION2: u8 = 245;
pub const OP_FUNCTION: u8 = 246;
pub const OP_MODULE_AUX: u8 = 247;
pub const OP_IDLE: u8 = 248;
pub const OP_FREQ: u8 = 249;
pub const OP_AUX: u8 = 250;
pub const OP_RESIZEDB: u8 = 251;
pub const OP_EXPIRETIME_MS: u8 = 252;
pub const OP_EXPIRETIME: u8 = 253;
pub const OP_SELECTDB: u8 = 254;
pub const OP_EOF: u8 = 255;

/// Special string encodings (length byte `11xxxxxx`).
pub const ENC_INT8: u8 = 0;
pub const ENC_INT16: u8 = 1;
pub const ENC_INT32: u8 = 2;
pub const ENC_LZF: u8 = 3;

/// Quicklist 2 node containers.
pub const QUICKLIST_NODE_PLAIN: u64 = 1;
pub const QUICKLIST_NODE_PACKED: u64 = 2;

/// Strings shorter than this are never LZF-compressed (as in Redis).
const LZF_MIN_LEN: usize = 21;

/// Encodes RDB items onto `W`, checksumming every byte.
pub struct Writer<W: Write> {
    out: W,
    digest: Digest<'static, u64, Table<16>>,
    compress: bool,
    scratch: Vec<u8>,
}

impl<W: Write> Writer<W> {
    /// `compress`: LZF for strings longer than 20 bytes (`rdbcompression`).
    pub fn new(out: W, compress: bool) -> Self {
        Writer { out, digest: CRC64.digest(), compress, scratch: Vec::new() }
    }

    pub fn raw(&mut self, b: &[u8]) -> io::Result<()> {
        self.digest.update(b);
        self.out.write_all(b)
    }

    pub fn byte(&mut self, b: u8) -> io::Result<()> {
        self.raw(&[b])
    }

    /// A length: 6, 14, 32 or 64 bits, big-endian beyond the first form.
    pub fn length(&mut self, n: u64) -> io::Result<()> {
        if n < 1 << 6 {
            self.byte(n as u8)
        } else if n < 1 << 14 {
            self.raw(&[0x40 | (n >> 8) as u8, n as u8])
        } else if n <= u64::from(u32::MAX) {
            let mut b = [0x80, 0, 0, 0, 0];
            b[1..].copy_from_slice(&(n as u32).to_be_bytes());
            self.raw(&b)
        } else {
            let mut b = [0x81, 0, 0, 0, 0, 0, 0, 0, 0];
            b[1..].copy_from_slice(&n.to_be_bytes());
            self.raw(&b)
        }
    }

    /// An integer in the shortest string encoding, if it fits 32 bits.
    fn try_int(&mut self, v: i64) -> io::Result<bool> {
        if let Ok(v) = i8::try_from(v) {
            self.raw(&[0xC0 | ENC_INT8, v as u8])?;
        } else if let Ok(v) = i16::try_from(v) {
            let b = v.to_le_bytes();
            self.raw(&[0xC0 | ENC_INT16, b[0], b[1]])?;
        } else if let Ok(v) = i32::try_from(v) {
            let b = v.to_le_bytes();
            self.raw(&[0xC0 | ENC_INT32, b[0], b[1], b[2], b[3]])?;
        } else {
            return Ok(false);
        }
        Ok(true)
    }

    /// A string the way Redis's `rdbSaveRawString` writes it: canonical
    /// integers of up to 11 characters as integers, long strings LZF
    /// compressed when that saves at least 4 bytes, the rest verbatim.
    pub fn string(&mut self, s: &[u8]) -> io::Result<()> {
        if s.len() <= 11 {
            if let Some(v) = parse_i64(s) {
                if self.try_int(v)? {
                    return Ok(());
                }
            }
        }
        if self.compress && s.len() >= LZF_MIN_LEN {
            if let Some(c) = lzf::compress(s, 4) {
                self.byte(0xC0 | ENC_LZF)?;
                self.length(c.len() as u64)?;
                self.length(s.len() as u64)?;
                return self.raw(&c);
            }
        }
        self.length(s.len() as u64)?;
        self.raw(s)
    }

    /// An integer value as a string item.
    pub fn int_string(&mut self, v: i64) -> io::Result<()> {
        if self.try_int(v)? {
            return Ok(());
        }
        let mut s = std::mem::take(&mut self.scratch);
        s.clear();
        crate::engine::numeric::format_i64(&mut s, v);
        let r = self.length(s.len() as u64).and_then(|_| self.raw(&s));
        self.scratch = s;
        r
    }

    /// A binary double (ZSET_2 scores).
    pub fn double(&mut self, v: f64) -> io::Result<()> {
        self.raw(&v.to_le_bytes())
    }

    /// The checksum of everything written so far, and the sink.
    pub fn finish(self) -> (u64, W) {
        (self.digest.finalize(), self.out)
    }
}
