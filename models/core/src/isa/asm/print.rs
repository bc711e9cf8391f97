//! Canonical text of a [`Program`]: every field spelled out, offsets and addresses in hex,
//! floats in Rust's shortest round-tripping form, branch targets as labels `L<index>`.

use std::fmt::Write;

use super::operand::mem_name;
use super::parse::{acc_name, cond_name, reg_op_name};
use super::{MAX_DIMS, PSUM_BANK_BYTES};
use crate::isa::{Ap, Cond, DmaAddr, Instr, Mem, Operand, Program, RegOp, Stream};

/// Prints `program` as canonical assembly: `assemble(&p.source, &print(&p), opts)` gives back
/// `p`'s streams and instructions (and, for a program that came from the assembler, `p` itself:
/// the line numbers are those of the printed text). A program the assembler would reject
/// (say, a register r99) prints as text that fails to assemble with the matching error; printing
/// itself never fails or panics.
pub fn print(program: &Program) -> String {
    let mut out = String::new();
    for (i, (engine, stream)) in program.streams.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = writeln!(out, ".engine {engine}");
        print_stream(&mut out, stream);
    }
    out
}

fn print_stream(out: &mut String, stream: &Stream) {
    let mut targeted = vec![false; stream.instrs.len()];
    for i in &stream.instrs {
        if let Instr::Branch { target, .. } = i {
            if let Some(t) = targeted.get_mut(*target as usize) {
                *t = true;
            }
        }
    }
    for (k, instr) in stream.instrs.iter().enumerate() {
        if targeted[k] {
            let _ = writeln!(out, "L{k}:");
        }
        out.push_str("    ");
        instr_text(out, instr);
        out.push('\n');
    }
}

/// Appends an access pattern (`psum` offsets as bank + offset within the bank).
fn ap(out: &mut String, a: &Ap) {
    let _ = write!(out, "{}[{}:{}] ", mem_name(a.mem), a.partition_start, a.partitions);
    let off = if a.mem == Mem::Psum {
        let _ = write!(out, "bank{} ", a.offset / PSUM_BANK_BYTES);
        a.offset % PSUM_BANK_BYTES
    } else {
        a.offset
    };
    let _ = write!(out, "+{off:#x} [");
    for (k, d) in a.dims[..usize::from(a.ndims).min(MAX_DIMS)].iter().enumerate() {
        let sep = if k > 0 { ", " } else { "" };
        let _ = write!(out, "{sep}{}:{}", d.size, d.stride);
    }
    let _ = write!(out, "] {}", a.dtype.name());
}

fn operand(out: &mut String, o: &Operand) {
    let _ = match o {
        Operand::Reg(r) => write!(out, "r{}", r.0),
        Operand::Imm(v) => write!(out, "{v}"),
    };
}

fn dma_side(out: &mut String, d: &DmaAddr) {
    match d {
        DmaAddr::Hbm { addr, partition_stride } => {
            let _ = write!(out, "hbm {addr:#x} stride {partition_stride}");
        }
        DmaAddr::OnChip(a) => ap(out, a),
    }
}

/// `src -> dst`
fn flow(out: &mut String, src: &Ap, dst: &Ap) {
    ap(out, src);
    out.push_str(" -> ");
    ap(out, dst);
}

fn scales(out: &mut String, s: &Option<Ap>) {
    if let Some(s) = s {
        out.push_str(", scales=");
        ap(out, s);
    }
}

fn instr_text(out: &mut String, i: &Instr) {
    out.push_str(i.mnemonic());
    out.push(' ');
    match i {
        Instr::LoadStationary { src, scales: s } => {
            ap(out, src);
            scales(out, s);
        }
        Instr::MultiplyMoving { src, scales: s, dst, acc } => {
            flow(out, src, dst);
            let _ = write!(out, ", {}", acc_name(*acc));
            scales(out, s);
        }
        Instr::Transpose { src, dst } | Instr::TensorCopy { src, dst } => flow(out, src, dst),
        Instr::QuantizeMx { src, dst, scales: s } => {
            flow(out, src, dst);
            scales(out, &Some(*s));
        }
        Instr::TensorTensor { op, a, b, dst } => {
            let _ = write!(out, "{} ", op.name());
            ap(out, a);
            out.push_str(", ");
            flow(out, b, dst);
        }
        Instr::TensorScalar { op, src, imm, dst } => {
            let _ = write!(out, "{} ", op.name());
            ap(out, src);
            let _ = write!(out, ", {imm:?} -> ");
            ap(out, dst);
        }
        Instr::Activation { func, src, dst, scale, bias, reduce } => {
            let _ = write!(out, "{} ", func.name());
            flow(out, src, dst);
            let _ = write!(out, ", scale={scale:?}, bias={bias:?}");
            if let Some((op, r)) = reduce {
                let _ = write!(out, ", reduce={} ", op.name());
                ap(out, r);
            }
        }
        Instr::TensorReduce { op, src, dst } => {
            let _ = write!(out, "{} ", op.name());
            flow(out, src, dst);
        }
        Instr::Memset { dst, value } => {
            let _ = write!(out, "{value:?} -> ");
            ap(out, dst);
        }
        Instr::Iota { dst, base, step, partition_step } => {
            out.push_str("-> ");
            ap(out, dst);
            let _ = write!(out, ", base={base}, step={step}, partition_step={partition_step}");
        }
        _ => control_text(out, i),
    }
}

fn control_text(out: &mut String, i: &Instr) {
    let _ = match i {
        Instr::DmaStart { queue, src, dst, bytes_per_partition, sem } => {
            let _ = write!(out, "q{queue} ");
            dma_side(out, src);
            out.push_str(" -> ");
            dma_side(out, dst);
            let _ = write!(out, ", bytes={bytes_per_partition}");
            match sem {
                Some(s) => write!(out, ", sem=s{}", s.0),
                None => Ok(()),
            }
        }
        Instr::SemWait { sem, value } => write!(out, "s{} >= {value}", sem.0),
        Instr::SemSet { sem, value } => write!(out, "s{} = {value}", sem.0),
        Instr::SemInc { sem, delta } => write!(out, "s{}, {delta}", sem.0),
        Instr::RegAlu { op, dst, a, b } => {
            let _ = write!(out, "{} r{}, ", reg_op_name(*op), dst.0);
            operand(out, a);
            if *op != RegOp::Mov {
                out.push_str(", ");
                operand(out, b);
            }
            Ok(())
        }
        Instr::Branch { cond, a, b, target } => {
            let _ = write!(out, "{} ", cond_name(*cond));
            if *cond != Cond::Always {
                operand(out, a);
                out.push_str(", ");
                operand(out, b);
                out.push_str(", ");
            }
            write!(out, "L{target}")
        }
        _ => Ok(()),
    };
    if out.ends_with(' ') {
        out.pop();
    }
}
