//! Address mapping as data: which bits of a byte address select each level.
//!
//! A map is written MSB-first as level names joined by `-`, e.g. `ro-ba-bg-sid-pc-ch-co`
//! (a row's bursts together, rows rotating over channels): the burst offset is always lowest, then the
//! rightmost level, and so on. Levels: `st` (stack), `ch` (channel), `pc`, `sid`, `bg` (bank
//! group), `ba` (bank), `ro` (row), `co` (burst within the row). Counts need not be powers of two
//! (mixed radix), though powers of two decode with shifts. An optional XOR hash folds the low
//! bits of the row into the channel, pseudo-channel or bank-group index (`+xor` suffix: e.g.
//! `ro-ba-bg-sid-pc-ch-co+xor`), spreading strided streams across channels. The reference tools'
//! maps are accepted by name (`RoBaRaCoCh`, `rorabgbachco`: [`AddressMap::TOOL_MAPS`]).

use crate::hbm::org::{Location, Organization};
use serde::Serialize;
use std::fmt;

/// One addressable level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Level {
    /// Stack in a multi-stack memory.
    Stack,
    /// Channel.
    Channel,
    /// Pseudo-channel.
    Pc,
    /// Stack ID.
    Sid,
    /// Bank group.
    BankGroup,
    /// Bank.
    Bank,
    /// Row.
    Row,
    /// Burst within the row.
    Column,
}

impl Level {
    fn parse(s: &str) -> Option<Level> {
        Some(match s {
            "st" => Level::Stack,
            "ch" => Level::Channel,
            "pc" => Level::Pc,
            "sid" => Level::Sid,
            "bg" => Level::BankGroup,
            "ba" => Level::Bank,
            "ro" => Level::Row,
            "co" => Level::Column,
            _ => return None,
        })
    }
}

/// A bad address-map string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapError(pub String);

impl fmt::Display for MapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "address map: {}", self.0)
    }
}
impl std::error::Error for MapError {}

#[derive(Clone, Copy, Debug)]
struct Field {
    level: Level,
    count: u64,
    /// log2(count) when count is a power of two.
    shift: Option<u32>,
}

/// Decodes byte addresses into [`Location`]s. Built once; decoding allocates nothing.
#[derive(Clone, Debug)]
pub struct AddressMap {
    text: String,
    /// Fields LSB-first.
    fields: Vec<Field>,
    offset_bits: u32,
    xor: bool,
    channels: u32,
    capacity: u64,
}

impl AddressMap {
    /// The default map: `ro-sid-ba-co-bg-pc-ch`: consecutive bursts rotate over channels,
    /// pseudo-channels and bank groups (so a stream's back-to-back reads on one pseudo-channel
    /// alternate bank groups and are spaced tCCDS, not tCCDL), then walk a row's columns, then
    /// move to the next bank and SID (SID switches cost tCCDR, so they come last).
    pub const DEFAULT: &'static str = "ro-sid-ba-co-bg-pc-ch";
    /// Row-contiguous map `ro-ba-bg-sid-pc-ch-co` (like DRAMsim3's "rorabgbachco", which is
    /// `ro-sid-bg-ba-pc-ch-co`): a row's bursts are contiguous; consecutive rows rotate over
    /// channels, then pseudo-channels.
    pub const ROW_CONTIGUOUS: &'static str = "ro-ba-bg-sid-pc-ch-co";

