//! The actions one node instance performs on its rank's chip, counted from the operation's
//! shape as the roofline times it (the same flops and HBM bytes), and the fabric traffic a
//! collective puts on the wire.
//!
//! Counting rules (a tensor engine of `R` rows, `e` bytes per element):
//! - GEMM: `m k n` MACs per GEMM; HBM reads of A and B (unless resident) and the write of C;
//!   the DMA moves every HBM byte; SBUF: the DMA's writes of A and B, the tensor engine's
//!   reads (B once as stationary weights, A once per `R`-column tile of C), C written from
//!   PSUM and read by the DMA; PSUM: an FP32 accumulate per output per `R`-row tile of the
//!   contraction and one read; one vector operation per output (the PSUM evacuation).
//! - Attention: `2 x scores x head_dim` MACs (QKᵀ and PV), 5 scalar operations per score
//!   (softmax); HBM reads of Q, K, V and the write of O; SBUF: the DMA's bytes twice and the
//!   probabilities written and read; PSUM: an FP32 write per score and per output.
//! - Element-wise: `elements x ops` vector operations; HBM read and write of the values;
//!   SBUF: each byte written and read twice (DMA in, engine, DMA out).
//! - Kernel: `flops / 2` MACs; its bytes read from HBM through the DMA and SBUF.
//! - Load/Store: the bytes through HBM, DMA and SBUF.
//! - Collectives: the bytes a rank puts on the wire (all-reduce `2 (n-1)/n` of its buffer,
//!   all-gather, reduce-scatter and all-to-all `(n-1)/n`, broadcast and send/recv all of it,
//!   an all-to-allv the mean off-diagonal row), times the mean hops of its traffic (ring
//!   neighbours in group order; every pair for all-to-all) in link bits, and its flits times
//!   the switches on those paths (hops - 1 on a fabric with switches). On an UltraCluster a
//!   pair in two UltraServers crosses EFA instead: its bytes through the sender's and the
//!   receiver's NIC, no NeuronLink bits.
//!
//! Left out: the collective engine's own HBM and SBUF traffic (the model moves none),
//! forwarding through chips on a torus, and the EFA leaf and spine switches (Ethernet
//! switches are not in the tables).

use crate::format::{dtype_size, Checked, Op};
use trnsim_fabric::topo::{NodeKind, RoutingKind, Topology};

/// Tensor formats in the order of [`Actions::macs`].
pub const FORMATS: [&str; 6] = ["bf16", "fp16", "fp8", "mxfp8", "mxfp4", "fp32"];

/// Counted actions of one node instance on one chip.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Actions {
    /// Multiply-accumulates by format ([`FORMATS`]).
    pub macs: [f64; 6],
    /// Vector engine element operations.
    pub vector_ops: f64,
    /// Scalar engine element operations.
    pub scalar_ops: f64,
    /// GpSimd element operations.
    pub gpsimd_ops: f64,
    /// Bytes read from or written to SBUF.
    pub sbuf_bytes: f64,
    /// Bytes read from or written to PSUM.
    pub psum_bytes: f64,
    /// Bytes the DMA engines move.
    pub dma_bytes: f64,
    /// Bytes read from HBM.
    pub hbm_read_bytes: f64,
    /// Bytes written to HBM.
    pub hbm_write_bytes: f64,
    /// Bits sent over NeuronLinks (each link a bit crosses counts).
    pub link_bits: f64,
    /// Flits through fabric switches (each switch a flit crosses counts).
    pub switch_flits: f64,
    /// Bytes sent through the EFA NIC.
    pub efa_bytes: f64,
}

fn format_index(dtype: &str) -> usize {
    let d = if dtype.starts_with("fp8") { "fp8" } else { dtype };
    FORMATS.iter().position(|f| *f == d).unwrap_or(0)
}

