//! Sizes that cannot fit in memory are refused before anything is built, with the estimate.

pub use trnsim_kernel::host::{check_fits, memory_budget};

/// A byte count: digits with an optional K, M or G (binary) suffix, optionally followed by B
/// or iB ("1G", "64KiB", "4096").
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num.parse().map_err(|_| format!("{s:?} is not a size (e.g. 8, 64K, 1M, 1G)"))?;
    let shift = match unit.trim_end_matches("iB").trim_end_matches('B') {
        "" => 0,
        "K" | "k" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (allowed: K, M, G, T, with an optional B or iB)")),
    };
    n.checked_mul(1u64 << shift).filter(|&v| v > 0).ok_or_else(|| format!("{s:?} is out of range (1 B .. 16 EiB)"))
}
