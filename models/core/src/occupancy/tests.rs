use super::*;
use crate::isa::asm::{assemble, AsmOptions};

/// A tile DMA'd into SBUF and read by two matmuls (after one weight load), two matmuls
/// accumulating into one PSUM bank and the read that drains it, and a result never read.
const PROGRAM: &str = "\
.engine sync
    dma_start q0 hbm 0x0 stride 1024 -> sbuf[0:128] +0x0 [512:1] bf16, bytes=1024, sem=s0
    halt

.engine tensor
    sem_wait s0 >= 16
    ldweights sbuf[0:128] +0x10000 [128:1] bf16
    matmul sbuf[0:128] +0x0 [512:1] bf16 -> psum[0:128] bank0 [512:1] fp32, overwrite
    matmul sbuf[0:128] +0x0 [512:1] bf16 -> psum[0:128] bank0 [512:1] fp32, accumulate
    sem_inc s1, 1
    halt

.engine vector
    sem_wait s1 >= 1
    tensor_copy psum[0:128] bank0 [512:1] fp32 -> sbuf[0:128] +0x20000 [512:1] fp32
    halt
";

fn setup() -> (Program, Occupancy) {
    let program = assemble("t.asm", PROGRAM, &AsmOptions::default()).unwrap();
    let spec = crate::spec::preset("nc-v4").unwrap();
    let o = Occupancy::new(&program, spec.sbuf, spec.psum, (TrackId(0), TrackId(1)));
    (program, o)
}

fn instr(p: &Program, engine: crate::isa::Engine, k: usize) -> Instr {
    p.streams.iter().find(|(e, _)| *e == engine).unwrap().1.instrs[k]
}

#[test]
fn a_tile_is_live_from_its_write_until_its_last_read() {
    use crate::isa::Engine::*;
    let (p, mut o) = setup();
    let Instr::DmaStart { dst: DmaAddr::OnChip(tile), .. } = instr(&p, Sync, 0) else { panic!() };
    let Instr::MultiplyMoving { src, dst: bank, .. } = instr(&p, Tensor, 2) else { panic!() };
    assert_eq!(src, tile);
    o.access(&tile, true);
    // 128 partitions x 1,024 bytes = 2,048 granules of 64 B.
    assert_eq!(o.live_bytes(), (128 * 1024, 0));
    o.access(&tile, false);
    assert_eq!(o.live_bytes().0, 128 * 1024, "read once of twice: still live");
    o.access(&bank, true);
    o.access(&bank, true);
    assert_eq!(o.live_bytes(), (128 * 1024, 128 * 2048), "two matmuls accumulate into one bank");
    o.access(&tile, false);
    assert_eq!(o.live_bytes().0, 0, "the second read frees the tile");
    let Instr::TensorCopy { src: drain, dst: out, .. } = instr(&p, Vector, 1) else { panic!() };
    assert_eq!(drain, bank);
    o.access(&drain, false);
    assert_eq!(o.live_bytes().1, 0, "the read that drains the bank frees it");
    o.access(&out, true);
    assert_eq!(o.live_bytes().0, 128 * 2048, "a result never read stays live");
}

#[test]
fn data_never_written_is_never_live() {
    use crate::isa::Engine::*;
    let (p, mut o) = setup();
    let Instr::LoadStationary { src: weights, .. } = instr(&p, Tensor, 1) else { panic!() };
    o.access(&weights, false);
    assert_eq!(o.live_bytes(), (0, 0), "preloaded weights read, never written");
}
