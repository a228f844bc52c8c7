//! Key specs, tips and documentation of the Pub/Sub commands and MONITOR (Redis 7.0.15's).
use super::key_flags::NOT_KEY;
use super::ArgType::{Pat, Str};
use super::Begin::Index;
use super::Find::Range;
use super::{a, block, ks, m, Table};

#[rustfmt::skip]
pub(super) const TABLE: Table = &[
    ("monitor", m("Listen for all requests received by the server in real time", "1.0.0", "server")),
    ("psubscribe", m("Listen for messages published to channels matching the given patterns", "2.0.0", "pubsub").cx("O(N) where N is the number of patterns the client is already subscribed to.")
        .args(&[
            block("pattern", &[a("pattern", Pat)]).multi(),
        ])),
    ("publish", m("Post a message to a channel", "2.0.0", "pubsub").cx("O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client).")
        .args(&[
            a("channel", Str),
            a("message", Str),
        ])),
    ("pubsub", m("A container for Pub/Sub commands", "2.8.0", "pubsub").cx("Depends on subcommand.")),
    ("pubsub|channels", m("List active channels", "2.8.0", "pubsub").cx("O(N) where N is the number of active channels, and assuming constant time pattern matching (relatively short channels and patterns)")
        .args(&[
            a("pattern", Pat).opt(),
        ])),
    ("pubsub|help", m("Show helpful text about the different subcommands", "6.2.0", "pubsub").cx("O(1)")),
    ("pubsub|numpat", m("Get the count of unique patterns pattern subscriptions", "2.8.0", "pubsub").cx("O(1)")),
    ("pubsub|numsub", m("Get the count of subscribers for channels", "2.8.0", "pubsub").cx("O(N) for the NUMSUB subcommand, where N is the number of requested channels")
        .args(&[
            a("channel", Str).opt().multi(),
        ])),
    ("pubsub|shardchannels", m("List active shard channels", "7.0.0", "pubsub").cx("O(N) where N is the number of active shard channels, and assuming constant time pattern matching (relatively short shard channels).")
        .args(&[
            a("pattern", Pat).opt(),
        ])),
    ("pubsub|shardnumsub", m("Get the count of subscribers for shard channels", "7.0.0", "pubsub").cx("O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels")
        .args(&[
            a("shardchannel", Str).opt().multi(),
        ])),
    ("punsubscribe", m("Stop listening for messages posted to channels matching the given patterns", "2.0.0", "pubsub").cx("O(N+M) where N is the number of patterns the client is already subscribed and M is the number of total patterns subscribed in the system (by any client).")
        .args(&[
            a("pattern", Pat).opt().multi(),
        ])),
    ("spublish", m("Post a message to a shard channel", "7.0.0", "pubsub").cx("O(N) where N is the number of clients subscribed to the receiving shard channel.")
        .keys(&[ks(NOT_KEY, Index(1), Range(0, 1, 0))])
        .args(&[
            a("shardchannel", Str),
            a("message", Str),
        ])),
    ("ssubscribe", m("Listen for messages published to the given shard channels", "7.0.0", "pubsub").cx("O(N) where N is the number of shard channels to subscribe to.")
        .keys(&[ks(NOT_KEY, Index(1), Range(-1, 1, 0))])
        .args(&[
            a("shardchannel", Str).multi(),
        ])),
    ("subscribe", m("Listen for messages published to the given channels", "2.0.0", "pubsub").cx("O(N) where N is the number of channels to subscribe to.")
        .args(&[
            a("channel", Str).multi(),
        ])),
    ("sunsubscribe", m("Stop listening for messages posted to the given shard channels", "7.0.0", "pubsub").cx("O(N) where N is the number of clients already subscribed to a shard channel.")
        .keys(&[ks(NOT_KEY, Index(1), Range(-1, 1, 0))])
        .args(&[
            a("shardchannel", Str).opt().multi(),
        ])),
    ("unsubscribe", m("Stop listening for messages posted to the given channels", "2.0.0", "pubsub").cx("O(N) where N is the number of clients already subscribed to a channel.")
        .args(&[
            a("channel", Str).opt().multi(),
        ])),
];
