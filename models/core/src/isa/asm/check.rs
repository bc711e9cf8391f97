//! Checks of a parsed instruction that depend on the engine or relate its operands: which
//! engines may run it, spec §3 access and partition start rules, and cheap shape agreement.

use super::lex::{fail, LineError};
use super::operand::{check_start, elems, ApAt, Role};
use super::parse::Parsed;
use crate::isa::{Ap, Dtype, Engine, Instr, Mem};

type R<T> = Result<T, LineError>;

/// The stationary matrix most recently loaded in straight-line code (no label since), so a
/// following matmul can be checked against it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Stationary {
    /// Contraction size K (partitions).
    pub k: u16,
    /// Columns M (elements per partition).
    pub m: u64,
    /// Line of the `ldweights`.
    pub line: u32,
}

/// Runs every check on `p`, found at `line` with its mnemonic at `mnem_at`, in a section of
/// `engine` (`None`: a section with a bad header, where only engine-free checks run).
pub(super) fn check(
    p: &Parsed<'_>,
    engine: Option<Engine>,
    mnem_at: u32,
    line: u32,
    st: &mut Option<Stationary>,
    columns: u32,
) -> R<()> {
    if let Some(e) = engine {
        allowed_on(&p.instr, e, mnem_at)?;
    }
    for a in &p.aps {
        access(a, engine)?;
    }
    shapes(p, line, st, columns)
}

fn allowed_on(i: &Instr, e: Engine, at: u32) -> R<()> {
    let ok = i.engines();
    if ok.contains(&e) {
        return Ok(());
    }
    let names: Vec<&str> = ok.iter().map(|e| e.name()).collect();
    fail(at, "mnemonic", format!("`{}` cannot run on the {e} engine (runs on {})", i.mnemonic(), names.join(", ")))
}

/// Spec §3: the tensor engine reads SBUF and writes PSUM only; GpSimd cannot touch PSUM;
/// compute operands obey the partition start rules (DMA sides do not: the DMA engines address
/// any partition).
fn access(a: &ApAt, engine: Option<Engine>) -> R<()> {
    let mem = a.ap.mem;
    let bad = match (engine, a.role, mem) {
        (_, Role::Dma, _) => None,
        (Some(Engine::Tensor), Role::Input, Mem::Psum) => Some("the tensor engine reads sbuf only, not psum"),
        (Some(Engine::Tensor), Role::Output, Mem::Sbuf) => Some("the tensor engine writes psum only, not sbuf"),
        (Some(Engine::GpSimd), _, Mem::Psum) => Some("gpsimd cannot access psum"),
        _ => None,
    };
    if let Some(msg) = bad {
        return fail(a.at, a.field, msg);
    }
    if a.role == Role::Dma {
        return Ok(());
    }
    check_start(a)
}

fn find<'p>(p: &'p Parsed<'_>, field: &str) -> &'p ApAt {
    // Every caller names a field its instruction always parses.
    p.aps.iter().find(|a| a.field == field).unwrap_or(&p.aps[0])
}

/// `y` must have as many partitions and elements per partition as `x`.
fn same_shape(p: &Parsed<'_>, x: &str, y: &str) -> R<()> {
    let (a, b) = (find(p, x), find(p, y));
    if a.ap.partitions != b.ap.partitions {
        let msg = format!("`{y}` has {} partitions but `{x}` has {}", b.ap.partitions, a.ap.partitions);
        return fail(b.at, b.field, msg);
    }
    let (ea, eb) = (elems(&a.ap), elems(&b.ap));
    if ea != eb {
        return fail(b.at, b.field, format!("`{y}` has {eb} elements per partition but `{x}` has {ea}"));
    }
    Ok(())
}

/// `y` must have `x`'s partitions and exactly one element per partition (a reduction result).
fn one_per_partition(p: &Parsed<'_>, x: &str, y: &str) -> R<()> {
    let (a, b) = (find(p, x), find(p, y));
    if a.ap.partitions != b.ap.partitions {
        let msg = format!("`{y}` has {} partitions but `{x}` has {}", b.ap.partitions, a.ap.partitions);
        return fail(b.at, b.field, msg);
    }
    let n = elems(&b.ap);
    if n != 1 {
        return fail(b.at, b.field, format!("a reduction writes 1 element per partition, `{y}` has {n}"));
    }
    Ok(())
}

fn shapes(p: &Parsed<'_>, line: u32, st: &mut Option<Stationary>, columns: u32) -> R<()> {
    match &p.instr {
        Instr::LoadStationary { src, scales } => {
            mx_scales(p, src, scales.as_ref())?;
            stationary(p, src, line, st, columns)
        }
        Instr::MultiplyMoving { src, scales, dst, .. } => {
            mx_scales(p, src, scales.as_ref())?;
            moving(p, src, dst, *st)
        }
        Instr::Transpose { src, dst } => transpose(p, src, dst),
        Instr::TensorTensor { .. } => same_shape(p, "a", "b").and_then(|_| same_shape(p, "a", "dst")),
        Instr::TensorScalar { .. } | Instr::TensorCopy { .. } => same_shape(p, "src", "dst"),
        Instr::Activation { reduce, .. } => {
            same_shape(p, "src", "dst")?;
            if reduce.is_some() {
                one_per_partition(p, "src", "reduce")?;
            }
            Ok(())
        }
        Instr::TensorReduce { .. } => one_per_partition(p, "src", "dst"),
        Instr::QuantizeMx { src, dst, scales } => quantize_mx(p, src, dst, scales),
        Instr::DmaStart { .. } if p.aps.len() == 2 => same_partitions(p),
        _ => Ok(()),
    }
}

