//! Address mapping as data: which bits of a byte address select each level.
//!
//! A map is written MSB-first as level names joined by `-`, e.g. `ro-ba-bg-sid-pc-ch-co`
//! (a row's bursts together, rows rotating over channels): the burst offset is always lowest, then the
//! rightmost level, and so on. Levels: `st` (stack), `ch` (channel), `pc`, `sid`, `bg` (bank
//! group), `ba` (bank), `ro` (row), `co` (burst within the row). Counts need not be powers of two
//! (mixed radix), though powers of two decode with shifts. An optional XOR hash folds the low
//! bits of the row into the channel index (`+xor` suffix: e.g. `ro-ba-bg-sid-pc-ch-co+xor`),
//! spreading strided streams across channels.
//!
//! A level of a power-of-two count may be split into parts: `co:2` is the level's next 2 bits
//! (its lowest, at its first place from the LSB), and its last place (towards the MSB) written
//! without a count holds the bits left: `ro-co-ba-bg-sid-pc-co:2-ch` puts the low 2 bits of the
//! burst index just above the channel and its other bits above the bank. A second suffix
//! `+xor(co:pc,sid,bg,ba,ro)` XORs the bits of one level (here the burst index), from its LSB,
//! into the listed levels in turn, each taking as many bits as it has (levels of one entry
//! take none); the source level itself is left as decoded, so the map stays one to one. The
//! reference tools' maps are accepted by name ([`AddressMap::TOOL_MAPS`]).

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
    /// Where this part's bits sit in the level's index (0 unless the level is split).
    at: u32,
}

/// `+xor(src:dst,...)`: the bits of level `src` XORed into each `dst` in turn.
#[derive(Clone, Debug)]
struct LevelXor {
    src: Level,
    /// (level, bits) in order; levels of one entry are left out.
    dst: Vec<(Level, u32)>,
}

impl Location {
    fn level(&self, l: Level) -> u32 {
        match l {
            Level::Stack => self.stack,
            Level::Channel => self.channel,
            Level::Pc => self.pc,
            Level::Sid => self.sid,
            Level::BankGroup => self.bank_group,
            Level::Bank => self.bank,
            Level::Row => self.row,
            Level::Column => self.column,
        }
    }
    fn level_mut(&mut self, l: Level) -> &mut u32 {
        match l {
            Level::Stack => &mut self.stack,
            Level::Channel => &mut self.channel,
            Level::Pc => &mut self.pc,
            Level::Sid => &mut self.sid,
            Level::BankGroup => &mut self.bank_group,
            Level::Bank => &mut self.bank,
            Level::Row => &mut self.row,
            Level::Column => &mut self.column,
        }
    }
}

impl LevelXor {
    /// [`LevelXor::apply`] on level indices indexed by [`Level`].
    #[inline]
    fn apply_levels(&self, lv: &mut [u32; 8]) {
        let src = lv[self.src as usize];
        let mut at = 0u32;
        for &(l, bits) in &self.dst {
            let mask = (1u32 << bits) - 1;
            lv[l as usize] ^= src.checked_shr(at).unwrap_or(0) & mask;
            at += bits;
        }
    }

    /// XORs the source's bits into the destinations (its own inverse: the source is unchanged).
    fn apply(&self, loc: &mut Location) {
        let src = loc.level(self.src);
        let mut at = 0u32;
        for &(l, bits) in &self.dst {
            let mask = (1u32 << bits) - 1;
            *loc.level_mut(l) ^= src.checked_shr(at).unwrap_or(0) & mask;
            at += bits;
        }
    }
}

/// Decodes byte addresses into [`Location`]s. Built once; decoding allocates nothing.
#[derive(Clone, Debug)]
pub struct AddressMap {
    text: String,
    /// Fields LSB-first.
    fields: Vec<Field>,
    offset_bits: u32,
    xor: bool,
    level_xor: Option<LevelXor>,
    channels: u32,
    capacity: u64,
}

