//! What XINFO reports about a stream that is not a stored field: a
//! consumer group's lag (Redis 7.0's rules, including when it cannot be
//! known) and the node count of the radix tree Redis would keep the
//! stream's nodes in. Pure data; the replies are `commands::stream_info`'s.
use super::group::{Group, ENTRIES_READ_UNKNOWN};
use super::Stream;

/// Bytes of a node's key in Redis's radix tree: the master ID, big-endian.
const KEY_LEN: usize = 16;

impl Stream {
    /// Entries in the stream not yet delivered to `g`, or None when that
    /// cannot be known (an XDEL tombstone may lie past the group's last
    /// ID, and its read counter cannot be derived), as Redis's
    /// `streamReplyWithCGLag`.
    pub fn group_lag(&self, g: &Group) -> Option<i64> {
        let added = self.entries_added as i64;
        if self.entries_added == 0 {
            return Some(0);
        }
        if g.entries_read != ENTRIES_READ_UNKNOWN && !self.range_has_tombstones(Some(g.last_id), None) {
            return Some(added - g.entries_read);
        }
        self.entries_up_to(g.last_id).map(|read| added - read)
    }

    /// `radix-tree-nodes`: how many nodes Redis's rax holds for this
    /// stream's node keys. Redis builds it by appending keys in order and
    /// removes keys with recompression, which leaves the canonical shape:
    /// one node per branching point, one per key (the leaf), one per run
    /// of bytes between them (a compressed node), plus the head, which is
    /// the first of those or an empty node when there are no keys.
    pub fn rax_nodes(&self) -> u64 {
        let keys: Vec<[u8; KEY_LEN]> = self.nodes().map(|(id, _)| id.to_be_bytes()).collect();
        if keys.is_empty() {
            return 1;
        }
        subtree_nodes(&keys, 0)
    }
}

/// Nodes of the subtree at `depth` holding `keys` (sorted, distinct, all
/// sharing their first `depth` bytes, at least one).
fn subtree_nodes(keys: &[[u8; KEY_LEN]], depth: usize) -> u64 {
    if depth == KEY_LEN {
        return 1;
    }
    let (first, last) = (&keys[0], &keys[keys.len() - 1]);
    let shared = (depth..KEY_LEN).take_while(|&i| first[i] == last[i]).count();
    if shared > 0 {
        // A compressed node (or a one-byte plain node) for the shared run.
        return 1 + subtree_nodes(keys, depth + shared);
    }
    // A branching node with one child per distinct byte here.
    1 + keys.chunk_by(|a, b| a[depth] == b[depth]).map(|group| subtree_nodes(group, depth + 1)).sum::<u64>()
}

#[cfg(test)]
mod tests {
    use super::super::{IdSpec, NodeLimits, StreamId};
    use super::*;

    const ONE_PER_NODE: NodeLimits = NodeLimits { max_bytes: 4096, max_entries: 1 };

    fn with_ids(ids: &[(u64, u64)]) -> Stream {
        let mut s = Stream::new();
        for &(ms, seq) in ids {
            s.add(IdSpec::Exact(StreamId::new(ms, seq)), &[b"f", b"v"], 0, ONE_PER_NODE).unwrap();
        }
        s
    }

    #[test]
    fn rax_nodes_follow_the_shape_redis_builds() {
        assert_eq!(Stream::new().rax_nodes(), 1);
        // Head compressed over all 16 bytes, then the leaf.
        assert_eq!(with_ids(&[(1, 1)]).rax_nodes(), 2);
        // Shared 15-byte run, a branch on the last byte, two leaves.
        assert_eq!(with_ids(&[(1, 1), (1, 2)]).rax_nodes(), 4);
        // Branch at byte 7 (ms low byte): each side has 8 more bytes to run.
        assert_eq!(with_ids(&[(1, 0), (2, 0)]).rax_nodes(), 6);
        // Three keys, two branch points.
        assert_eq!(with_ids(&[(1, 1), (1, 2), (2, 0)]).rax_nodes(), 8);
        // Branch at the very first byte: no head run.
        assert_eq!(with_ids(&[(1, 0), (1 << 56, 0)]).rax_nodes(), 5);
    }

    #[test]
    fn lag_is_known_unless_a_tombstone_lies_ahead() {
        let mut s = with_ids(&[(1, 0), (2, 0), (3, 0), (4, 0), (5, 0)]);
        let mut g = Group::new(StreamId::new(2, 0), 2);
        assert_eq!(s.group_lag(&g), Some(3));
        s.delete(&[StreamId::new(4, 0)]);
        assert_eq!(s.group_lag(&g), None);
        // A group past the tombstone counts again.
        g.last_id = StreamId::new(5, 0);
        g.entries_read = 5;
        assert_eq!(s.group_lag(&g), Some(0));
        // Unknown read counter: derivable only at the ends of the stream.
        g.entries_read = ENTRIES_READ_UNKNOWN;
        assert_eq!(s.group_lag(&g), Some(0));
        g.last_id = StreamId::new(3, 0);
        assert_eq!(s.group_lag(&g), None);
        assert_eq!(Stream::new().group_lag(&g), Some(0));
    }
}
