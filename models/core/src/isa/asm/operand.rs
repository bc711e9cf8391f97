//! Operands: access patterns (with the checks that need no engine), registers, semaphores,
//! queues, integers and floats.

use super::lex::{fail, parse_f32, parse_i64, parse_u64, Cursor, LineError, NumError, Tok};
use super::{AsmOptions, MAX_DIMS, PSUM_BANKS, PSUM_BANK_BYTES, REGS};
use crate::isa::{Ap, Dim, Dtype, Mem, Operand, Reg};

/// How an instruction uses an access pattern; decides which spec §3 rules apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// Read by the executing engine.
    Input,
    /// Written by the executing engine.
    Output,
    /// The on-chip side of a DMA (moved by the DMA engines, not the issuing engine).
    Dma,
}

/// A parsed access pattern and where it was written.
#[derive(Clone, Copy, Debug)]
pub(super) struct ApAt {
    /// The instruction field it fills (`src`, `dst`, ...).
    pub field: &'static str,
    /// How the instruction uses it.
    pub role: Role,
    /// The pattern.
    pub ap: Ap,
    /// Byte offset of its first token in the line.
    pub at: u32,
    /// Byte offset of its partition range (`[start:count]`).
    pub part_at: u32,
}

/// The assembly name of a memory.
pub(super) fn mem_name(m: Mem) -> &'static str {
    match m {
        Mem::Sbuf => "sbuf",
        Mem::Psum => "psum",
    }
}

/// Bytes per partition of `m` under `opts`.
pub(super) fn partition_bytes(m: Mem, opts: &AsmOptions) -> u64 {
    match m {
        Mem::Sbuf => u64::from(opts.sbuf_partition_bytes),
        Mem::Psum => u64::from(PSUM_BANKS * PSUM_BANK_BYTES),
    }
}

/// `what` without its article: "a stride" -> "stride".
fn bare(what: &str) -> &str {
    what.strip_prefix("an ").or_else(|| what.strip_prefix("a ")).unwrap_or(what)
}

fn int_word(w: &str, at: u32, field: &'static str, what: &str, lo: i64, hi: i64) -> Result<i64, LineError> {
    match parse_i64(w) {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        Ok(_) | Err(NumError::OutOfRange) => fail(at, field, format!("{} {w} out of range {lo}..={hi}", bare(what))),
        Err(NumError::NotNumber) => fail(at, field, format!("expected {what}, found `{w}`")),
    }
}

/// Parses an integer in `lo..=hi` (decimal or `0x` hex, optional `-`).
pub(super) fn int(c: &mut Cursor<'_, '_>, field: &'static str, what: &str, lo: i64, hi: i64) -> Result<i64, LineError> {
    let (w, at) = c.word(field, what)?;
    int_word(w, at, field, what, lo, hi)
}

/// Parses an unsigned 64-bit integer (decimal or `0x` hex).
pub(super) fn uint64(c: &mut Cursor<'_, '_>, field: &'static str, what: &str) -> Result<u64, LineError> {
    let (w, at) = c.word(field, what)?;
    match parse_u64(w) {
        Ok(v) => Ok(v),
        Err(NumError::OutOfRange) => fail(at, field, format!("{} {w} out of range 0..={}", bare(what), u64::MAX)),
        Err(NumError::NotNumber) => fail(at, field, format!("expected {what}, found `{w}`")),
    }
}

/// Parses an unsigned 32-bit integer.
pub(super) fn uint32(c: &mut Cursor<'_, '_>, field: &'static str, what: &str) -> Result<u32, LineError> {
    int(c, field, what, 0, i64::from(u32::MAX)).map(|v| v as u32)
}

/// Parses a float (`1`, `0.5`, `-2.5e-3`, `inf`, `nan`).
pub(super) fn float(c: &mut Cursor<'_, '_>, field: &'static str) -> Result<f32, LineError> {
    let (w, at) = c.word(field, "a number")?;
    parse_f32(w).map_or_else(|| fail(at, field, format!("expected a number, found `{w}`")), Ok)
}

fn index_digits<'a>(w: &'a str, prefix: &str) -> Option<&'a str> {
    w.strip_prefix(prefix).filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// Parses `PREFIX<n>` with n below `count` (`r7`, `s3`, `q15`).
