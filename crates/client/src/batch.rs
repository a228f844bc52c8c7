//! [`Batch`]: the queued commands of a pipeline (encoded once, with the
//! position of each command's first key for later cluster routing) and the
//! [`Handle`]s their replies resolve.
//!
//! Blocking and async pipelines both deref to a `Batch`, so the typed helpers
//! (`get`, `set`, `incr`...) exist once.

use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

use crate::cmd::first_key_index;
use crate::error::{Error, Result};
use crate::script::Script;
use crate::value::{FromValue, Value};

/// Where a reply goes once it arrives.
pub(crate) type Slot = OnceLock<Result<Value>>;

/// The future reply of one pipelined command; readable after `sync()`.
pub struct Handle<T> {
    slot: Arc<Slot>,
    _t: PhantomData<fn() -> T>,
}

impl<T: FromValue> Handle<T> {
    fn new(slot: Arc<Slot>) -> Self {
        Handle { slot, _t: PhantomData }
    }

    /// The reply, converted; `Err(PipelineNotSynced)` before the pipeline synced,
    /// `Err(Server(..))` when the command failed.
    pub fn get(&self) -> Result<T> {
        match self.slot.get() {
            None => Err(Error::PipelineNotSynced),
            Some(Err(e)) => Err(e.duplicate()),
            Some(Ok(v)) => T::from_value(v),
        }
    }

    /// True once the reply has arrived.
    pub fn is_ready(&self) -> bool {
        self.slot.get().is_some()
    }
}

/// What to do with one command's reply.
pub(crate) enum Sink {
    /// Nobody asked: only `sync_and_return_all` / `sync_streaming` see it.
    Nothing,
    /// A handle's slot.
    Slot(Arc<Slot>),
    /// A command inside MULTI: its reply is `+QUEUED`; the EXEC array fills the slot.
    Queued(Arc<Slot>),
    /// EXEC: fills the queued slots in order, then its own.
    Exec(Box<(Vec<Arc<Slot>>, Arc<Slot>)>),
    /// EVALSHA: on NOSCRIPT, SCRIPT LOAD and retry once.
    EvalSha(Box<EvalShaSink>),
}

/// An EVALSHA's slot, script (for SCRIPT LOAD) and command (for the retry).
pub(crate) struct EvalShaSink {
    pub slot: Arc<Slot>,
    pub script: Arc<Script>,
    pub cmd: Vec<Vec<u8>>,
}

/// One queued command: where it ends in the encoded buffer, where its first
/// key is (relative to the command's start, 0 = none) and its reply sink.
pub(crate) struct Entry {
    pub end: usize,
    pub key_off: u32,
    pub key_len: u32,
    pub sink: Sink,
}

/// A queued command as seen by a router: its wire bytes and first key.
pub struct QueuedCommand<'a> {
    /// The RESP-encoded command.
    pub wire: &'a [u8],
    /// Its first key argument, if the command has one (for grouping by node).
    pub key: Option<&'a [u8]>,
}

/// Commands queued for one pipeline round.
#[derive(Default)]
pub struct Batch {
    pub(crate) buf: Vec<u8>,
    pub(crate) entries: Vec<Entry>,
    in_multi: Option<Vec<Arc<Slot>>>,
}

