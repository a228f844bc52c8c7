//! Applying one ACL rule (`on`, `>pass`, `+@read`, `~app:*`, `(...)`) to a
//! user, with Redis 7.0's error for each rule it refuses.
use super::{has_spaces, sha256, Acl, Catalog, KeyPattern, Selector, User};

/// Why a rule was refused (Redis's errno cases of ACLSetUser).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleError {
    /// ENOENT: unknown command or category.
    Unknown,
    /// EINVAL
    Syntax,
    /// EEXIST: a key pattern after `allkeys`.
    AfterAllKeys,
    /// EISDIR: a channel pattern after `allchannels`.
    AfterAllChannels,
    /// ENODEV: removing a password the user does not have.
    NoSuchPassword,
    /// EBADMSG: a `#`/`!` hash that is not 64 lowercase hex digits.
    BadHash,
    /// ECHILD: `+config|get|x`.
    SubcommandFirstArg,
}

impl RuleError {
    pub fn text(self) -> &'static str {
        match self {
            RuleError::Unknown => "Unknown command or category name in ACL",
            RuleError::Syntax => "Syntax error",
            RuleError::AfterAllKeys => {
                "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any \
                 effect. Try 'resetkeys' to start with an empty list of patterns"
            }
            RuleError::AfterAllChannels => {
                "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any \
                 effect. Try 'resetchannels' to start with an empty list of channels"
            }
            RuleError::NoSuchPassword => "The password you are trying to remove from the user does not exist",
            RuleError::BadHash => {
                "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"
            }
            RuleError::SubcommandFirstArg => "Allowing first-arg of a subcommand is not supported",
        }
    }
}

/// Join selector rules split over several arguments (`(~a` `+get)`) into
/// one; Err(the argument that opened an unclosed parenthesis).
pub fn merge_selector_args<'a>(ops: &[&'a [u8]]) -> Result<Vec<Vec<u8>>, &'a [u8]> {
    let mut out = Vec::new();
    let mut open: Option<(usize, Vec<u8>)> = None;
    for (i, op) in ops.iter().enumerate() {
        if let Some((_, sel)) = open.as_mut() {
            sel.push(b' ');
            sel.extend_from_slice(op);
            if op.last() == Some(&b')') {
                out.push(open.take().expect("open").1);
            }
            continue;
        }
        if op.first() == Some(&b'(') && op.last() != Some(&b')') {
            open = Some((i, op.to_vec()));
            continue;
        }
        out.push(op.to_vec());
    }
    match open {
        Some((i, _)) => Err(ops[i]),
        None => Ok(out),
    }
}

fn is(op: &[u8], word: &str) -> bool {
    op.eq_ignore_ascii_case(word.as_bytes())
}

