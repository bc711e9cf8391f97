//! How a command is cut up: the on-chip side's partitions into parts (one per DMA engine), each
//! partition's row of bytes into packets, and a packet into SBUF accesses and HBM bursts.
//!
//! ```text
//!  split side (on chip): partitions ─► rows r = 0..rows, engine (first + r) / 8
//!  a row: bytes_per_partition bytes in access-pattern order (HBM side: contiguous bytes)
//!  packet: rows [r0, r1) of one engine x bytes [x0, x1) of each row (~packet_bytes in all)
//! ```
//!
//! Packet boundaries along a row are chosen so that the split side's share of a packet is one
//! access pattern: the row is cut along the outermost free dimension whose inner block fits in
//! a packet, never across that dimension's end. The other side, if also on chip, may need a
//! few patterns per packet ([`pieces`]); an HBM side needs one burst per aligned 32 B.

use crate::isa::{Ap, Dim, DmaAddr};
use crate::msg::DmaCmd;

/// One side of a transfer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Side {
    /// Row r at `addr + r * stride`, contiguous.
    Hbm { addr: u64, stride: u64 },
    /// An SBUF or PSUM access pattern; row r is its partition `partition_start + r`.
    Chip(Ap),
}

/// The geometry of one command.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Plan {
    pub src: Side,
    pub dst: Side,
    /// Rows: partitions of the split side (1 when neither side is on chip).
    pub rows: u32,
    /// Partition of row 0 (engine of row r: `(first + r) / partitions_per_engine`).
    pub first: u32,
    /// Bytes per row (0 for an empty or malformed command: no packets).
    pub row_bytes: u64,
    /// Why the command cannot be executed, if it cannot.
    pub malformed: Option<&'static str>,
    grid: Grid,
}

/// Packet boundaries along a row: `outer` blocks of `size` indices of `unit` bytes each, cut
/// into packets of `span` indices.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Grid {
    unit: u64,
    span: u64,
    size: u64,
    outer: u64,
}

/// One on-chip access of a packet: `ap` covers bytes `[x, x + len)` of each of the packet's
/// rows, relative to the packet's start `x0`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Piece {
    pub ap: Ap,
    pub x: u64,
    pub len: u64,
}

impl Plan {
    /// Plans `cmd` for engines of `ppe` partitions (`total` partitions in all) and packets of
    /// `packet_bytes`. A command that cannot be executed gets no packets and a reason.
    pub fn new(cmd: &DmaCmd, ppe: u32, total: u32, packet_bytes: u32) -> Plan {
        let side = |a: DmaAddr| match a {
            DmaAddr::Hbm { addr, partition_stride } => Side::Hbm { addr, stride: partition_stride },
            DmaAddr::OnChip(ap) => Side::Chip(ap),
        };
        let (src, dst) = (side(cmd.src), side(cmd.dst));
        let (cut, other) = match (src, dst) {
            (_, Side::Chip(d)) => (Some(d), if let Side::Chip(s) = src { Some(s) } else { None }),
            (Side::Chip(s), _) => (Some(s), None),
            _ => (None, None),
        };
        let bpp = u64::from(cmd.bytes_per_partition);
        let (rows, first) = match cut {
            Some(ap) if ap.partitions >= 1 && u32::from(ap.partition_start) + u32::from(ap.partitions) <= total => {
                (u32::from(ap.partitions), u32::from(ap.partition_start))
            }
            _ => (1, 0),
        };
        let mut plan = Plan { src, dst, rows, first, row_bytes: bpp, malformed: None, grid: Grid::EMPTY };
        let checked = cut.map_or(Ok(()), |ap| check_ap(&ap, bpp, total)).and_then(|()| match (cut, other) {
            (Some(s), Some(o)) if o.partitions != s.partitions => Err("the two on-chip sides differ in partitions"),
            (_, Some(o)) => check_ap(&o, bpp, total),
            _ => Ok(()),
        });
        let t = (u64::from(packet_bytes) / u64::from(rows.min(ppe))).max(1);
        match (checked, cut) {
            (Err(e), _) => plan.malformed = Some(e),
            _ if bpp == 0 => {}
            (Ok(()), Some(ap)) => plan.grid = Grid::for_ap(&ap, t),
            (Ok(()), None) => plan.grid = Grid { unit: 1, span: t, size: bpp, outer: 1 },
        }
        if other.is_some_and(|o| !plan.grid.unit.is_multiple_of(u64::from(o.dtype.bytes()))) {
            plan.malformed = Some("packet boundaries split an element of the source pattern");
        }
        if let Some(why) = plan.malformed {
            plan.reject(why);
        }
        if bpp == 0 {
            plan.grid = Grid::EMPTY;
        }
        plan
    }

