//! FUNCTION DUMP / RESTORE payloads: each library's code as the RDB stores
//! it (the FUNCTION2 opcode, then the code as an RDB string), then the DUMP
//! footer (RDB version and CRC64, checked by `dump::verify`). Payloads cross
//! between redis-server and Volley in both directions.
use super::dump::verify;
use super::format::{Writer, OP_FUNCTION, OP_FUNCTION2, RDB_VERSION};
use super::load::Reader;

/// The payload of FUNCTION DUMP for the libraries whose codes are `codes`.
pub fn dump(codes: &[Vec<u8>], compress: bool) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), compress);
    let written: std::io::Result<()> = codes
        .iter()
        .try_for_each(|code| w.byte(OP_FUNCTION2).and_then(|_| w.string(code)))
        .and_then(|_| w.raw(&(RDB_VERSION as u16).to_le_bytes()));
    written.expect("writing into memory cannot fail");
    let (crc, mut out) = w.finish();
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The library codes of a FUNCTION RESTORE payload, or Redis's error reply.
pub fn parse(payload: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let mut rest = verify(payload).map_err(|_| "ERR DUMP payload version or checksum are wrong".to_string())?;
    let mut codes = Vec::new();
    while !rest.is_empty() {
        let mut r = Reader::new(&mut rest);
        match r.u8() {
            Ok(OP_FUNCTION2) => {}
            Ok(OP_FUNCTION) => return Err("ERR failed loading the given functions payload".into()),
            Ok(_) => return Err("ERR given type is not a function".into()),
            Err(_) => return Err("ERR can not read data type".into()),
        }
        codes.push(r.string().map_err(|_| "ERR failed loading the given functions payload".to_string())?);
    }
    Ok(codes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip_compressed_or_not() {
        let codes =
            vec![b"#!lua name=a\nredis.register_function('f', function() return 1 end)".to_vec(), vec![b'x'; 300]];
        for compress in [false, true] {
            assert_eq!(parse(&dump(&codes, compress)).unwrap(), codes);
        }
        assert_eq!(parse(&dump(&[], false)).unwrap(), Vec::<Vec<u8>>::new());
    }

    #[test]
    fn damaged_or_foreign_payloads_are_refused() {
        let mut p = dump(&[b"#!lua name=a\n".to_vec()], false);
        assert_eq!(parse(b"bad_payload").unwrap_err(), "ERR DUMP payload version or checksum are wrong");
        p[3] ^= 1;
        assert_eq!(parse(&p).unwrap_err(), "ERR DUMP payload version or checksum are wrong");
        // A DUMP of a key is not a function payload.
        let key =
            super::super::dump::dump_value(&crate::engine::Value::Str(crate::engine::Str::from_bytes(b"v")), false);
        assert_eq!(parse(&key).unwrap_err(), "ERR given type is not a function");
    }
}
