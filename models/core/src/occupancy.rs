//! SBUF and PSUM occupancy over a run, for a traced core's `Sb Usage` and `PSUM Usage`
//! counters ([`crate::layout`]).
//!
//! Programs address SBUF and PSUM directly (no allocator hands regions out), so occupancy is
//! defined from the accesses the core makes. Each memory is cut into granules of
//! [`GRANULE_BYTES`] within a partition. A granule is *live* from the completion of a write
//! to it (an engine's output, a matmul's PSUM accumulation, a DMA packet into SBUF) until it
//! has been read as often, since that write, as the program reads it per write: the program's
//! reads of the granule over its writes of it (both counted from its instructions, rounded
//! up). A tiled kernel that reads each tile it loads k times frees the tile's granules at the
//! k-th read; a PSUM bank that k matmuls accumulate into is freed by the read that drains it.
//! The counters show the live granules' bytes as a % of the memory's capacity, written when
//! the value changes (at most once per tick of the SBUF/PSUM unit; nothing is allocated per
//! access). The state is two bytes per granule of the byte range (within a partition) the
//! program touches: 1 MiB for a program that uses all of a 32 MiB SBUF, allocated once, and
//! only on a traced core.
//!
//! Left out: data that was never written in the run (preloaded inputs) is never live; a
//! granule written but never read stays live to the end; an access pattern with gaps counts
//! its whole extent in each partition; a program whose writes of one buffer are read unequal
//! numbers of times (a loop that reads a tile more often on its last pass) frees the granules
//! at the average count, early or late (and at 254 reads at most); and a DMA packet that ends inside a granule counts
//! that granule as read by each packet touching it.

use crate::exec;
use crate::isa::{Ap, DmaAddr, Instr, Mem, Program};
use trnsim_kernel::{Ctx, TrackId};
use trnsim_mem::sram::SramGeometry;

/// Bytes of one granule within a partition.
pub const GRANULE_BYTES: u32 = 64;

/// One memory's granules, over the bytes of a partition the program touches.
struct Space {
    /// Byte offset (within a partition) of the first granule kept.
    base: i64,
    /// Granules kept per partition.
    per_partition: u32,
    /// Partitions.
    partitions: u32,
    /// Granules of the whole memory (the counter's 100 %).
    capacity: u64,
    /// Per granule: the reads after which a write is freed (0: never read, live to the end).
    reads_per_write: Vec<u8>,
    /// Per granule: reads since its last write; [`NOT_LIVE`] when not live.
    since_write: Vec<u8>,
    live: u64,
    shown: Option<u64>,
    track: TrackId,
}

const NOT_LIVE: u8 = u8::MAX;

impl Space {
    /// The granules of `g` that the byte range `touched` (within a partition) covers.
    fn new(g: SramGeometry, touched: Option<(i64, i64)>, track: TrackId) -> Space {
        let gb = i64::from(GRANULE_BYTES);
        let bytes = i64::from(g.partition_bytes);
        let (lo, hi) = touched.map_or((0, 0), |(lo, hi)| (lo.clamp(0, bytes), hi.clamp(0, bytes)));
        let (base, end) = (lo / gb * gb, (hi + gb - 1) / gb * gb);
        let per_partition = ((end - base).max(0) / gb) as u32;
        let n = per_partition as usize * g.partitions as usize;
        Space {
            base,
            per_partition,
            partitions: g.partitions,
            capacity: u64::from(g.partition_bytes.div_ceil(GRANULE_BYTES)) * u64::from(g.partitions),
            reads_per_write: vec![0; n],
            since_write: vec![NOT_LIVE; n],
            live: 0,
            shown: None,
            track,
        }
    }

    /// Calls `f` with each granule kept that `ap` touches.
    fn granules(&self, ap: &Ap, mut f: impl FnMut(usize)) {
        let (lo, hi) = exec::extent(ap);
        let gb = i64::from(GRANULE_BYTES);
        let end = self.base + i64::from(self.per_partition) * gb;
        let (lo, hi) = (lo.clamp(self.base, end) - self.base, hi.clamp(self.base, end) - self.base);
        if lo >= hi {
            return;
        }
        let (g0, g1) = ((lo / gb) as usize, ((hi - 1) / gb) as usize + 1);
        let p1 = (u32::from(ap.partition_start) + u32::from(ap.partitions)).min(self.partitions);
        for p in u32::from(ap.partition_start)..p1 {
            let first = p as usize * self.per_partition as usize;
            (first + g0..first + g1).for_each(&mut f);
        }
    }

    fn write(&mut self, ap: &Ap) {
        let mut live = self.live;
        let mut since = std::mem::take(&mut self.since_write);
        self.granules(ap, |g| {
            if since[g] == NOT_LIVE {
                live += 1;
            }
            since[g] = 0;
        });
        self.since_write = since;
        self.live = live;
    }