pub(super) fn indexed(
    c: &mut Cursor<'_, '_>,
    field: &'static str,
    prefix: &str,
    what: &str,
    count: u32,
) -> Result<u8, LineError> {
    let at = c.at();
    let digits = match c.peek() {
        Some(Tok::Word(w)) => index_digits(w, prefix),
        _ => None,
    };
    let Some(digits) = digits else {
        let last = count - 1;
        return fail(at, field, format!("expected a {what} {prefix}0..{prefix}{last}, found {}", c.found()));
    };
    c.bump();
    match digits.parse::<u32>() {
        Ok(n) if n < count => Ok(n as u8),
        _ => fail(at, field, format!("{what} {prefix}{digits} out of range {prefix}0..{prefix}{}", count - 1)),
    }
}

/// Parses a register (`r0`..`r63`) or a 32-bit signed immediate.
pub(super) fn operand(c: &mut Cursor<'_, '_>, field: &'static str) -> Result<Operand, LineError> {
    let at = c.at();
    let w = match c.peek() {
        Some(Tok::Word(w)) if index_digits(w, "r").is_some() => {
            return indexed(c, field, "r", "register", REGS).map(|r| Operand::Reg(Reg(r)));
        }
        Some(Tok::Word(w)) if parse_i64(w) != Err(NumError::NotNumber) => w,
        _ => return fail(at, field, format!("expected a register or an integer, found {}", c.found())),
    };
    c.bump();
    let v = int_word(w, at, field, "an immediate", i64::from(i32::MIN), i64::from(i32::MAX))?;
    Ok(Operand::Imm(v as i32))
}

/// Parses an access pattern `MEM[start:count] [bankB] [+OFFSET] [size:stride, ...] DTYPE` and
/// checks what needs no engine: partition range, bank, sizes, strides, alignment, extent.
pub(super) fn ap(
    c: &mut Cursor<'_, '_>,
    field: &'static str,
    role: Role,
    opts: &AsmOptions,
) -> Result<ApAt, LineError> {
    let at = c.at();
    let (w, _) = c.word(field, "an access pattern (`sbuf[...]` or `psum[...]`)")?;
    let mem = match w {
        "sbuf" => Mem::Sbuf,
        "psum" => Mem::Psum,
        _ => return fail(at, field, format!("expected `sbuf` or `psum`, found `{w}`")),
    };
    let limit = if mem == Mem::Sbuf { opts.sbuf_partitions } else { opts.psum_partitions };
    let (part_at, start, count) = partition_range(c, field, limit)?;
    let bank = bank(c, field, mem)?;
    let off_at = c.at();
    let off = if c.eat(Tok::Plus) { int(c, field, "a byte offset", 0, i64::from(u32::MAX))? as u32 } else { 0 };
    let dims_at = c.at();
    let (dims, ndims) = dims(c, field)?;
    let dtype = dtype(c, field)?;
    let Some(offset) = (bank * PSUM_BANK_BYTES).checked_add(off) else {
        return fail(off_at, field, format!("offset {off:#x} past bank {bank} overflows 32 bits"));
    };
    let ap = Ap { mem, partition_start: start, partitions: count, offset, dims, ndims, dtype };
    check_alignment(&ap, off_at, field)?;
    check_extent(&ap, dims_at, field, opts)?;
    Ok(ApAt { field, role, ap, at, part_at })
}

fn partition_range(c: &mut Cursor<'_, '_>, field: &'static str, limit: u32) -> Result<(u32, u16, u16), LineError> {
    let part_at = c.expect(Tok::LBrack, field)?;
    let start = int(c, field, "a partition start", 0, i64::from(u16::MAX))? as u16;
    c.expect(Tok::Colon, field)?;
    let count = int(c, field, "a partition count", 0, i64::from(u16::MAX))? as u16;
    c.expect(Tok::RBrack, field)?;
    if count == 0 {
        return fail(part_at, field, "partition count 0 (at least 1 partition)");
    }
    let end = u32::from(start) + u32::from(count);
    if end > limit {
        return fail(part_at, field, format!("partition range {start}..{end} exceeds {limit} partitions"));
    }
    Ok((part_at, start, count))
}

fn bank(c: &mut Cursor<'_, '_>, field: &'static str, mem: Mem) -> Result<u32, LineError> {
    let (at, w) = match c.peek() {
        Some(Tok::Word(w)) if w.starts_with("bank") => (c.at(), w),
        _ => return Ok(0),
    };
    if mem != Mem::Psum {
        return fail(at, field, format!("`{w}`: banks apply to psum only"));
    }
    c.bump();
    let last = PSUM_BANKS - 1;
    match index_digits(w, "bank").map(str::parse::<u32>) {
        Some(Ok(b)) if b < PSUM_BANKS => Ok(b),
        Some(_) => fail(at, field, format!("psum bank {} out of range bank0..bank{last}", &w[4..])),
        None => fail(at, field, format!("expected a psum bank bank0..bank{last}, found `{w}`")),
    }
}