impl AddressMap {
    /// The default map: `ro-sid-ba-co-bg-pc-ch-co:1`: channels interleave every 64 B, a cache
    /// line. A line's two bursts (the lowest column bit) stay in one bank of one
    /// pseudo-channel, so a random line costs one ACT, not two; consecutive lines rotate over
    /// channels, pseudo-channels and bank groups (so a stream's lines on one pseudo-channel
    /// alternate bank groups, spaced tCCDS, not tCCDL), then walk a row's columns, then move to
    /// the next bank and SID (SID switches cost tCCDR, so they come last).
    pub const DEFAULT: &'static str = "ro-sid-ba-co-bg-pc-ch-co:1";
    /// Burst-interleaved map `ro-sid-ba-co-bg-pc-ch`, the Trainium chip presets' (an
    /// estimate: their DMA engines move 32 B bursts, not cache lines): consecutive bursts
    /// rotate over channels, pseudo-channels and bank groups (a stream's back-to-back bursts
    /// on one pseudo-channel alternate bank groups, tCCDS apart), then walk a row's columns,
    /// then banks and SIDs. A random 64 B line takes two channels, so two ACTs.
    pub const BURST_INTERLEAVED: &'static str = "ro-sid-ba-co-bg-pc-ch";
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
            "ChRaBaRoCo",
            "pc-sid-bg-ba-ro-co-ch",
            "Ramulator 2.1: channel from the bits just above the 32 B burst (CacheLineInterleave), then ChRaBaRoCo maps column, row, bank, bank group, SID, pseudo-channel from the LSB",
        ),
        (
            "MOP4CLXOR",
            "ro-co-ba-bg-sid-pc-co:2-ch+xor(co:pc,sid,bg,ba,ro)",
            "Ramulator 2.1: channel from the bits just above the 32 B burst (CacheLineInterleave), then MOP4CLXOR: the low 2 column bits, pseudo-channel, SID, bank group, bank, the other column bits, row from the LSB; then the column's bits XORed into pseudo-channel, SID, bank group, bank and row in turn",
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
        let mut parts = text.split('+');
        let order = parts.next().unwrap_or_default();
        let (mut xor, mut xor_spec) = (false, None);
        for p in parts {
            if p == "xor" {
                if xor {
                    return Err(MapError(format!("`+xor` appears twice in `{text}`")));
                }
                xor = true;
            } else if let Some(inner) = p.strip_prefix("xor(").and_then(|q| q.strip_suffix(')')) {
                if xor_spec.replace(inner).is_some() {
                    return Err(MapError(format!("`+xor(...)` appears twice in `{text}`")));
                }
            } else {
                return Err(MapError(format!("unknown suffix `+{p}` in `{text}` (known: +xor, +xor(src:dst,...))")));
            }
        }
        let level_count = |level: Level| -> u64 {
            u64::from(match level {
                Level::Stack => stacks,
                Level::Channel => org.channels,
                Level::Pc => org.pseudo_channels,
                Level::Sid => org.sids,
                Level::BankGroup => org.bank_groups,
                Level::Bank => org.banks_per_group,
                Level::Row => org.rows,
                Level::Column => org.bursts_per_row(),
            })
        };
        let mut fields: Vec<Field> = Vec::new();
        // Per level seen: (bits placed by its `:N` parts so far, whether its last part came).
        let mut seen: Vec<(Level, u32, bool)> = Vec::new();
        for part in order.split('-').rev() {
            let (name, bits) = match part.split_once(':') {
                Some((n, b)) => {
                    let bits = b.parse::<u32>().ok().filter(|b| (1..=31).contains(b)).ok_or_else(|| {
                        MapError(format!("bit count `{b}` of `{part}` in `{text}` is not a number in 1..=31"))
                    })?;
                    (n, Some(bits))
                }
                None => (part, None),
            };
            let level = Level::parse(name).ok_or_else(|| {
                MapError(format!("unknown level `{name}` in `{text}` (levels: st ch pc sid bg ba ro co)"))
            })?;
            let count = level_count(level);
            let slot = match seen.iter().position(|s| s.0 == level) {
                Some(i) if seen[i].2 => {
                    return Err(MapError(format!(
                        "level `{name}` appears twice in `{text}` (a split level's parts carry bit counts but its last, nearest the MSB)"
                    )))
                }
                Some(i) => i,
                None => {
                    seen.push((level, 0, false));
                    seen.len() - 1
                }
            };
            let at = seen[slot].1;
            let split = bits.is_some() || at > 0;
            if split && !count.is_power_of_two() {
                return Err(MapError(format!(
                    "`{part}` in `{text}`: only a power-of-two level can be split, `{name}` has {count}"
                )));
            }
            let total = count.trailing_zeros();
            let count = match bits {
                Some(b) => {
                    if at + b >= total {
                        return Err(MapError(format!(
                            "`{part}` in `{text}`: `{name}` has {total} bits, {at} placed before, and its last part needs one"
                        )));
                    }
                    seen[slot].1 = at + b;
                    1u64 << b
                }
                None => {
                    seen[slot].2 = true;
                    count >> at
                }
            };
            let shift = count.is_power_of_two().then(|| count.trailing_zeros());
            fields.push(Field { level, count, shift, at });
        }
        if let Some(s) = seen.iter().find(|s| !s.2) {
            let name = order.split('-').find(|p| Level::parse(p.split(':').next().unwrap_or_default()) == Some(s.0));
            return Err(MapError(format!(
                "`{}` in `{text}` needs a place nearer the MSB, without a count, for the level's other bits",
                name.unwrap_or_default()
            )));
        }
        let seen: Vec<Level> = seen.iter().map(|s| s.0).collect();
        let level_xor = match xor_spec {
            None => None,
            Some(spec) => {
                let bad =
                    || MapError(format!("`+xor({spec})` in `{text}`: write it as +xor(src:dst,dst,...) with levels"));
                let (src, dst) = spec.split_once(':').ok_or_else(bad)?;
                let src = Level::parse(src).ok_or_else(bad)?;
                let mut v = Vec::new();
                for d in dst.split(',') {
                    let l = Level::parse(d).ok_or_else(bad)?;
                    if l == src || v.iter().any(|&(x, _)| x == l) {
                        return Err(MapError(format!(
                            "`+xor({spec})` in `{text}`: `{d}` is the source or listed twice"
                        )));
                    }
                    let c = level_count(l);
                    if !c.is_power_of_two() {
                        return Err(MapError(format!(
                            "`+xor({spec})` in `{text}`: `{d}` has {c} entries, not a power of two"
                        )));
                    }
                    if c > 1 {
                        v.push((l, c.trailing_zeros()));
                    }
                }
                Some(LevelXor { src, dst: v })
            }
        };
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
            level_xor,
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
        let a = if self.capacity.is_power_of_two() { addr & (self.capacity - 1) } else { addr % self.capacity };
        let mut v = a >> self.offset_bits;
        // Each level's index, by `Level as usize` (the order of `Location`'s fields).
        let mut lv = [0u32; 8];
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
            lv[f.level as usize] |= idx << f.at;
        }
        self.hashed(lv)
    }

    /// The locations of consecutive bursts from `addr`'s: `decode` of `addr` rounded down to
    /// its burst plus 0, 1, 2, ... bursts (wrapping at the capacity), each after the first
    /// found by adding one to the previous one's digits (a carry, not a decode). For a
    /// request of several bursts.
    pub fn bursts(&self, addr: u64) -> Bursts<'_> {
        let a = if self.capacity.is_power_of_two() { addr & (self.capacity - 1) } else { addr % self.capacity };
        let mut v = a >> self.offset_bits;
        let mut digits = [0u32; MAX_DIGITS];
        let mut lv = [0u32; 8];
        let incremental = self.fields.len() <= MAX_DIGITS;
        if incremental {
            for (d, f) in digits.iter_mut().zip(&self.fields) {
                // (As `decode`: a power-of-two count by mask and shift.)
                let (digit, rest) = match f.shift {
                    Some(s) => (v & (f.count - 1), v >> s),
                    None => (v % f.count, v / f.count),
                };
                // (A digit is below its count, at most 2^32.)
                *d = u32::try_from(digit).unwrap_or(u32::MAX);
                v = rest;
                lv[f.level as usize] |= *d << f.at;
            }
        }
        let access = 1u64 << self.offset_bits;
        let base = addr - addr % access;
        // Bursts past this one would pass 2^64 as byte addresses, which wrap there before
        // they wrap at the capacity: those are decoded as addresses.
        let last_k = (u64::MAX - base) >> self.offset_bits;
        Bursts { map: self, base, k: 0, last_k, digits, lv, incremental }
    }

    /// For a map without XOR hashes, what one more in each of an address's digits adds to
    /// weighted sums of its level indices (sum `i` of a location: the sum over levels of its
    /// index times `weights[level as usize][i]`, in wrapping `u32` arithmetic): without
    /// hashes a level's index is a sum of the address's digits, so consecutive bursts' sums
    /// follow by adding steps ([`AddressMap::sums`]). `None` for a map with XOR hashes (or too
    /// many fields to carry).
    pub fn sum_steps<const N: usize>(&self, weights: &[[u32; N]; 8]) -> Option<SumSteps<N>> {
        if self.xor || self.level_xor.is_some() || self.fields.len() > MAX_DIGITS {
            return None;
        }
        let mut steps = [[0u32; N]; MAX_DIGITS];
        for (step, f) in steps.iter_mut().zip(&self.fields) {
            for (x, w) in step.iter_mut().zip(&weights[f.level as usize]) {
                *x = w.wrapping_shl(f.at);
            }
        }
        Some(SumSteps { weights: *weights, steps })
    }

    /// Consecutive bursts from `addr`'s (as [`AddressMap::bursts`]) as their weighted sums
    /// ([`AddressMap::sum_steps`], made of this map), each the previous one's plus the carried
    /// digits' steps: no location is built.
    pub fn sums<'a, const N: usize>(&'a self, steps: &'a SumSteps<N>, addr: u64) -> Sums<'a, N> {
        let walk = self.bursts(addr);
        let cur = weigh(&walk.lv, &steps.weights);
        Sums { walk, steps, cur }
    }

    /// Applies the map's XOR hashes to raw level indices (indexed by [`Level`]).
    #[inline]
    fn hashed(&self, mut lv: [u32; 8]) -> Location {
        if self.xor {
            lv[Level::Channel as usize] ^= lv[Level::Row as usize] & (self.channels - 1);
        }
        if let Some(x) = &self.level_xor {
            x.apply_levels(&mut lv);
        }
        let [stack, channel, pc, sid, bank_group, bank, row, column] = lv;
        Location { stack, channel, pc, sid, bank_group, bank, row, column }
    }

    /// Encodes a location back into the lowest byte address that decodes to it (inverse of
    /// [`AddressMap::decode`]; used by traffic generators that target a bank or a row).
    pub fn encode(&self, loc: &Location) -> u64 {
        let mut loc = *loc;
        if let Some(x) = &self.level_xor {
            x.apply(&mut loc);
        }
        if self.xor {
            loc.channel ^= loc.row & (self.channels - 1);
        }
        let mut v: u64 = 0;
        for f in self.fields.iter().rev() {
            let idx = u64::from(loc.level(f.level) >> f.at);
            v = v * f.count + idx % f.count;
        }
        v << self.offset_bits
    }
}