fn valid_hash(h: &[u8]) -> bool {
    h.len() == 64 && h.iter().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

impl Acl {
    /// Apply one rule to `u` (Redis's ACLSetUser).
    pub(super) fn apply(&self, u: &mut User, op: &[u8]) -> Result<(), RuleError> {
        if op.is_empty() {
            return Ok(());
        }
        if is(op, "on") {
            u.enabled = true;
        } else if is(op, "off") {
            u.enabled = false;
        } else if is(op, "skip-sanitize-payload") {
            u.sanitize = Some(false);
        } else if is(op, "sanitize-payload") {
            u.sanitize = Some(true);
        } else if is(op, "nopass") {
            u.nopass = true;
            u.passwords.clear();
        } else if is(op, "resetpass") {
            u.nopass = false;
            u.passwords.clear();
        } else if op[0] == b'>' || op[0] == b'#' {
            let hash = password_hash(op)?;
            if !u.passwords.contains(&hash) {
                u.passwords.push(hash);
            }
            u.nopass = false;
        } else if op[0] == b'<' || op[0] == b'!' {
            let hash = password_hash(op)?;
            let at = u.passwords.iter().position(|p| *p == hash).ok_or(RuleError::NoSuchPassword)?;
            u.passwords.remove(at);
        } else if op[0] == b'(' && op.len() >= 2 && op[op.len() - 1] == b')' {
            let mut s = Selector::new(false, self.catalog.words(), self.pubsub_all);
            for part in split_args(&op[1..op.len() - 1]).ok_or(RuleError::Syntax)? {
                set_selector(&self.catalog, &mut s, &part)?;
            }
            u.selectors.push(s);
        } else if is(op, "clearselectors") {
            u.selectors.truncate(1);
        } else if is(op, "reset") {
            for step in ["resetpass", "resetkeys", "resetchannels"] {
                self.apply(u, step.as_bytes())?;
            }
            if self.pubsub_all {
                self.apply(u, b"allchannels")?;
            }
            for step in ["off", "sanitize-payload", "clearselectors", "-@all"] {
                self.apply(u, step.as_bytes())?;
            }
        } else {
            set_selector(&self.catalog, &mut u.selectors[0], op)?;
        }
        Ok(())
    }
}

fn password_hash(op: &[u8]) -> Result<String, RuleError> {
    if op[0] == b'>' || op[0] == b'<' {
        return Ok(sha256::hex(&op[1..]));
    }
    if !valid_hash(&op[1..]) {
        return Err(RuleError::BadHash);
    }
    Ok(String::from_utf8_lossy(&op[1..]).into_owned())
}

/// Split a selector's body on spaces, honouring quotes as Redis's
/// sdssplitargs does; None on unbalanced quotes.
fn split_args(s: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == s.len() {
            break;
        }
        let mut cur = Vec::new();
        let mut quote: Option<u8> = None;
        while i < s.len() {
            let c = s[i];
            match quote {
                Some(q) if c == q => {
                    quote = None;
                    i += 1;
                    if i < s.len() && !s[i].is_ascii_whitespace() {
                        return None;
                    }
                    continue;
                }
                Some(_) => cur.push(c),
                None if c == b'"' || c == b'\'' => quote = Some(c),
                None if c.is_ascii_whitespace() => break,
                None => cur.push(c),
            }
            i += 1;
        }
        if quote.is_some() {
            return None;
        }
        out.push(cur);
    }
    Some(out)
}

fn set_bit(s: &mut Selector, id: usize, on: bool) {
    if let Some(w) = s.allowed.get_mut(id / 64) {
        if on {
            *w |= 1 << (id % 64);
        } else {
            *w &= !(1 << (id % 64));
        }
    }
    if !on {
        s.all_commands = false;
    }
}

/// Allow or deny a command, and with a container all its subcommands.
pub(super) fn change_command(cat: &Catalog, s: &mut Selector, id: usize, on: bool) {
    set_bit(s, id, on);
    s.first_args.remove(&id);
    for &sub in &cat.cmds[id].subs {
        set_bit(s, sub, on);
    }
}

/// `+@cat`/`-@cat`: every command and subcommand in the category.
pub(super) fn change_category(cat: &Catalog, s: &mut Selector, bit: u32, on: bool) {
    for (id, c) in cat.cmds.iter().enumerate() {
        if c.categories & bit != 0 {
            change_command(cat, s, id, on);
        }
    }
}

pub(super) fn all_commands(s: &mut Selector, on: bool) {
    s.allowed.iter_mut().for_each(|w| *w = if on { u64::MAX } else { 0 });
    s.all_commands = on;
    s.future = on;
    s.first_args.clear();
}

