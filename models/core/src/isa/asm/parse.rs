//! One instruction line -> an [`Instr`], with its access patterns and branch label kept aside for
//! the engine checks and label resolution.

use super::lex::{fail, Cursor, LineError, Tok};
use super::operand::{self, row_bytes, ApAt, Role};
use super::{AsmOptions, QUEUES, SEMS};
use crate::isa::{Accumulate, ActFn, AluOp, Ap, Cond, DmaAddr, Instr, Operand, RegOp, Sem};

/// A parsed instruction before engine checks and label resolution.
#[derive(Debug)]
pub(super) struct Parsed<'a> {
    /// The instruction; a branch's `target` is 0 until its label is resolved.
    pub instr: Instr,
    /// Its access patterns in the order written.
    pub aps: Vec<ApAt>,
    /// A branch's label and where it was written.
    pub target: Option<(&'a str, u32)>,
}

type R<T> = Result<T, LineError>;

/// Every mnemonic, in documentation order.
pub(super) const MNEMONICS: [&str; 18] = [
    "ldweights",
    "matmul",
    "transpose",
    "tensor_tensor",
    "tensor_scalar",
    "activation",
    "tensor_reduce",
    "tensor_copy",
    "quantize_mx",
    "memset",
    "iota",
    "dma_start",
    "sem_wait",
    "sem_set",
    "sem_inc",
    "reg",
    "branch",
    "halt",
];

/// Parses the rest of a line that starts with a mnemonic.
pub(super) fn instruction<'a>(c: &mut Cursor<'_, 'a>, opts: &AsmOptions) -> R<Parsed<'a>> {
    let (m, at) = c.word("mnemonic", "a mnemonic")?;
    let mut p = P { c, opts, aps: Vec::new(), target: None };
    let instr = match m {
        "ldweights" => p.ldweights(),
        "matmul" => p.matmul(),
        "transpose" => p.unary(|src, dst| Instr::Transpose { src, dst }),
        "tensor_tensor" => p.tensor_tensor(),
        "tensor_scalar" => p.tensor_scalar(),
        "activation" => p.activation(),
        "tensor_reduce" => p.tensor_reduce(),
        "tensor_copy" => p.unary(|src, dst| Instr::TensorCopy { src, dst }),
        "quantize_mx" => p.quantize_mx(),
        "memset" => p.memset(),
        "iota" => p.iota(),
        "dma_start" => p.dma_start(),
        "sem_wait" => p.sem_op(Some(Tok::Ge), |sem, value| Instr::SemWait { sem, value }),
        "sem_set" => p.sem_op(Some(Tok::Eq), |sem, value| Instr::SemSet { sem, value }),
        "sem_inc" => p.sem_op(None, |sem, delta| Instr::SemInc { sem, delta }),
        "reg" => p.reg(),
        "branch" => p.branch(),
        "halt" => Ok(Instr::Halt),
        _ => fail(at, "mnemonic", format!("unknown mnemonic `{m}`{}", suggest(m))),
    }?;
    let (aps, target) = (p.aps, p.target);
    c.finish()?;
    Ok(Parsed { instr, aps, target })
}

/// " (did you mean `x`?)" for the mnemonic closest to `w` within two edits, else "".
fn suggest(w: &str) -> String {
    let best = MNEMONICS.iter().map(|m| (edit_distance(w, m), *m)).min();
    match best {
        Some((d, m)) if d <= 2 => format!(" (did you mean `{m}`?)"),
        _ => String::new(),
    }
}

/// Levenshtein distance over bytes (words are short; quadratic is fine).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, &x) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &y) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(x != y)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Looks a word up among named values, failing with the list of names.
fn named<T: Copy>(
    c: &mut Cursor<'_, '_>,
    field: &'static str,
    what: &str,
    all: &[T],
    name: fn(T) -> &'static str,
) -> R<T> {
    let (w, at) = c.word(field, what)?;
    if let Some(v) = all.iter().copied().find(|v| name(*v) == w) {
        return Ok(v);
    }
    let names: Vec<&str> = all.iter().map(|v| name(*v)).collect();
    fail(
        at,
        field,
        format!(
            "unknown {} `{w}` (expected {})",
            what.trim_start_matches("an ").trim_start_matches("a "),
            names.join(", ")
        ),
    )
}

const REDUCE_OPS: [AluOp; 4] = [AluOp::Add, AluOp::Mul, AluOp::Max, AluOp::Min];
const REG_OPS: [RegOp; 4] = [RegOp::Mov, RegOp::Add, RegOp::Sub, RegOp::Mul];
const CONDS: [Cond; 5] = [Cond::Always, Cond::Eq, Cond::Ne, Cond::Lt, Cond::Ge];
const ACCS: [Accumulate; 2] = [Accumulate::Overwrite, Accumulate::Accumulate];