    /// Marks the command as not executable: it keeps its parts but moves nothing.
    pub fn reject(&mut self, why: &'static str) {
        self.malformed.get_or_insert(why);
        self.row_bytes = 0;
        self.grid = Grid::EMPTY;
    }

    /// Packets in each row range (every part has the same count).
    pub fn packets_per_part(&self) -> u32 {
        let g = &self.grid;
        if g.size == 0 {
            return 0;
        }
        (g.outer * g.size.div_ceil(g.span)) as u32
    }

    /// Byte range `[x0, x1)` of each row that packet `j` of a part covers.
    pub fn packet_range(&self, j: u32) -> (u64, u64) {
        let g = &self.grid;
        let per_outer = g.size.div_ceil(g.span);
        let (o, q) = (u64::from(j) / per_outer, u64::from(j) % per_outer);
        let x0 = (o * g.size + q * g.span) * g.unit;
        (x0, x0 + g.span.min(g.size - q * g.span) * g.unit)
    }

    /// The engines taking part and their rows `[r0, r1)`, for engines of `ppe` partitions.
    pub fn parts(&self, ppe: u32) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        let (lo, hi) = (self.first, self.first + self.rows);
        (lo / ppe..=(hi - 1) / ppe).map(move |e| (e, (e * ppe).max(lo) - lo, ((e + 1) * ppe).min(hi) - lo))
    }
}

impl Grid {
    const EMPTY: Grid = Grid { unit: 1, span: 1, size: 0, outer: 0 };

    /// Cuts along the outermost dimension whose inner block (`unit` bytes) fits in `t` bytes.
    fn for_ap(ap: &Ap, t: u64) -> Grid {
        let dims = ap.dims();
        let ds = u64::from(ap.dtype.bytes());
        let n = dims.len();
        let mut inner = [1u64; 4];
        for j in (0..n - 1).rev() {
            inner[j] = inner[j + 1] * u64::from(dims[j + 1].size);
        }
        let k = (0..n).find(|&j| inner[j] * ds <= t).unwrap_or(n - 1);
        let unit = inner[k] * ds;
        let size = u64::from(dims[k].size);
        let outer = dims[..k].iter().map(|d| u64::from(d.size)).product();
        Grid { unit, span: (t / unit).clamp(1, size.max(1)), size, outer }
    }
}

/// Checks an on-chip side: dimensions, partition range, bytes per partition, and that no
/// element lies before the start of its partition.
fn check_ap(ap: &Ap, bpp: u64, total: u32) -> Result<(), &'static str> {
    if ap.ndims == 0 || ap.ndims > 4 {
        return Err("an access pattern has no or more than 4 dimensions");
    }
    if ap.partitions == 0 || u32::from(ap.partition_start) + u32::from(ap.partitions) > total {
        return Err("an access pattern's partitions are outside the core");
    }
    if ap.free_elems() * u64::from(ap.dtype.bytes()) != bpp {
        return Err("bytes_per_partition differs from an access pattern's bytes per partition");
    }
    let low: i64 = ap.dims().iter().map(|d| (i64::from(d.size) - 1).max(0) * i64::from(d.stride).min(0)).sum();
    if i64::from(ap.offset) + low * i64::from(ap.dtype.bytes()) < 0 {
        return Err("an access pattern reaches below its partition's first byte");
    }
    Ok(())
}