/// Apply a selector rule (keys, channels, commands) to `s`.
pub(super) fn set_selector(cat: &Catalog, s: &mut Selector, op: &[u8]) -> Result<(), RuleError> {
    if is(op, "allkeys") || op == b"~*" {
        s.all_keys = true;
        s.keys.clear();
    } else if is(op, "resetkeys") {
        s.all_keys = false;
        s.keys.clear();
    } else if is(op, "allchannels") || op == b"&*" {
        s.all_channels = true;
        s.channels.clear();
    } else if is(op, "resetchannels") {
        s.all_channels = false;
        s.channels.clear();
    } else if is(op, "allcommands") || is(op, "+@all") {
        all_commands(s, true);
    } else if is(op, "nocommands") || is(op, "-@all") {
        all_commands(s, false);
    } else if op[0] == b'~' || op[0] == b'%' {
        add_key_pattern(s, op)?;
    } else if op[0] == b'&' {
        if s.all_channels {
            return Err(RuleError::AfterAllChannels);
        }
        if has_spaces(&op[1..]) {
            return Err(RuleError::Syntax);
        }
        if !s.channels.iter().any(|c| c == &op[1..]) {
            s.channels.push(op[1..].to_vec());
        }
        s.all_channels = false;
    } else if op.len() > 1 && (op[0] == b'+' || op[0] == b'-') && op[1] == b'@' {
        let bit = super::category_bit(&op[2..]).ok_or(RuleError::Unknown)?;
        change_category(cat, s, bit, op[0] == b'+');
    } else if op[0] == b'+' {
        allow_command(cat, s, &op[1..])?;
    } else if op[0] == b'-' {
        let id = cat.find(&op[1..]).ok_or(RuleError::Unknown)?;
        change_command(cat, s, id, false);
    } else {
        return Err(RuleError::Syntax);
    }
    Ok(())
}

fn add_key_pattern(s: &mut Selector, op: &[u8]) -> Result<(), RuleError> {
    if s.all_keys {
        return Err(RuleError::AfterAllKeys);
    }
    let (mut read, mut write) = (false, false);
    let mut offset = 1;
    if op[0] == b'%' {
        loop {
            match op.get(offset).map(u8::to_ascii_uppercase) {
                Some(b'R') if !read => read = true,
                Some(b'W') if !write => write = true,
                Some(b'~') => {
                    offset += 1;
                    break;
                }
                _ => return Err(RuleError::Syntax),
            }
            offset += 1;
        }
    } else {
        (read, write) = (true, true);
    }
    let pattern = &op[offset..];
    if has_spaces(pattern) {
        return Err(RuleError::Syntax);
    }
    match s.keys.iter_mut().find(|k| k.pattern == pattern) {
        Some(k) => {
            k.read |= read;
            k.write |= write;
        }
        None => s.keys.push(KeyPattern::new(pattern, read, write)),
    }
    s.all_keys = false;
    Ok(())
}

/// `+cmd`, `+cmd|sub`, or `+cmd|firstarg` for a command without
/// subcommands.
fn allow_command(cat: &Catalog, s: &mut Selector, name: &[u8]) -> Result<(), RuleError> {
    let Some(bar) = name.iter().rposition(|&c| c == b'|') else {
        let id = cat.find(name).ok_or(RuleError::Unknown)?;
        change_command(cat, s, id, true);
        return Ok(());
    };
    let (head, sub) = (&name[..bar], &name[bar + 1..]);
    let id = cat.find(head).ok_or(RuleError::Unknown)?;
    if cat.cmds[id].parent.is_some() {
        return Err(RuleError::SubcommandFirstArg);
    }
    if sub.is_empty() {
        return Err(RuleError::Syntax);
    }
    if !cat.cmds[id].subs.is_empty() {
        let sid = cat.find(name).ok_or(RuleError::Unknown)?;
        change_command(cat, s, sid, true);
        return Ok(());
    }
    crate::log_at!(
        Warning,
        "Deprecation warning: Allowing a first arg of an otherwise blocked command is a misuse of ACL and may get \
         disabled in the future (offender: +{})",
        super::show(name)
    );
    let args = s.first_args.entry(id).or_default();
    if !args.iter().any(|a| a.eq_ignore_ascii_case(sub)) {
        args.push(sub.to_vec());
    }
    Ok(())
}
