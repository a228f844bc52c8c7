//! Architecture check: the modules of `crates/server/src` form strict layers.
//!
//! `LAYERS` below *is* the architecture. A file in module M may name module N
//! (a `crate::n` path, a `super::` chain climbing out of M, or a
//! `#[macro_export]` macro defined in N) only if N's rank is lower than M's.
//! Equal ranks may not name each other either, so peers stay separable. The
//! crate root (`lib.rs`) sits above everything.
//!
//! Extending: a new module family (`replication/`, `cluster/`, `pubsub/`) gets
//! a row ranked above everything it calls and below everything that calls it,
//! e.g. replication reads the change stream and the persistence formats and
//! is driven by `net`, so it goes between 7 and 8 (renumber freely:
//! only the order matters). An unlisted module fails on purpose, so its place
//! is decided in review, not by whichever import came first.
//!
//! `SEALED` modules keep their submodules private: everyone else goes through
//! what their `mod.rs` exports. The last check forbids import loops between
//! sibling files in every crate: a loop is one unit split in two files.
//!
//! Only std: sources are scanned as text after blanking comments and literals.
//! Not followed: bare macro calls, and paths through a `use`d module alias.
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// Rank of each top-level module of crates/server/src; lower ranks are lower layers.
const LAYERS: &[(&str, u32)] = &[
    ("engine", 0), // keyspace, values, encodings: imports nothing outside itself
    ("config", 1),
    ("log", 2),
    ("allocator", 3),
    ("daemon", 3),
    ("watchdog", 3),
    ("server", 4),   // server state and the change stream (server/changes.rs)
    ("dispatch", 5), // registry, Ctx, guards, call path
    ("scripting", 6),
    ("persistence", 7), // saves and loads everything, scripting's function libraries included
    ("replication", 8), // backlog, replicas, the link to a primary: reads the change stream and RDB
    ("net", 9),         // event loop: drives persistence's group commit, replication and cron
    ("commands", 10),   // command handlers, on top
];
/// The crate root (items defined in lib.rs) may use everything.
const ROOT_RANK: u32 = 11;
/// Modules whose submodules only they themselves may name.
const SEALED: &[&str] = &["persistence"];
/// Sibling edges that close loops older than this check, tolerated until
/// someone untangles them (directory, from, to). Mostly the engine's sum
/// type and its members naming each other (`Value` holds a `List`, `List`
/// converts to `Value`). The list only shrinks: an entry whose edge is gone
/// fails the check so it gets deleted.
const KNOWN_LOOP_EDGES: &[(&str, &str, &str)] = &[
    ("crates/server/src/engine", "dict", "db"),
    ("crates/server/src/engine", "db", "hash"),
    ("crates/server/src/engine", "db", "set"),
    ("crates/server/src/engine", "value", "list"),
    ("crates/server/src/engine", "value", "zset"),
    ("crates/server/src/engine", "value", "hash"),
    ("crates/server/src/engine", "value", "set"),
    ("crates/server/src/engine", "hll_sparse", "hll"),
    ("crates/server/src/scripting/libs", "cjson_decode", "cjson"),
];
/// Source trees checked for sibling import loops, relative to the workspace root.
const LOOP_DIRS: &[&str] = &["crates/resp/src", "crates/server/src", "crates/client/src", "crates/bench/src"];

/// One token of blanked source: an identifier, `::`, or a single punctuation char.
struct Tok {
    s: String,
    pos: usize,
    line: usize,
}

/// A path naming something in the crate: `target` is absolute from the crate root.
struct Ref {
    line: usize,
    text: String,
    target: Vec<String>,
}

struct Unit {
    file: String,
    module: Vec<String>,
    toks: Vec<Tok>,
}

/// All files of one crate, with the module each file is and where macros live.
struct Model {
    units: Vec<Unit>,
    modules: BTreeSet<Vec<String>>,
    macros: BTreeMap<String, Vec<String>>,
}

type Graph = BTreeMap<String, BTreeMap<String, String>>;

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Copy of `src` with comments and string/char literals turned into spaces
/// (newlines kept, so positions and line numbers still match the file).
fn blank(src: &[char]) -> Vec<char> {
    let (mut out, mut i) = (src.to_vec(), 0);
    while i < src.len() {
        let end = skip_end(src, i).unwrap_or(i);
        out[i..end].iter_mut().filter(|c| **c != '\n').for_each(|c| *c = ' ');
        i = end.max(i + 1);
    }
    out
}