/// Appends to `out` the access patterns that cover bytes `[x0, x1)` of each row of `ap`
/// restricted to partitions `[p0, p0 + np)`, in row order; `x0` and `x1` are multiples of the
/// element size. At most `2 * ndims - 1` pieces.
pub(crate) fn pieces(ap: &Ap, p0: u16, np: u16, x0: u64, x1: u64, out: &mut Vec<Piece>) {
    let ds = u64::from(ap.dtype.bytes());
    let mut base = *ap;
    base.partition_start = p0;
    base.partitions = np;
    let start = out.len();
    split(&base, 0, 0, x0 / ds, x1 / ds, out);
    let mut x = 0;
    for p in &mut out[start..] {
        p.x = x;
        x += p.len;
    }
}

/// Covers elements `[e0, e1)` of the sub-pattern `dims[k..]` whose first element is `base_el`
/// elements past the pattern's offset.
fn split(ap: &Ap, k: usize, base_el: i64, e0: u64, e1: u64, out: &mut Vec<Piece>) {
    if e0 >= e1 {
        return;
    }
    let dims = ap.dims();
    let inner: u64 = dims[k + 1..].iter().map(|d| u64::from(d.size)).product();
    let stride = i64::from(dims[k].stride);
    let at = |i: u64| base_el + i as i64 * stride;
    if e0.is_multiple_of(inner) && e1.is_multiple_of(inner) {
        return out.push(block(ap, k, at(e0 / inner), (e1 - e0) / inner));
    }
    let (i0, i1) = (e0 / inner, (e1 - 1) / inner);
    if i0 == i1 {
        return split(ap, k + 1, at(i0), e0 - i0 * inner, e1 - i0 * inner, out);
    }
    let mut a = e0;
    if !e0.is_multiple_of(inner) {
        split(ap, k + 1, at(i0), e0 - i0 * inner, inner, out);
        a = (i0 + 1) * inner;
    }
    let m = e1 / inner * inner;
    if m > a {
        out.push(block(ap, k, at(a / inner), (m - a) / inner));
    }
    split(ap, k + 1, at(m / inner), 0, e1 - m, out);
}

/// The pattern of `n` indices of dimension `k` (with all inner dimensions) starting `el`
/// elements past `ap`'s offset.
fn block(ap: &Ap, k: usize, el: i64, n: u64) -> Piece {
    let ds = i64::from(ap.dtype.bytes());
    let dims = ap.dims();
    let mut out = *ap;
    out.offset = (i64::from(ap.offset) + el * ds) as u32;
    out.dims = [Dim::default(); 4];
    out.dims[0] = Dim { size: n as u16, stride: dims[k].stride };
    out.dims[1..dims.len() - k].copy_from_slice(&dims[k + 1..]);
    out.ndims = (dims.len() - k) as u8;
    let len = out.free_elems() * ds as u64;
    Piece { ap: out, x: 0, len }
}

/// An HBM access size (bytes, at least 1), whose remainders and rounded-up quotients a DMA
/// engine takes for every burst: by mask and shift when the size is a power of two (every
/// preset's is), by division otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Granule {
    bytes: u64,
    /// `log2(bytes)` when `bytes` is a power of two, else `u32::MAX`.
    shift: u32,
}

impl Granule {
    /// The granule of `bytes` (at least 1: `DmaParams::validate` checks it).
    pub fn new(bytes: u64) -> Granule {
        let bytes = bytes.max(1);
        let shift = if bytes.is_power_of_two() { bytes.trailing_zeros() } else { u32::MAX };
        Granule { bytes, shift }
    }

    /// The size in bytes.
    #[inline]
    pub fn bytes(self) -> u64 {
        self.bytes
    }

    /// `a % bytes`.
    #[inline]
    pub fn rem(self, a: u64) -> u64 {
        if self.shift != u32::MAX {
            a & (self.bytes - 1)
        } else {
            a % self.bytes
        }
    }