    fn read(&mut self, ap: &Ap) {
        let mut live = self.live;
        let mut since = std::mem::take(&mut self.since_write);
        let per = &self.reads_per_write;
        self.granules(ap, |g| {
            if since[g] == NOT_LIVE || per[g] == 0 {
                return;
            }
            since[g] += 1;
            if since[g] >= per[g] {
                since[g] = NOT_LIVE;
                live -= 1;
            }
        });
        self.since_write = since;
        self.live = live;
    }

    /// Writes the counter if the live bytes changed since it was last written.
    fn show(&mut self, cx: &mut Ctx<'_>) {
        if self.shown == Some(self.live) {
            return;
        }
        self.shown = Some(self.live);
        if let Some(mut tr) = cx.tracer() {
            tr.counter(self.track, 100.0 * self.live as f64 / (self.capacity.max(1)) as f64);
        }
    }
}

/// A core's SBUF and PSUM occupancy (see the module doc).
pub struct Occupancy {
    sbuf: Space,
    psum: Space,
}

impl Occupancy {
    /// Occupancy of `program`'s accesses to memories of these geometries, shown on `tracks`
    /// (`Sb Usage`, `PSUM Usage`).
    pub fn new(program: &Program, sbuf: SramGeometry, psum: SramGeometry, tracks: (TrackId, TrackId)) -> Occupancy {
        let (mut s, mut p) = (None, None);
        each_access(program, |ap, _| {
            let r = if ap.mem == Mem::Sbuf { &mut s } else { &mut p };
            let (lo, hi) = exec::extent(ap);
            *r = Some(r.map_or((lo, hi), |(a, b): (i64, i64)| (a.min(lo), b.max(hi))));
        });
        let mut o = Occupancy { sbuf: Space::new(sbuf, s, tracks.0), psum: Space::new(psum, p, tracks.1) };
        o.count(program);
        o
    }

    fn space(&mut self, mem: Mem) -> &mut Space {
        match mem {
            Mem::Sbuf => &mut self.sbuf,
            Mem::Psum => &mut self.psum,
        }
    }

    /// Each granule's reads per write, from the program's instructions.
    fn count(&mut self, program: &Program) {
        let (mut sbuf, mut psum) = (Counts::new(&self.sbuf), Counts::new(&self.psum));
        each_access(program, |ap, write| {
            let (space, counts) = match ap.mem {
                Mem::Sbuf => (&self.sbuf, &mut sbuf),
                Mem::Psum => (&self.psum, &mut psum),
            };
            space.granules(ap, |g| counts.add(g, write));
        });
        sbuf.into(&mut self.sbuf);
        psum.into(&mut self.psum);
    }

    /// An access to `ap` completed (a write, or a read).
    pub fn access(&mut self, ap: &Ap, write: bool) {
        let space = self.space(ap.mem);
        if write {
            space.write(ap);
        } else {
            space.read(ap);
        }
    }

    /// Writes the counters that changed.
    pub fn show(&mut self, cx: &mut Ctx<'_>) {
        self.sbuf.show(cx);
        self.psum.show(cx);
    }

    /// Live bytes of SBUF and PSUM now.
    pub fn live_bytes(&self) -> (u64, u64) {
        (self.sbuf.live * u64::from(GRANULE_BYTES), self.psum.live * u64::from(GRANULE_BYTES))
    }
}

/// Calls `f` with each SBUF or PSUM access pattern of `program`'s instructions and whether it
/// is written.
fn each_access(program: &Program, mut f: impl FnMut(&Ap, bool)) {
    for (_, stream) in &program.streams {
        for i in &stream.instrs {
            if let Instr::DmaStart { src, dst, .. } = i {
                for (addr, write) in [(src, false), (dst, true)] {
                    if let DmaAddr::OnChip(ap) = addr {
                        f(ap, write);
                    }
                }
                continue;
            }
            exec::inputs(i).iter().for_each(|ap| f(&ap, false));
            exec::outputs(i).iter().for_each(|(ap, _)| f(&ap, true));
        }
    }
}

/// Reads and writes per granule, while the program is counted.
struct Counts {
    reads: Vec<u32>,
    writes: Vec<u32>,
}

impl Counts {
    fn new(s: &Space) -> Counts {
        Counts { reads: vec![0; s.since_write.len()], writes: vec![0; s.since_write.len()] }
    }

    fn add(&mut self, g: usize, write: bool) {
        let c = if write { &mut self.writes[g] } else { &mut self.reads[g] };
        *c = c.saturating_add(1);
    }

    fn into(self, s: &mut Space) {
        for ((out, r), w) in s.reads_per_write.iter_mut().zip(self.reads).zip(self.writes) {
            *out = if w == 0 { 0 } else { r.div_ceil(w).min(u32::from(NOT_LIVE - 1)) as u8 };
        }
    }
}

#[cfg(test)]
mod tests;
