//! What each instruction reads and writes, how many flops it does, and (functional mode) the
//! values it computes. Engines compute in FP32 and convert on read and write (spec §2).

use crate::isa::{Ap, Dtype, Instr};
use crate::numeric;

/// Up to two operands (what an instruction reads or writes), held inline: asked on every
/// issue attempt and hazard check, so no allocation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Few<T: Copy> {
    items: [Option<T>; 2],
}

impl<T: Copy> Few<T> {
    fn of(a: Option<T>, b: Option<T>) -> Few<T> {
        match (a, b) {
            (None, b) => Few { items: [b, None] },
            (a, b) => Few { items: [a, b] },
        }
    }
    /// The operands, in order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        self.items.iter().flatten().copied()
    }
    /// How many there are.
    pub fn len(&self) -> usize {
        self.items.iter().flatten().count()
    }
    /// True if there are none.
    pub fn is_empty(&self) -> bool {
        self.items[0].is_none()
    }
}

/// The access patterns an instruction reads, in interface order.
pub fn inputs(i: &Instr) -> Few<Ap> {
    match *i {
        Instr::LoadStationary { src, scales } | Instr::MultiplyMoving { src, scales, .. } => Few::of(Some(src), scales),
        Instr::TensorTensor { a, b, .. } => Few::of(Some(a), Some(b)),
        Instr::Transpose { src, .. }
        | Instr::TensorScalar { src, .. }
        | Instr::Activation { src, .. }
        | Instr::TensorReduce { src, .. }
        | Instr::TensorCopy { src, .. }
        | Instr::QuantizeMx { src, .. } => Few::of(Some(src), None),
        _ => Few::of(None, None),
    }
}

/// The access patterns an instruction writes, with whether the write accumulates (PSUM).
pub fn outputs(i: &Instr) -> Few<(Ap, bool)> {
    match *i {
        Instr::MultiplyMoving { dst, acc, .. } => Few::of(Some((dst, acc == crate::isa::Accumulate::Accumulate)), None),
        Instr::Transpose { dst, .. }
        | Instr::TensorTensor { dst, .. }
        | Instr::TensorScalar { dst, .. }
        | Instr::TensorReduce { dst, .. }
        | Instr::TensorCopy { dst, .. }
        | Instr::Memset { dst, .. }
        | Instr::Iota { dst, .. } => Few::of(Some((dst, false)), None),
        Instr::Activation { dst, reduce, .. } => Few::of(Some((dst, false)), reduce.map(|(_, r)| (r, false))),
        Instr::QuantizeMx { dst, scales, .. } => Few::of(Some((dst, false)), Some((scales, false))),
        _ => Few::of(None, None),
    }
}

/// True if two access patterns may touch a common byte (same memory, overlapping partition
/// ranges and overlapping byte extents within a partition; conservative).
pub fn overlaps(a: &Ap, b: &Ap) -> bool {
    if a.mem != b.mem {
        return false;
    }
    let (ap0, ap1) = (a.partition_start, a.partition_start + a.partitions);
    let (bp0, bp1) = (b.partition_start, b.partition_start + b.partitions);
    if ap1 <= bp0 || bp1 <= ap0 {
        return false;
    }
    let (a0, a1) = extent(a);
    let (b0, b1) = extent(b);
    a0 < b1 && b0 < a1
}

/// [first byte, one past the last byte] of a pattern within a partition.
pub fn extent(ap: &Ap) -> (i64, i64) {
    let eb = ap.dtype.bytes() as i64;
    let (mut lo, mut hi) = (0i64, 0i64);
    for d in ap.dims() {
        let span = (d.size as i64 - 1) * d.stride as i64 * eb;
        if span < 0 {
            lo += span;
        } else {
            hi += span;
        }
    }
    (ap.offset as i64 + lo, ap.offset as i64 + hi + eb)
}

/// Floating-point operations: 2 per MAC for matmuls (K x M x N MACs), one per output element
/// otherwise (two for activations with scale and bias).
pub fn flops(i: &Instr, stationary_cols: u64) -> u64 {
    match i {
        Instr::MultiplyMoving { src, .. } => {
            let k = src.partitions as u64 * if src.dtype == Dtype::MxFp8E4m3 { 4 } else { 1 };
            2 * k * stationary_cols * src.matmul_columns()
        }
        _ => outputs(i).iter().next().map_or(0, |(d, _)| d.free_elems() * d.partitions as u64),
    }
}

