//! Command metadata: where a command's first key is (for later cluster
//! routing) and which commands block the connection.

/// Argument index of the first key of `args`, if the command has one.
///
/// Covers common commands; unknown commands are assumed to have their key at
/// index 1 when they have at least two arguments.
pub fn first_key_index<A: AsRef<[u8]>>(args: &[A]) -> Option<usize> {
    let name = args.first()?.as_ref().to_ascii_uppercase();
    let idx = match name.as_slice() {
        b"PING" | b"ECHO" | b"MULTI" | b"EXEC" | b"DISCARD" | b"SCRIPT" | b"INFO" | b"SELECT" | b"AUTH" | b"HELLO"
        | b"FLUSHALL" | b"FLUSHDB" | b"DBSIZE" | b"CONFIG" | b"CLIENT" | b"COMMAND" | b"TIME" | b"QUIT" | b"RESET"
        | b"PUBLISH" | b"SUBSCRIBE" | b"PSUBSCRIBE" | b"UNSUBSCRIBE" | b"WAIT" | b"SCAN" | b"KEYS" | b"RANDOMKEY"
        | b"DEBUG" | b"SAVE" | b"BGSAVE" | b"LASTSAVE" | b"SHUTDOWN" | b"MONITOR" | b"SLOWLOG" | b"FUNCTION" => {
            return None
        }
        b"EVAL" | b"EVALSHA" | b"EVAL_RO" | b"EVALSHA_RO" | b"FCALL" | b"FCALL_RO" => {
            let n: usize = std::str::from_utf8(args.get(2)?.as_ref()).ok()?.parse().ok()?;
            return if n > 0 { Some(3) } else { None };
        }
        b"XREAD" | b"XREADGROUP" => {
            let pos = args.iter().position(|a| a.as_ref().eq_ignore_ascii_case(b"STREAMS"))?;
            pos + 1
        }
        b"BITOP" => 2,
        b"OBJECT" | b"MEMORY" | b"XINFO" => 2,
        _ => 1,
    };
    (idx < args.len()).then_some(idx)
}

/// True when the command can block the connection waiting for an event, or
/// switches it into a push mode (pub/sub, MONITOR): such commands must not
/// share a multiplexed connection.
pub fn is_blocking<A: AsRef<[u8]>>(args: &[A]) -> bool {
    let Some(name) = args.first() else { return false };
    let name = name.as_ref().to_ascii_uppercase();
    match name.as_slice() {
        b"BLPOP" | b"BRPOP" | b"BRPOPLPUSH" | b"BLMOVE" | b"BLMPOP" | b"BZPOPMIN" | b"BZPOPMAX" | b"BZMPOP"
        | b"WAIT" | b"WAITAOF" | b"SUBSCRIBE" | b"PSUBSCRIBE" | b"SSUBSCRIBE" | b"MONITOR" | b"SYNC" | b"PSYNC" => true,
        b"XREAD" | b"XREADGROUP" => args.iter().any(|a| a.as_ref().eq_ignore_ascii_case(b"BLOCK")),
        // MULTI/EXEC state and SELECT/AUTH would leak between callers.
        b"MULTI" | b"EXEC" | b"DISCARD" | b"WATCH" | b"UNWATCH" | b"SELECT" | b"AUTH" | b"HELLO" | b"RESET"
        | b"QUIT" | b"CLIENT" => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_positions() {
        assert_eq!(first_key_index(&["GET", "k"]), Some(1));
        assert_eq!(first_key_index(&["PING"]), None);
        assert_eq!(first_key_index(&["evalsha", "abc", "1", "k", "a"]), Some(3));
        assert_eq!(first_key_index(&["EVALSHA", "abc", "0", "a"]), None);
        assert_eq!(first_key_index(&["XREAD", "COUNT", "1", "STREAMS", "s", "0"]), Some(4));
        assert!(is_blocking(&["blpop", "k", "0"]));
        assert!(!is_blocking(&["GET", "k"]));
    }
}