impl Batch {
    /// Number of queued commands.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The queued commands with their first keys, in order.
    pub fn commands(&self) -> impl Iterator<Item = QueuedCommand<'_>> {
        let mut start = 0;
        self.entries.iter().map(move |e| {
            let wire = &self.buf[start..e.end];
            start = e.end;
            let key = (e.key_off != 0).then(|| &wire[e.key_off as usize..(e.key_off + e.key_len) as usize]);
            QueuedCommand { wire, key }
        })
    }

    /// Take the queued commands for sending; refused while a MULTI block is
    /// open (sending it would leave the connection inside MULTI).
    pub(crate) fn take(&mut self) -> Result<Batch> {
        if self.in_multi.is_some() {
            return Err(Error::Usage("MULTI block still open: call exec() before sync()".into()));
        }
        Ok(std::mem::take(self))
    }

    /// Take the queued commands but stay inside an open MULTI block (for
    /// streaming, where a transaction may span chunks).
    pub(crate) fn take_keep_multi(&mut self) -> Batch {
        let (buf, entries) = (std::mem::take(&mut self.buf), std::mem::take(&mut self.entries));
        Batch { buf, entries, in_multi: None }
    }

    /// Byte offset where command `i` starts.
    pub(crate) fn offset(&self, i: usize) -> usize {
        if i == 0 {
            0
        } else {
            self.entries[i - 1].end
        }
    }

    fn push<A: AsRef<[u8]>>(&mut self, args: &[A], sink: Sink) {
        resp::encode_command(&mut self.buf, args);
        let (mut key_off, mut key_len) = (0u32, 0u32);
        if let Some(k) = first_key_index(args) {
            let arg_header = |a: &[u8]| a.len().to_string().len() + 3;
            let mut off = args.len().to_string().len() + 3;
            off += args[..k].iter().map(|a| arg_header(a.as_ref()) + a.as_ref().len() + 2).sum::<usize>();
            key_off = (off + arg_header(args[k].as_ref())) as u32;
            key_len = args[k].as_ref().len() as u32;
        }
        self.entries.push(Entry { end: self.buf.len(), key_off, key_len, sink });
    }

    fn slot_sink(&mut self) -> (Arc<Slot>, Sink) {
        let slot = Arc::new(Slot::new());
        let sink = match &mut self.in_multi {
            Some(slots) => {
                slots.push(slot.clone());
                Sink::Queued(slot.clone())
            }
            None => Sink::Slot(slot.clone()),
        };
        (slot, sink)
    }

    /// Queue any command; its reply is reachable only through
    /// `sync_and_return_all` / `sync_streaming` (no per-command allocation).
    pub fn queue<A: AsRef<[u8]>>(&mut self, args: &[A]) {
        if self.in_multi.is_some() {
            // EXEC's array is matched to queued slots by position: keep one.
            let (_, sink) = self.slot_sink();
            return self.push(args, sink);
        }
        self.push(args, Sink::Nothing);
    }

    /// Queue any command and get a handle to its reply.
    pub fn cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Handle<Value> {
        self.typed(args)
    }

    /// Queue any command with a typed handle.
    pub fn typed<T: FromValue, A: AsRef<[u8]>>(&mut self, args: &[A]) -> Handle<T> {
        let (slot, sink) = self.slot_sink();
        self.push(args, sink);
        Handle::new(slot)
    }

    /// Start a MULTI block: handles of the following commands resolve from EXEC's array.
    pub fn multi(&mut self) -> Result<()> {
        if self.in_multi.is_some() {
            return Err(Error::Usage("MULTI calls can not be nested".into()));
        }
        self.push(&["MULTI"], Sink::Nothing);
        self.in_multi = Some(Vec::new());
        Ok(())
    }

    /// End a MULTI block; the handle gets EXEC's whole array.
    pub fn exec(&mut self) -> Result<Handle<Value>> {
        let slots = self.in_multi.take().ok_or_else(|| Error::Usage("EXEC without MULTI".into()))?;
        let own = Arc::new(Slot::new());
        self.push(&["EXEC"], Sink::Exec(Box::new((slots, own.clone()))));
        Ok(Handle::new(own))
    }

    /// `EVALSHA` of `script`; on `NOSCRIPT` the pipeline runs `SCRIPT LOAD` once
    /// after the round and retries (the retry runs after the rest of the round).
    pub fn evalsha<K: AsRef<[u8]>, A: AsRef<[u8]>>(
        &mut self,
        script: &Arc<Script>,
        keys: &[K],
        args: &[A],
    ) -> Handle<Value> {
        let mut cmd: Vec<Vec<u8>> = vec![b"EVALSHA".to_vec(), script.sha().as_bytes().to_vec()];
        cmd.push(keys.len().to_string().into_bytes());
        cmd.extend(keys.iter().map(|k| k.as_ref().to_vec()));
        cmd.extend(args.iter().map(|a| a.as_ref().to_vec()));
        if self.in_multi.is_some() {
            return self.cmd(&cmd);
        }
        let slot = Arc::new(Slot::new());
        let sink = EvalShaSink { slot: slot.clone(), script: script.clone(), cmd: Vec::new() };
        self.push(&cmd, Sink::EvalSha(Box::new(sink)));
        if let Some(Entry { sink: Sink::EvalSha(b), .. }) = self.entries.last_mut() {
            b.cmd = cmd;
        }
        Handle::new(slot)
    }
}

