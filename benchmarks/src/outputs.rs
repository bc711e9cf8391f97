//! Output paths of the CLI: checked against the inputs and against each other before anything
//! is opened for writing, and written under a temporary name that is renamed to the final one
//! only when the output is complete, so an interrupted run never leaves a truncated file under
//! the name asked for (and never destroys an input). Files whose names a run makes up (plots in
//! a `--plots` directory) are written with [`write_plot`], which refuses every path the command
//! line named.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// A path named on the command line, with the flag that named it (for errors).
#[derive(Clone, Debug)]
pub struct Named<'a> {
    /// The flag, e.g. `--trace` (or `PROGRAM` for a positional argument).
    pub flag: &'a str,
    /// The path as given.
    pub path: &'a Path,
}

/// Paths named on the command line with their flags: (inputs, outputs).
pub type IoPaths = (Vec<(&'static str, PathBuf)>, Vec<(&'static str, PathBuf)>);

/// Shorthand for a [`Named`] path.
pub fn named<'a>(flag: &'a str, path: &'a Path) -> Named<'a> {
    Named { flag, path }
}

/// The identity of a path for comparison: (device, inode) when it exists, else its parent
/// directory's canonical form joined with its file name (so `./x` and `x` compare equal).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Identity {
    File(u64, u64),
    Path(PathBuf),
}

fn identity(p: &Path) -> Identity {
    #[cfg(unix)]
    if let Ok(m) = std::fs::metadata(p) {
        use std::os::unix::fs::MetadataExt;
        return Identity::File(m.dev(), m.ino());
    }
    if let Ok(c) = std::fs::canonicalize(p) {
        return Identity::Path(c);
    }
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let dir = std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
    Identity::Path(p.file_name().map_or(dir.clone(), |f| dir.join(f)))
}

/// Checks that no output is the same file as an input or as another output, that no output is
/// an existing directory, and that every output's directory exists. The error is one line
/// naming both flags; nothing has been opened for writing yet.
///
/// The paths checked (inputs and outputs) are kept for [`write_plot`], which refuses them.
pub fn check(inputs: &[Named<'_>], outputs: &[Named<'_>]) -> Result<(), String> {
    let named = inputs.iter().chain(outputs).map(|n| (n.flag.to_string(), n.path.to_path_buf()));
    *NAMED.lock().unwrap_or_else(|e| e.into_inner()) = named.collect();
    let ids: Vec<Identity> = outputs.iter().map(|o| identity(o.path)).collect();
    for (i, o) in outputs.iter().enumerate() {
        if is_stdout(o.path) {
            return Err(stdout_refused(o.flag));
        }
        if o.path.is_dir() {
            return Err(format!("{} {}: is a directory (allowed: a file path)", o.flag, o.path.display()));
        }
        if o.path.file_name().is_none() {
            return Err(format!("{} {}: not a file name (allowed: a file path)", o.flag, o.path.display()));
        }
        if let Some(d) = o.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !d.is_dir() {
                return Err(format!("{} {}: directory {} does not exist", o.flag, o.path.display(), d.display()));
            }
        }
        for inp in inputs {
            if identity(inp.path) == ids[i] {
                return Err(format!(
                    "{} {}: is the same file as input {} {} (an output never overwrites an input)",
                    o.flag,
                    o.path.display(),
                    inp.flag,
                    inp.path.display()
                ));
            }
        }
        for (j, p) in outputs[..i].iter().enumerate() {
            if ids[j] == ids[i] {
                return Err(format!(
                    "{} {}: is the same file as {} {} (each output needs its own file)",
                    o.flag,
                    o.path.display(),
                    p.flag,
                    p.path.display()
                ));
            }
        }
    }
    Ok(())
}

/// Whether an output path is `-`, which many tools read as standard output: no output of
/// trnsim is written there (every output is staged and renamed into place), so `-` is
/// refused for every output flag rather than written as a file called `-`.
fn is_stdout(p: &Path) -> bool {
    p.as_os_str() == "-"
}

fn stdout_refused(flag: &str) -> String {
    format!("{flag} -: standard output is not an output here (allowed: a file path; `./-` for a file named `-`)")
}

/// Checks a directory output (`--plots DIR`): an existing directory, or a path to make one
/// at (its files are written by [`write_plot`]); an existing file there is refused before
/// anything runs, never replaced.
pub fn check_dir(flag: &str, dir: &Path) -> Result<(), String> {
    if is_stdout(dir) {
        return Err(stdout_refused(flag));
    }
    if dir.exists() && !dir.is_dir() {
        return Err(format!("{flag} {}: is a file (allowed: a directory, made if missing)", dir.display()));
    }
    Ok(())
}

/// An output being written under a temporary name in its final directory (same file system, so
/// the rename is atomic). [`Staged::commit`] renames it to the final name; dropping it
/// uncommitted removes the temporary file.
#[derive(Debug)]
pub struct Staged {
    tmp: PathBuf,
    dest: PathBuf,
    done: bool,
}

impl Staged {
    /// A temporary name next to `dest` that keeps its extension (writers pick their format by
    /// extension): `.DEST_NAME.trnsim-PID-N.partial.EXT`. A `dest` that exists and is not a
    /// regular file (`/dev/stdout`, a pipe) is written directly.
    pub fn new(dest: &Path) -> Staged {
        if std::fs::metadata(dest).is_ok_and(|m| !m.is_file()) {
            return Staged { tmp: dest.to_path_buf(), dest: dest.to_path_buf(), done: true };
        }
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let name = dest.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let ext = dest.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
        let tmp = dest.with_file_name(format!(".{name}.trnsim-{}-{n}.partial{ext}", std::process::id()));
        Staged { tmp, dest: dest.to_path_buf(), done: false }
    }

