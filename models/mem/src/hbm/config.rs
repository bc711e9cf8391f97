//! Controller parameters: queue sizes, intake buffers, write-drain watermarks, page policy,
//! scheduler, refresh.

use serde::{Deserialize, Serialize};

/// Row-buffer policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PagePolicy {
    /// Leave rows open after an access; precharge only on a conflict (or for refresh).
    Open,
    /// Close the row with RDA/WRA when no other queued request of the active queue hits it.
    Closed,
}

/// Parameters of every pseudo-channel controller of a stack. Defaults follow common practice
/// (Ramulator 2 and DRAMsim3 default to 32-entry queues; 64 here, because HBM3 needs two row
/// segments of a stream in the queue to overlap the next ACT with the current reads; see
/// docs/validation.md); they are not published for Trainium.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ControllerConfig {
    /// Read queue entries per pseudo-channel.
    pub read_queue: u32,
    /// Write queue entries per pseudo-channel.
    pub write_queue: u32,
    /// Enter write-drain mode when this many writes are queued (or when no reads wait).
    pub write_high: u32,
    /// Leave write-drain mode when writes fall to this many (and reads wait).
    pub write_low: u32,
    /// Row-buffer policy.
    pub page_policy: PagePolicy,
    /// Scheduler name (see [`crate::hbm::sched::SCHEDULERS`]).
    pub scheduler: String,
    /// Refresh policy name (see [`crate::hbm::refresh::POLICIES`]).
    pub refresh: String,
    /// How the pseudo-channels' refresh schedules line up: `staggered` (spread over the
    /// interval; the default) or `simultaneous` (all in the same cycle, as Ramulator 2 and
    /// DRAMsim3 refresh).
    pub refresh_schedule: crate::hbm::refresh::RefreshSchedule,
    /// Address map (see [`crate::hbm::AddressMap`]).
    pub address_map: String,
    /// Requests per pseudo-channel that wait, in arrival order, for a slot in its queue
    /// (0..=4096): the stack's intake buffer in front of each controller (the scheduler does
    /// not see it). A request whose queue is full goes to its buffer, so a port blocks only
    /// when its head request finds both full. 0: a full queue blocks the port for every
    /// channel (head-of-line, as a trace front end that retries its head request does).
    pub intake_buffer: u32,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            read_queue: 64,
            write_queue: 64,
            write_high: 48,
            write_low: 16,
            page_policy: PagePolicy::Open,
            scheduler: "frfcfs".into(),
            refresh: "per-bank".into(),
            refresh_schedule: crate::hbm::refresh::RefreshSchedule::Staggered,
            address_map: crate::hbm::AddressMap::DEFAULT.into(),
            intake_buffer: 128,
        }
    }
}

impl ControllerConfig {
    /// Checks sizes and names; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        if self.read_queue == 0 || self.read_queue > 4096 {
            return Err(format!("read_queue: {} is outside 1..=4096", self.read_queue));
        }
        if self.write_queue == 0 || self.write_queue > 4096 {
            return Err(format!("write_queue: {} is outside 1..=4096", self.write_queue));
        }
        if self.write_high == 0 || self.write_high > self.write_queue {
            return Err(format!("write_high: {} must be in 1..=write_queue ({})", self.write_high, self.write_queue));
        }
        if self.write_low >= self.write_high {
            return Err(format!("write_low: {} must be below write_high ({})", self.write_low, self.write_high));
        }
        if self.intake_buffer > 4096 {
            return Err(format!("intake_buffer: {} is outside 0..=4096", self.intake_buffer));
        }
        if crate::hbm::sched::by_name(&self.scheduler).is_none() {
            let names: Vec<_> = crate::hbm::sched::SCHEDULERS.iter().map(|s| s.0).collect();
            return Err(format!("scheduler: unknown `{}` (known: {})", self.scheduler, names.join(", ")));
        }
        if !crate::hbm::refresh::POLICIES.iter().any(|p| p.0 == self.refresh) {
            let names: Vec<_> = crate::hbm::refresh::POLICIES.iter().map(|s| s.0).collect();
            return Err(format!("refresh: unknown `{}` (known: {})", self.refresh, names.join(", ")));
        }
        Ok(())
    }
}
