//! What the host can give a run: its cores, and its memory (sizes that cannot fit in memory
//! are refused before anything is built, with the estimate; shared by every crate that builds
//! something whose size a user chooses).

/// The host's cores, as `std::thread::available_parallelism` counts them (the process's CPU
/// affinity included, so `taskset -c 1` gives 1); 1 where that cannot be read.
pub fn cores() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(u32::MAX))
}

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