/// If a comment or literal starts at `i`, the index just past it.
fn skip_end(c: &[char], i: usize) -> Option<usize> {
    let at = |k: usize| c.get(k).copied().unwrap_or('\0');
    let word_start = |k: usize| k == 0 || !is_ident_char(c[k - 1]);
    match (at(i), at(i + 1)) {
        ('/', '/') => Some((i..c.len()).find(|&k| c[k] == '\n').unwrap_or(c.len())),
        ('/', '*') => {
            let (mut depth, mut k) = (0, i);
            while k < c.len() {
                match (at(k), at(k + 1)) {
                    ('/', '*') => (depth, k) = (depth + 1, k + 2),
                    ('*', '/') if depth == 1 => return Some(k + 2),
                    ('*', '/') => (depth, k) = (depth - 1, k + 2),
                    _ => k += 1,
                }
            }
            Some(c.len())
        }
        ('"', _) => {
            let mut k = i + 1;
            while k < c.len() && c[k] != '"' {
                k += if c[k] == '\\' { 2 } else { 1 };
            }
            Some((k + 1).min(c.len()))
        }
        // r"..", r#".."#, br".." -- but not the raw identifier r#type.
        ('r', '"' | '#') if word_start(i) || (at(i - 1) == 'b' && word_start(i - 1)) => {
            let hashes = (i + 1..c.len()).take_while(|&k| c[k] == '#').count();
            let open = i + 1 + hashes;
            if at(open) != '"' {
                return None;
            }
            let close = (open + 1..c.len()).find(|&k| c[k] == '"' && (1..=hashes).all(|h| at(k + h) == '#'));
            Some(close.map_or(c.len(), |k| k + 1 + hashes))
        }
        ('\'', '\\') => Some((i + 3..c.len()).find(|&k| c[k] == '\'').map_or(c.len(), |k| k + 1)),
        // 'x' is a char; 'a without a closing quote two chars on is a lifetime.
        ('\'', _) if at(i + 2) == '\'' => Some(i + 3),
        _ => None,
    }
}

fn tokens(code: &[char]) -> Vec<Tok> {
    let (mut out, mut i, mut line) = (Vec::new(), 0, 1);
    while i < code.len() {
        let len = match code[i] {
            c if is_ident_char(c) => code[i..].iter().take_while(|c| is_ident_char(**c)).count(),
            ':' if code.get(i + 1) == Some(&':') => 2,
            _ => 1,
        };
        if !code[i].is_whitespace() {
            out.push(Tok { s: code[i..i + len].iter().collect(), pos: i, line });
        }
        line += usize::from(code[i] == '\n');
        i += len;
    }
    out
}

/// `a/b/mod.rs` and `a/b.rs` are module `a::b`; `lib.rs` and `main.rs` are the root.
fn module_of(file: &str) -> Vec<String> {
    let mut segs: Vec<String> = file.split('/').map(String::from).collect();
    let last = segs.pop().unwrap_or_default();
    if !matches!(last.as_str(), "mod.rs" | "lib.rs" | "main.rs") {
        segs.push(last.trim_end_matches(".rs").to_string());
    }
    segs
}

/// Files placed by `#[path = "f.rs"] mod name;`, mapped to the module they really are.
fn path_overrides(file: &str, raw: &[char], toks: &[Tok], module: &[String]) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for i in 0..toks.len().saturating_sub(4) {
        let w: Vec<&str> = toks[i..i + 5].iter().map(|t| t.s.as_str()).collect();
        if w != ["#", "[", "path", "=", "]"] {
            continue;
        }
        let lit: String = raw[toks[i + 3].pos + 1..toks[i + 4].pos].iter().collect();
        let lit = lit.trim().trim_matches('"');
        let name = toks[i + 5..].windows(2).find(|w| w[0].s == "mod").map(|w| w[1].s.clone());
        let dir = file.rsplit_once('/').map_or(String::new(), |(d, _)| format!("{d}/"));
        if let Some(name) = name {
            out.push((format!("{dir}{lit}"), module.iter().cloned().chain([name]).collect()));
        }
    }
    out
}

/// Names after `mod` (declarations and inline blocks alike).
fn declared_mods(toks: &[Tok]) -> BTreeSet<String> {
    toks.windows(3)
        .filter(|w| w[0].s == "mod" && matches!(w[2].s.as_str(), ";" | "{"))
        .map(|w| w[1].s.clone())
        .collect()
}

