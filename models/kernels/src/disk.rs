//! The on-disk op cache (`--op-cache DIR`): each simulated kernel program's time, kept across
//! processes, so that a run whose ops were all simulated before (by the same build, on the
//! same chip description) simulates none.
//!
//! Layout: `DIR/trnsim-op-cache-v1/xx/<32 hex digits>.op`, one small text file per entry,
//! named by the entry's digest (XXH3-128) of what its time depends on: the cache format's
//! version, the simulator build (a digest of the running binary, so any rebuild starts a new
//! set of entries), the chip description and the per-core program texts. An entry:
//!
//! ```text
//! trnsim op cache 2
//! build 5f0e…(32 hex digits)
//! digest 9a3c…(32 hex digits, the file's name)
//! label gemm
//! ps 16152000
//! head 1854000
//! tail 1402000
//! check 1b2c3d4e5f607182
//! ```
//!
//! `ps` is the simulated time in picoseconds (1 ..= the kernel time limit), `head` and `tail`
//! the program's edges ([`crate::run::Timing`]: `head + tail <= ps`), `check` the XXH3-64 of
//! the lines before it. An entry is never trusted blindly: one that is not a
//! regular file of at most 4 KiB, or whose lines, build, digest, time range or check do not
//! hold, is reported on stderr as `file:line:col: field: message` and ignored; the program is
//! simulated and the entry written again. Entries are written to a temporary file and renamed
//! into place, so a reader never sees half of one and processes may share a directory.
//!
//! Bounded: at most [`MAX_ENTRIES`] entries (about 200 bytes each); past that, new times are
//! not stored (one note says so). Left out: eviction (delete the directory to empty it), and
//! protection against someone who can write the directory and forges a consistent entry
//! (the check detects corruption, not forgery).

use crate::run::Timing;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use twox_hash::{XxHash3_128, XxHash3_64};

/// The entry format's version (the folder's name and an entry's first line).
pub const VERSION: u32 = 2;
/// Most entries a cache directory holds.
pub const MAX_ENTRIES: u64 = 100_000;
/// Largest entry file read, in bytes.
const MAX_ENTRY_BYTES: u64 = 4096;

/// An open op cache directory.
#[derive(Debug)]
pub struct DiskCache {
    root: PathBuf,
    build: u128,
    entries: AtomicU64,
    full_noted: AtomicBool,
    tmp: AtomicU64,
    read: AtomicU64,
    stored: AtomicU64,
}

/// What a lookup found.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// The simulated time and its edges.
    Time(Timing),
    /// No entry.
    Missing,
    /// An entry that does not hold (`file:line:col: field: message`): ignored.
    Bad(String),
}

/// A digest of the running binary: entries of one build are never read by another.
pub fn build_id() -> Result<u128, String> {
    static ID: OnceLock<Result<u128, String>> = OnceLock::new();
    ID.get_or_init(|| {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find this program's binary: {e}"))?;
        let bytes =
            std::fs::read(&exe).map_err(|e| format!("{}: cannot read this program's binary: {e}", exe.display()))?;
        Ok(XxHash3_128::oneshot(&bytes))
    })
    .clone()
}

impl DiskCache {
    /// Opens (creating it if needed) the cache in `dir`, entries of this build. `flag` names
    /// the flag in errors (`--op-cache`).
    pub fn open(dir: &Path, flag: &str) -> Result<DiskCache, String> {
        Self::open_for(dir, flag, build_id()?)
    }

    /// [`DiskCache::open`] for entries of build `build` (tests).
    pub fn open_for(dir: &Path, flag: &str, build: u128) -> Result<DiskCache, String> {
        if dir.exists() && !dir.is_dir() {
            return Err(format!("{flag} {}: is not a directory", dir.display()));
        }
        let root = dir.join(format!("trnsim-op-cache-v{VERSION}"));
        std::fs::create_dir_all(&root).map_err(|e| format!("{flag} {}: cannot create: {e}", root.display()))?;
        let entries = count_entries(&root);
        Ok(DiskCache {
            root,
            build,
            entries: AtomicU64::new(entries),
            full_noted: AtomicBool::new(false),
            tmp: AtomicU64::new(0),
            read: AtomicU64::new(0),
            stored: AtomicU64::new(0),
        })
    }

    /// The digest naming the entry of `label`'s `texts` on the chip described by `chip_key`.
    pub fn digest(&self, chip_key: &str, label: &str, texts: &[String]) -> u128 {
        let mut h = XxHash3_128::new();
        h.write(format!("trnsim op cache {VERSION}\0{:032x}\0", self.build).as_bytes());
        for part in [chip_key, label] {
            h.write(&(part.len() as u64).to_le_bytes());
            h.write(part.as_bytes());
        }
        for t in texts {
            h.write(&(t.len() as u64).to_le_bytes());
            h.write(t.as_bytes());
        }
        h.finish_128()
    }