/// Maps with at most this many fields (every map of the presets and reference tools) walk
/// bursts by carries; longer ones decode each burst.
const MAX_DIGITS: usize = 16;

/// Consecutive bursts' locations ([`AddressMap::bursts`]); endless (wraps at the capacity).
pub struct Bursts<'a> {
    map: &'a AddressMap,
    /// The first burst's byte address.
    base: u64,
    /// Bursts yielded so far.
    k: u64,
    /// The last burst walked by carries (later ones would pass 2^64 as byte addresses).
    last_k: u64,
    /// The next burst's digit per field (LSB-first), and its levels' indices before the XOR
    /// hashes, when `incremental`.
    digits: [u32; MAX_DIGITS],
    lv: [u32; 8],
    incremental: bool,
}

impl Iterator for Bursts<'_> {
    type Item = Location;
    fn next(&mut self) -> Option<Location> {
        let m = self.map;
        let k = self.k;
        self.k += 1;
        if !self.incremental || k > self.last_k {
            let access = 1u64 << m.offset_bits;
            return Some(m.decode(self.base.wrapping_add(k.wrapping_mul(access))));
        }
        let loc = m.hashed(self.lv);
        // The next burst: one more in the lowest digit, carried up (each digit's bits moved
        // in its level's index); past the top, every digit wraps to 0.
        for (d, f) in self.digits[..m.fields.len()].iter_mut().zip(&m.fields) {
            let l = &mut self.lv[f.level as usize];
            if u64::from(*d) + 1 < f.count {
                *d += 1;
                *l += 1 << f.at;
                break;
            }
            *l -= *d << f.at;
            *d = 0;
        }
        Some(loc)
    }
}

