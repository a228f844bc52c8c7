//! Streams in a rewritten AOF (`aof-use-rdb-preamble no`): the commands
//! that rebuild one, as Redis 7.0's `rewriteStreamObject` emits them. One
//! XADD per live entry with its explicit ID (an empty stream is made by
//! `XADD key MAXLEN 0 0-1 x y`, which adds and trims at once), then XSETID
//! restores the last ID, entries added and max deleted ID that deletions
//! and trims left behind; per group XGROUP CREATE with ENTRIESREAD, then
//! XGROUP CREATECONSUMER for consumers with nothing pending and one
//! `XCLAIM ... TIME t RETRYCOUNT n JUSTID FORCE` per pending entry.
use crate::engine::stream::{Group, Stream, StreamId};
use resp::encode_command as encode;

fn id_arg(id: StreamId) -> Vec<u8> {
    id.to_bytes()
}

/// XADD of every live entry, or the add-and-trim that leaves an empty
/// stream.
fn rewrite_entries(out: &mut Vec<u8>, key: &[u8], s: &Stream) {
    if s.is_empty() {
        encode(out, &[b"XADD".as_slice(), key, b"MAXLEN", b"0", b"0-1", b"x", b"y"]);
        return;
    }
    let mut owned: Vec<Vec<u8>> = Vec::new();
    for e in s.range(StreamId::MIN, StreamId::MAX, false) {
        owned.clear();
        owned.push(id_arg(e.id));
        for (f, v) in e.pairs() {
            owned.push(f.to_vec());
            owned.push(v.to_vec());
        }
        let mut args: Vec<&[u8]> = Vec::with_capacity(owned.len() + 2);
        args.push(b"XADD");
        args.push(key);
        args.extend(owned.iter().map(Vec::as_slice));
        encode(out, &args);
    }
}

/// XGROUP CREATE, then the consumers and their pending entries.
fn rewrite_group(out: &mut Vec<u8>, key: &[u8], name: &[u8], g: &Group) {
    let last = id_arg(g.last_id);
    let read = g.entries_read.to_string();
    encode(out, &[b"XGROUP".as_slice(), b"CREATE", key, name, &last, b"ENTRIESREAD", read.as_bytes()]);
    for (cname, c) in &g.consumers {
        if c.pel.is_empty() {
            encode(out, &[b"XGROUP".as_slice(), b"CREATECONSUMER", key, name, cname]);
            continue;
        }
        for id in &c.pel {
            let Some(nack) = g.pel.get(id) else { continue };
            let (id, time, count) = (id_arg(*id), nack.delivery_time.to_string(), nack.delivery_count.to_string());
            encode(
                out,
                &[
                    b"XCLAIM".as_slice(),
                    key,
                    name,
                    cname,
                    b"0",
                    &id,
                    b"TIME",
                    time.as_bytes(),
                    b"RETRYCOUNT",
                    count.as_bytes(),
                    b"JUSTID",
                    b"FORCE",
                ],
            );
        }
    }
}

/// Append the commands that rebuild stream `key`.
pub fn rewrite_stream(out: &mut Vec<u8>, key: &[u8], s: &Stream) {
    rewrite_entries(out, key, s);
    let (last, added, max_deleted) = (id_arg(s.last_id), s.entries_added.to_string(), id_arg(s.max_deleted));
    encode(out, &[b"XSETID".as_slice(), key, &last, b"ENTRIESADDED", added.as_bytes(), b"MAXDELETEDID", &max_deleted]);
    for (name, g) in &s.groups {
        rewrite_group(out, key, name, g);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream::{IdSpec, NodeLimits};

    fn cmds(list: &[&[&str]]) -> Vec<u8> {
        let mut out = Vec::new();
        for c in list {
            let args: Vec<&[u8]> = c.iter().map(|a| a.as_bytes()).collect();
            encode(&mut out, &args);
        }
        out
    }

    #[test]
    fn a_stream_rewrites_as_redis_rebuilds_it() {
        let lim = NodeLimits { max_bytes: 4096, max_entries: 100 };
        let mut s = Stream::new();
        for (ms, f, v) in [(1, "f", "a"), (2, "f", "12"), (3, "g", "c")] {
            s.add(IdSpec::Exact(StreamId::new(ms, 0)), &[f.as_bytes(), v.as_bytes()], 0, lim).unwrap();
        }
        s.delete(&[StreamId::new(3, 0)]);
        let mut g = Group::new(StreamId::new(2, 0), 2);
        let (bob, _) = g.consumer_or_create(b"bob", 5);
        g.consumer_or_create(b"al", 5);
        g.deliver(StreamId::new(1, 0), &bob, 1_700_000_000_000);
        g.pel.get_mut(&StreamId::new(1, 0)).unwrap().delivery_count = 3;
        s.groups.insert(b"grp".to_vec().into_boxed_slice(), g);
        let mut out = Vec::new();
        rewrite_stream(&mut out, b"k", &s);
        let want = cmds(&[
            &["XADD", "k", "1-0", "f", "a"],
            &["XADD", "k", "2-0", "f", "12"],
            &["XSETID", "k", "3-0", "ENTRIESADDED", "3", "MAXDELETEDID", "3-0"],
            &["XGROUP", "CREATE", "k", "grp", "2-0", "ENTRIESREAD", "2"],
            &["XGROUP", "CREATECONSUMER", "k", "grp", "al"],
            &["XCLAIM", "k", "grp", "bob", "0", "1-0", "TIME", "1700000000000", "RETRYCOUNT", "3", "JUSTID", "FORCE"],
        ]);
        assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(&want));
    }

    #[test]
    fn an_empty_stream_is_added_and_trimmed_at_once() {
        let mut s = Stream::new();
        s.groups.insert(b"g".to_vec().into_boxed_slice(), Group::new(StreamId::MIN, -1));
        let mut out = Vec::new();
        rewrite_stream(&mut out, b"e", &s);
        let want = cmds(&[
            &["XADD", "e", "MAXLEN", "0", "0-1", "x", "y"],
            &["XSETID", "e", "0-0", "ENTRIESADDED", "0", "MAXDELETEDID", "0-0"],
            &["XGROUP", "CREATE", "e", "g", "0-0", "ENTRIESREAD", "-1"],
        ]);
        assert_eq!(out, want);
    }
}