    /// The entry file of `digest`.
    pub fn path(&self, digest: u128) -> PathBuf {
        let hex = format!("{digest:032x}");
        self.root.join(&hex[..2]).join(format!("{hex}.op"))
    }

    /// The entry of `digest`, checked.
    pub fn lookup(&self, digest: u128) -> Found {
        let path = self.path(digest);
        let meta = match std::fs::metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Found::Missing,
            Err(e) => return Found::Bad(format!("{}:1:1: entry: cannot read: {e}", path.display())),
        };
        if !meta.is_file() || meta.len() > MAX_ENTRY_BYTES {
            return Found::Bad(format!(
                "{}:1:1: entry: not a regular file of at most {MAX_ENTRY_BYTES} bytes",
                path.display()
            ));
        }
        let mut text = String::new();
        let read = std::fs::File::open(&path).and_then(|f| f.take(MAX_ENTRY_BYTES).read_to_string(&mut text));
        if let Err(e) = read {
            return Found::Bad(format!("{}:1:1: entry: cannot read: {e}", path.display()));
        }
        match parse(&text, self.build, digest) {
            Ok(t) => {
                self.read.fetch_add(1, Ordering::Relaxed);
                Found::Time(t)
            }
            Err((line, col, field, msg)) => Found::Bad(format!("{}:{line}:{col}: {field}: {msg}", path.display())),
        }
    }

    /// Stores `t` for `digest` (a program `label`), unless the cache is full. Errors writing
    /// are returned (the caller notes them; the run's result does not depend on the cache).
    pub fn store(&self, digest: u128, label: &str, t: Timing) -> Result<(), String> {
        let path = self.path(digest);
        let replacing = path.exists();
        if !replacing && self.entries.load(Ordering::Relaxed) >= MAX_ENTRIES {
            if !self.full_noted.swap(true, Ordering::Relaxed) {
                eprintln!(
                    "note: op cache {} holds {MAX_ENTRIES} entries, its most: new op times are not stored (delete it to start afresh)",
                    self.root.display()
                );
            }
            return Ok(());
        }
        let dir = path.parent().ok_or("op cache: entry without a folder")?;
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
        let tmp = dir.join(format!(".tmp-{}-{}", std::process::id(), self.tmp.fetch_add(1, Ordering::Relaxed)));
        std::fs::write(&tmp, entry_text(self.build, digest, label, t))
            .and_then(|_| std::fs::rename(&tmp, &path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                format!("{}: cannot write: {e}", path.display())
            })?;
        if !replacing {
            self.entries.fetch_add(1, Ordering::Relaxed);
        }
        self.stored.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// What this process did with the cache, as a line: `op cache DIR: R program times read,
    /// S simulated and stored`.
    pub fn summary(&self) -> String {
        format!(
            "op cache {}: {} program times read, {} simulated and stored",
            self.root.display(),
            self.read.load(Ordering::Relaxed),
            self.stored.load(Ordering::Relaxed)
        )
    }
}

/// Entries under `root` (`xx/*.op`).
fn count_entries(root: &Path) -> u64 {
    let Ok(dirs) = std::fs::read_dir(root) else { return 0 };
    dirs.filter_map(Result::ok)
        .filter_map(|d| std::fs::read_dir(d.path()).ok())
        .map(|files| {
            files.filter_map(Result::ok).filter(|f| f.file_name().to_string_lossy().ends_with(".op")).count() as u64
        })
        .sum()
}

/// An entry's text.
pub fn entry_text(build: u128, digest: u128, label: &str, t: Timing) -> String {
    let label: String =
        label.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').take(64).collect();
    let Timing { end: ps, head, tail } = t;
    let body = format!(
        "trnsim op cache {VERSION}\nbuild {build:032x}\ndigest {digest:032x}\nlabel {label}\nps {ps}\nhead {head}\ntail {tail}\n"
    );
    format!("{body}check {:016x}\n", XxHash3_64::oneshot(body.as_bytes()))
}

