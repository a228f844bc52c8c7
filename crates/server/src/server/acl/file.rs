//! The ACL file (`aclfile`): ACL LOAD reads every line into a new set of
//! users and installs it only if no line has an error (the errors name
//! file and line, as Redis's); ACL SAVE writes the users through a
//! temporary file renamed over the old one. Also the `user` lines of the
//! configuration file, applied at start-up.
use super::{has_spaces, show, Acl, RuleError, User};

/// Parse an ACL file's text into users; Err(Redis's error text).
pub fn parse(acl: &Acl, filename: &str, text: &[u8]) -> Result<Vec<User>, String> {
    let mut users: Vec<User> = Vec::new();
    let mut errors = String::new();
    for (i, raw) in text.split(|&c| c == b'\n').enumerate() {
        let line = trim(raw, b" \t\r\n");
        let linenum = i + 1;
        if line.is_empty() {
            continue;
        }
        let argv: Vec<&[u8]> = line.split(|&c| c == b' ').collect();
        if argv[0] != b"user" || argv.len() < 2 {
            errors += &format!("{filename}:{linenum} should start with user keyword followed by the username. ");
            continue;
        }
        let name = argv[1];
        if has_spaces(name) {
            errors += &format!("'{filename}:{linenum}: username '{}' contains invalid characters. ", show(name));
            continue;
        }
        if users.iter().any(|u| u.name == name) {
            errors += &format!("WARNING: Duplicate user '{}' found on line {linenum}. ", show(name));
            continue;
        }
        let ops = match super::rules::merge_selector_args(&argv[2..]) {
            Ok(ops) => ops,
            Err(_) => {
                errors += &format!("{filename}:{linenum}: Unmatched parenthesis in selector definition.");
                Vec::new()
            }
        };
        let ops: Vec<Vec<u8>> = ops.iter().map(|o| trim(o, b"\t\r\n").to_vec()).collect();
        let mut u = acl.build_user(name, &[]).expect("no rules");
        let mut syntax_error = false;
        for op in &ops {
            match acl.apply(&mut u, op) {
                Ok(()) => {}
                Err(RuleError::Unknown) => {
                    errors += &format!(
                        "{filename}:{linenum}: Error in applying operation '{}': {}. ",
                        show(op),
                        RuleError::Unknown.text()
                    );
                }
                Err(e) if !syntax_error => {
                    errors += &format!("{filename}:{linenum}: {}. ", e.text());
                    syntax_error = true;
                }
                Err(_) => {}
            }
        }
        u.refresh(&acl.catalog);
        users.push(u);
    }
    if errors.is_empty() {
        Ok(users)
    } else {
        errors += "WARNING: ACL errors detected, no change to the previously active ACL rules was performed";
        Err(errors)
    }
}

/// `strerror` text of an I/O error, without Rust's "(os error N)".
fn strerror(e: &std::io::Error) -> String {
    let s = e.to_string();
    s.split(" (os error").next().unwrap_or(&s).to_string()
}

fn trim<'a>(mut b: &'a [u8], set: &[u8]) -> &'a [u8] {
    while let [first, rest @ ..] = b {
        if !set.contains(first) {
            break;
        }
        b = rest;
    }
    while let [rest @ .., last] = b {
        if !set.contains(last) {
            break;
        }
        b = rest;
    }
    b
}

/// Read and parse the ACL file; Err(Redis's error text).
pub fn load(acl: &Acl, path: &str) -> Result<Vec<User>, String> {
    let text =
        std::fs::read(path).map_err(|e| format!("Error loading ACLs, opening file '{path}': {}", strerror(&e)))?;
    parse(acl, path, &text)
}

/// Every user as a `user` line, in name order.
pub fn render(acl: &Acl) -> String {
    acl.users().map(|u| format!("user {} {}\n", show(&u.name), acl.describe_user(u))).collect()
}

/// ACL SAVE: write through a temporary file renamed over `path`.
pub fn save(acl: &Acl, path: &str) -> std::io::Result<()> {
    let tmp = format!("{path}.tmp-{}-{}", std::process::id(), crate::server::unix_ms());
    let result = std::fs::write(&tmp, render(acl)).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The configuration file's `user` lines, applied to the users at start-up
/// (the default user is reset first when a line redefines it).
pub fn apply_config_users(acl: &mut Acl, lines: &[Vec<String>]) -> Result<(), String> {
    let mut seen: Vec<&str> = Vec::new();
    for line in lines {
        let name = line.first().map(String::as_str).unwrap_or("");
        if seen.contains(&name) {
            return Err("Duplicate user found. A user can only be defined once in config files".into());
        }
        seen.push(name);
    }
    for line in lines {
        let name = line[0].as_bytes();
        if has_spaces(name) {
            return Err("Spaces not allowed in ACL usernames".into());
        }
        let mut ops: Vec<&[u8]> = line[1..].iter().map(|s| s.as_bytes()).collect();
        if name == b"default" {
            ops.insert(0, b"reset");
        }
        acl.set_user(name, &ops)
            .map_err(|e| format!("Error loading ACL rule for the user named '{}': {e}", show(name)))?;
    }
    Ok(())
}
