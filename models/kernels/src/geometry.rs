//! [`Geometry`]: the core figures the GEMM kernel tiles by, read from the chip's core
//! description, and the kernel's SBUF layout in that core's partition.
//!
//! The tensor engine's rows are the contraction's partitions (a K-block is `rows` rows, 4x in
//! MXFP8) and its columns the width of a weight chunk (and the partitions of an output chunk);
//! a PSUM bank of FP32 bounds the tokens of one program; the SBUF's bytes per partition are
//! shared out as [`SbufLayout`] says; the DMA engines' partitions set how many semaphore
//! increments a DMA gives (one per engine it touches). On a 128 x 128 core with 256 KiB per
//! partition, 8 PSUM banks of 2 KiB and 8 partitions per DMA engine (every preset) the layout
//! is the one the chip benchmarks were written for, byte for byte.
//!
//! Left out: arrays whose columns exceed their rows (an output chunk would need more SBUF
//! partitions than the core has) are refused; the MX regions (staging, scales) are reserved in
//! every program, MX or not; below 256 KiB a partition keeps the regions at their 256 KiB
//! places as long as they fit ([`Geometry::layout`]).

use trnsim_core::spec::CoreSpec;

/// The core figures the GEMM kernel's tiling reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Geometry {
    /// SBUF partitions = tensor-engine rows (a K-block's rows per partition of K).
    pub partitions: u32,
    /// Tensor-engine columns: a weight chunk's columns, an output chunk's partitions.
    pub columns: u32,
    /// SBUF bytes per partition.
    pub sbuf_bpp: u32,
    /// PSUM banks.
    pub psum_banks: u32,
    /// Bytes per partition of one PSUM bank.
    pub psum_bank_bytes: u32,
    /// SBUF partitions per DMA engine.
    pub dma_ppe: u32,
}

/// Where each of the GEMM kernel's SBUF regions starts, and its size, per partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SbufLayout {
    /// X's K-blocks (the program's A region): a quarter of the partition.
    pub x: u32,
    /// W's slab ring: a quarter.
    pub w: u32,
    /// Y's output buffers: a 32nd.
    pub y: u32,
    /// The MXFP4 staging ring: an 8th.
    pub stage: u32,
    /// Its scales: a 32nd.
    pub stage_scales: u32,
    /// X's MX scales: a 16th (at most half of what the regions above leave).
    pub xs: u32,
    /// W's MX scale ring: the rest of the partition.
    pub ws: u32,
    /// The layout's end.
    pub end: u32,
}

impl SbufLayout {
    /// Bytes per partition of the region starting at `start` (one of this layout's fields
    /// but `end`; regions are in field order, each up to the next one's start).
    pub fn size(&self, start: u32) -> u32 {
        let starts = [self.x, self.w, self.y, self.stage, self.stage_scales, self.xs, self.ws, self.end];
        // The last region starting there (an empty region shares its start with the next).
        let i = starts[..7].iter().rposition(|&s| s == start).unwrap_or(6);
        starts[i + 1] - start
    }
}

/// Most tokens per program whatever the PSUM bank: the ISA's moving free size.
const MAX_TOKENS: u32 = 512;
/// Most PSUM banks one group of chunks takes (two groups, double-buffered).
const MAX_GROUP: u32 = 4;

impl Geometry {
    /// Every preset core (NC-v2..v5): 128 x 128, 256 KiB per partition, 8 PSUM banks of 2 KiB,
    /// 8 partitions per DMA engine.
    pub const NC_128: Geometry = Geometry {
        partitions: 128,
        columns: 128,
        sbuf_bpp: 0x4_0000,
        psum_banks: 8,
        psum_bank_bytes: 2048,
        dma_ppe: 8,
    };

    /// The figures of `core`; `Err((field, message))` where the kernel cannot tile on it.
    pub fn of(core: &CoreSpec) -> Result<Geometry, (&'static str, String)> {
        let g = Geometry {
            partitions: core.sbuf.partitions,
            columns: core.tensor.columns,
            sbuf_bpp: core.sbuf.partition_bytes,
            psum_banks: core.psum.banks,
            psum_bank_bytes: core.psum.bank_bytes(),
            dma_ppe: core.dma.partitions_per_engine.max(1),
        };
        if g.columns > g.partitions {
            let m = format!(
                "the kernel library's GEMM stores each {}-column output chunk on as many SBUF partitions; this core has {}",
                g.columns, g.partitions
            );
            return Err(("tensor.columns", m));
        }
        if g.psum_banks < 2 {
            return Err((
                "psum.banks",
                format!("{}: the GEMM kernel double-buffers PSUM over at least 2 banks", g.psum_banks),
            ));
        }
        if g.max_tokens() == 0 {
            let m = format!("a PSUM bank of {} bytes per partition holds no FP32 token", g.psum_bank_bytes);
            return Err(("psum.partition_bytes", m));
        }
        Ok(g)
    }

