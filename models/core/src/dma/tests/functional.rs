//! Functional mode: bytes arrive intact through HBM, SBUF and back, with unaligned HBM rows and
//! strided on-chip patterns.

use super::{ap, cmd, rig};
use crate::dma::DmaParams;
use crate::isa::{DmaAddr, Dtype};
use trnsim_kernel::{Dur, Time};

const ROWS: u16 = 120;
const BPP: u32 = 1000;

fn row(p: usize) -> Vec<u8> {
    (0..BPP as usize).map(|i| ((p * 7 + i * 13 + 1) % 251) as u8).collect()
}

#[test]
fn bytes_go_from_hbm_to_sbuf_and_back_intact() {
    // 120 partitions from 3 (engines 0..15, the first and last partly), 500 BF16 per partition
    // as [2 x 250] with a gap, HBM rows 1536 B apart from an address 16 B into a burst.
    let (src, src_stride) = (0x10010u64, 1536u64);
    let (back, back_stride) = (0x20_0003u64, 1000u64);
    let far = 0x40_0005u64;
    let hbm = |addr| DmaAddr::Hbm { addr, partition_stride: 0 };
    let tile = ap(3, ROWS, 64, Dtype::Bf16, &[(2, 300), (250, 1)]);
    let copy = ap(5, ROWS, 8192, Dtype::Bf16, &[(500, 1)]);
    let at = |us| Time::ZERO + Dur::from_us(us);
    let cmds = vec![
        (at(0), cmd(1, 0, DmaAddr::Hbm { addr: src, partition_stride: src_stride }, DmaAddr::OnChip(tile), BPP)),
        (at(20), cmd(2, 1, DmaAddr::OnChip(tile), DmaAddr::Hbm { addr: back, partition_stride: back_stride }, BPP)),
        (at(40), cmd(3, 2, DmaAddr::OnChip(tile), DmaAddr::OnChip(copy), BPP)),
        (at(60), cmd(4, 3, hbm(src), hbm(far), 10_000)),
    ];
    let mut r = rig(DmaParams::v4(), cmds, true);
    let rows: Vec<Vec<u8>> = (0..ROWS as usize).map(row).collect();
    let hbm = r.hbm_mut().data_mut().unwrap();
    for (p, bytes) in rows.iter().enumerate() {
        hbm.write(src + p as u64 * src_stride, bytes);
    }
    r.run();
    assert_eq!(r.stat("commands_done"), 4.0);
    assert_eq!(r.stat("malformed_commands"), 0.0);
    assert_eq!(r.sem_ops().len(), 3 * 16 + 1, "HBM -> HBM is one part, on engine 0");
    let want: Vec<u8> = rows.concat();

    assert!(r.sbuf_mut().data.read(&tile) == want, "HBM -> SBUF");

    let hbm = r.hbm_mut().data_mut().unwrap();
    for (p, bytes) in rows.iter().enumerate() {
        let mut out = vec![0u8; BPP as usize];
        hbm.read(back + p as u64 * back_stride, &mut out);
        assert!(out == *bytes, "SBUF -> HBM, row {p}");
    }

    assert!(r.sbuf_mut().data.read(&copy) == want, "SBUF -> SBUF");

    let hbm = r.hbm_mut().data_mut().unwrap();
    let (mut a, mut b) = (vec![0u8; 10_000], vec![1u8; 10_000]);
    hbm.read(src, &mut a);
    hbm.read(far, &mut b);
    assert!(a == b, "HBM -> HBM");
    println!(
        "functional round trip: {} HBM reads, {} HBM writes, {} SBUF reads, {} SBUF writes",
        r.stat("hbm_read_bursts"),
        r.stat("hbm_write_bursts"),
        r.stat("sbuf_reads"),
        r.stat("sbuf_writes")
    );
}

#[test]
fn a_malformed_command_moves_nothing_but_still_completes() {
    let tile = ap(0, 8, 0, Dtype::Fp32, &[(16, 1)]);
    let bad = cmd(1, 0, DmaAddr::Hbm { addr: 0, partition_stride: 64 }, DmaAddr::OnChip(tile), 60);
    let mut r = rig(DmaParams::v4(), vec![(Time::ZERO, bad)], true);
    r.run();
    assert_eq!(r.stat("malformed_commands"), 1.0);
    assert_eq!(r.stat("bytes"), 0.0);
    assert_eq!(r.sem_ops().len(), 1);
    assert!((r.latency_ns() - 1300.0).abs() < 1.0);
}