    /// Where to write.
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// The final name.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Renames the temporary file to the final name.
    pub fn commit(mut self) -> Result<(), String> {
        if self.done {
            return Ok(()); // written in place
        }
        self.done = true;
        std::fs::rename(&self.tmp, &self.dest).map_err(|e| {
            let _ = std::fs::remove_file(&self.tmp);
            format!("{}: cannot write: {e}", self.dest.display())
        })
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Every path the command line named, with its flag, as [`check`] last saw them.
static NAMED: Mutex<Vec<(String, PathBuf)>> = Mutex::new(Vec::new());

/// Writes a file whose name the run made up (a plot in a `--plots` directory) like
/// [`write_atomic`], unless it is the same file as a path the command line named (an input,
/// or an output of its own): those are never overwritten, and the error names the flag.
pub fn write_plot(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    let id = identity(dest);
    let named = NAMED.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|(_, p)| identity(p) == id).cloned();
    if let Some((flag, p)) = named {
        return Err(io::Error::other(format!(
            "is the same file as {flag} {} (a plot never overwrites a file named on the command line)",
            p.display()
        )));
    }
    write_atomic(dest, bytes)
}

/// Writes `bytes` to `dest` atomically: a temporary file in the same directory, then a rename.
pub fn write_atomic(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    let s = Staged::new(dest);
    std::fs::write(s.path(), bytes)?;
    s.commit().map_err(io::Error::other)
}

/// `name` (from an input file: a workload's name) made safe as one file name in a directory:
/// every character but ASCII letters, digits, `-`, `_` and `.` becomes `_`, a leading `.`
/// too, cut to 100 characters; so `../x` or a control character never leaves the directory
/// or reaches a file name.
pub fn file_safe(name: &str) -> String {
    let mut out: String = name
        .chars()
        .take(100)
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' })
        .collect();
    if out.is_empty() || out.starts_with('.') {
        out.insert(0, '_');
    }
    out
}

/// A path the user gave, as a message quotes it: control characters escaped, cut to a few
/// hundred characters.
pub fn shown(p: &Path) -> String {
    trnsim_system::doc::suggest::clip(&p.to_string_lossy())
}

/// `doc` as pretty JSON text with a final newline, every `-0.0` written `0.0` (a zero is
/// never signed in a result).
pub fn json_text<T: serde::Serialize + ?Sized>(doc: &T) -> Result<String, String> {
    let mut out = Vec::new();
    to_json_writer(&mut out, doc)?;
    out.push(b'\n');
    String::from_utf8(out).map_err(|e| e.to_string())
}

/// Writes `doc` to `w` as pretty JSON, every `-0.0` written `0.0`.
pub fn to_json_writer<W: io::Write, T: serde::Serialize + ?Sized>(w: W, doc: &T) -> Result<(), String> {
    let mut ser = serde_json::Serializer::with_formatter(w, Unsigned(serde_json::ser::PrettyFormatter::new()));
    doc.serialize(&mut ser).map_err(|e| e.to_string())
}

/// serde_json's pretty formatter with signed zeros written unsigned.
struct Unsigned<'a>(serde_json::ser::PrettyFormatter<'a>);

macro_rules! delegate {
    ($($name:ident($($arg:ident: $t:ty),*)),* $(,)?) => {
        $(fn $name<W: ?Sized + io::Write>(&mut self, w: &mut W $(, $arg: $t)*) -> io::Result<()> {
            self.0.$name(w $(, $arg)*)
        })*
    };
}

impl serde_json::ser::Formatter for Unsigned<'_> {
    delegate!(
        begin_array(),
        end_array(),
        begin_array_value(first: bool),
        end_array_value(),
        begin_object(),
        end_object(),
        begin_object_key(first: bool),
        begin_object_value(),
        end_object_value(),
    );

    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, v: f64) -> io::Result<()> {
        self.0.write_f64(w, v + 0.0)
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, v: f32) -> io::Result<()> {
        self.0.write_f32(w, v + 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_file_is_refused_and_distinct_files_pass() {
        let dir = std::env::temp_dir().join(format!("trnsim-outputs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.json");
        std::fs::write(&a, "x").unwrap();
        let dotted = dir.join(".").join("a.json");
        let e = check(&[named("--config", &a)], &[named("--trace", &dotted)]).unwrap_err();
        assert!(e.contains("same file as input --config"), "{e}");
        let b = dir.join("b.json");
        let e = check(&[], &[named("--trace", &b), named("--json", &b)]).unwrap_err();
        assert!(e.contains("--json") && e.contains("--trace"), "{e}");
        assert!(check(&[named("--config", &a)], &[named("--json", &b)]).is_ok());
        let e = check(&[], &[named("--profile", &dir)]).unwrap_err();
        assert!(e.contains("is a directory"), "{e}");
        for flag in ["--json", "--trace"] {
            let e = check(&[], &[named(flag, Path::new("-"))]).unwrap_err();
            assert!(e.starts_with(&format!("{flag} -: standard output")), "{e}");
        }
        assert!(check_dir("--plots", Path::new("-")).unwrap_err().starts_with("--plots -: standard output"));
        write_atomic(&b, b"ok").unwrap();
        let doc = serde_json::json!({ "memory_us": -0.0, "xs": [-0.0f32, 1.5] });
        assert_eq!(json_text(&doc).unwrap().matches("-0").count(), 0, "{}", json_text(&doc).unwrap());
        assert_eq!(file_safe("../../etc/x\u{1b}[31m"), "_.._.._etc_x__31m");
        assert_eq!(file_safe(""), "_");
        assert_eq!(std::fs::read(&b).unwrap(), b"ok");
        let n = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(n, 2, "no temporary file is left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
