//! The RDB item reader every RDB decoder shares (the file loader, DUMP
//! payloads, streams, function libraries): lengths, strings, numbers and
//! blobs with the byte offset and running CRC64 kept, and the error that
//! names where a read failed. Apart from `load` so that the type decoders
//! it calls can read without importing their caller.
use std::io::{self, Read};

use crc::{Digest, Table};

use super::format::*;
use crate::engine::numeric::format_i64;

/// Why a load failed, and where.
#[derive(Debug)]
pub struct LoadError {
    pub offset: u64,
    pub msg: String,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (at byte offset {})", self.msg, self.offset)
    }
}

pub(super) type LResult<T> = Result<T, LoadError>;

/// Decodes RDB items from `R`, tracking the offset and the running CRC64.
pub struct Reader<R: Read> {
    inp: R,
    pub(super) pos: u64,
    digest: Digest<'static, u64, Table<16>>,
}

impl<R: Read> Reader<R> {
    pub fn new(inp: R) -> Self {
        Reader { inp, pos: 0, digest: CRC64.digest() }
    }

    pub fn error<T>(&self, msg: impl Into<String>) -> LResult<T> {
        Err(LoadError { offset: self.pos, msg: msg.into() })
    }

    fn fill(&mut self, buf: &mut [u8]) -> LResult<()> {
        match self.inp.read_exact(buf) {
            Ok(()) => {
                self.digest.update(buf);
                self.pos += buf.len() as u64;
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => self.error("unexpected end of file (truncated RDB)"),
            Err(e) => self.error(format!("read error: {e}")),
        }
    }

    pub fn u8(&mut self) -> LResult<u8> {
        let mut b = [0u8; 1];
        self.fill(&mut b)?;
        Ok(b[0])
    }

    pub(super) fn array<const N: usize>(&mut self) -> LResult<[u8; N]> {
        let mut b = [0u8; N];
        self.fill(&mut b)?;
        Ok(b)
    }

    pub fn bytes(&mut self, n: u64) -> LResult<Vec<u8>> {
        let mut out = Vec::new();
        self.bytes_into(n, &mut out)?;
        Ok(out)
    }

    /// Read `n` bytes, replacing `out`'s contents (reusing its buffer).
    fn bytes_into(&mut self, n: u64, out: &mut Vec<u8>) -> LResult<()> {
        out.clear();
        // Grow as data really arrives, so a corrupt huge length fails as a
        // short read instead of a huge allocation.
        out.reserve(n.min(1 << 20) as usize);
        let mut left = n;
        while left > 0 {
            let chunk = left.min(1 << 20) as usize;
            let start = out.len();
            out.resize(start + chunk, 0);
            self.fill(&mut out[start..])?;
            left -= chunk as u64;
        }
        Ok(())
    }

    /// A length, or (value, true) for a special string encoding.
    fn len_or_enc(&mut self) -> LResult<(u64, bool)> {
        let b = self.u8()?;
        Ok(match b >> 6 {
            0 => (u64::from(b & 0x3f), false),
            1 => (u64::from(b & 0x3f) << 8 | u64::from(self.u8()?), false),
            2 if b == 0x80 => (u64::from(u32::from_be_bytes(self.array()?)), false),
            2 if b == 0x81 => (u64::from_be_bytes(self.array()?), false),
            2 => return self.error(format!("unknown length encoding 0x{b:02x}")),
            _ => (u64::from(b & 0x3f), true),
        })
    }

    pub fn length(&mut self) -> LResult<u64> {
        match self.len_or_enc()? {
            (n, false) => Ok(n),
            _ => self.error("string encoding where a length was expected"),
        }
    }

    pub fn string(&mut self) -> LResult<Vec<u8>> {
        let mut out = Vec::new();
        self.string_into(&mut out)?;
        Ok(out)
    }

    /// Read a string into `out` (reusing its buffer: the per-key hot path).
    pub fn string_into(&mut self, out: &mut Vec<u8>) -> LResult<()> {
        let (n, encoded) = self.len_or_enc()?;
        if !encoded {
            return self.bytes_into(n, out);
        }
        let v = match n as u8 {
            ENC_INT8 => i64::from(self.u8()? as i8),
            ENC_INT16 => i64::from(i16::from_le_bytes(self.array()?)),
            ENC_INT32 => i64::from(i32::from_le_bytes(self.array()?)),
            ENC_LZF => {
                let clen = self.length()?;
                let len = self.length()?;
                let data = self.bytes(clen)?;
                return match super::lzf::decompress(&data, len as usize) {
                    Some(s) => {
                        *out = s;
                        Ok(())
                    }
                    None => self.error("invalid LZF-compressed string"),
                };
            }
            other => return self.error(format!("unknown string encoding {other}")),
        };
        out.clear();
        format_i64(out, v);
        Ok(())
    }

    /// The old text-encoded double (RDB_TYPE_ZSET).
    pub(super) fn text_double(&mut self) -> LResult<f64> {
        match self.u8()? {
            253 => Ok(f64::NAN),
            254 => Ok(f64::INFINITY),
            255 => Ok(f64::NEG_INFINITY),
            n => {
                let b = self.bytes(u64::from(n))?;
                match std::str::from_utf8(&b).ok().and_then(|s| s.parse().ok()) {
                    Some(v) => Ok(v),
                    None => self.error("invalid double value"),
                }
            }
        }
    }

    pub fn u64_le(&mut self) -> LResult<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// The CRC64 of everything read so far.
    pub fn checksum(&self) -> u64 {
        self.digest.clone().finalize()
    }
}
