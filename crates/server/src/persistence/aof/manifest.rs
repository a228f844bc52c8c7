//! The multi-part AOF manifest (Redis 7): one line per file,
//! `file <name> seq <n> type <b|h|i>`, naming the base, the incremental files
//! in order, and history files waiting to be deleted. Written atomically
//! (temp file, fsync, rename, fsync of the directory).
use std::fs;
use std::io::{self, Write};
use std::path::Path;

use resp::splitargs::split_args;

use crate::config::repr;

/// What a file listed in the manifest holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    Base,
    Incr,
    /// Replaced by a rewrite; deleted soon.
    History,
}

impl FileType {
    fn letter(self) -> char {
        match self {
            FileType::Base => 'b',
            FileType::Incr => 'i',
            FileType::History => 'h',
        }
    }
}

/// One file of the AOF set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AofFile {
    pub name: String,
    pub seq: u64,
    pub kind: FileType,
}

/// The parsed manifest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    pub base: Option<AofFile>,
    pub incrs: Vec<AofFile>,
    pub history: Vec<AofFile>,
    /// The last incr file's number (Redis's `curr_incr_file_seq`): it keeps
    /// counting when a rewrite leaves no incr file listed.
    pub incr_seq: u64,
}

/// The longest line Redis's manifest reader takes, newline included.
const MAX_LINE: usize = 1024;

impl Manifest {
    /// Parse the manifest text with the rules and messages of Redis's
    /// `aofLoadManifestFromFile`: every line must end in a newline within
    /// 1024 bytes, `#` starts a comment, blank lines are errors, and each
    /// line holds at least `file`, `seq` and `type` (more key/value pairs
    /// are allowed, for later versions).
    pub fn parse(text: &str) -> Result<Manifest, String> {
        if text.is_empty() {
            return Err("Found an empty AOF manifest".into());
        }
        let mut m = Manifest::default();
        for line in text.split_inclusive('\n') {
            if line.starts_with('#') {
                continue;
            }
            if !line.ends_with('\n') || line.len() > MAX_LINE {
                return Err("The AOF manifest file contains too long line".into());
            }
            let f = parse_line(line)?;
            match f.kind {
                FileType::Base if m.base.is_some() => return Err("Found duplicate base file information".into()),
                FileType::Base => m.base = Some(f),
                FileType::Incr => {
                    if m.incrs.last().is_some_and(|l| l.seq >= f.seq) {
                        return Err("Found a non-monotonic sequence number".into());
                    }
                    m.incr_seq = f.seq;
                    m.incrs.push(f)
                }
                FileType::History => m.history.push(f),
            }
        }
        Ok(m)
    }

    /// The manifest text, base first, then history, then incrs (Redis's order).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let files = self.base.iter().chain(&self.history).chain(&self.incrs);
        for f in files {
            // Quoted when it must be, so the reader's split gives it back whole.
            let name = if needs_repr(f.name.as_bytes()) { repr(f.name.as_bytes()) } else { f.name.clone() };
            out.push_str(&format!("file {name} seq {} type {}\n", f.seq, f.kind.letter()));
        }
        out
    }

    /// Sequence number for the next incremental file.
    pub fn next_incr_seq(&self) -> u64 {
        self.incr_seq.max(self.incrs.last().map_or(0, |f| f.seq)) + 1
    }

    /// List a new incremental file named by `name(seq)`; its seq.
    pub fn add_incr(&mut self, name: impl FnOnce(u64) -> String) -> u64 {
        let seq = self.next_incr_seq();
        self.incr_seq = seq;
        self.incrs.push(AofFile { name: name(seq), seq, kind: FileType::Incr });
        seq
    }

    /// Sequence number for the next base file.
    pub fn next_base_seq(&self) -> u64 {
        self.base.as_ref().map_or(1, |f| f.seq + 1)
    }

    /// Atomically replace `dir/name` with this manifest.
    pub fn persist(&self, dir: &Path, name: &str) -> io::Result<()> {
        let tmp = dir.join(format!("temp-{name}"));
        let mut f = fs::File::create(&tmp)?;
        f.write_all(self.render().as_bytes())?;
        f.sync_all()?;
        fs::rename(&tmp, dir.join(name))?;
        fsync_dir(dir)
    }
}