macro_rules! helpers {
    ($( $(#[$doc:meta])* $name:ident ( $($arg:ident),* ) -> $t:ty = $cmd:literal; )*) => {
        impl Batch {
            $(
                $(#[$doc])*
                pub fn $name(&mut self, $($arg: impl AsRef<[u8]>),*) -> Handle<$t> {
                    self.typed(&[$cmd.as_bytes(), $($arg.as_ref()),*])
                }
            )*
        }
    };
}

helpers! {
    /// `GET key`.
    get(key) -> Option<Vec<u8>> = "GET";
    /// `SET key value`.
    set(key, value) -> () = "SET";
    /// `INCR key`.
    incr(key) -> i64 = "INCR";
    /// `DECR key`.
    decr(key) -> i64 = "DECR";
    /// `DEL key` (one key; use `cmd` for several).
    del(key) -> i64 = "DEL";
    /// `EXISTS key`.
    exists(key) -> i64 = "EXISTS";
    /// `EXPIRE key seconds`.
    expire(key, seconds) -> bool = "EXPIRE";
    /// `TTL key`.
    ttl(key) -> i64 = "TTL";
    /// `ECHO message`.
    echo(message) -> Vec<u8> = "ECHO";
    /// `HSET key field value`.
    hset(key, field, value) -> i64 = "HSET";
    /// `HGET key field`.
    hget(key, field) -> Option<Vec<u8>> = "HGET";
    /// `SADD key member`.
    sadd(key, member) -> i64 = "SADD";
    /// `RPUSH key value`.
    rpush(key, value) -> i64 = "RPUSH";
    /// `LPUSH key value`.
    lpush(key, value) -> i64 = "LPUSH";
}

impl Batch {
    /// `PING`.
    pub fn ping(&mut self) -> Handle<String> {
        self.typed(&["PING"])
    }

    /// `INCRBY key by`.
    pub fn incrby(&mut self, key: impl AsRef<[u8]>, by: i64) -> Handle<i64> {
        self.typed(&[b"INCRBY".as_slice(), key.as_ref(), by.to_string().as_bytes()])
    }

    /// `MGET key...`.
    pub fn mget<K: AsRef<[u8]>>(&mut self, keys: &[K]) -> Handle<Vec<Option<Vec<u8>>>> {
        let mut args: Vec<&[u8]> = vec![b"MGET"];
        args.extend(keys.iter().map(|k| k.as_ref()));
        self.typed(&args)
    }

    /// `MSET key value [key value...]`.
    pub fn mset<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, pairs: &[(K, V)]) -> Handle<()> {
        let mut args: Vec<&[u8]> = vec![b"MSET"];
        for (k, v) in pairs {
            args.push(k.as_ref());
            args.push(v.as_ref());
        }
        self.typed(&args)
    }
}

/// `Deref`/`DerefMut` to the [`Batch`] field named `batch`, so every pipeline
/// type queues commands through the same methods.
macro_rules! deref_to_batch {
    ($ty:ident) => {
        impl std::ops::Deref for $ty<'_> {
            type Target = $crate::batch::Batch;
            fn deref(&self) -> &$crate::batch::Batch {
                &self.batch
            }
        }

        impl std::ops::DerefMut for $ty<'_> {
            fn deref_mut(&mut self) -> &mut $crate::batch::Batch {
                &mut self.batch
            }
        }
    };
}
pub(crate) use deref_to_batch;