/// `Σ lv[level] × weights[level][i]` for each `i`, in wrapping `u32` arithmetic.
#[inline]
fn weigh<const N: usize>(lv: &[u32; 8], weights: &[[u32; N]; 8]) -> [u32; N] {
    let mut out = [0u32; N];
    for (l, w) in lv.iter().zip(weights) {
        for (o, w) in out.iter_mut().zip(w) {
            *o = o.wrapping_add(l.wrapping_mul(*w));
        }
    }
    out
}

/// Consecutive bursts' weighted sums of level indices ([`AddressMap::sums`]); endless.
pub struct Sums<'a, const N: usize> {
    /// The bursts' digits (their level indices are not kept up to date: `cur` is).
    walk: Bursts<'a>,
    steps: &'a SumSteps<N>,
    /// The next burst's sums.
    cur: [u32; N],
}

/// What each digit of an address adds to weighted sums of its level indices
/// ([`AddressMap::sum_steps`]).
#[derive(Clone, Debug)]
pub struct SumSteps<const N: usize> {
    weights: [[u32; N]; 8],
    /// Per field (LSB-first): what one more in its digit adds to the sums.
    steps: [[u32; N]; MAX_DIGITS],
}

impl<const N: usize> Iterator for Sums<'_, N> {
    type Item = [u32; N];
    #[inline]
    fn next(&mut self) -> Option<[u32; N]> {
        let w = &mut self.walk;
        let m = w.map;
        let k = w.k;
        w.k += 1;
        if k > w.last_k {
            // Past 2^64 as byte addresses (as `Bursts`): decoded.
            let loc = m.decode(w.base.wrapping_add(k.wrapping_mul(1u64 << m.offset_bits)));
            return Some(weigh(&loc.levels(), &self.steps.weights));
        }
        let out = self.cur;
        // One more in the lowest digit, carried up: each digit's step added or, where it wraps
        // to 0, its steps so far taken away. (Most often the lowest digit takes it.)
        if let Some(f) = m.fields.first() {
            if u64::from(w.digits[0]) + 1 < f.count {
                w.digits[0] += 1;
                for (c, s) in self.cur.iter_mut().zip(&self.steps.steps[0]) {
                    *c = c.wrapping_add(*s);
                }
                return Some(out);
            }
        }
        for ((d, f), step) in w.digits[..m.fields.len()].iter_mut().zip(&m.fields).zip(&self.steps.steps) {
            if u64::from(*d) + 1 < f.count {
                *d += 1;
                for (c, s) in self.cur.iter_mut().zip(step) {
                    *c = c.wrapping_add(*s);
                }
                break;
            }
            for (c, s) in self.cur.iter_mut().zip(step) {
                *c = c.wrapping_sub(s.wrapping_mul(*d));
            }
            *d = 0;
        }
        Some(out)
    }
}