type Bad = (usize, usize, &'static str, String);

/// The time of an entry's text, checked against the build and digest expected.
fn parse(text: &str, build: u128, digest: u128) -> Result<Timing, Bad> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let want = ["trnsim op cache", "build", "digest", "label", "ps", "head", "tail", "check"];
    if lines.len() != want.len() || !text.ends_with('\n') {
        let n = lines.len().clamp(1, want.len());
        return Err((n, 1, "entry", format!("{} lines, not the {} of an entry", lines.len(), want.len())));
    }
    let value = |i: usize| -> Result<&str, Bad> {
        let l = lines[i].trim_end_matches('\n');
        let field = want[i];
        l.strip_prefix(field)
            .and_then(|v| v.strip_prefix(' '))
            .ok_or_else(|| (i + 1, 1, field, format!("the line must start {field:?}")))
    };
    let col = want[4].len() + 2;
    if value(0)? != VERSION.to_string() {
        return Err((1, want[0].len() + 2, "version", format!("not version {VERSION}")));
    }
    let hex = |i: usize, expect: u128| -> Result<(), Bad> {
        let v = value(i)?;
        match u128::from_str_radix(v, 16) {
            Ok(x) if v.len() == 32 && x == expect => Ok(()),
            Ok(_) if v.len() == 32 => {
                Err((i + 1, want[i].len() + 2, want[i], "does not match the one expected".into()))
            }
            _ => Err((i + 1, want[i].len() + 2, want[i], "not 32 hex digits".into())),
        }
    };
    hex(1, build)?;
    hex(2, digest)?;
    value(3)?;
    let limit = crate::run::KERNEL_TIME_LIMIT.as_ps();
    let ps = match value(4)?.parse::<u64>() {
        Ok(v) if (1..=limit).contains(&v) => v,
        _ => return Err((5, col, "ps", format!("not a time of 1..={limit} ps"))),
    };
    let head = match value(5)?.parse::<u64>() {
        Ok(v) if v <= ps => v,
        _ => return Err((6, want[5].len() + 2, "head", format!("not a time of 0..={ps} ps (the entry's ps)"))),
    };
    let tail = match value(6)?.parse::<u64>() {
        Ok(v) if v <= ps - head => v,
        _ => return Err((7, want[6].len() + 2, "tail", format!("not a time of 0..={} ps (ps - head)", ps - head))),
    };
    let body: String = lines[..7].concat();
    let check = value(7)?;
    if check != format!("{:016x}", XxHash3_64::oneshot(body.as_bytes())) {
        return Err((8, want[7].len() + 2, "check", "does not match the entry's lines (a damaged entry)".into()));
    }
    Ok(Timing { end: ps, head, tail })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("trnsim-opcache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn an_entry_reads_back_and_a_damaged_one_is_refused_located() {
        let dir = scratch("roundtrip");
        let c = DiskCache::open_for(&dir, "--op-cache", 7).unwrap();
        let d = c.digest("chip", "gemm", &["a".into(), "b".into()]);
        assert_ne!(d, c.digest("chip", "gemm", &["ab".into()]), "texts are delimited");
        assert_eq!(c.lookup(d), Found::Missing);
        let t = |end| Timing { end, head: 1_854_000.min(end), tail: 0 };
        c.store(d, "gemm", Timing { end: 16_152_000, head: 1_854_000, tail: 1_402_000 }).unwrap();
        assert_eq!(c.lookup(d), Found::Time(Timing { end: 16_152_000, head: 1_854_000, tail: 1_402_000 }));
        let p = c.path(d);
        let good = std::fs::read_to_string(&p).unwrap();
        for (bad, want) in [
            (good.replace("ps 16152000", "ps 16152001"), ":8:7: check:"),
            (good.replace("ps 16152000", "ps 0"), ":5:4: ps:"),
            (good.replace("head 1854000", "head 16152001"), ":6:6: head:"),
            (good.replace("tail 1402000", "tail 14298001"), ":7:6: tail:"),
            (good.replace("trnsim op cache 2", "trnsim op cache 9"), ":1:17: version:"),
            (good.lines().take(3).collect::<Vec<_>>().join("\n"), ":3:1: entry:"),
            ("\u{0}\u{1}".repeat(10), ":1:1: entry:"),
        ] {
            std::fs::write(&p, &bad).unwrap();
            match c.lookup(d) {
                Found::Bad(e) => assert!(e.contains(want), "{e} lacks {want}"),
                f => panic!("{bad:?} read as {f:?}"),
            }
        }
        // Another build's entry, or another digest's, copied over this one.
        let other = DiskCache::open_for(&dir, "--op-cache", 8).unwrap();
        std::fs::write(&p, entry_text(8, d, "gemm", t(5))).unwrap();
        assert!(matches!(c.lookup(d), Found::Bad(e) if e.contains(":2:7: build:")));
        assert_eq!(other.lookup(d), Found::Time(t(5)));
        std::fs::write(&p, entry_text(7, d ^ 1, "gemm", t(5))).unwrap();
        assert!(matches!(c.lookup(d), Found::Bad(e) if e.contains(":3:8: digest:")));
        // Not a regular file, or too large.
        std::fs::remove_file(&p).unwrap();
        std::fs::create_dir(&p).unwrap();
        assert!(matches!(c.lookup(d), Found::Bad(e) if e.contains(":1:1: entry: not a regular file")));
        std::fs::remove_dir(&p).unwrap();
        std::fs::write(&p, "x".repeat(5000)).unwrap();
        assert!(matches!(c.lookup(d), Found::Bad(_)));
        // Storing again replaces the bad entry.
        c.store(d, "gemm", t(42)).unwrap();
        assert_eq!(c.lookup(d), Found::Time(t(42)));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_is_not_a_cache_directory() {
        let dir = scratch("file");
        std::fs::write(&dir, "x").unwrap();
        let e = DiskCache::open_for(&dir, "--op-cache", 1).unwrap_err();
        assert!(e.starts_with("--op-cache ") && e.ends_with("is not a directory"), "{e}");
        let _ = std::fs::remove_file(&dir);
    }
}