/// The assembly name of a register ALU operation.
pub(super) fn reg_op_name(o: RegOp) -> &'static str {
    match o {
        RegOp::Mov => "mov",
        RegOp::Add => "add",
        RegOp::Sub => "sub",
        RegOp::Mul => "mul",
    }
}

/// The assembly name of a branch condition.
pub(super) fn cond_name(c: Cond) -> &'static str {
    match c {
        Cond::Always => "always",
        Cond::Eq => "eq",
        Cond::Ne => "ne",
        Cond::Lt => "lt",
        Cond::Ge => "ge",
    }
}

/// The assembly name of an accumulation mode.
pub(super) fn acc_name(a: Accumulate) -> &'static str {
    match a {
        Accumulate::Overwrite => "overwrite",
        Accumulate::Accumulate => "accumulate",
    }
}

/// True when `w` can name a label (`[A-Za-z_][A-Za-z0-9_]*`).
pub(super) fn label_word(w: &str) -> bool {
    let b = w.as_bytes();
    b.first().is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_')
        && b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
}

/// One side of a DMA before the byte count is known.
enum Side {
    Hbm { addr: u64, stride: Option<u64>, at: u32 },
    OnChip(Ap),
}

struct P<'c, 't, 'a> {
    c: &'c mut Cursor<'t, 'a>,
    opts: &'c AsmOptions,
    aps: Vec<ApAt>,
    target: Option<(&'a str, u32)>,
}

impl<'a> P<'_, '_, 'a> {
    fn ap(&mut self, field: &'static str, role: Role) -> R<Ap> {
        let a = operand::ap(self.c, field, role, self.opts)?;
        self.aps.push(a);
        Ok(a.ap)
    }

    fn arrow(&mut self) -> R<()> {
        self.c.expect(Tok::Arrow, "dst").map(drop)
    }

    fn comma(&mut self, field: &'static str) -> R<()> {
        self.c.expect(Tok::Comma, field).map(drop)
    }