/// Macros defined after `#[macro_export]`: they live at the crate root.
fn exported_macros(toks: &[Tok]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in toks.iter().enumerate().filter(|(_, t)| t.s == "macro_export") {
        let def = toks[i..].windows(3).find(|w| w[0].s == "macro_rules" && w[1].s == "!");
        out.extend(def.map(|w| w[2].s.clone()));
    }
    out
}

fn model(files: &[(String, String)]) -> Model {
    let (mut units, mut overrides) = (Vec::new(), BTreeMap::new());
    for (file, text) in files {
        let raw: Vec<char> = text.chars().collect();
        let toks = tokens(&blank(&raw));
        let module = module_of(file);
        overrides.extend(path_overrides(file, &raw, &toks, &module));
        units.push(Unit { file: file.clone(), module, toks });
    }
    // A `#[path]` file is the module its declaration says, not what its name says.
    units.iter_mut().filter_map(|u| Some((overrides.remove(&u.file)?, u))).for_each(|(m, u)| u.module = m);
    let modules = units.iter().flat_map(|u| (1..=u.module.len()).map(|n| u.module[..n].to_vec())).collect();
    let macros =
        units.iter().flat_map(|u| exported_macros(&u.toks).into_iter().map(|n| (n, u.module.clone()))).collect();
    Model { units, modules, macros }
}

/// Expand the use-tree / path starting at token `i` into leaf paths (with the
/// line of each leaf's first segment); returns the index after the tree.
fn parse_tree(toks: &[Tok], mut i: usize, prefix: &mut Vec<String>, line: Option<usize>, out: &mut Vec<Ref>) -> usize {
    let (depth0, mut line) = (prefix.len(), line);
    while let Some(t) = toks.get(i) {
        if t.s == "{" {
            i += 1;
            while toks.get(i).is_some_and(|t| t.s != "}") {
                i = parse_tree(toks, i, prefix, line, out);
                // Skip `as name` up to the next item of the group.
                i += toks[i..].iter().take_while(|t| t.s != "," && t.s != "}").count();
                i += usize::from(toks.get(i).is_some_and(|t| t.s == ","));
            }
            prefix.truncate(depth0);
            return i + 1;
        }
        if !is_ident_char(t.s.chars().next().unwrap_or(' ')) && t.s != "*" {
            break;
        }
        line.get_or_insert(t.line);
        prefix.push(t.s.clone());
        i += 1;
        if toks.get(i).is_none_or(|t| t.s != "::") {
            break;
        }
        i += 1;
    }
    if let (Some(line), false) = (line, prefix.is_empty()) {
        out.push(Ref { line, text: prefix.join("::"), target: prefix.clone() });
    }
    prefix.truncate(depth0);
    i
}

/// Every crate-relative path in a file, resolved against `module` (the file's
/// module) and the inline `mod x { .. }` blocks around it.
fn raw_refs(toks: &[Tok], module: &[String]) -> Vec<Ref> {
    let (mut out, mut depth, mut inline) = (Vec::new(), 0, Vec::<(String, usize)>::new());
    for i in 0..toks.len() {
        match toks[i].s.as_str() {
            "{" if i >= 2 && toks[i - 2].s == "mod" => {
                inline.push((toks[i - 1].s.clone(), depth));
                depth += 1;
            }
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|m| m.1 == depth) {
                    inline.pop();
                }
            }
            _ => {}
        }
        let starts_path = (i == 0 || toks[i - 1].s != "::") && toks.get(i + 1).is_some_and(|t| t.s == "::");
        if !starts_path {
            continue;
        }
        let here: Vec<String> = module.iter().cloned().chain(inline.iter().map(|m| m.0.clone())).collect();
        let (base, start, prefix) = match toks[i].s.as_str() {
            "crate" => (Vec::new(), i + 2, "crate::".to_string()),
            "self" => (here, i + 2, "self::".to_string()),
            "super" => {
                let n = toks[i..]
                    .chunks(2)
                    .take_while(|c| c[0].s == "super" && c.get(1).is_some_and(|t| t.s == "::"))
                    .count();
                (here[..here.len().saturating_sub(n)].to_vec(), i + 2 * n, "super::".repeat(n))
            }
            // In the crate root, `config::Config` names the crate's own module.
            s if here.is_empty() && is_ident_char(s.chars().next().unwrap_or(' ')) => (Vec::new(), i, String::new()),
            _ => continue,
        };
        let mut leaves = Vec::new();
        parse_tree(toks, start, &mut Vec::new(), None, &mut leaves);
        out.extend(leaves.into_iter().map(|r| Ref {
            line: r.line,
            text: format!("{prefix}{}", r.text),
            target: base.iter().cloned().chain(r.target).collect(),
        }));
    }
    out.sort_by(|a, b| (a.line, &a.target).cmp(&(b.line, &b.target)));
    out.dedup_by(|a, b| (a.line, &a.target) == (b.line, &b.target));
    out
}