    /// Reference tools' address maps by name: (name, the same map in this language, whose
    /// and how). Either spelling is accepted wherever a map is.
    pub const TOOL_MAPS: &'static [(&'static str, &'static str, &'static str)] = &[
        (
            "RoBaRaCoCh",
            "ro-ba-bg-sid-pc-co-ch",
            "Ramulator 2.1: its CacheLineInterleave channel mapper takes the channel from the bits just above the 32 B burst, then RoBaRaCoCh maps column, pseudo-channel, SID, bank group, bank, row from the LSB",
        ),
        (
            "rorabgbachco",
            "ro-sid-bg-ba-pc-ch-co",
            "DRAMsim3 with each pseudo-channel as one of its channels (channel index = pc x channels + ch) and SIDs as ranks: row, rank, bank group, bank, channel, column from the MSB",
        ),
    ];

    /// Parses `text` (a level string, or a name of [`AddressMap::TOOL_MAPS`]) for `stacks`
    /// stacks of organization `org`.
    pub fn new(text: &str, org: &Organization, stacks: u32) -> Result<AddressMap, MapError> {
        let text = Self::TOOL_MAPS.iter().find(|m| m.0 == text).map_or(text, |m| m.1);
        let (order, xor) = match text.strip_suffix("+xor") {
            Some(o) => (o, true),
            None => (text, false),
        };
        let mut fields = Vec::new();
        let mut seen = Vec::new();
        for name in order.split('-').rev() {
            let level = Level::parse(name).ok_or_else(|| {
                MapError(format!("unknown level `{name}` in `{text}` (levels: st ch pc sid bg ba ro co)"))
            })?;
            if seen.contains(&level) {
                return Err(MapError(format!("level `{name}` appears twice in `{text}`")));
            }
            seen.push(level);
            let count = match level {
                Level::Stack => stacks,
                Level::Channel => org.channels,
                Level::Pc => org.pseudo_channels,
                Level::Sid => org.sids,
                Level::BankGroup => org.bank_groups,
                Level::Bank => org.banks_per_group,
                Level::Row => org.rows,
                Level::Column => org.bursts_per_row(),
            } as u64;
            let shift = count.is_power_of_two().then(|| count.trailing_zeros());
            fields.push(Field { level, count, shift });
        }
        let needed: &[(Level, &str)] = &[
            (Level::Channel, "ch"),
            (Level::Pc, "pc"),
            (Level::Sid, "sid"),
            (Level::BankGroup, "bg"),
            (Level::Bank, "ba"),
            (Level::Row, "ro"),
            (Level::Column, "co"),
        ];
        for (l, n) in needed {
            if !seen.contains(l) {
                return Err(MapError(format!("level `{n}` is missing from `{text}`")));
            }
        }
        if stacks > 1 && !seen.contains(&Level::Stack) {
            return Err(MapError(format!("level `st` is missing from `{text}` ({stacks} stacks)")));
        }
        if xor && !org.channels.is_power_of_two() {
            return Err(MapError(format!("+xor needs a power-of-two channel count, not {}", org.channels)));
        }
        let access = org.access_bytes() as u64;
        if !access.is_power_of_two() {
            return Err(MapError(format!("access size {access} B is not a power of two")));
        }
        let capacity = org.stack_bytes() * stacks as u64;
        Ok(AddressMap {
            text: text.to_string(),
            fields,
            offset_bits: access.trailing_zeros(),
            xor,
            channels: org.channels,
            capacity,
        })
    }

    /// True if the map has a stack level (`st`), i.e. addresses select among several stacks.
    pub fn has_stack_level(&self) -> bool {
        self.fields.iter().any(|f| f.level == Level::Stack)
    }

    /// The map as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Bytes addressable (the stacks' capacity). Addresses wrap modulo this.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Decodes a byte address (taken modulo the capacity).
    #[inline]
    pub fn decode(&self, addr: u64) -> Location {
        let mut v = (addr % self.capacity) >> self.offset_bits;
        let mut loc = Location::default();
        for f in &self.fields {
            let idx = match f.shift {
                Some(s) => {
                    let i = v & (f.count - 1);
                    v >>= s;
                    i
                }
                None => {
                    let i = v % f.count;
                    v /= f.count;
                    i
                }
            } as u32;
            match f.level {
                Level::Stack => loc.stack = idx,
                Level::Channel => loc.channel = idx,
                Level::Pc => loc.pc = idx,
                Level::Sid => loc.sid = idx,
                Level::BankGroup => loc.bank_group = idx,
                Level::Bank => loc.bank = idx,
                Level::Row => loc.row = idx,
                Level::Column => loc.column = idx,
            }
        }
        if self.xor {
            loc.channel ^= loc.row & (self.channels - 1);
        }
        loc
    }

    /// Encodes a location back into the lowest byte address that decodes to it (inverse of
    /// [`AddressMap::decode`]; used by traffic generators that target a bank or a row).
    pub fn encode(&self, loc: &Location) -> u64 {
        let mut loc = *loc;
        if self.xor {
            loc.channel ^= loc.row & (self.channels - 1);
        }
        let mut v: u64 = 0;
        for f in self.fields.iter().rev() {
            let idx = match f.level {
                Level::Stack => loc.stack,
                Level::Channel => loc.channel,
                Level::Pc => loc.pc,
                Level::Sid => loc.sid,
                Level::BankGroup => loc.bank_group,
                Level::Bank => loc.bank,
                Level::Row => loc.row,
                Level::Column => loc.column,
            } as u64;
            v = v * f.count + idx;
        }
        v << self.offset_bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hbm::presets;

    #[test]
    fn tool_maps_are_their_level_strings() {
        let org = (presets::ALL[1].org)();
        for (name, levels, _) in AddressMap::TOOL_MAPS {
            let (a, b) = (AddressMap::new(name, &org, 1).unwrap(), AddressMap::new(levels, &org, 1).unwrap());
            for addr in (0..1u64 << 20).step_by(32) {
                assert_eq!(a.decode(addr), b.decode(addr), "{name} at {addr:#x}");
            }
        }
        // Ramulator's channel bits sit just above the 32 B burst.
        let m = AddressMap::new("RoBaRaCoCh", &org, 1).unwrap();
        assert_eq!((m.decode(32).channel, m.decode(32 * 16).column), (1, 1));
    }

    #[test]
    fn decode_inverts_encode_on_every_preset_and_map() {
        for p in presets::ALL {
            let org = (p.org)();
            for text in [
                AddressMap::DEFAULT,
                AddressMap::ROW_CONTIGUOUS,
                "ro-ba-bg-sid-pc-ch-co+xor",
                "st-ro-co-ba-bg-sid-pc-ch",
                "RoBaRaCoCh",
                "rorabgbachco",
            ] {
                let stacks = if text.starts_with("st") { 4 } else { 1 };
                let m = AddressMap::new(text, &org, stacks).unwrap();
                let mut a = 0x1234_5678u64;
                for _ in 0..10_000 {
                    a = a.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let addr = ((a >> 7) % m.capacity()) & !(org.access_bytes() as u64 - 1);
                    let loc = m.decode(addr);
                    assert!(loc.row < org.rows && loc.column < org.bursts_per_row());
                    assert_eq!(m.encode(&loc), addr, "{text} {addr:#x} {loc:?}");
                }
            }
        }
    }

    #[test]
    fn row_contiguous_map_keeps_a_row_together_then_rotates_channels() {
        let org = (presets::HBM3_6400.org)();
        let m = AddressMap::new(AddressMap::ROW_CONTIGUOUS, &org, 1).unwrap();
        let a = m.decode(0);
        let b = m.decode(32 * 31);
        assert_eq!((a.channel, a.row, b.channel, b.row, b.column), (0, 0, 0, 0, 31));
        assert_eq!(m.decode(1024).channel, 1);
    }

    #[test]
    fn bad_maps_are_named() {
        let org = (presets::HBM3_6400.org)();
        let e = AddressMap::new("ro-ba-bg-pc-ch-co", &org, 1).unwrap_err();
        assert!(e.0.contains("`sid` is missing"), "{e}");
        let e = AddressMap::new("ro-ba-xx-sid-pc-ch-co", &org, 1).unwrap_err();
        assert!(e.0.contains("unknown level `xx`"), "{e}");
    }
}
