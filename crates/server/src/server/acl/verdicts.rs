//! What a user's root selector decides about each command before any
//! argument is seen, worked out whenever the user changes: the permission
//! check of a restricted user's usual command is then one byte read and,
//! for a command with one key at a fixed position, that key matched
//! against the selector's patterns. Anything the byte cannot settle
//! (other selectors, first-argument rules, channels, key ranges, key
//! searches) is left to the full check, which is always right.
use super::{Catalog, KeyPlan, Selector};

/// Settled by the full check only.
const SLOW: u8 = 0;
/// The root selector allows the command whatever its arguments.
const ALLOW: u8 = 1;
/// Allowed when the key at position `(byte >> 2) & 31` (if the call has
/// one) matches a pattern granting the access in the low two bits.
const KEY: u8 = 0x80;
const READ: u8 = 1;
const WRITE: u8 = 2;

/// One verdict byte per command id.
#[derive(Debug, Clone, Default)]
pub struct Verdicts(Box<[u8]>);

/// What the byte says about one command.
pub enum Verdict {
    Slow,
    Allow,
    /// The key at `pos` needs a pattern granting `read` and `write`.
    Key {
        pos: usize,
        read: bool,
        write: bool,
    },
}

impl Verdicts {
    /// The verdicts of `root` over every command of the catalog.
    pub fn build(cat: &Catalog, root: &Selector) -> Self {
        Verdicts(cat.cmds.iter().enumerate().map(|(id, cmd)| verdict(root, id, cmd)).collect())
    }

    #[inline(always)]
    pub fn get(&self, id: usize) -> Verdict {
        match self.0.get(id).copied().unwrap_or(SLOW) {
            SLOW => Verdict::Slow,
            ALLOW => Verdict::Allow,
            b => Verdict::Key { pos: usize::from((b >> 2) & 31), read: b & READ != 0, write: b & WRITE != 0 },
        }
    }
}

fn verdict(s: &Selector, id: usize, cmd: &super::CatalogEntry) -> u8 {
    if !s.allows_id(id) || (cmd.channels.is_some() && !s.all_channels) {
        return SLOW;
    }
    if s.all_keys {
        return ALLOW;
    }
    match cmd.keys {
        KeyPlan::None => ALLOW,
        KeyPlan::One { pos, read, write, .. } if pos < 32 => {
            KEY | (pos as u8) << 2 | if read { READ } else { 0 } | if write { WRITE } else { 0 }
        }
        _ => SLOW,
    }
}