impl Model {
    /// References of `u`, with `crate::some_macro` moved to the module defining it.
    fn refs(&self, u: &Unit) -> Vec<Ref> {
        let mut refs = raw_refs(&u.toks, &u.module);
        for r in &mut refs {
            let home = r.target.first().and_then(|n| self.macros.get(n));
            if let (Some(home), false) = (home, self.modules.contains(&r.target[..1])) {
                r.target.splice(0..0, home.iter().cloned());
            }
        }
        refs
    }

    /// The top-level module a path lands in; "" for items of the crate root.
    fn top<'a>(&self, path: &'a [String]) -> &'a str {
        path.first().filter(|_| self.modules.contains(&path[..1])).map_or("", |m| m.as_str())
    }

    /// `Some("persistence::aof")` when `from` reaches inside a sealed module.
    fn sealed_breach(&self, from: &str, target: &[String]) -> Option<String> {
        let (sealed, sub) = (target.first()?, target.get(1)?);
        if !SEALED.contains(&sealed.as_str()) || from == sealed {
            return None;
        }
        let home = self.units.iter().find(|u| u.module.len() == 1 && u.module[0] == *sealed)?;
        declared_mods(&home.toks).contains(sub).then(|| format!("{sealed}::{sub}"))
    }
}

/// Rank of a top-level module ("" is the crate root); `None` if unlisted.
fn rank(module: &str) -> Option<u32> {
    LAYERS.iter().find(|l| l.0 == module).map(|l| l.1).or(module.is_empty().then_some(ROOT_RANK))
}

fn name(module: &str) -> &str {
    Some(module).filter(|m| !m.is_empty()).unwrap_or("crate root")
}

/// Checks 1 (layer ranks) and 2 (sealed modules) over the files of one crate
/// (paths relative to its src dir); `label` is that dir for messages.
fn layer_violations(files: &[(String, String)], label: &str) -> Vec<String> {
    let m = model(files);
    let mut out: Vec<String> = (m.modules.iter().filter(|p| p.len() == 1 && rank(&p[0]).is_none()))
        .map(|p| format!("{label}/{0}: module `{0}` is not in the layer table: add it to LAYERS in this test", p[0]))
        .collect();
    for u in &m.units {
        let from = u.module.first().map_or("", String::as_str);
        for r in m.refs(u) {
            let to = m.top(&r.target);
            let at = format!("{label}/{}:{}: `{}`", u.file, r.line, r.text);
            if let (Some(a), Some(b), true) = (rank(from), rank(to), from != to) {
                if b >= a {
                    out.push(format!("{at}: {} ({a}) may not import {} ({b})", name(from), name(to)));
                }
            }
            if let Some(inner) = m.sealed_breach(from, &r.target) {
                let sealed = &r.target[0];
                out.push(format!("{at}: {} may not reach into {inner}: use what {sealed}/mod.rs exports", name(from)));
            }
        }
    }
    out
}

/// Check 3: import loops between sibling modules of each directory of one crate.
fn loop_violations(files: &[(String, String)], label: &str) -> Vec<String> {
    let m = model(files);
    let mut graphs: BTreeMap<Vec<String>, Graph> = BTreeMap::new();
    for u in &m.units {
        for r in m.refs(u) {
            // Siblings are where the file's module and the target part ways.
            let d = u.module.iter().zip(&r.target).take_while(|(a, b)| a == b).count();
            if d >= u.module.len() || d >= r.target.len() || !m.modules.contains(&r.target[..=d]) {
                continue;
            }
            let edge = format!("{label}/{}:{} `{}`", u.file, r.line, r.text);
            let graph = graphs.entry(u.module[..d].to_vec()).or_default();
            graph.entry(u.module[d].clone()).or_default().entry(r.target[d].clone()).or_insert(edge);
        }
    }
    let dir = |p: &Vec<String>| [label.to_string()].into_iter().chain(p.iter().cloned()).collect::<Vec<_>>().join("/");
    let mut out = Vec::new();
    for (p, g) in &mut graphs {
        out.extend(drop_known_edges(&dir(p), g));
        out.extend(report_cycles(&dir(p), g));
    }
    out
}