/// Functional mode: the bytes of each output of `i`, given its inputs' bytes (pattern order,
/// partition-major) and the weights in the array (tensor engine).
pub fn compute(i: &Instr, inputs: &[Vec<u8>], weights: Option<(&Ap, &[Vec<u8>])>) -> Vec<Vec<u8>> {
    let dec = |k: usize, ap: &Ap| numeric::decode(ap.dtype, &inputs[k]);
    match *i {
        Instr::MultiplyMoving { src, dst, .. } => {
            let Some((wap, w)) = weights else { return vec![vec![0; dst.bytes() as usize]] };
            let m = wap.matmul_columns() as usize;
            let n = src.matmul_columns() as usize;
            let out = if src.dtype == Dtype::MxFp8E4m3 {
                // K = 4 x partitions: free index j x cols + c of partition p holds row k = j x P + p.
                let k = 4 * src.partitions as usize;
                let (we, wsc) = (to_k_major(&w[0], wap.partitions as usize, m), w.get(1).cloned().unwrap_or_default());
                let (xe, xsc) =
                    (to_k_major(&inputs[0], src.partitions as usize, n), inputs.get(1).cloned().unwrap_or_default());
                let (ws, xs) = (
                    numeric::MxOperand { elements: &we, scales: &wsc },
                    numeric::MxOperand { elements: &xe, scales: &xsc },
                );
                numeric::matmul_mx_ref(ws, xs, k, m, n)
            } else {
                let w = numeric::decode(wap.dtype, &w[0]);
                numeric::matmul_ref(&w, &dec(0, &src), src.partitions as usize, m, n)
            };
            vec![numeric::encode(dst.dtype, &out)]
        }
        Instr::Transpose { src, dst } => {
            let x = dec(0, &src);
            let (p, f) = (src.partitions as usize, src.free_elems() as usize);
            let mut y = vec![0f32; p * f];
            for a in 0..p {
                for b in 0..f {
                    y[b * p + a] = x[a * f + b];
                }
            }
            vec![numeric::encode(dst.dtype, &y)]
        }
        Instr::TensorTensor { op, a, b, dst } => {
            let (x, y) = (dec(0, &a), dec(1, &b));
            let z: Vec<f32> = x.iter().zip(&y).map(|(&p, &q)| numeric::alu(op, p, q)).collect();
            vec![numeric::encode(dst.dtype, &z)]
        }
        Instr::TensorScalar { op, src, imm, dst } => {
            let z: Vec<f32> = dec(0, &src).into_iter().map(|v| numeric::alu(op, v, imm)).collect();
            vec![numeric::encode(dst.dtype, &z)]
        }
        Instr::Activation { func, src, dst, scale, bias, reduce } => {
            let z: Vec<f32> = dec(0, &src).into_iter().map(|v| numeric::act(func, v * scale + bias)).collect();
            let mut outs = vec![numeric::encode(dst.dtype, &z)];
            if let Some((op, r)) = reduce {
                outs.push(numeric::encode(r.dtype, &reduce_rows(op, &z, src.partitions as usize)));
            }
            outs
        }
        Instr::TensorReduce { op, src, dst } => {
            let x = dec(0, &src);
            vec![numeric::encode(dst.dtype, &reduce_rows(op, &x, src.partitions as usize))]
        }
        Instr::TensorCopy { src, dst } => vec![numeric::encode(dst.dtype, &dec(0, &src))],
        Instr::QuantizeMx { src, .. } => quantize_mx(&dec(0, &src), src.partitions as usize),
        Instr::Memset { dst, value } => {
            vec![numeric::encode(dst.dtype, &vec![value; (dst.free_elems() * dst.partitions as u64) as usize])]
        }
        Instr::Iota { dst, base, step, partition_step } => {
            let (p, f) = (dst.partitions as i64, dst.free_elems() as i64);
            let v: Vec<f32> = (0..p)
                .flat_map(|a| (0..f).map(move |b| (base as i64 + a * partition_step as i64 + b * step as i64) as f32))
                .collect();
            vec![numeric::encode(dst.dtype, &v)]
        }
        _ => Vec::new(),
    }
}

/// quantize_mx's two outputs (elements in SBUF order, scales as K/32 partitions x columns)
/// of `x`, a BF16/FP16 operand in SBUF order on `partitions` partitions.
fn quantize_mx(x: &[f32], partitions: usize) -> Vec<Vec<u8>> {
    let cols = x.len() / (4 * partitions.max(1));
    let k = 4 * partitions;
    // SBUF order (p, j x cols + c) to K-major (j x partitions + p, c).
    let mut km = vec![0f32; x.len()];
    for p in 0..partitions {
        for j in 0..4 {
            for c in 0..cols {
                km[(j * partitions + p) * cols + c] = x[p * 4 * cols + j * cols + c];
            }
        }
    }
    let (e, scales) = numeric::mx::quantize_mx_along_k(&km, k, cols);
    let mut elements = vec![0u8; e.len()];
    for p in 0..partitions {
        for j in 0..4 {
            for c in 0..cols {
                elements[p * 4 * cols + j * cols + c] = e[(j * partitions + p) * cols + c];
            }
        }
    }
    vec![elements, scales]
}

/// Reorders an MXFP8 operand from SBUF order (partition p, free index j x cols + c) to K x cols
/// row-major with k = j x partitions + p.
fn to_k_major(bytes: &[u8], partitions: usize, cols: usize) -> Vec<u8> {
    let mut out = vec![0u8; bytes.len()];
    for p in 0..partitions {
        for j in 0..4 {
            for c in 0..cols {
                out[(j * partitions + p) * cols + c] = bytes[p * 4 * cols + j * cols + c];
            }
        }
    }
    out
}

/// Reduces each of `rows` equal rows of `x` left to right.
fn reduce_rows(op: crate::isa::AluOp, x: &[f32], rows: usize) -> Vec<f32> {
    let n = x.len() / rows.max(1);
    x.chunks(n.max(1)).map(|r| numeric::reduce(op, r)).collect()
}