fn same_partitions(p: &Parsed<'_>) -> R<()> {
    let (s, d) = (&p.aps[0], &p.aps[1]);
    if s.ap.partitions == d.ap.partitions {
        return Ok(());
    }
    fail(d.at, d.field, format!("`dst` has {} partitions but `src` has {}", d.ap.partitions, s.ap.partitions))
}

/// quantize_mx: BF16/FP16 in, MXFP8 out of the same shape, on 32, 64, 96 or 128 partitions
/// and 4 K-rows per partition; one scale byte per 32 K-rows of a column.
fn quantize_mx(p: &Parsed<'_>, src: &Ap, dst: &Ap, scales: &Ap) -> R<()> {
    let at = |f: &str| find(p, f).at;
    if !matches!(src.dtype, Dtype::Bf16 | Dtype::Fp16) {
        return fail(at("src"), "src", format!("quantize_mx reads bf16 or fp16, not {}", src.dtype.name()));
    }
    if dst.dtype != Dtype::MxFp8E4m3 {
        return fail(at("dst"), "dst", format!("quantize_mx writes mxfp8, not {}", dst.dtype.name()));
    }
    if !src.partitions.is_multiple_of(32) {
        let msg =
            format!("a block is 32 K-rows over 32 partitions: {} partitions is not a multiple of 32", src.partitions);
        return fail(at("src"), "src", msg);
    }
    if !elems(src).is_multiple_of(4) {
        let msg = format!("mxfp8 packs 4 K-rows per partition: {} elements is not a multiple of 4", elems(src));
        return fail(at("src"), "src", msg);
    }
    same_shape(p, "src", "dst")?;
    if scales.dtype.bytes() != 1 {
        let msg = format!("scales are one byte each: use a 1-byte type, not {}", scales.dtype.name());
        return fail(at("scales"), "scales", msg);
    }
    let (want_p, want_f) = (src.partitions / 8, elems(src) / 4);
    if scales.partitions != want_p || elems(scales) != want_f {
        let msg = format!(
            "one scale per 32 K-rows of a column: `scales` needs {want_p} partitions x {want_f} elements, not {} x {}",
            scales.partitions,
            elems(scales)
        );
        return fail(at("scales"), "scales", msg);
    }
    Ok(())
}

/// MXFP8 operands need scales (one byte each); other types take none.
fn mx_scales(p: &Parsed<'_>, src: &Ap, scales: Option<&Ap>) -> R<()> {
    let mx = src.dtype == Dtype::MxFp8E4m3;
    match scales {
        None if mx => fail(find(p, "src").at, "src", "mxfp8 needs `scales=` (one e8m0 byte per 32 elements along K)"),
        Some(_) if !mx => fail(find(p, "scales").at, "scales", "`scales=` applies to mxfp8 operands only"),
        Some(s) if s.dtype.bytes() != 1 => {
            let msg = format!("scales are one byte each: use a 1-byte type, not {}", s.dtype.name());
            fail(find(p, "scales").at, "scales", msg)
        }
        _ => Ok(()),
    }
}

fn stationary(p: &Parsed<'_>, src: &Ap, line: u32, st: &mut Option<Stationary>, columns: u32) -> R<()> {
    if src.dtype == Dtype::MxFp8E4m3 && !elems(src).is_multiple_of(4) {
        let msg = format!("mxfp8 packs 4 K-rows per partition: {} elements is not a multiple of 4", elems(src));
        return fail(find(p, "src").at, "src", msg);
    }
    let m = src.matmul_columns();
    if m > u64::from(columns) {
        let msg = format!("the stationary matrix has at most {columns} columns (elements per partition), not {m}");
        return fail(find(p, "src").at, "src", msg);
    }
    *st = Some(Stationary { k: src.partitions, m, line });
    Ok(())
}

fn moving(p: &Parsed<'_>, src: &Ap, dst: &Ap, st: Option<Stationary>) -> R<()> {
    let d = find(p, "dst");
    if !matches!(dst.dtype, Dtype::Fp32 | Dtype::Bf16) {
        return fail(d.at, "dst", format!("matmul writes fp32 or bf16 to psum, not {}", dst.dtype.name()));
    }
    if src.dtype == Dtype::MxFp8E4m3 && !elems(src).is_multiple_of(4) {
        let msg = format!("mxfp8 packs 4 K-rows per partition: {} elements is not a multiple of 4", elems(src));
        return fail(find(p, "src").at, "src", msg);
    }
    let (n, dn) = (src.matmul_columns(), elems(dst));
    if n != dn {
        return fail(d.at, "dst", format!("`dst` has {dn} elements per partition but `src` (N) has {n}"));
    }
    let Some(s) = st else { return Ok(()) };
    if src.partitions != s.k {
        let msg = format!(
            "`src` has {} partitions (K) but the stationary loaded at line {} has {}",
            src.partitions, s.line, s.k
        );
        return fail(find(p, "src").at, "src", msg);
    }
    if u64::from(dst.partitions) != s.m {
        let msg = format!(
            "`dst` has {} partitions but the stationary loaded at line {} has {} columns (M)",
            dst.partitions, s.line, s.m
        );
        return fail(d.at, "dst", msg);
    }
    Ok(())
}

/// [P x F] -> [F x P].
fn transpose(p: &Parsed<'_>, src: &Ap, dst: &Ap) -> R<()> {
    let d = find(p, "dst");
    let (f, dp) = (elems(src), u64::from(dst.partitions));
    if dp != f {
        return fail(d.at, "dst", format!("`dst` has {dp} partitions but `src` has {f} elements per partition"));
    }
    let (sp, df) = (src.partitions, elems(dst));
    if df != u64::from(sp) {
        return fail(d.at, "dst", format!("`dst` has {df} elements per partition but `src` has {sp} partitions"));
    }
    Ok(())
}