/// Remove the tolerated edges of `dir` from `g`; a tolerated edge that no
/// longer exists is itself reported, so the list cannot go stale.
fn drop_known_edges(dir: &str, g: &mut Graph) -> Vec<String> {
    let mut stale = Vec::new();
    for &(d, from, to) in KNOWN_LOOP_EDGES.iter().filter(|(d, _, _)| *d == dir) {
        if g.get_mut(from).and_then(|e| e.remove(to)).is_none() {
            stale.push(format!("{d}: {from} -> {to} is gone: delete it from KNOWN_LOOP_EDGES"));
        }
    }
    stale
}

/// One shortest cycle through each node not already on a reported cycle.
fn report_cycles(dir: &str, g: &Graph) -> Vec<String> {
    let (mut covered, mut out) = (BTreeSet::new(), Vec::new());
    for start in g.keys() {
        if covered.contains(start) {
            continue;
        }
        let Some(cycle) = shortest_cycle(g, start) else { continue };
        let mut msg = format!("{dir}: {}", cycle.join(" -> "));
        for w in cycle.windows(2) {
            msg += &format!("\n    {} -> {} at {}", w[0], w[1], g[&w[0]][&w[1]]);
            covered.insert(w[0].clone());
        }
        out.push(msg);
    }
    out
}

fn shortest_cycle(g: &Graph, start: &str) -> Option<Vec<String>> {
    let (mut prev, mut queue) = (BTreeMap::<&str, &str>::new(), VecDeque::from([start]));
    while let Some(n) = queue.pop_front() {
        for next in g.get(n).into_iter().flat_map(|e| e.keys()) {
            if next == start {
                let mut path = vec![n];
                while *path.last()? != start {
                    path.push(prev[path.last()?]);
                }
                path.reverse();
                path.push(start);
                return Some(path.into_iter().map(String::from).collect());
            }
            if !prev.contains_key(next.as_str()) {
                prev.insert(next, n);
                queue.push_back(next);
            }
        }
    }
    None
}

/// Every .rs file under `dir`, as (path relative to `dir` with '/', text), sorted.
fn read_sources(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(dir).expect("under dir").to_string_lossy().replace('\\', "/");
                out.push((rel, std::fs::read_to_string(&path).expect("readable source")));
            }
        }
    }
    out.sort();
    out
}

fn workspace() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn report(what: &str, violations: Vec<String>) {
    assert!(violations.is_empty(), "{what}: {} violation(s)\n{}", violations.len(), violations.join("\n"));
    println!("{what}: ok");
}

#[test]
fn server_modules_respect_the_layer_table() {
    let label = "crates/server/src";
    // main.rs is the binary: a separate crate on top of the library.
    let files: Vec<_> = read_sources(&workspace().join(label)).into_iter().filter(|f| f.0 != "main.rs").collect();
    report("layers of crates/server/src", layer_violations(&files, label));
}

#[test]
fn no_import_loops_between_sibling_files() {
    let found = LOOP_DIRS.iter().flat_map(|d| loop_violations(&read_sources(&workspace().join(d)), d)).collect();
    report("sibling import loops", found);
}

/// The checker proves it can fail, on sources that exist only in memory.
mod self_test {
    use super::*;

    fn owned(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect()
    }

    fn layers(list: &[(&str, &str)]) -> Vec<String> {
        layer_violations(&owned(list), "src")
    }

    #[test]
    fn lower_layer_importing_higher_is_reported() {
        let engine = "fn f<'a>(s: &'a str) -> char { 'x' }\nuse crate::server::Server;";
        let v = layers(&[("engine/x.rs", engine), ("server/mod.rs", "")]);
        assert_eq!(v, ["src/engine/x.rs:2: `crate::server::Server`: engine (0) may not import server (4)"]);
    }