    /// Most tokens per program: one PSUM bank of FP32, at most 512.
    pub fn max_tokens(&self) -> u32 {
        (self.psum_bank_bytes / 4).min(MAX_TOKENS)
    }

    /// Most chunks per group: half the PSUM banks, at most 4.
    pub fn max_group(&self) -> u32 {
        (self.psum_banks / 2).min(MAX_GROUP)
    }

    /// The first PSUM bank of the second half (groups alternate between the halves).
    pub fn psum_half(&self) -> u32 {
        self.psum_banks / 2
    }

    /// Semaphore increments a DMA over partitions `0..parts` gives: one per engine it touches.
    pub fn engines(&self, parts: u32) -> u32 {
        parts.div_ceil(self.dma_ppe)
    }

    /// The partition's share-out, in shares of a frame `F`: X and W a quarter each, Y's
    /// buffers a 32nd, the MXFP4 staging ring an 8th and its scales a 32nd (11/16 of `F`);
    /// the rest of the partition holds the MX scales, X's a 16th of `F` (at most half the rest)
    /// and W's the rest. `F`
    /// is the partition from 256 KiB up (at 256 KiB: X at 0, W at 64 KiB, Y at 128 KiB, the
    /// staging ring at 136 KiB, X's scales at 176 KiB, W's at 192 KiB, the benchmarks'
    /// layout); below, 256 KiB as long as its first 11/16 fit (the presets' 192 and 224 KiB
    /// keep the 256 KiB regions, with smaller MX scale regions), else the largest that fits.
    pub fn layout(&self) -> SbufLayout {
        const FULL: u64 = 0x4_0000;
        let bpp = u64::from(self.sbuf_bpp);
        let frame = bpp.max(FULL.min(bpp * 16 / 11));
        let u = u32::try_from(frame / 32).unwrap_or(u32::MAX / 32) & !63;
        let end = self.sbuf_bpp & !63;
        let x = 0;
        let w = x + 8 * u;
        let y = w + 8 * u;
        let stage = y + u;
        let stage_scales = stage + 4 * u;
        let xs = stage_scales + u;
        let ws = xs + (2 * u).min(((end - xs) / 2) & !63);
        SbufLayout { x, w, y, stage, stage_scales, xs, ws, end }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_presets_layout_is_the_benchmarks() {
        let l = Geometry::NC_128.layout();
        assert_eq!(
            (l.x, l.w, l.y, l.stage, l.stage_scales, l.xs, l.ws, l.end),
            (0, 0x10000, 0x20000, 0x22000, 0x2a000, 0x2c000, 0x30000, 0x40000)
        );
        assert_eq!((l.size(l.stage), l.size(l.y), l.size(l.ws)), (0x8000, 0x2000, 0x10000));
        for (name, bpp) in [("nc-v2", 0x3_0000), ("nc-v3", 0x3_8000), ("nc-v4", 0x4_0000), ("nc-v5", 0x4_0000)] {
            let core = trnsim_core::spec::preset(name).unwrap();
            let g = Geometry::of(&core).unwrap();
            assert_eq!(g, Geometry { sbuf_bpp: bpp, ..Geometry::NC_128 }, "{name}");
            // Trn1's and Trn2's SBUF keep the regions a non-MX program uses where they were.
            let m = g.layout();
            assert_eq!((m.x, m.w, m.y, m.stage, m.stage_scales, m.xs), (l.x, l.w, l.y, l.stage, l.stage_scales, l.xs));
            assert!(m.ws > m.xs && m.end == bpp, "{name}");
        }
    }

    #[test]
    fn a_larger_sbuf_widens_every_region_and_odd_cores_are_refused() {
        let g = Geometry { sbuf_bpp: 3 * 0x2_0000, ..Geometry::NC_128 };
        let l = g.layout();
        assert_eq!((l.w, l.y, l.end), (0x18000, 0x30000, 0x60000));
        let small = Geometry { sbuf_bpp: 0x2_0000, ..Geometry::NC_128 }.layout();
        assert!(small.w < 0x10000 && small.xs <= small.ws && small.ws < small.end && small.end == 0x2_0000);
        let mut core = (*trnsim_core::spec::preset("nc-v4").unwrap()).clone();
        core.tensor.columns = 256;
        assert_eq!(Geometry::of(&core).unwrap_err().0, "tensor.columns");
        core.tensor.columns = 128;
        core.psum.banks = 1;
        assert_eq!(Geometry::of(&core).unwrap_err().0, "psum.banks");
    }
}
