//! Turning a user back into rules (ACL LIST, ACL GETUSER, ACL SAVE), the
//! way Redis 7.0 does: the command bitmap is approximated with categories
//! first (best fit each round), then exact single-command fixes.
use super::rules::{all_commands, change_category, change_command};
use super::{Catalog, KeyPattern, Selector, User, CATEGORIES};

pub(super) fn pattern(k: &KeyPattern) -> String {
    let prefix = match (k.read, k.write) {
        (true, false) => "%R~",
        (false, true) => "%W~",
        _ => "~",
    };
    format!("{prefix}{}", String::from_utf8_lossy(&k.pattern))
}

fn count(cat: &Catalog, s: &Selector, bit: u32) -> (usize, usize) {
    let (mut on, mut off) = (0, 0);
    for (id, c) in cat.cmds.iter().enumerate() {
        if c.categories & bit != 0 {
            if s.allows_id(id) {
                on += 1;
            } else {
                off += 1;
            }
        }
    }
    (on, off)
}

/// The command rules of a selector: `+@all`/`-@all`, the categories that
/// fit best, then single commands and first-args.
pub(super) fn command_rules(cat: &Catalog, s: &Selector) -> String {
    let additive = !s.future;
    let words = s.allowed.len();
    let mut fake = Selector::new(false, words, false);
    let mut rules = vec![if additive { "-@all".to_string() } else { "+@all".to_string() }];
    all_commands(&mut fake, !additive);
    let mut temp = Selector { allowed: s.allowed.clone(), ..Selector::default() };
    let mut applied = [false; 32];
    loop {
        let mut best = None;
        let (mut mindiff, mut maxsame) = (usize::MAX, 0);
        for (j, _) in CATEGORIES.iter().enumerate() {
            if applied[j] {
                continue;
            }
            let (on, off) = count(cat, &temp, 1 << j);
            let (diff, same) = if additive { (off, on) } else { (on, off) };
            if same > diff && (diff < mindiff || (diff == mindiff && same > maxsame)) {
                best = Some(j);
                mindiff = diff;
                maxsame = same;
            }
        }
        let Some(j) = best else { break };
        change_category(cat, &mut fake, 1 << j, additive);
        change_category(cat, &mut temp, 1 << j, !additive);
        rules.push(format!("{}@{}", if additive { '+' } else { '-' }, CATEGORIES[j]));
        applied[j] = true;
    }
    for (id, c) in cat.cmds.iter().enumerate() {
        let mine = s.allows_id(id);
        if mine != fake.allows_id(id) {
            rules.push(format!("{}{}", if mine { '+' } else { '-' }, c.name));
            change_command(cat, &mut fake, id, mine);
        }
        if !mine {
            for arg in s.first_args.get(&id).into_iter().flatten() {
                rules.push(format!("+{}|{}", c.name, String::from_utf8_lossy(arg)));
            }
        }
    }
    rules.join(" ")
}

fn selector(cat: &Catalog, s: &Selector) -> String {
    let mut out = String::new();
    if s.all_keys {
        out.push_str("~* ");
    } else {
        for k in &s.keys {
            out.push_str(&pattern(k));
            out.push(' ');
        }
    }
    if s.all_channels {
        out.push_str("&* ");
    } else {
        out.push_str("resetchannels ");
        for c in &s.channels {
            out.push('&');
            out.push_str(&String::from_utf8_lossy(c));
            out.push(' ');
        }
    }
    out.push_str(&command_rules(cat, s));
    out
}

/// Flags, password hashes and selectors, as ACL LIST prints a user.
pub(super) fn user(cat: &Catalog, u: &User) -> String {
    let mut out = String::new();
    out.push_str(if u.enabled { "on " } else { "off " });
    if u.nopass {
        out.push_str("nopass ");
    }
    match u.sanitize {
        Some(false) => out.push_str("skip-sanitize-payload "),
        Some(true) => out.push_str("sanitize-payload "),
        None => {}
    }
    for p in &u.passwords {
        out.push('#');
        out.push_str(p);
        out.push(' ');
    }
    for s in &u.selectors {
        if s.root {
            out.push_str(&selector(cat, s));
        } else {
            out.push_str(&format!(" ({})", selector(cat, s)));
        }
    }
    out
}

/// Keys of a selector as ACL GETUSER shows them.
pub fn keys_text(s: &Selector) -> String {
    if s.all_keys {
        return "~*".into();
    }
    s.keys.iter().map(pattern).collect::<Vec<_>>().join(" ")
}

/// Channels of a selector as ACL GETUSER shows them.
pub fn channels_text(s: &Selector) -> String {
    if s.all_channels {
        return "&*".into();
    }
    s.channels.iter().map(|c| format!("&{}", String::from_utf8_lossy(c))).collect::<Vec<_>>().join(" ")
}
