//! Routing replies of a pipeline round to handles, MULTI/EXEC slots, the
//! caller's callback, and collecting EVALSHA calls to retry after NOSCRIPT.

use std::sync::Arc;

use crate::batch::{Entry, EvalShaSink, Sink, Slot};
use crate::error::{Error, Result, ServerError};
use crate::script::Script;
use crate::value::{Value, ValueExt};

/// An EVALSHA that got NOSCRIPT: its index, slot, script and command.
pub(crate) struct Retry {
    pub index: usize,
    pub slot: Arc<Slot>,
    pub script: Arc<Script>,
    pub cmd: Vec<Vec<u8>>,
}

fn set(slot: &Slot, r: Result<Value>) {
    let _ = slot.set(r);
}

fn error_of(v: &Value) -> Option<Error> {
    match v {
        Value::Error(e) => Some(Error::Server(ServerError::parse(e))),
        _ => None,
    }
}

/// Deliver `reply` (of command `index`) to `entry`'s sink. Returns a retry
/// for EVALSHA/NOSCRIPT.
pub(crate) fn route(index: usize, entry: Entry, reply: &Value) -> Option<Retry> {
    match entry.sink {
        Sink::Nothing => {}
        Sink::Slot(slot) => set(&slot, reply.clone().into_result()),
        Sink::Queued(slot) => {
            if let Some(e) = error_of(reply) {
                set(&slot, Err(e));
            }
        }
        Sink::Exec(b) => {
            let (slots, own) = *b;
            match reply {
                Value::Array(items) => {
                    for (slot, item) in slots.iter().zip(items) {
                        set(slot, item.clone().into_result());
                    }
                }
                Value::Null => slots.iter().for_each(|s| set(s, Err(Error::TransactionAborted))),
                other => {
                    let e = error_of(other).unwrap_or_else(|| Error::Protocol(format!("EXEC replied {other:?}")));
                    slots.iter().for_each(|s| set(s, Err(e.duplicate())));
                }
            }
            let own_result = match reply {
                Value::Null => Err(Error::TransactionAborted),
                r => r.clone().into_result(),
            };
            set(&own, own_result);
        }
        Sink::EvalSha(b) => {
            let EvalShaSink { slot, script, cmd } = *b;
            match reply {
                Value::Error(e) if e.starts_with(b"NOSCRIPT") => {
                    return Some(Retry { index, slot, script, cmd });
                }
                r => set(&slot, r.clone().into_result()),
            }
        }
    }
    None
}

/// Plan the retry round: `SCRIPT LOAD` once per distinct script, then every
/// EVALSHA again. Returns the commands and, per reply, the retry it belongs to
/// (`None` for SCRIPT LOAD, whose errors are carried to that script's retries).
pub(crate) fn retry_round(retries: &[Retry]) -> Vec<(Vec<Vec<u8>>, Option<usize>)> {
    let mut cmds = Vec::new();
    let mut loaded: Vec<&str> = Vec::new();
    for r in retries {
        if !loaded.contains(&r.script.sha()) {
            loaded.push(r.script.sha());
            cmds.push((vec![b"SCRIPT".to_vec(), b"LOAD".to_vec(), r.script.source().to_vec()], None));
        }
    }
    cmds.extend(retries.iter().enumerate().map(|(i, r)| (r.cmd.clone(), Some(i))));
    cmds
}

/// Apply the retry round's replies: a failed SCRIPT LOAD (e.g. a server
/// without scripting) surfaces as the error of that script's calls.
pub(crate) fn finish_retries(retries: &[Retry], plan: &[(Vec<Vec<u8>>, Option<usize>)], replies: Vec<Value>) {
    let mut load_errors: Vec<(String, Value)> = Vec::new();
    for ((cmd, target), reply) in plan.iter().zip(replies) {
        match target {
            None => {
                if matches!(reply, Value::Error(_)) {
                    let sha = crate::sha1::sha1_hex(&cmd[2]);
                    load_errors.push((sha, reply));
                }
            }
            Some(i) => {
                let r = &retries[*i];
                let failed_load = load_errors.iter().find(|(sha, _)| sha == r.script.sha());
                let reply = failed_load.map_or(reply, |(_, e)| e.clone());
                set(&r.slot, reply.into_result());
            }
        }
    }
}