    #[test]
    fn grouped_use_is_expanded() {
        let dispatch = "use crate::{\n    engine::Db,\n    persistence::{aof::Aof, load},\n};";
        let v = layers(&[("dispatch/mod.rs", dispatch), ("persistence/mod.rs", "pub mod aof;"), ("engine/mod.rs", "")]);
        let at = "src/dispatch/mod.rs:3: `crate::persistence";
        assert_eq!(v, [
            format!("{at}::aof::Aof`: dispatch (5) may not import persistence (7)"),
            format!("{at}::aof::Aof`: dispatch may not reach into persistence::aof: use what persistence/mod.rs exports"),
            format!("{at}::load`: dispatch (5) may not import persistence (7)"),
        ]);
    }

    #[test]
    fn super_chain_out_of_the_module_is_reported() {
        let aof = "use super::super::net::X;\nuse super::rdb;\nmod tests { use super::*; }";
        let v = layers(&[("net/mod.rs", ""), ("persistence/aof/mod.rs", aof)]);
        assert_eq!(v, ["src/persistence/aof/mod.rs:1: `super::super::net::X`: persistence (7) may not import net (9)"]);
    }

    #[test]
    fn comments_and_literals_are_ignored() {
        let text = r####"// crate::net
            /* a /* crate::net */ */ /// crate::net
            const A: &str = "crate::net \" crate::net"; const B: &str = r#"crate::net " crate::net"#;
            const C: &[u8] = b"crate::net"; const D: char = '"'; const E: &str = "crate::net"; let r#type = 1;"####;
        assert_eq!(layers(&[("net/mod.rs", ""), ("engine/mod.rs", text)]), Vec::<String>::new());
    }

    #[test]
    fn exported_macros_root_items_and_unknown_modules_count() {
        let v = layers(&[
            ("lib.rs", "pub mod log; pub fn registry() {}"),
            ("log.rs", "#[macro_export]\nmacro_rules! log_at { () => { $crate::log::emit() } }"),
            ("config/mod.rs", "fn f() { crate::log_at!(); crate::registry(); }"),
            ("cluster/mod.rs", ""),
        ]);
        assert_eq!(
            v,
            [
                "src/cluster: module `cluster` is not in the layer table: add it to LAYERS in this test",
                "src/config/mod.rs:1: `crate::log_at`: config (1) may not import log (2)",
                "src/config/mod.rs:1: `crate::registry`: config (1) may not import crate root (11)",
            ]
        );
    }

    #[test]
    fn sealed_submodule_is_reported() {
        let info = "fn f() {\n    crate::persistence::aof::info_fields();\n    crate::persistence::info_fields();\n}";
        let v =
            layers(&[("persistence/mod.rs", "pub mod aof;\npub use aof::info_fields;"), ("commands/info.rs", info)]);
        let rule = "commands may not reach into persistence::aof: use what persistence/mod.rs exports";
        assert_eq!(v, [format!("src/commands/info.rs:2: `crate::persistence::aof::info_fields`: {rule}")]);
    }

    #[test]
    fn sibling_loop_is_reported() {
        let f = owned(&[
            ("commands/a.rs", "use super::b::X;\nmod tests { use super::*; }"),
            ("commands/b.rs", "fn f() { crate::commands::a::y() }"),
            ("commands/c.rs", "use super::a::Z;"),
            ("commands/mod.rs", "mod a; mod b; mod c; use a::X; use b::Y;"),
        ]);
        let edges = "\n    a -> b at src/commands/a.rs:1 `super::b::X`\n    b -> a at src/commands/b.rs:1 `crate::commands::a::y`";
        assert_eq!(loop_violations(&f, "src"), [format!("src/commands: a -> b -> a{edges}")]);
        assert_eq!(loop_violations(&f[1..], "src"), Vec::<String>::new());
    }

    #[test]
    fn a_tolerated_edge_that_is_gone_is_reported() {
        let dir = "crates/server/src/scripting/libs";
        let mut g = Graph::new();
        let gone = format!("{dir}: cjson_decode -> cjson is gone: delete it from KNOWN_LOOP_EDGES");
        assert_eq!(drop_known_edges(dir, &mut g), [gone]);
        g.entry("cjson_decode".into()).or_default().insert("cjson".into(), "edge".into());
        assert!(drop_known_edges(dir, &mut g).is_empty());
        assert!(g["cjson_decode"].is_empty());
    }
}