    /// `n.div_ceil(bytes)`.
    #[inline]
    pub fn div_ceil(self, n: u64) -> u64 {
        if self.shift != u32::MAX {
            (n >> self.shift) + u64::from(n & (self.bytes - 1) != 0)
        } else {
            n.div_ceil(self.bytes)
        }
    }
}

/// Length of the HBM burst at byte address `addr` when `left` bytes of the row remain: up to
/// the next `access`-aligned boundary.
pub(crate) fn burst_len(addr: u64, left: u64, access: Granule) -> u64 {
    left.min(access.bytes() - access.rem(addr))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{Dtype, Mem};

    fn ap(p0: u16, np: u16, offset: u32, dtype: Dtype, dims: &[(u16, i16)]) -> Ap {
        let mut d = [Dim::default(); 4];
        for (i, &(size, stride)) in dims.iter().enumerate() {
            d[i] = Dim { size, stride };
        }
        Ap { mem: Mem::Sbuf, partition_start: p0, partitions: np, offset, dims: d, ndims: dims.len() as u8, dtype }
    }

    fn cmd(src: DmaAddr, dst: DmaAddr, bpp: u32) -> DmaCmd {
        DmaCmd { id: 1, queue: 0, src, dst, bytes_per_partition: bpp, sem: None, flow: 0 }
    }

    /// Byte offsets (within a partition) of the pattern's elements, in pattern order.
    fn offsets(a: &Ap) -> Vec<i64> {
        let ds = i64::from(a.dtype.bytes());
        let mut out = vec![i64::from(a.offset)];
        for d in a.dims() {
            let mut next = Vec::new();
            for &o in &out {
                for i in 0..i64::from(d.size) {
                    next.push(o + i * i64::from(d.stride) * ds);
                }
            }
            out = next;
        }
        out
    }

    #[test]
    fn a_contiguous_row_is_cut_into_packets_of_all_eight_partitions() {
        let dst = ap(0, 128, 0, Dtype::Bf16, &[(2048, 1)]);
        let c = cmd(DmaAddr::Hbm { addr: 0, partition_stride: 4096 }, DmaAddr::OnChip(dst), 4096);
        let p = Plan::new(&c, 8, 128, 4096);
        assert_eq!(p.malformed, None);
        assert_eq!(p.packets_per_part(), 8);
        assert_eq!(p.packet_range(0), (0, 512));
        assert_eq!(p.packet_range(7), (3584, 4096));
        let parts: Vec<_> = p.parts(8).collect();
        assert_eq!(parts.len(), 16);
        assert_eq!(parts[3], (3, 24, 32));
    }

    #[test]
    fn parts_follow_the_partition_range() {
        let dst = ap(4, 10, 0, Dtype::Fp32, &[(16, 1)]);
        let c = cmd(DmaAddr::Hbm { addr: 0, partition_stride: 64 }, DmaAddr::OnChip(dst), 64);
        let p = Plan::new(&c, 8, 128, 4096);
        assert_eq!(p.parts(8).collect::<Vec<_>>(), vec![(0, 0, 4), (1, 4, 10)]);
        assert_eq!(p.packets_per_part(), 1);
    }

    #[test]
    fn packets_do_not_cross_the_cut_dimension() {
        // [3 x 1000] fp32 per partition: the inner block (4000 B) is too big for 512 B per
        // row, so the cut is along the inner dimension, restarting at each outer index.
        let a = ap(0, 8, 0, Dtype::Fp32, &[(3, 1000), (1000, 1)]);
        let c = cmd(DmaAddr::OnChip(a), DmaAddr::Hbm { addr: 0, partition_stride: 12000 }, 12000);
        let p = Plan::new(&c, 8, 128, 4096);
        assert_eq!(p.packets_per_part(), 3 * 8);
        assert_eq!(p.packet_range(7), (3584, 4000));
        assert_eq!(p.packet_range(8), (4000, 4512));
        for j in 0..p.packets_per_part() {
            let (x0, x1) = p.packet_range(j);
            let mut v = Vec::new();
            pieces(&a, 0, 8, x0, x1, &mut v);
            assert_eq!(v.len(), 1, "packet {j} is one pattern on the split side");
        }
    }

    #[test]
    fn pieces_cover_any_range_in_pattern_order() {
        let a = ap(0, 2, 100, Dtype::Bf16, &[(3, 40), (4, -5), (5, 1)]);
        let all = offsets(&a);
        for (e0, e1) in [(0, 60), (7, 8), (3, 57), (20, 40), (19, 41), (0, 1), (59, 60)] {
            let mut v = Vec::new();
            pieces(&a, 1, 1, e0 * 2, e1 * 2, &mut v);
            assert!(v.len() <= 5, "{e0}..{e1}: {} pieces", v.len());
            let got: Vec<i64> = v.iter().flat_map(|p| offsets(&p.ap)).collect();
            assert_eq!(got, all[e0 as usize..e1 as usize], "{e0}..{e1}");
            assert!(v.iter().all(|p| p.ap.partition_start == 1 && p.ap.partitions == 1));
            assert_eq!(v.last().map(|p| p.x + p.len), Some((e1 - e0) * 2));
        }
    }

    #[test]
    fn malformed_commands_get_no_packets_and_a_reason() {
        let a = ap(0, 8, 0, Dtype::Fp32, &[(16, 1)]);
        let hbm = DmaAddr::Hbm { addr: 0, partition_stride: 64 };
        let wrong_bytes = Plan::new(&cmd(hbm, DmaAddr::OnChip(a), 60), 8, 128, 4096);
        assert!(wrong_bytes.malformed.is_some());
        assert_eq!(wrong_bytes.packets_per_part(), 0);
        assert_eq!(wrong_bytes.parts(8).count(), 1);
        let below = ap(0, 8, 4, Dtype::Fp32, &[(16, -1)]);
        assert!(Plan::new(&cmd(hbm, DmaAddr::OnChip(below), 64), 8, 128, 4096).malformed.is_some());
        let b = ap(0, 4, 0, Dtype::Fp32, &[(16, 1)]);
        assert!(Plan::new(&cmd(DmaAddr::OnChip(b), DmaAddr::OnChip(a), 64), 8, 128, 4096).malformed.is_some());
        let empty = Plan::new(&cmd(hbm, hbm, 0), 8, 128, 4096);
        assert_eq!((empty.malformed, empty.packets_per_part()), (None, 0));
    }

    #[test]
    fn hbm_to_hbm_is_one_row_on_engine_zero() {
        let hbm = DmaAddr::Hbm { addr: 0, partition_stride: 0 };
        let p = Plan::new(&cmd(hbm, hbm, 10_000), 8, 128, 4096);
        assert_eq!(p.parts(8).collect::<Vec<_>>(), vec![(0, 0, 1)]);
        assert_eq!(p.packets_per_part(), 3);
        assert_eq!(p.packet_range(2), (8192, 10_000));
    }

    #[test]
    fn bursts_stop_at_aligned_boundaries() {
        let g = Granule::new(32);
        assert_eq!(burst_len(0, 100, g), 32);
        assert_eq!(burst_len(40, 100, g), 24);
        assert_eq!(burst_len(64, 5, g), 5);
        let odd = Granule::new(48);
        assert_eq!(burst_len(40, 100, odd), 8);
        assert_eq!(burst_len(96, 100, odd), 48);
    }

    #[test]
    fn a_granule_divides_as_plain_arithmetic_does() {
        for bytes in [1u64, 2, 3, 32, 48, 64, 96, 1 << 20] {
            let g = Granule::new(bytes);
            for a in [0u64, 1, 31, 32, 33, 47, 48, 4095, 4096, 1 << 40, u64::MAX - 1, u64::MAX] {
                assert_eq!(g.rem(a), a % bytes, "{a} % {bytes}");
                assert_eq!(g.div_ceil(a), a.div_ceil(bytes), "{a} div_ceil {bytes}");
            }
        }
    }
}