/// The actions of compute or memory operation `op` on a chip whose tensor engine has `rows`
/// rows (None for a collective).
pub fn of_local(op: &Op, rows: u32) -> Option<Actions> {
    let r = f64::from(rows.max(1));
    let mut a = Actions::default();
    match op {
        Op::Gemm { m, k, n, dtype, count, a_resident, b_resident, weight_dtype } => {
            let e = dtype_size(dtype).unwrap_or(2.0);
            // Weights in their own format (MXFP4 experts): their bytes at that format's size;
            // the multiply is counted in the activations' format, and the scaling work the
            // formats cost on the vector engine as the roofline times it.
            let wd = weight_dtype.as_deref().unwrap_or(dtype);
            let we = dtype_size(wd).unwrap_or(e);
            let (m, k, n, c) = (*m as f64, *k as f64, *n as f64, f64::from(*count));
            let (ab, bb) = (if *a_resident { 0.0 } else { m * k * e }, if *b_resident { 0.0 } else { k * n * we });
            a.macs[format_index(dtype)] = m * k * n * c;
            a.hbm_read_bytes = (ab + bb) * c;
            a.hbm_write_bytes = m * n * e * c;
            a.dma_bytes = a.hbm_read_bytes + a.hbm_write_bytes;
            let tensor_reads = k * n * we + m * k * e * (n / r).ceil();
            a.sbuf_bytes = (ab + bb + tensor_reads + 2.0 * m * n * e) * c;
            a.psum_bytes = m * n * 4.0 * ((k / r).ceil() + 1.0) * c;
            a.vector_ops = m * n * c + crate::costs::scaling_ops(dtype, wd, m * k * c, k * n * c);
        }
        Op::Attention { batch, heads, seq, kv_seq, kv_heads, head_dim, causal, dtype } => {
            let (b, h, s, d) = (*batch as f64, *heads as f64, *seq as f64, *head_dim as f64);
            let kv = kv_seq.unwrap_or(*seq) as f64;
            let kvh = kv_heads.unwrap_or(*heads) as f64;
            let scores = b * h * s * kv * if *causal { 0.5 } else { 1.0 };
            let e = dtype_size(dtype).unwrap_or(2.0);
            a.macs[format_index(dtype)] = 2.0 * scores * d;
            a.scalar_ops = 5.0 * scores;
            // Q for every query head, K and V for every KV head (GQA), as the roofline reads.
            a.hbm_read_bytes = b * (h * s + 2.0 * kvh * kv) * d * e;
            a.hbm_write_bytes = b * h * s * d * e;
            a.dma_bytes = a.hbm_read_bytes + a.hbm_write_bytes;
            a.sbuf_bytes = 2.0 * a.dma_bytes + 2.0 * scores * e;
            a.psum_bytes = 4.0 * (scores + b * h * s * d);
        }
        Op::Elementwise { elements, ops, dtype } => {
            let e = dtype_size(dtype).unwrap_or(2.0);
            let n = *elements as f64;
            a.vector_ops = n * f64::from(*ops);
            a.hbm_read_bytes = n * e;
            a.hbm_write_bytes = n * e;
            a.dma_bytes = 2.0 * n * e;
            a.sbuf_bytes = 4.0 * n * e;
        }
        Op::Kernel { flops, bytes, dtype, .. } => {
            a.macs[format_index(dtype)] = *flops as f64 / 2.0;
            a.hbm_read_bytes = *bytes as f64;
            a.dma_bytes = *bytes as f64;
            a.sbuf_bytes = 2.0 * *bytes as f64;
        }
        Op::Load { bytes } | Op::Store { bytes } => {
            let b = *bytes as f64;
            if matches!(op, Op::Load { .. }) {
                a.hbm_read_bytes = b;
            } else {
                a.hbm_write_bytes = b;
            }
            a.dma_bytes = b;
            a.sbuf_bytes = b;
        }
        _ => return None,
    }
    Some(a)
}

