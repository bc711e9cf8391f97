//! Sizes that cannot fit in memory are refused before anything is built, with the estimate.

pub use trnsim_kernel::host::{check_fits, memory_budget};

/// A byte count: digits with an optional K, M, G or T (binary) unit, alone or followed by B
/// or iB ("1G", "64KiB", "2MB", "4096", "4B"); anything else after the digits is refused.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num.parse().map_err(|_| format!("{s:?} is not a size (e.g. 8, 64K, 1M, 1G)"))?;
    let shift = match unit {
        "" | "B" => 0,
        "K" | "k" | "KB" | "kB" | "KiB" => 10,
        "M" | "MB" | "MiB" => 20,
        "G" | "GB" | "GiB" => 30,
        "T" | "TB" | "TiB" => 40,
        _ => {
            let unit = trnsim_system::doc::suggest::clip(unit);
            return Err(format!("{s:?}: unknown unit {unit:?} (allowed: K, M, G, T, each alone or with B or iB)"));
        }
    };
    n.checked_mul(1u64 << shift).filter(|&v| v > 0).ok_or_else(|| format!("{s:?} is out of range (1 B .. 16 EiB)"))
}