impl<const N: usize> Sums<'_, N> {
    /// Gives the next `n` sums to `emit`, in order: what `n` calls of `next` give, with the
    /// lowest digit's runs (most bursts) walked by its step alone, no carry checked.
    #[inline]
    pub fn for_next(&mut self, mut n: usize, mut emit: impl FnMut([u32; N])) {
        while n > 0 {
            let w = &self.walk;
            // Bursts from here that the lowest digit walks before it carries, within the
            // bursts walked by carries (`last_k`).
            let run = match w.map.fields.first() {
                Some(f) if w.k <= w.last_k => {
                    let left = f.count - u64::from(w.digits[0]);
                    let walked = (w.last_k - w.k).saturating_add(1);
                    usize::try_from(left.min(walked)).unwrap_or(usize::MAX).min(n)
                }
                _ => 0,
            };
            // All but the run's last by the lowest digit's step; the last through `next`,
            // which carries.
            if run > 1 {
                let step = self.steps.steps[0];
                for _ in 1..run {
                    emit(self.cur);
                    for (c, s) in self.cur.iter_mut().zip(&step) {
                        *c = c.wrapping_add(*s);
                    }
                }
                // (`run - 1` fits: the run is at most the digit's count, a `u32` value.)
                self.walk.digits[0] += (run - 1) as u32;
                self.walk.k += (run - 1) as u64;
            }
            if let Some(s) = self.next() {
                emit(s);
            }
            n -= run.max(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hbm::presets;

    #[test]
    fn tool_maps_are_their_level_strings() {
        let org = presets::HBM3_6400.org.clone();
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

    /// Maps of every kind: the named ones, XOR hashes, a stack level, the reference tools',
    /// split levels.
    const MAPS: [&str; 11] = [
        AddressMap::DEFAULT,
        AddressMap::BURST_INTERLEAVED,
        AddressMap::ROW_CONTIGUOUS,
        "ro-ba-bg-sid-pc-ch-co+xor",
        "st-ro-co-ba-bg-sid-pc-ch",
        "RoBaRaCoCh",
        "ChRaBaRoCo",
        "MOP4CLXOR",
        "rorabgbachco",
        "ro-co-ba-co:1-bg-sid-pc-co:1-ch+xor",
        "ro-co-ba-bg-sid-ro:3-pc-ch+xor(ch:ro,bg)",
    ];

    #[test]
    fn decode_inverts_encode_on_every_preset_and_map() {
        for p in presets::ALL.iter() {
            let org = p.org.clone();
            for text in MAPS {
                if p.name == "hbm3e-9600" && (text.contains("ro:") || text == "MOP4CLXOR") {
                    // 24576 rows and 3 SIDs: not powers of two, so neither split nor XORed.
                    assert!(AddressMap::new(text, &org, 1).is_err(), "{text}");
                    continue;
                }
                let stacks = if text.starts_with("st") { 4 } else { 1 };
                let m = match AddressMap::new(text, &org, stacks) {
                    // hbm3-5700's 3 SIDs cannot be XORed: a map hashing them is refused by name.
                    Err(e) if !org.sids.is_power_of_two() && text.to_ascii_lowercase().contains("xor") => {
                        assert!(format!("{e:?}").contains("`sid` has 3 entries, not a power of two"), "{text}: {e:?}");
                        continue;
                    }
                    r => r.unwrap(),
                };
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
    fn bursts_walk_like_decoding_each_burst() {
        for p in presets::ALL.iter() {
            let org = p.org.clone();
            for text in MAPS {
                let stacks = if text.starts_with("st") { 3 } else { 1 };
                let Ok(m) = AddressMap::new(text, &org, stacks) else { continue };
                let access = org.access_bytes() as u64;
                let mut a = 0x9e37_79b9u64;
                for i in 0..300 {
                    a = a.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    // Some starts just below the capacity, so the walk wraps.
                    let addr = if i % 5 == 0 { m.capacity() - (a >> 60) * access - a % access } else { a >> 9 };
                    let base = addr - addr % access;
                    for (k, loc) in m.bursts(addr).take(40).enumerate() {
                        let want = m.decode(base.wrapping_add(k as u64 * access));
                        assert_eq!(loc, want, "{text} on {}: burst {k} from {addr:#x}", p.name);
                    }
                }
            }
        }
    }

    #[test]
    fn sums_walk_like_weighing_each_bursts_location() {
        // Weights that tell every level apart (a fast stack's are one such), on every preset
        // and map: maps without XOR hashes give steps, and their sums are each location's;
        // maps with hashes give none. Starts below the capacity (the walk wraps) and below
        // 2^64 (later bursts are decoded).
        let weights = [[1, 0, 7], [3, 1, 0], [5, 2, 0], [0, 11, 1], [13, 0, 1], [0, 17, 4], [19, 0, 2], [0, 23, 9]];
        for p in presets::ALL.iter() {
            let org = p.org.clone();
            for text in MAPS {
                let stacks = if text.starts_with("st") { 3 } else { 1 };
                let Ok(m) = AddressMap::new(text, &org, stacks) else { continue };
                let Some(steps) = m.sum_steps(&weights) else {
                    assert!(text.contains("xor") || text == "MOP4CLXOR", "{text}: no steps");
                    continue;
                };
                let access = org.access_bytes() as u64;
                let mut a = 0x2545_f491u64;
                for i in 0..300 {
                    a = a.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let addr = match i % 5 {
                        0 => m.capacity() - (a >> 60) * access - a % access,
                        1 => u64::MAX - (a >> 60) * access,
                        _ => a >> 9,
                    };
                    for (k, (sum, loc)) in m.sums(&steps, addr).zip(m.bursts(addr)).take(40).enumerate() {
                        assert_eq!(
                            sum,
                            weigh(&loc.levels(), &weights),
                            "{text} on {}: burst {k} from {addr:#x}",
                            p.name
                        );
                    }
                    // The same bursts in runs of any length (`for_next`) as one at a time.
                    let one: Vec<[u32; 3]> = m.sums(&steps, addr).take(300).collect();
                    let (mut runs, mut walk, mut len) = (Vec::new(), m.sums(&steps, addr), 1 + (a >> 40) as usize % 70);
                    while runs.len() < one.len() {
                        let n = len.min(one.len() - runs.len());
                        walk.for_next(n, |s| runs.push(s));
                        len = len % 97 + 13;
                    }
                    assert_eq!(runs, one, "{text} on {}: runs from {addr:#x}", p.name);
                }
            }
        }
    }

    /// Ramulator 2.1's MOP4CLXOR within a channel, step by step as its source does it, on
    /// the hierarchy below the channel (`bits`: PC, SID (absent on HBM2), bank group, bank,
    /// row, column, the column's bits net of the burst).
    fn ramulator_mop4clxor(intra: u64, bits: &[u32]) -> Vec<u64> {
        let take = |a: &mut u64, n: u32| {
            let v = *a & ((1u64 << n) - 1);
            *a >>= n;
            v
        };
        let (col, row) = (bits.len() - 1, bits.len() - 2);
        let mut v = vec![0u64; bits.len()];
        let mut a = intra;
        v[col] = take(&mut a, 2);
        for i in 0..row {
            v[i] = take(&mut a, bits[i]);
        }
        v[col] += take(&mut a, bits[col] - 2) << 2;
        v[row] = a;
        let mut at = 0;
        for i in 0..col {
            if bits[i] > 0 {
                v[i] ^= (v[col] >> at) & ((1 << bits[i]) - 1);
                at += bits[i];
            }
        }
        v
    }

    #[test]
    fn ramulator_maps_decode_as_ramulator_does() {
        for p in [&presets::HBM2_2000, &presets::HBM3_6400] {
            let org = p.org.clone();
            let lg = |n: u32| n.trailing_zeros();
            let ch_bits = lg(org.channels);
            let bits = [
                lg(org.pseudo_channels),
                lg(org.sids),
                lg(org.bank_groups),
                lg(org.banks_per_group),
                lg(org.rows),
                lg(org.bursts_per_row()),
            ];
            let mop = AddressMap::new("MOP4CLXOR", &org, 1).unwrap();
            let chra = AddressMap::new("ChRaBaRoCo", &org, 1).unwrap();
            let mut a = 0x9e37_79b9_7f4a_7c15u64;
            let mut xored = 0;
            for _ in 0..20_000 {
                a = a.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let addr = ((a >> 11) % mop.capacity()) & !31;
                // CacheLineInterleave: the channel from the bits just above the burst, the
                // rest closed up.
                let channel = (addr >> 5) & ((1 << ch_bits) - 1);
                let intra = ((addr >> (5 + ch_bits)) << 5 | (addr & 31)) >> 5;
                let v = ramulator_mop4clxor(intra, &bits);
                let l = mop.decode(addr);
                let got = [l.pc, l.sid, l.bank_group, l.bank, l.row, l.column].map(u64::from);
                assert_eq!((u64::from(l.channel), &got[..]), (channel, &v[..]), "{} {addr:#x}", p.name);
                xored += usize::from(got[0] != (intra >> 2) & 1);
                // ChRaBaRoCo: column, row, bank, bank group, SID, PC from the LSB.
                let c = chra.decode(addr);
                let want = [
                    (c.column, bits[5]),
                    (c.row, bits[4]),
                    (c.bank, bits[3]),
                    (c.bank_group, bits[2]),
                    (c.sid, bits[1]),
                    (c.pc, bits[0]),
                ];
                let mut rest = intra;
                for (got, n) in want {
                    assert_eq!(u64::from(got), rest & ((1 << n) - 1), "{} ChRaBaRoCo {addr:#x}", p.name);
                    rest >>= n;
                }
            }
            assert!(xored > 5_000, "{}: the XOR changed the pseudo-channel of only {xored} addresses", p.name);
        }
    }

    #[test]
    fn split_levels_place_their_bits() {
        let org = presets::HBM3_6400.org.clone();
        // Burst bit 0 just above the channel, burst bits 1-4 above the pseudo-channel.
        let m = AddressMap::new("ro-sid-ba-bg-co-pc-co:1-ch", &org, 1).unwrap();
        assert_eq!(m.decode(32 * 16).column, 1);
        assert_eq!(m.decode(32 * 32).pc, 1);
        assert_eq!(m.decode(32 * 64).column, 2);
        assert_eq!(m.decode(32 * 64 * 8).column, 16);
        assert_eq!(m.decode(32 * 64 * 16).bank_group, 1);
    }

    #[test]
    fn bad_maps_are_named() {
        let org = presets::HBM3_6400.org.clone();
        for (text, says) in [
            ("ro-ba-bg-pc-ch-co", "`sid` is missing"),
            ("ro-ba-xx-sid-pc-ch-co", "unknown level `xx`"),
            ("ro-ba-bg-sid-pc-ch-co:2", "needs a place nearer the MSB"),
            ("ro-co-ba-bg-sid-pc-ch-co:5", "has 5 bits"),
            ("ro-co-ba-bg-sid-pc-ch-co:x", "`x` of `co:x`"),
            ("ro-co-ba-bg-sid-pc-ch-co:99999999999", "not a number in 1..=31"),
            ("ro-co-ba-bg-sid-pc-ch-co:2-co", "appears twice"),
            ("ro-ba-bg-sid-pc-ch-co+xor+xor", "`+xor` appears twice"),
            ("ro-ba-bg-sid-pc-ch-co+hash", "unknown suffix `+hash`"),
            ("ro-ba-bg-sid-pc-ch-co+xor(co)", "+xor(src:dst"),
            ("ro-ba-bg-sid-pc-ch-co+xor(co:co)", "the source or listed twice"),
            ("ro-ba-bg-sid-pc-ch-co+xor(co:pc,qq)", "+xor(src:dst"),
        ] {
            let e = AddressMap::new(text, &org, 1).unwrap_err();
            assert!(e.0.contains(says), "{text}: {e}");
        }
        let org = presets::HBM3E_9600.org.clone();
        let e = AddressMap::new("ro-ba-bg-sid-pc-ch-co+xor(co:ro)", &org, 1).unwrap_err();
        assert!(e.0.contains("not a power of two"), "{e}");
        let e = AddressMap::new("ro-ba-bg-sid-pc-ch-ro:2-co", &org, 1).unwrap_err();
        assert!(e.0.contains("only a power-of-two level can be split"), "{e}");
    }

    #[test]
    fn row_contiguous_map_keeps_a_row_together_then_rotates_channels() {
        let org = presets::HBM3_6400.org.clone();
        let m = AddressMap::new(AddressMap::ROW_CONTIGUOUS, &org, 1).unwrap();
        let a = m.decode(0);
        let b = m.decode(32 * 31);
        assert_eq!((a.channel, a.row, b.channel, b.row, b.column), (0, 0, 0, 0, 31));
        assert_eq!(m.decode(1024).channel, 1);
    }
}