/// Bytes one rank of a group of `n` puts on the wire for collective `op` (a send/recv: its
/// bytes).
fn wire_bytes(op: &Op, n: usize) -> f64 {
    let nf = n.max(1) as f64;
    let f = (nf - 1.0) / nf;
    match op {
        Op::AllReduce(c) => 2.0 * f * c.bytes as f64,
        Op::AllGather(c) | Op::ReduceScatter(c) | Op::AllToAll(c) => f * c.bytes as f64,
        Op::Broadcast(c) if n > 1 => c.bytes as f64,
        Op::SendRecv { bytes, .. } => *bytes as f64,
        Op::AllToAllV(v) => {
            let rows = v.sizes.iter().enumerate();
            let off: f64 = rows
                .map(|(i, r)| r.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, b)| *b as f64).sum::<f64>())
                .sum();
            off / nf
        }
        _ => 0.0,
    }
}

/// The mean over `pairs` on `topo` of (NeuronLink hops, scale-up switches on the path, NICs
/// crossed): a pair in two UltraServers of a cluster crosses the EFA network (its sender's and
/// receiver's NICs, no NeuronLink), any other pair its scale-up fabric.
fn mean_path(topo: &Topology, pairs: &[(usize, usize)]) -> (f64, f64, f64) {
    let switched = topo.nodes.iter().any(|n| n.kind == NodeKind::Switch);
    let cluster = topo.routing == RoutingKind::Cluster;
    let us = |c: usize| c / topo.chips_per_server.max(1);
    let (mut hops, mut switches, mut nics, mut n) = (0usize, 0usize, 0usize, 0usize);
    for &(s, d) in pairs.iter().filter(|(s, d)| s != d && *s < topo.chips && *d < topo.chips) {
        n += 1;
        if cluster && us(s) != us(d) {
            nics += 2;
            continue;
        }
        let h = topo.hops(s, d);
        hops += h;
        switches += if switched { h.saturating_sub(1) } else { 0 };
    }
    if n == 0 {
        return (0.0, 0.0, 0.0);
    }
    let per = |x: usize| x as f64 / n as f64;
    (per(hops), per(switches), per(nics))
}

/// The actions of collective node `i` of `c` on each of its ranks (the mean over its groups'
/// ranks), on `topo` with flits of `flit_bytes`. None: not a collective.
pub fn of_comm(c: &Checked, i: usize, topo: Option<&Topology>, flit_bytes: u32) -> Option<Actions> {
    let op = &c.w.nodes[i].op;
    if of_local(op, 1).is_some() {
        return None;
    }
    let mut a = Actions::default();
    let Some(topo) = topo else { return Some(a) };
    let (n, pairs): (usize, Vec<(usize, usize)>) = match op {
        Op::SendRecv { offset, .. } => {
            let pairs = c.node_ranks[i]
                .iter()
                .map(|&r| (r as usize, crate::format::receiver(r, *offset, c.w.ranks) as usize))
                .collect();
            (2, pairs)
        }
        _ => {
            let group = op.group().unwrap_or("world");
            let groups = c.groups.get(group).cloned().unwrap_or_default();
            let g: Vec<usize> = groups.first().map(|g| g.iter().map(|&r| r as usize).collect()).unwrap_or_default();
            let all_pairs = matches!(op, Op::AllToAll(_) | Op::AllToAllV(_));
            let pairs = if all_pairs {
                g.iter().flat_map(|&s| g.iter().map(move |&d| (s, d))).collect()
            } else {
                (0..g.len()).map(|k| (g[k], g[(k + 1) % g.len()])).collect()
            };
            (g.len(), pairs)
        }
    };
    let bytes = wire_bytes(op, n);
    let (hops, switches, nics) = mean_path(topo, &pairs);
    a.link_bits = bytes * 8.0 * hops;
    a.switch_flits = (bytes / f64::from(flit_bytes.max(1))).ceil() * switches;
    a.efa_bytes = bytes * nics;
    Some(a)
}
