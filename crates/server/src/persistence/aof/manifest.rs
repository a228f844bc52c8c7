//! The multi-part AOF manifest (Redis 7): one line per file,
//! `file <name> seq <n> type <b|h|i>`, naming the base, the incremental files
//! in order, and history files waiting to be deleted. Written atomically
//! (temp file, fsync, rename, fsync of the directory).
use std::fs;
use std::io::{self, Write};
use std::path::Path;

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
}

impl Manifest {
    /// Parse the manifest text; `Err` names the line that is wrong.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let mut m = Manifest::default();
        for (no, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let f = parse_line(line).ok_or_else(|| format!("Invalid AOF manifest file format (line {})", no + 1))?;
            match f.kind {
                FileType::Base if m.base.is_some() => return Err("Found duplicate base file information".into()),
                FileType::Base => m.base = Some(f),
                FileType::Incr => {
                    if m.incrs.last().is_some_and(|l| l.seq >= f.seq) {
                        return Err("Found a non-monotonic sequence number".into());
                    }
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
            out.push_str(&format!("file {} seq {} type {}\n", f.name, f.seq, f.kind.letter()));
        }
        out
    }

    /// Sequence number for the next incremental file.
    pub fn next_incr_seq(&self) -> u64 {
        self.incrs.last().map_or(1, |f| f.seq + 1)
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

fn parse_line(line: &str) -> Option<AofFile> {
    let words: Vec<&str> = line.split_ascii_whitespace().collect();
    if !words.len().is_multiple_of(2) {
        return None;
    }
    let (mut name, mut seq, mut kind) = (None, None, None);
    for pair in words.chunks(2) {
        match pair[0] {
            "file" => name = Some(pair[1].to_string()),
            "seq" => seq = pair[1].parse().ok(),
            "type" => {
                kind = match pair[1] {
                    "b" => Some(FileType::Base),
                    "i" => Some(FileType::Incr),
                    "h" => Some(FileType::History),
                    _ => None,
                }
            }
            // Unknown keys are allowed, for forward compatibility (as Redis).
            _ => {}
        }
    }
    Some(AofFile { name: name?, seq: seq?, kind: kind? })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn rejects_bad_lines() {
        assert!(Manifest::parse("file x seq 1\n").is_err());
        assert!(Manifest::parse("file x seq 1 type z\n").is_err());
        assert!(Manifest::parse("file a seq 1 type b\nfile b seq 2 type b\n").is_err());
        assert!(Manifest::parse("file a seq 2 type i\nfile b seq 1 type i\n").is_err());
    }
}