/// Make a rename or file creation in `dir` durable.
pub fn fsync_dir(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

const INVALID: &str = "Invalid AOF manifest file format";

/// One non-comment line (its newline included).
fn parse_line(line: &str) -> Result<AofFile, String> {
    let line = line.trim_matches([' ', '\t', '\r', '\n']);
    let words = split_args(line.as_bytes()).filter(|w| w.len() >= 6 && w.len() % 2 == 0).ok_or(INVALID)?;
    let (mut name, mut seq, mut kind) = (None, 0, None);
    for pair in words.chunks(2) {
        let (key, val) = (&pair[0], &pair[1]);
        if key.eq_ignore_ascii_case(b"file") {
            if val.contains(&b'/') {
                return Err("File can't be a path, just a filename".into());
            }
            name = Some(String::from_utf8_lossy(val).into_owned());
        } else if key.eq_ignore_ascii_case(b"seq") {
            seq = atoll(val);
        } else if key.eq_ignore_ascii_case(b"type") {
            kind = val.first().copied();
        }
    }
    let (Some(name), true, Some(kind)) = (name, seq != 0, kind) else { return Err(INVALID.into()) };
    let kind = match kind {
        b'b' => FileType::Base,
        b'i' => FileType::Incr,
        b'h' => FileType::History,
        _ => return Err("Unknown AOF file type".into()),
    };
    Ok(AofFile { name, seq: seq as u64, kind })
}

/// C's `atoll`: leading blanks, a sign, then digits up to the first other
/// byte; 0 when there are none.
fn atoll(s: &[u8]) -> i64 {
    let s = s.trim_ascii_start();
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let n = digits
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .fold(0i64, |n, d| n.wrapping_mul(10).wrapping_add(i64::from(d - b'0')));
    if neg {
        n.wrapping_neg()
    } else {
        n
    }
}

/// Redis's `sdsneedsrepr`: bytes a bare word in the manifest cannot hold.
fn needs_repr(s: &[u8]) -> bool {
    s.iter().any(|&c| matches!(c, b'\\' | b'"' | 0x07 | 0x08) || !(0x20..=0x7e).contains(&c) || c == b' ')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incr_numbers_keep_counting_when_no_incr_file_is_listed() {
        let mut m = Manifest::parse("file a.8.base.rdb seq 8 type b\nfile a.4.incr.aof seq 4 type i\n").unwrap();
        // A rewrite that folded every incr file into the base (AOF off,
        // then on again): the next one is 5, as Redis numbers it.
        m.incrs.clear();
        assert_eq!(m.add_incr(|seq| format!("a.{seq}.incr.aof")), 5);
        assert_eq!(m.incrs[0].name, "a.5.incr.aof");
        assert_eq!(m.add_incr(|seq| format!("a.{seq}.incr.aof")), 6);
        // History lines do not count: only listed incr files do.
        let m = Manifest::parse("file a.2.base.aof seq 2 type b\nfile a.9.incr.aof seq 9 type h\n").unwrap();
        assert_eq!(m.next_incr_seq(), 1);
    }

    #[test]
    fn parses_and_renders_redis_format() {
        let text = "file appendonly.aof.2.base.aof seq 2 type b\nfile appendonly.aof.1.incr.aof seq 1 type h\n\
                    file appendonly.aof.3.incr.aof seq 3 type i\nfile appendonly.aof.4.incr.aof seq 4 type i\n";
        let m = Manifest::parse(text).unwrap();
        assert_eq!(m.base.as_ref().unwrap().seq, 2);
        assert_eq!(m.incrs.len(), 2);
        assert_eq!(m.history.len(), 1);
        assert_eq!(m.next_incr_seq(), 5);
        assert_eq!(m.render(), text);
    }

    #[test]
    fn rejects_bad_manifests_with_redis_messages() {
        let err = |t: &str| Manifest::parse(t).unwrap_err();
        assert_eq!(err(""), "Found an empty AOF manifest");
        assert_eq!(err("file x seq 1\n"), INVALID);
        assert_eq!(err("file x seq 1 type\n"), INVALID);
        assert_eq!(err("file x seq 1 type i\n\nfile y seq 2 type i\n"), INVALID);
        assert_eq!(err("filex x seq 1 type i\n"), INVALID);
        assert_eq!(err("file x seq 1 type z\n"), "Unknown AOF file type");
        assert_eq!(err("file a seq 1 type b\nfile b seq 2 type b\n"), "Found duplicate base file information");
        assert_eq!(err("file a seq 2 type i\nfile b seq 1 type i\n"), "Found a non-monotonic sequence number");
        assert_eq!(err("file a/b seq 1 type i\n"), "File can't be a path, just a filename");
        assert_eq!(err("file a seq 1 type i"), "The AOF manifest file contains too long line");
        let long = format!("file {} seq 1 type i\n", "a".repeat(1100));
        assert_eq!(err(&long), "The AOF manifest file contains too long line");
    }

    #[test]
    fn comments_extra_keys_and_quoted_names() {
        let m = Manifest::parse("# note\nFILE \"a b.aof\" seq 3 type i extra 1\n").unwrap();
        assert_eq!(m.incrs, vec![AofFile { name: "a b.aof".into(), seq: 3, kind: FileType::Incr }]);
        assert_eq!(m.render(), "file \"a b.aof\" seq 3 type i\n");
        assert_eq!(Manifest::parse(&m.render()).unwrap(), m);
    }
}