fn dims(c: &mut Cursor<'_, '_>, field: &'static str) -> Result<([Dim; MAX_DIMS], u8), LineError> {
    c.expect(Tok::LBrack, field)?;
    let mut dims = [Dim::default(); MAX_DIMS];
    let mut n = 0;
    loop {
        let at = c.at();
        if n == MAX_DIMS {
            return fail(at, field, format!("more than {MAX_DIMS} dimensions"));
        }
        let size = int(c, field, "a dimension size", 0, i64::from(u16::MAX))? as u16;
        if size == 0 {
            return fail(at, field, "dimension size 0 (every dimension needs at least 1 element)");
        }
        let stride = if c.eat(Tok::Colon) { int(c, field, "a stride", -32768, 32767)? as i16 } else { 1 };
        dims[n] = Dim { size, stride };
        n += 1;
        if c.eat(Tok::RBrack) {
            return Ok((dims, n as u8));
        }
        if !c.eat(Tok::Comma) {
            return fail(c.at(), field, format!("expected `,` or `]`, found {}", c.found()));
        }
    }
}

/// Parses a data type name.
pub(super) fn dtype(c: &mut Cursor<'_, '_>, field: &'static str) -> Result<Dtype, LineError> {
    let (w, at) = c.word(field, "a data type")?;
    Dtype::from_name(w)
        .map_or_else(|| fail(at, field, format!("unknown data type `{w}` (expected {})", dtype_names())), Ok)
}

fn dtype_names() -> String {
    Dtype::ALL.iter().map(|d| d.name()).collect::<Vec<_>>().join(", ")
}

fn check_alignment(ap: &Ap, at: u32, field: &'static str) -> Result<(), LineError> {
    let e = ap.dtype.bytes();
    if ap.offset.is_multiple_of(e) {
        return Ok(());
    }
    let d = ap.dtype.name();
    fail(at, field, format!("offset {:#x} is not a multiple of the {e}-byte {d} element", ap.offset))
}

/// The lowest byte a pattern touches in its partition and one past the highest.
pub(super) fn byte_range(ap: &Ap) -> (i64, i64) {
    let e = i64::from(ap.dtype.bytes());
    let (mut lo, mut hi) = (i64::from(ap.offset), i64::from(ap.offset) + e);
    for d in &ap.dims[..usize::from(ap.ndims).min(MAX_DIMS)] {
        let reach = i64::from(d.stride) * (i64::from(d.size) - 1).max(0) * e;
        if reach < 0 {
            lo += reach;
        } else {
            hi += reach;
        }
    }
    (lo, hi)
}

fn check_extent(ap: &Ap, at: u32, field: &'static str, opts: &AsmOptions) -> Result<(), LineError> {
    let limit = partition_bytes(ap.mem, opts) as i64;
    let (lo, hi) = byte_range(ap);
    if lo < 0 {
        return fail(at, field, format!("pattern reaches byte {lo}, before the start of the partition"));
    }
    if hi > limit {
        let m = mem_name(ap.mem);
        return fail(at, field, format!("pattern touches bytes {lo}..{hi}, beyond the {limit}-byte {m} partition"));
    }
    Ok(())
}

/// Checks spec §3's partition start rules: more than 64 partitions start at 0; 33 to 64 start at
/// 0 or 64; 32 or fewer start at 0, 32, 64 or 96.
pub(super) fn check_start(a: &ApAt) -> Result<(), LineError> {
    let (s, n) = (a.ap.partition_start, a.ap.partitions);
    let (ok, allowed) = if n > 64 {
        (s == 0, "0")
    } else if n > 32 {
        (s == 0 || s == 64, "0 or 64")
    } else {
        (s % 32 == 0, "0, 32, 64 or 96")
    };
    if ok {
        return Ok(());
    }
    fail(a.part_at, a.field, format!("a range of {n} partitions must start at {allowed}, not {s}"))
}

/// Elements per partition, saturating (sizes may multiply past u64 only in theory).
pub(super) fn elems(ap: &Ap) -> u64 {
    ap.dims[..usize::from(ap.ndims).min(MAX_DIMS)].iter().fold(1u64, |n, d| n.saturating_mul(u64::from(d.size)))
}

/// Bytes per partition, saturating.
pub(super) fn row_bytes(ap: &Ap) -> u64 {
    elems(ap).saturating_mul(u64::from(ap.dtype.bytes()))
}
