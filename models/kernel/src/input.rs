//! Reading the files trnsim is given (system, chip, UltraServer, topology, workload and
//! program files, port traces, stimulus files): every one is read whole, so each read is
//! bounded. A file larger than [`MAX_INPUT_BYTES`], or a source that never ends (a device such
//! as `/dev/zero`, a pipe), is refused by name instead of read until memory runs out.

use std::io::Read;
use std::path::Path;

/// The most bytes trnsim reads of one input file: 256 MiB (a workload of the format's largest
/// graph, 2^20 nodes, written out in JSON, fits).
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// The bytes of `path`, at most [`MAX_INPUT_BYTES`]: a larger regular file is refused before
/// it is read, any other source after that many bytes.
pub fn read_bytes(path: &Path) -> std::io::Result<Vec<u8>> {
    read_bytes_within(path, MAX_INPUT_BYTES)
}

/// The text of `path` (UTF-8), at most [`MAX_INPUT_BYTES`]; see [`read_bytes`].
pub fn read_text(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_bytes(path)?)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"))
}

fn read_bytes_within(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let too_large =
        || std::io::Error::other(format!("larger than {} MiB, the most trnsim reads of an input file", limit >> 20));
    let f = std::fs::File::open(path)?;
    let meta = f.metadata()?;
    if meta.is_file() && meta.len() > limit {
        return Err(too_large());
    }
    let mut out = Vec::new();
    f.take(limit + 1).read_to_end(&mut out)?;
    if out.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_that_never_ends_is_refused_after_the_limit() {
        let e = read_bytes_within(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(e.to_string(), "larger than 1 MiB, the most trnsim reads of an input file");
    }

    #[test]
    fn a_file_within_the_limit_is_read_whole_and_a_larger_one_refused_unread() {
        let dir = std::env::temp_dir().join(format!("trnsim-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("f.txt");
        std::fs::write(&p, vec![b'a'; 3 << 20]).unwrap();
        assert_eq!(read_text(&p).unwrap().len(), 3 << 20);
        assert!(read_bytes_within(&p, 2 << 20).unwrap_err().to_string().starts_with("larger than 2 MiB"));
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        assert_eq!(read_text(&p).unwrap_err().kind(), std::io::ErrorKind::InvalidData);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