    /// Parses `, key=value` options to the end of the line, each key at most once; `value` parses
    /// the value of `keys[i]` given `i`.
    fn options(&mut self, keys: &[&'static str], mut value: impl FnMut(&mut Self, usize) -> R<()>) -> R<()> {
        let mut seen = 0u32;
        while !self.c.at_end() {
            self.comma("operands")?;
            let (k, at) = self.c.word("operands", "an option name")?;
            let Some(i) = keys.iter().position(|x| *x == k) else {
                let list = keys.iter().map(|k| format!("{k}=")).collect::<Vec<_>>().join(", ");
                let expect = if keys.is_empty() { "none".to_string() } else { list };
                return fail(at, "operands", format!("unknown option `{k}` (options here: {expect})"));
            };
            if seen & (1 << i) != 0 {
                return fail(at, keys[i], format!("option `{k}` given twice"));
            }
            seen |= 1 << i;
            self.c.expect(Tok::Eq, keys[i])?;
            value(self, i)?;
        }
        Ok(())
    }

    /// The optional `, scales=AP` of the tensor engine.
    fn scales(&mut self) -> R<Option<Ap>> {
        let mut scales = None;
        self.options(&["scales"], |p, _| {
            scales = Some(p.ap("scales", Role::Input)?);
            Ok(())
        })?;
        Ok(scales)
    }

    fn ldweights(&mut self) -> R<Instr> {
        let src = self.ap("src", Role::Input)?;
        let scales = self.scales()?;
        Ok(Instr::LoadStationary { src, scales })
    }

    fn matmul(&mut self) -> R<Instr> {
        let src = self.ap("src", Role::Input)?;
        self.arrow()?;
        let dst = self.ap("dst", Role::Output)?;
        self.comma("acc")?;
        let acc = named(self.c, "acc", "an accumulation mode", &ACCS, acc_name)?;
        let scales = self.scales()?;
        Ok(Instr::MultiplyMoving { src, scales, dst, acc })
    }

    fn unary(&mut self, make: fn(Ap, Ap) -> Instr) -> R<Instr> {
        let src = self.ap("src", Role::Input)?;
        self.arrow()?;
        let dst = self.ap("dst", Role::Output)?;
        Ok(make(src, dst))
    }

    /// `quantize_mx SRC -> DST, scales=AP` (the scales are required).
    fn quantize_mx(&mut self) -> R<Instr> {
        let src = self.ap("src", Role::Input)?;
        self.arrow()?;
        let dst = self.ap("dst", Role::Output)?;
        self.comma("scales")?;
        let (k, at) = self.c.word("scales", "`scales=`")?;
        if k != "scales" {
            return fail(at, "scales", format!("expected `scales=`, found `{k}`"));
        }
        self.c.expect(Tok::Eq, "scales")?;
        let scales = self.ap("scales", Role::Output)?;
        Ok(Instr::QuantizeMx { src, dst, scales })
    }

    fn tensor_tensor(&mut self) -> R<Instr> {
        let op = named(self.c, "op", "an operation", &AluOp::ALL, AluOp::name)?;
        let a = self.ap("a", Role::Input)?;
        self.comma("b")?;
        let b = self.ap("b", Role::Input)?;
        self.arrow()?;
        let dst = self.ap("dst", Role::Output)?;
        Ok(Instr::TensorTensor { op, a, b, dst })
    }

    fn tensor_scalar(&mut self) -> R<Instr> {
        let op = named(self.c, "op", "an operation", &AluOp::ALL, AluOp::name)?;
        let src = self.ap("src", Role::Input)?;
        self.comma("imm")?;
        let imm = operand::float(self.c, "imm")?;
        self.arrow()?;
        let dst = self.ap("dst", Role::Output)?;
        Ok(Instr::TensorScalar { op, src, imm, dst })
    }

    fn activation(&mut self) -> R<Instr> {
        let func = named(self.c, "func", "an activation function", &ActFn::ALL, ActFn::name)?;
        let src = self.ap("src", Role::Input)?;
        self.arrow()?;
        let dst = self.ap("dst", Role::Output)?;
        let (mut scale, mut bias, mut reduce) = (1.0, 0.0, None);
        self.options(&["scale", "bias", "reduce"], |p, i| {
            match i {
                0 => scale = operand::float(p.c, "scale")?,
                1 => bias = operand::float(p.c, "bias")?,
                _ => {
                    let op = named(p.c, "reduce", "a reduction", &REDUCE_OPS, AluOp::name)?;
                    reduce = Some((op, p.ap("reduce", Role::Output)?));
                }
            }
            Ok(())
        })?;
        Ok(Instr::Activation { func, src, dst, scale, bias, reduce })
    }

    fn tensor_reduce(&mut self) -> R<Instr> {
        let op = named(self.c, "op", "a reduction", &REDUCE_OPS, AluOp::name)?;
        let src = self.ap("src", Role::Input)?;
        self.arrow()?;
        let dst = self.ap("dst", Role::Output)?;
        Ok(Instr::TensorReduce { op, src, dst })
    }

    fn memset(&mut self) -> R<Instr> {
        let value = operand::float(self.c, "value")?;
        self.arrow()?;
        let dst = self.ap("dst", Role::Output)?;
        Ok(Instr::Memset { dst, value })
    }

    fn iota(&mut self) -> R<Instr> {
        self.arrow()?;
        let dst = self.ap("dst", Role::Output)?;
        let mut v = [0i32, 1, 0];
        let keys = ["base", "step", "partition_step"];
        self.options(&keys, |p, i| {
            v[i] = operand::int(p.c, keys[i], "an integer", i64::from(i32::MIN), i64::from(i32::MAX))? as i32;
            Ok(())
        })?;
        Ok(Instr::Iota { dst, base: v[0], step: v[1], partition_step: v[2] })
    }

    fn side(&mut self, field: &'static str) -> R<Side> {
        if self.c.peek() != Some(Tok::Word("hbm")) {
            return self.ap(field, Role::Dma).map(Side::OnChip);
        }
        let at = self.c.at();
        self.c.bump();
        let addr = operand::uint64(self.c, field, "an hbm byte address")?;
        let mut stride = None;
        if self.c.peek() == Some(Tok::Word("stride")) {
            self.c.bump();
            stride = Some(operand::uint64(self.c, field, "a partition stride in bytes")?);
        }
        Ok(Side::Hbm { addr, stride, at })
    }

    fn dma_start(&mut self) -> R<Instr> {
        let queue = operand::indexed(self.c, "queue", "q", "queue", QUEUES)?;
        let src = self.side("src")?;
        self.arrow()?;
        let dst = self.side("dst")?;
        let (mut bytes, mut sem) = (None, None);
        self.options(&["bytes", "sem"], |p, i| {
            match i {
                0 => bytes = Some((p.c.at(), operand::uint32(p.c, "bytes", "a byte count")?)),
                _ => sem = Some(Sem(operand::indexed(p.c, "sem", "s", "semaphore", SEMS)?)),
            }
            Ok(())
        })?;
        let bytes_per_partition = self.dma_bytes(&dst, bytes)?;
        let src = self.dma_addr(src, "src", bytes_per_partition)?;
        let dst = self.dma_addr(dst, "dst", bytes_per_partition)?;
        Ok(Instr::DmaStart { queue, src, dst, bytes_per_partition, sem })
    }

    /// The byte count per partition: as written, or that of the on-chip side (the destination
    /// when both are on chip); it must equal every on-chip side's bytes per partition. An
    /// HBM-to-HBM copy (one row) must write it.
    fn dma_bytes(&self, dst: &Side, written: Option<(u32, u32)>) -> R<u32> {
        let n = match (written, self.aps.last()) {
            (Some((at, 0)), _) => return fail(at, "bytes", "bytes=0: a dma moves at least 1 byte"),
            (Some((at, n)), _) => {
                self.same_bytes(at, n)?;
                n
            }
            (None, Some(main)) => {
                let n = row_bytes(&main.ap);
                u32::try_from(n).map_or_else(|_| fail(main.at, main.field, "over 4 GiB per partition"), Ok)?
            }
            (None, None) => {
                let at = if let Side::Hbm { at, .. } = dst { *at } else { self.c.at() };
                return fail(at, "bytes", "an hbm to hbm copy needs `bytes=`");
            }
        };
        Ok(n)
    }

    fn same_bytes(&self, at: u32, n: u32) -> R<()> {
        for a in &self.aps {
            let have = row_bytes(&a.ap);
            if have != u64::from(n) {
                let (e, d) = (operand::elems(&a.ap), a.ap.dtype.name());
                let msg = format!("bytes={n} but `{}` holds {have} bytes per partition ({e} x {d})", a.field);
                return fail(at, "bytes", msg);
            }
        }
        Ok(())
    }

    fn dma_addr(&self, s: Side, field: &'static str, bytes: u32) -> R<DmaAddr> {
        let (addr, stride, at) = match s {
            Side::OnChip(ap) => return Ok(DmaAddr::OnChip(ap)),
            Side::Hbm { addr, stride, at } => (addr, stride.unwrap_or(u64::from(bytes)), at),
        };
        let rows = self.aps.first().map_or(1, |a| u64::from(a.ap.partitions));
        let end =
            (rows - 1).checked_mul(stride).and_then(|x| x.checked_add(addr)).and_then(|x| x.checked_add(bytes.into()));
        if end.is_none() {
            return fail(at, field, format!("hbm rows from {addr:#x} with stride {stride} overflow 64-bit addresses"));
        }
        Ok(DmaAddr::Hbm { addr, partition_stride: stride })
    }

    fn sem_op(&mut self, sep: Option<Tok<'static>>, make: fn(Sem, u32) -> Instr) -> R<Instr> {
        let sem = Sem(operand::indexed(self.c, "sem", "s", "semaphore", SEMS)?);
        let value = match sep {
            Some(t) => {
                self.c.expect(t, "value")?;
                operand::uint32(self.c, "value", "a value")?
            }
            None if self.c.eat(Tok::Comma) => operand::uint32(self.c, "delta", "an increment")?,
            None => 1,
        };
        Ok(make(sem, value))
    }

    fn reg(&mut self) -> R<Instr> {
        let op = named(self.c, "op", "a register operation", &REG_OPS, reg_op_name)?;
        let dst = crate::isa::Reg(operand::indexed(self.c, "dst", "r", "register", super::REGS)?);
        self.comma("a")?;
        let a = operand::operand(self.c, "a")?;
        let b = if op == RegOp::Mov {
            Operand::Imm(0)
        } else {
            self.comma("b")?;
            operand::operand(self.c, "b")?
        };
        Ok(Instr::RegAlu { op, dst, a, b })
    }

    fn branch(&mut self) -> R<Instr> {
        let cond = named(self.c, "cond", "a condition", &CONDS, cond_name)?;
        let (mut a, mut b) = (Operand::Imm(0), Operand::Imm(0));
        if cond != Cond::Always {
            a = operand::operand(self.c, "a")?;
            self.comma("b")?;
            b = operand::operand(self.c, "b")?;
            self.comma("target")?;
        }
        let (w, at) = self.c.word("target", "a label")?;
        if !label_word(w) {
            return fail(at, "target", format!("`{w}` is not a label name"));
        }
        self.target = Some((w, at));
        Ok(Instr::Branch { cond, a, b, target: 0 })
    }
}
