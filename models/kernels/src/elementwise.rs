//! The elementwise kernel: `elements` values, `ops` operations each, on every core: tiles of
//! 128 partitions stream from HBM into a ring of SBUF buffers, the vector engine runs the
//! first half of the operations on a tile (`tensor_scalar`), the scalar engine the rest
//! (`activation`), and the GpSimd engine's DMA stores it, so loads, both engines and stores
//! overlap across tiles. Activations, norms (a workload's `ops: 8`) and softmax (`ops: 5`)
//! are this kernel at their operation counts.
//!
//! Per core, semaphores: s0 tiles landed (16 per tile), s1 tiles through the vector engine,
//! s2 through the scalar engine, s3 tiles stored (16 per tile). Queues: loads q0, stores q1.
//!
//! Left out: the values, and a norm's or softmax's row reductions as distinct instructions
//! (each operation costs its elements on its engine, as a reduction's does).

use crate::format::Format;
use std::fmt::Write as _;

/// Bytes per partition of one tile at most (spec §4: >= 4 KiB per partition saturates a DMA
/// engine).
const TILE_BPP: u64 = 4096;
/// Tiles in flight per core (the SBUF ring).
const BUFS: u32 = 4;
/// Most tiles per program (larger ops run the program several times).
pub const MAX_TILES: u64 = 32;
const PAD: u64 = 512;
const IN_HBM: u64 = 0;
const OUT_HBM: u64 = 0x4000_0000;
const CORE_HBM: u64 = 0x1_0000_0000;

/// One core's share of an elementwise op as a program: `tiles` tiles of 128 x `free`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EltPlan {
    /// Elements per partition of a tile.
    pub free: u32,
    /// Tiles per program.
    pub tiles: u32,
    /// Operations per element (1..=1000).
    pub ops: u32,
    /// Element format in SBUF and HBM.
    pub format: Format,
    /// Program runs for the whole op.
    pub reps: u64,
}

/// The plan of `elements` values x `ops` on `cores` cores in `format`.
pub fn plan(cores: u32, elements: u64, ops: u32, format: Format) -> Result<EltPlan, String> {
    if cores == 0 || elements == 0 || !(1..=1000).contains(&ops) {
        return Err(format!(
            "elementwise {elements} x {ops} ops: elements, ops (1..=1000) and cores must be at least 1"
        ));
    }
    let per_core = elements.div_ceil(u64::from(cores));
    let per_part = per_core.div_ceil(128);
    let max_free = TILE_BPP / u64::from(format.bytes());
    let tiles = per_part.div_ceil(max_free);
    let free = per_part.div_ceil(tiles);
    let prog_tiles = tiles.min(MAX_TILES);
    let reps = tiles.div_ceil(prog_tiles);
    Ok(EltPlan {
        free: u32::try_from(free).map_err(|_| "elementwise: tile too large".to_string())?,
        tiles: u32::try_from(prog_tiles).map_err(|_| "elementwise: too many tiles".to_string())?,
        ops,
        format,
        reps,
    })
}

/// Core `core`'s program of plan `p` on a core of 8 partitions per DMA engine (every preset).
pub fn program(p: &EltPlan, core: u32) -> String {
    program_on(p, core, 8)
}

/// [`program`] on a core of `dma_ppe` partitions per DMA engine: a tile's DMA over 128
/// partitions gives one semaphore increment per engine it touches. The program addresses 128
/// partitions whatever the core's.
pub fn program_on(p: &EltPlan, core: u32, dma_ppe: u32) -> String {
    let per_tile = 128u32.div_ceil(dma_ppe.max(1));
    let dt = p.format.asm();
    let bpp = u64::from(p.free) * u64::from(p.format.bytes());
    let stride = bpp + PAD;
    let base = u64::from(core % 2) * CORE_HBM;
    let buf = |t: u32| u64::from(t % BUFS) * bpp;
    let (v_ops, s_ops) = (p.ops.div_ceil(2), p.ops / 2);
    let mut sync = String::from(".engine sync\n");
    let mut vec = String::from(".engine vector\n");
    let mut act = String::from(".engine scalar\n");
    let mut pool = String::from(".engine gpsimd\n");
    for t in 0..p.tiles {
        if t >= BUFS {
            let _ = writeln!(sync, "    sem_wait s3 >= {}", per_tile * (t - BUFS + 1));
        }
        let hbm = base + IN_HBM + u64::from(t) * 128 * stride;
        let _ = writeln!(
            sync,
            "    dma_start q0 hbm {hbm:#x} stride {stride} -> sbuf[0:128] +{:#x} [{}:1] {dt}, sem=s0",
            buf(t),
            p.free
        );
        let ap = format!("sbuf[0:128] +{:#x} [{}:1] {dt}", buf(t), p.free);
        let _ = writeln!(vec, "    sem_wait s0 >= {}", per_tile * (t + 1));
        for _ in 0..v_ops {
            let _ = writeln!(vec, "    tensor_scalar mul {ap}, 1.0 -> {ap}");
        }
        let _ = writeln!(vec, "    sem_inc s1, 1");
        let _ = writeln!(act, "    sem_wait s1 >= {}", t + 1);
        for _ in 0..s_ops {
            let _ = writeln!(act, "    activation identity {ap} -> {ap}, scale=1.0, bias=0.0");
        }
        let _ = writeln!(act, "    sem_inc s2, 1");
        let _ = writeln!(pool, "    sem_wait s2 >= {}", t + 1);
        let hbm = base + OUT_HBM + u64::from(t) * 128 * stride;
        let _ = writeln!(pool, "    dma_start q1 {ap} -> hbm {hbm:#x} stride {stride}, sem=s3");
    }
    let _ = writeln!(pool, "    sem_wait s3 >= {}", per_tile * p.tiles);
    for st in [&mut sync, &mut vec, &mut act, &mut pool] {
        st.push_str("    halt\n");
    }
    format!("{sync}\n{vec}\n{act}\n{pool}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_op_splits_into_tiles_of_at_most_4_kib_per_partition() {
        let p = plan(8, 8 * 128 * 2048 * 3, 4, Format::Bf16).unwrap();
        assert_eq!((p.free, p.tiles, p.reps), (2048, 3, 1));
        let big = plan(8, 1 << 34, 8, Format::Fp32).unwrap();
        assert_eq!((big.free, big.tiles), (1024, 32));
        assert!(big.reps * u64::from(big.tiles) * u64::from(big.free) * 128 * 8 >= 1 << 34);
        assert!(plan(8, 1, 0, Format::Bf16).is_err());
    }

    #[test]
    fn every_program_assembles() {
        for (e, ops) in [(1u64, 1u32), (1000, 5), (1 << 22, 8)] {
            let p = plan(8, e, ops, Format::Bf16).unwrap();
            let src = program(&p, 1);
            trnsim_core::isa::asm::assemble("elt", &src, &Default::default())
                .map_err(|e| trnsim_core::isa::asm::render_errors(&e))
                .unwrap();
        }
    }
}
