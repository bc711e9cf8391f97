//! The organization of an HBM stack: how many of each level, and the width of an access.

use serde::{Deserialize, Serialize};

/// The shape of one HBM stack, as data (JESD235 / JESD238 organization tables).
///
/// Levels, outermost first: channel, pseudo-channel, stack ID (SID, the die group of a 3D stack),
/// bank group, bank, row, column. A *column* is one `dq_bits`-wide word; one read or write burst
/// (`burst_length` beats) moves `dq_bits * burst_length / 8` bytes, the request granularity.
///
/// Leaves out: ECC bits, the channel's command-address pins (modeled as buses in the controller),
/// and redundancy rows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Organization {
    /// Independent channels per stack (HBM2: 8, HBM3/3E: 16).
    pub channels: u32,
    /// Pseudo-channels per channel (2 for HBM2 pseudo-channel mode and HBM3). Each has its own
    /// data bus, banks and controller; the two share the channel's command buses.
    pub pseudo_channels: u32,
    /// Stack IDs per pseudo-channel (1 for 4-high, 2 for 8-high, 3 for 12-high, 4 for 16-high).
    pub sids: u32,
    /// Bank groups per SID.
    pub bank_groups: u32,
    /// Banks per bank group.
    pub banks_per_group: u32,
    /// Rows per bank (need not be a power of two: 24 Gb dies have 3 * 2^13).
    pub rows: u32,
    /// Columns (dq-wide words) per row.
    pub columns: u32,
    /// Beats per burst (BL4 for HBM2 pseudo-channel mode, BL8 for HBM3).
    pub burst_length: u32,
    /// Data bus width of one pseudo-channel, in bits.
    pub dq_bits: u32,
}

impl Organization {
    /// Bytes moved by one read or write burst: the request granularity.
    pub fn access_bytes(&self) -> u32 {
        self.dq_bits * self.burst_length / 8
    }
    /// Bursts per row (one row = `columns` words).
    pub fn bursts_per_row(&self) -> u32 {
        self.columns / self.burst_length
    }
    /// Banks in one pseudo-channel (all SIDs, bank groups and banks).
    pub fn banks_per_pc(&self) -> u32 {
        self.sids * self.bank_groups * self.banks_per_group
    }
    /// Bank groups in one pseudo-channel (counting each SID's separately).
    pub fn groups_per_pc(&self) -> u32 {
        self.sids * self.bank_groups
    }
    /// Pseudo-channels in the stack.
    pub fn pcs(&self) -> u32 {
        self.channels * self.pseudo_channels
    }
    /// Capacity of one pseudo-channel in bytes.
    pub fn pc_bytes(&self) -> u64 {
        self.banks_per_pc() as u64 * self.rows as u64 * self.columns as u64 * self.dq_bits as u64 / 8
    }
    /// Capacity of the stack in bytes.
    pub fn stack_bytes(&self) -> u64 {
        self.pc_bytes() * self.pcs() as u64
    }
    /// Capacity of one channel in bits (JEDEC's "channel density", which selects tRFC).
    pub fn channel_bits(&self) -> u64 {
        self.pc_bytes() * 8 * self.pseudo_channels as u64
    }

    /// Checks every count is non-zero and the burst divides the row; names the bad field.
    pub fn validate(&self) -> Result<(), String> {
        let fields = [
            ("channels", self.channels),
            ("pseudo_channels", self.pseudo_channels),
            ("sids", self.sids),
            ("bank_groups", self.bank_groups),
            ("banks_per_group", self.banks_per_group),
            ("rows", self.rows),
            ("columns", self.columns),
            ("burst_length", self.burst_length),
            ("dq_bits", self.dq_bits),
        ];
        for (name, v) in fields {
            if v == 0 {
                return Err(format!("{name}: must be at least 1"));
            }
        }
        if !self.columns.is_multiple_of(self.burst_length) {
            return Err(format!("columns: {} is not a multiple of burst_length {}", self.columns, self.burst_length));
        }
        if !(self.dq_bits * self.burst_length).is_multiple_of(8) {
            return Err("dq_bits: dq_bits * burst_length must be a whole number of bytes".into());
        }
        if self.pseudo_channels > 4 {
            return Err(format!("pseudo_channels: {} (at most 4 supported)", self.pseudo_channels));
        }
        if self.banks_per_pc() > 64 {
            return Err(format!("sids: {} banks per pseudo-channel (at most 64 supported)", self.banks_per_pc()));
        }
        Ok(())
    }
}

/// Where one burst lives: every level's index, decoded from a byte address by an
/// [`crate::hbm::AddressMap`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Location {
    /// Stack (for multi-stack memories; 0 for one stack).
    pub stack: u32,
    /// Channel within the stack.
    pub channel: u32,
    /// Pseudo-channel within the channel.
    pub pc: u32,
    /// Stack ID within the pseudo-channel.
    pub sid: u32,
    /// Bank group within the SID.
    pub bank_group: u32,
    /// Bank within the bank group.
    pub bank: u32,
    /// Row within the bank.
    pub row: u32,
    /// Burst index within the row (column / burst_length).
    pub column: u32,
}

impl Location {
    /// Every level's index, by [`crate::hbm::mapping::Level`] (the order of the fields).
    pub fn levels(&self) -> [u32; 8] {
        [self.stack, self.channel, self.pc, self.sid, self.bank_group, self.bank, self.row, self.column]
    }
    /// The pseudo-channel's index within its stack (channel-major).
    pub fn pc_index(&self, org: &Organization) -> u32 {
        self.channel * org.pseudo_channels + self.pc
    }
    /// The bank's flat index within its pseudo-channel (SID-major, then group, then bank).
    pub fn bank_index(&self, org: &Organization) -> u32 {
        (self.sid * org.bank_groups + self.bank_group) * org.banks_per_group + self.bank
    }
    /// The bank group's flat index within its pseudo-channel (SID-major).
    pub fn group_index(&self, org: &Organization) -> u32 {
        self.sid * org.bank_groups + self.bank_group
    }
}
