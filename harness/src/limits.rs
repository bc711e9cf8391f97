//! Sizes that cannot fit in memory are refused before anything is built, with the estimate.

/// The memory a run may plan to use: the host's available memory (Linux `MemAvailable`), or
/// 8 GiB where that cannot be read.
pub fn memory_budget() -> u64 {
    let avail = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    });
    avail.map_or(8 << 30, |kib| kib.saturating_mul(1024))
}

/// Refuses `what` if its estimated size `bytes` exceeds [`memory_budget`]: a one-line message
/// with the estimate and the budget.
pub fn check_fits(what: &str, bytes: u64) -> Result<(), String> {
    let budget = memory_budget();
    if bytes > budget {
        return Err(format!(
            "{what} needs about {:.1} GiB of memory, more than the {:.1} GiB available",
            bytes as f64 / (1u64 << 30) as f64,
            budget as f64 / (1u64 << 30) as f64
        ));
    }
    Ok(())
}

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
