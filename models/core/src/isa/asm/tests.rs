//! Data-driven tests: each instruction form parses to the expected [`Instr`]; each error kind
//! reports the right line, column, field and message.

use super::*;
use crate::isa::*;

fn ap(mem: Mem, start: u16, count: u16, offset: u32, dims: &[(u16, i16)], dtype: Dtype) -> Ap {
    let mut d = [Dim::default(); 4];
    for (k, &(size, stride)) in dims.iter().enumerate() {
        d[k] = Dim { size, stride };
    }
    Ap { mem, partition_start: start, partitions: count, offset, dims: d, ndims: dims.len() as u8, dtype }
}

fn sb(start: u16, count: u16, offset: u32, dims: &[(u16, i16)], dtype: Dtype) -> Ap {
    ap(Mem::Sbuf, start, count, offset, dims, dtype)
}

fn ps(count: u16, offset: u32, n: u16, dtype: Dtype) -> Ap {
    ap(Mem::Psum, 0, count, offset, &[(n, 1)], dtype)
}

/// A 128-partition SBUF row of `n` elements at `offset`.
fn row(offset: u32, n: u16, dtype: Dtype) -> Ap {
    sb(0, 128, offset, &[(n, 1)], dtype)
}

/// Assembles `line` alone in a section of `engine`; it must give exactly `expect`.
fn check(engine: &str, line: &str, expect: Instr) {
    let text = format!(".engine {engine}\n    {line}\n");
    match assemble("t.asm", &text, &AsmOptions::default()) {
        Ok(p) => assert_eq!(p.streams[0].1.instrs, vec![expect], "{line}"),
        Err(e) => panic!("{line}\n{}", render_errors(&e)),
    }
}

/// Assembles `text`; its first error must print as `expect`.
fn check_err(text: &str, expect: &str) {
    match assemble("t.asm", text, &AsmOptions::default()) {
        Ok(_) => panic!("assembled but expected {expect}:\n{text}"),
        Err(e) => assert_eq!(e[0].to_string(), expect, "{text}"),
    }
}

const BF: Dtype = Dtype::Bf16;
const F32: Dtype = Dtype::Fp32;
const MX: Dtype = Dtype::MxFp8E4m3;

#[test]
fn tensor_engine_instructions() {
    let cases = [
        ("ldweights sbuf[0:128] +0x0 [128:1] bf16", Instr::LoadStationary { src: row(0, 128, BF), scales: None }),
        (
            "ldweights sbuf[0:128] [128] mxfp8, scales=sbuf[0:4] +0x8000 [128:1] fp8e4m3",
            Instr::LoadStationary { src: row(0, 128, MX), scales: Some(sb(0, 4, 0x8000, &[(128, 1)], Dtype::Fp8E4m3)) },
        ),
        (
            "matmul sbuf[0:128] +0x100 [512:1] bf16 -> psum[0:128] bank1 +8 [512:1] fp32, overwrite",
            Instr::MultiplyMoving {
                src: row(0x100, 512, BF),
                scales: None,
                dst: ps(128, 2048 + 8, 512, F32),
                acc: Accumulate::Overwrite,
            },
        ),
        (
            "matmul sbuf[0:64] [2048] mxfp8 -> psum[0:128] bank7 [512] bf16, accumulate, scales=sbuf[64:2] [512] fp8e5m2",
            Instr::MultiplyMoving {
                src: sb(0, 64, 0, &[(2048, 1)], MX),
                scales: Some(sb(64, 2, 0, &[(512, 1)], Dtype::Fp8E5m2)),
                dst: ps(128, 7 * 2048, 512, BF),
                acc: Accumulate::Accumulate,
            },
        ),
        (
            "transpose sbuf[0:32] +0x40 [64:1] fp32 -> psum[0:64] +0 [32:1] fp32",
            Instr::Transpose { src: sb(0, 32, 0x40, &[(64, 1)], F32), dst: ps(64, 0, 32, F32) },
        ),
    ];
    for (line, expect) in cases {
        check("tensor", line, expect);
    }
}

#[test]
fn compute_instructions() {
    let two_d = sb(0, 128, 0x1000, &[(4, 512), (128, -1)], BF);
    let cases = [
        (
            "tensor_tensor add sbuf[0:128] [512] bf16, psum[0:128] bank2 [512] fp32 -> sbuf[0:128] +0x400 [512] bf16",
            Instr::TensorTensor {
                op: AluOp::Add,
                a: row(0, 512, BF),
                b: ps(128, 4096, 512, F32),
                dst: row(0x400, 512, BF),
            },
        ),
        (
            "tensor_scalar mul sbuf[0:128] +0x1000 [4:512, 128:-1] bf16, -0.5 -> sbuf[0:128] +0 [512:1] fp32",
            Instr::TensorScalar { op: AluOp::Mul, src: two_d, imm: -0.5, dst: row(0, 512, F32) },
        ),
        (
            "tensor_reduce max sbuf[32:32] [8:64, 64:1] fp32 -> sbuf[32:32] +0x100 [1:1] fp32",
            Instr::TensorReduce {
                op: AluOp::Max,
                src: sb(32, 32, 0, &[(8, 64), (64, 1)], F32),
                dst: sb(32, 32, 0x100, &[(1, 1)], F32),
            },
        ),
        (
            "tensor_copy psum[64:64] bank3 +0x10 [16:1] fp32 -> sbuf[0:64] [16:0] bf16",
            Instr::TensorCopy {
                src: ap(Mem::Psum, 64, 64, 3 * 2048 + 16, &[(16, 1)], F32),
                dst: sb(0, 64, 0, &[(16, 0)], BF),
            },
        ),
        (
            "memset 1e-3 -> sbuf[96:32] +0x2 [7:3] bf16",
            Instr::Memset { dst: sb(96, 32, 2, &[(7, 3)], BF), value: 1e-3 },
        ),
    ];
    for (line, expect) in cases {
        check("vector", line, expect);
    }
}

#[test]
fn scalar_and_gpsimd_instructions() {
    let act = |reduce, scale, bias| Instr::Activation {
        func: ActFn::Exp,
        src: ps(128, 0, 512, F32),
        dst: row(0x4000, 512, BF),
        scale,
        bias,
        reduce,
    };
    let r = (AluOp::Add, row(0x8000, 1, F32));
    let base = "activation exp psum[0:128] bank0 +0 [512:1] fp32 -> sbuf[0:128] +0x4000 [512:1] bf16";
    check("scalar", base, act(None, 1.0, 0.0));
    let full = format!("{base}, bias=-inf, reduce=add sbuf[0:128] +0x8000 [1:1] fp32, scale=2");
    check("scalar", &full, act(Some(r), 2.0, f32::NEG_INFINITY));
    let iota = |base, step, partition_step| Instr::Iota { dst: row(0, 64, Dtype::I32), base, step, partition_step };
    check("gpsimd", "iota -> sbuf[0:128] [64] i32", iota(0, 1, 0));
    check("gpsimd", "iota -> sbuf[0:128] [64] i32, partition_step=64, base=-0x10", iota(-16, 1, 64));
    check("gpsimd", "iota -> sbuf[0:128] [64] i32, base=1, step=-2, partition_step=3", iota(1, -2, 3));
}

#[test]
fn dma_instructions() {
    let dma = |queue, src, dst, bytes_per_partition, sem| Instr::DmaStart { queue, src, dst, bytes_per_partition, sem };
    let hbm = |addr, partition_stride| DmaAddr::Hbm { addr, partition_stride };
    let chip = DmaAddr::OnChip(row(0, 512, BF));
    let cases = [
        (
            "dma_start q3 hbm 0x1000 stride 4096 -> sbuf[0:128] +0 [512:1] bf16, bytes=1024, sem=s1",
            dma(3, hbm(0x1000, 4096), chip, 1024, Some(Sem(1))),
        ),
        ("dma_start q0 hbm 0 -> sbuf[0:128] [512] bf16", dma(0, hbm(0, 1024), chip, 1024, None)),
        (
            "dma_start q15 sbuf[0:128] [512] bf16 -> hbm 0x10_0000, sem=s63",
            dma(15, chip, hbm(1 << 20, 1024), 1024, Some(Sem(63))),
        ),
        (
            "dma_start q1 sbuf[0:128] [512] bf16 -> sbuf[0:128] +0x800 [256:1] fp32",
            dma(1, chip, DmaAddr::OnChip(row(0x800, 256, F32)), 1024, None),
        ),
        ("dma_start q4 hbm 0x0 -> hbm 0x1000, bytes=4096", dma(4, hbm(0, 4096), hbm(0x1000, 4096), 4096, None)),
        (
            "dma_start q2 hbm 0x40 stride 0 -> sbuf[5:3] [2] fp32",
            dma(2, hbm(0x40, 0), DmaAddr::OnChip(sb(5, 3, 0, &[(2, 1)], F32)), 8, None),
        ),
    ];
    for (line, expect) in cases {
        check("sync", line, expect);
    }
}

#[test]
fn control_instructions() {
    let (r, i) = (|n| Operand::Reg(Reg(n)), Operand::Imm);
    let cases = [
        ("sem_wait s1 >= 1", Instr::SemWait { sem: Sem(1), value: 1 }),
        ("sem_set s63 = 0xffffffff", Instr::SemSet { sem: Sem(63), value: u32::MAX }),
        ("sem_inc s2", Instr::SemInc { sem: Sem(2), delta: 1 }),
        ("sem_inc s2, 16", Instr::SemInc { sem: Sem(2), delta: 16 }),
        ("reg mov r1, 0", Instr::RegAlu { op: RegOp::Mov, dst: Reg(1), a: i(0), b: i(0) }),
        ("reg mov r1, r63", Instr::RegAlu { op: RegOp::Mov, dst: Reg(1), a: r(63), b: i(0) }),
        ("reg add r1, r1, 1", Instr::RegAlu { op: RegOp::Add, dst: Reg(1), a: r(1), b: i(1) }),
        ("reg sub r0, -2147483648, r2", Instr::RegAlu { op: RegOp::Sub, dst: Reg(0), a: i(i32::MIN), b: r(2) }),
        ("reg mul r5, r5, 0x7fffffff", Instr::RegAlu { op: RegOp::Mul, dst: Reg(5), a: r(5), b: i(i32::MAX) }),
        ("halt", Instr::Halt),
    ];
    for (line, expect) in cases {
        check("sync", line, expect);
    }
}

#[test]
fn branches_resolve_labels_within_their_section() {
    let text = "# loop four times\n.engine sync\n    reg mov r1, 0\nloop: reg add r1, r1, 1\n\
                \x20   branch lt r1, 4, loop\n    branch always done\n    branch ne r1, r2, loop\n\
                done:\nalso_done:   # two labels, one instruction\n    halt\n.engine gpsimd\nloop:\n    \
                branch eq 3, r9, loop\n";
    let p = assemble("t.asm", text, &AsmOptions::default()).unwrap_or_else(|e| panic!("{}", render_errors(&e)));
    let (r, i) = (|n| Operand::Reg(Reg(n)), Operand::Imm);
    let sync = &p.streams[0].1;
    assert_eq!(sync.instrs[2], Instr::Branch { cond: Cond::Lt, a: r(1), b: i(4), target: 1 });
    assert_eq!(sync.instrs[3], Instr::Branch { cond: Cond::Always, a: i(0), b: i(0), target: 5 });
    assert_eq!(sync.instrs[4], Instr::Branch { cond: Cond::Ne, a: r(1), b: r(2), target: 1 });
    assert_eq!(sync.lines, vec![3, 4, 5, 6, 7, 10]);
    assert_eq!(p.streams[1].0, Engine::GpSimd);
    assert_eq!(p.streams[1].1.instrs, vec![Instr::Branch { cond: Cond::Eq, a: i(3), b: r(9), target: 0 }]);
}

#[test]
fn sections_keep_source_order_and_may_be_empty() {
    let p = assemble("t.asm", ".engine scalar\n.engine tensor\n  halt\n", &AsmOptions::default());
    let p = p.unwrap_or_else(|e| panic!("{}", render_errors(&e)));
    assert_eq!(p.source, "t.asm");
    let engines: Vec<Engine> = p.streams.iter().map(|s| s.0).collect();
    assert_eq!(engines, vec![Engine::Scalar, Engine::Tensor]);
    assert!(p.streams[0].1.instrs.is_empty());
    assert_eq!(assemble("t.asm", "", &AsmOptions::default()), Ok(Program { source: "t.asm".into(), streams: vec![] }));
}

#[test]
fn sbuf_partition_size_is_an_option() {
    let text = ".engine vector\n  memset 0 -> sbuf[0:128] +0x30000 [0x8000:1] bf16\n";
    assert!(assemble("t.asm", text, &AsmOptions::default()).is_ok());
    let v3 = AsmOptions { sbuf_partition_bytes: 224 * 1024, ..AsmOptions::default() };
    let e = assemble("t.asm", text, &v3).unwrap_err();
    assert_eq!(e[0].message, "pattern touches bytes 196608..262144, beyond the 229376-byte sbuf partition");
}

#[test]
fn errors_are_collected_sorted_and_capped() {
    let text = ".engine vector\n  frob\n  halt\n  memset x -> sbuf[0:1] [1] bf16\nl:\n  branch always nowhere\n";
    let e = assemble("t.asm", text, &AsmOptions::default()).unwrap_err();
    let got: Vec<(u32, &str)> = e.iter().map(|e| (e.line, e.field.as_str())).collect();
    assert_eq!(got, vec![(2, "mnemonic"), (4, "value"), (6, "target")]);
    let one = AsmOptions { max_errors: 1, ..AsmOptions::default() };
    assert_eq!(assemble("t.asm", text, &one).unwrap_err().len(), 1);
    let many = ".engine vector\n".to_string() + &"  frob\n".repeat(1000);
    assert_eq!(assemble("t.asm", &many, &AsmOptions::default()).unwrap_err().len(), 20);
}

#[test]
fn every_mnemonic_is_documented() {
    let doc = include_str!("../../../../../docs/isa.md");
    for m in super::parse::MNEMONICS {
        assert!(doc.contains(&format!("`{m}")), "docs/isa.md lacks `{m}`");
    }
}

#[test]
fn errors_name_line_column_field() {
    let cases = [
        (".engine vector\n  matmull x\n", "t.asm:2:3: field `mnemonic`: unknown mnemonic `matmull` (did you mean `matmul`?)"),
        (".engine vector\n  frobnicate\n", "t.asm:2:3: field `mnemonic`: unknown mnemonic `frobnicate`"),
        (".engine vectro\n", "t.asm:1:9: field `engine`: unknown engine `vectro` (expected tensor, vector, scalar, gpsimd, sync)"),
        (".section text\n", "t.asm:1:1: field `directive`: unknown directive `.section` (expected `.engine`)"),
        (".engine\n", "t.asm:1:8: field `engine`: expected an engine name, found end of line"),
        (".engine sync extra\n", "t.asm:1:14: field `operands`: unexpected `extra` after the last operand"),
        (".engine vector\n  memset 0 -> sbuf[0:128] [1] bf17\n", "t.asm:2:31: field `dst`: unknown data type `bf17` (expected bf16, fp16, fp32, fp8e4m3, fp8e5m2, mxfp8, i32)"),
        (".engine scalar\n  activation expp sbuf[0:1] [1] fp32 -> sbuf[0:1] [1] fp32\n", "t.asm:2:14: field `func`: unknown activation function `expp` (expected identity, exp, gelu, silu, tanh, sigmoid, rsqrt, relu, square, log)"),
        (".engine vector\n  tensor_tensor xor sbuf[0:1] [1] fp32, sbuf[0:1] [1] fp32 -> sbuf[0:1] [1] fp32\n", "t.asm:2:17: field `op`: unknown operation `xor` (expected add, sub, mul, max, min, div)"),
        (".engine vector\n  tensor_reduce sub sbuf[0:1] [4] fp32 -> sbuf[0:1] [1] fp32\n", "t.asm:2:17: field `op`: unknown reduction `sub` (expected add, mul, max, min)"),
        (".engine vector\n  matmul sbuf[0:128] [512] bf16 -> psum[0:128] [512] fp32, overwrite\n", "t.asm:2:3: field `mnemonic`: `matmul` cannot run on the vector engine (runs on tensor)"),
        (".engine sync\n  iota -> sbuf[0:1] [1] i32\n", "t.asm:2:3: field `mnemonic`: `iota` cannot run on the sync engine (runs on gpsimd)"),
        (".engine tensor\n  dma_start q0 hbm 0 -> sbuf[0:1] [1] fp32\n", "t.asm:2:3: field `mnemonic`: `dma_start` cannot run on the tensor engine (runs on sync, scalar, gpsimd)"),
        (".engine vector\n  memset 0.0 -> sbuf[96:64] +0 [1:1] bf16\n", "t.asm:2:21: field `dst`: partition range 96..160 exceeds 128 partitions"),
        (".engine vector\n  memset 0.0 -> sbuf[0:0] [1] bf16\n", "t.asm:2:21: field `dst`: partition count 0 (at least 1 partition)"),
        (".engine vector\n  memset 0.0 -> sbuf[32:96] [1] bf16\n", "t.asm:2:21: field `dst`: a range of 96 partitions must start at 0, not 32"),
        (".engine vector\n  memset 0.0 -> sbuf[32:64] [1] bf16\n", "t.asm:2:21: field `dst`: a range of 64 partitions must start at 0 or 64, not 32"),
        (".engine vector\n  memset 0.0 -> sbuf[8:16] [1] bf16\n", "t.asm:2:21: field `dst`: a range of 16 partitions must start at 0, 32, 64 or 96, not 8"),
        (".engine vector\n  memset 0.0 -> psum[0:128] bank8 [1] fp32\n", "t.asm:2:29: field `dst`: psum bank 8 out of range bank0..bank7"),
        (".engine vector\n  memset 0.0 -> psum[0:128] bank [1] fp32\n", "t.asm:2:29: field `dst`: expected a psum bank bank0..bank7, found `bank`"),
        (".engine vector\n  memset 0.0 -> sbuf[0:128] bank1 [1] fp32\n", "t.asm:2:29: field `dst`: `bank1`: banks apply to psum only"),
        (".engine vector\n  memset 0.0 -> psum[0:128] bank7 +0x700 [512:1] fp32\n", "t.asm:2:42: field `dst`: pattern touches bytes 16128..18176, beyond the 16384-byte psum partition"),
        (".engine vector\n  memset 0.0 -> sbuf[0:128] [4:-1] bf16\n", "t.asm:2:29: field `dst`: pattern reaches byte -6, before the start of the partition"),
        (".engine vector\n  memset 0.0 -> sbuf[0:128] +0x3 [4] bf16\n", "t.asm:2:29: field `dst`: offset 0x3 is not a multiple of the 2-byte bf16 element"),
        (".engine vector\n  memset 0.0 -> sbuf[0:128] [1, 1, 1, 1, 1] bf16\n", "t.asm:2:42: field `dst`: more than 4 dimensions"),
        (".engine vector\n  memset 0.0 -> sbuf[0:128] [2, 0:1] bf16\n", "t.asm:2:33: field `dst`: dimension size 0 (every dimension needs at least 1 element)"),
        (".engine vector\n  memset 0.0 -> sbuf[0:128] [2:40000] bf16\n", "t.asm:2:32: field `dst`: stride 40000 out of range -32768..=32767"),
        (".engine vector\n  memset 0.0 -> sbuf[0:128] [2:1; bf16\n", "t.asm:2:33: unexpected character `;`"),
        (".engine vector\n  memset 0.0 -> sbuf[0:128] [2:1 bf16\n", "t.asm:2:34: field `dst`: expected `,` or `]`, found `bf16`"),
        (".engine sync\n  reg add r64, r1, 1\n", "t.asm:2:11: field `dst`: register r64 out of range r0..r63"),
        (".engine sync\n  reg add r1, r1, x\n", "t.asm:2:19: field `b`: expected a register or an integer, found `x`"),
        (".engine sync\n  reg add r1, r1, 2147483648\n", "t.asm:2:19: field `b`: immediate 2147483648 out of range -2147483648..=2147483647"),
        (".engine sync\n  sem_wait s64 >= 1\n", "t.asm:2:12: field `sem`: semaphore s64 out of range s0..s63"),
        (".engine sync\n  sem_wait s1 > 1\n", "t.asm:2:15: unexpected character `>`"),
        (".engine sync\n  sem_wait s1, 1\n", "t.asm:2:14: field `value`: expected `>=`, found `,`"),
        (".engine sync\n  dma_start q16 hbm 0 -> sbuf[0:1] [1] fp32\n", "t.asm:2:13: field `queue`: queue q16 out of range q0..q15"),
        (".engine sync\n  dma_start 3 hbm 0 -> sbuf[0:1] [1] fp32\n", "t.asm:2:13: field `queue`: expected a queue q0..q15, found `3`"),
        (".engine sync\n  branch always nowhere\n", "t.asm:2:17: field `target`: undefined label `nowhere`"),
        (".engine sync\nx:\n  halt\nx: halt\n", "t.asm:4:1: field `label`: label `x` is already defined at line 2"),
        (".engine sync\n  halt\nend:\n", "t.asm:3:1: field `label`: label `end` marks no instruction (nothing follows it in this section)"),
        (".engine sync\n  halt\nend:\n.engine vector\n  halt\n", "t.asm:3:1: field `label`: label `end` marks no instruction (nothing follows it in this section)"),
        (".engine sync\n1x: halt\n", "t.asm:2:1: field `label`: `1x` is not a label name ([A-Za-z_][A-Za-z0-9_]*)"),
        (".engine sync\n  branch always 1x\n", "t.asm:2:17: field `target`: `1x` is not a label name"),
        (".engine tensor\n  ldweights psum[0:128] [128] bf16\n", "t.asm:2:13: field `src`: the tensor engine reads sbuf only, not psum"),
        (".engine tensor\n  ldweights sbuf[0:128] [128] bf16\n  matmul sbuf[0:128] [512] bf16 -> sbuf[0:128] [512] fp32, overwrite\n", "t.asm:3:36: field `dst`: the tensor engine writes psum only, not sbuf"),
        (".engine gpsimd\n  tensor_copy psum[0:128] [4] fp32 -> sbuf[0:128] [4] fp32\n", "t.asm:2:15: field `src`: gpsimd cannot access psum"),
        (".engine vector\n  tensor_tensor add sbuf[0:128] [4] fp32, sbuf[0:64] [4] fp32 -> sbuf[0:128] [4] fp32\n", "t.asm:2:43: field `b`: `b` has 64 partitions but `a` has 128"),
        (".engine vector\n  tensor_tensor add sbuf[0:128] [4] fp32, sbuf[0:128] [2, 2] fp32 -> sbuf[0:128] [2] fp32\n", "t.asm:2:70: field `dst`: `dst` has 2 elements per partition but `a` has 4"),
        (".engine tensor\n  ldweights sbuf[0:128] [128] bf16\n  matmul sbuf[0:64] [512] bf16 -> psum[0:128] [512] fp32, overwrite\n", "t.asm:3:10: field `src`: `src` has 64 partitions (K) but the stationary loaded at line 2 has 128"),
        (".engine tensor\n  ldweights sbuf[0:128] [128] bf16\n  matmul sbuf[0:128] [512] bf16 -> psum[0:64] [512] fp32, overwrite\n", "t.asm:3:36: field `dst`: `dst` has 64 partitions but the stationary loaded at line 2 has 128 columns (M)"),
        (".engine tensor\n  matmul sbuf[0:128] [512] bf16 -> psum[0:128] [256] fp32, overwrite\n", "t.asm:2:36: field `dst`: `dst` has 256 elements per partition but `src` (N) has 512"),
        (".engine tensor\n  matmul sbuf[0:128] [512] bf16 -> psum[0:128] [512] fp8e4m3, overwrite\n", "t.asm:2:36: field `dst`: matmul writes fp32 or bf16 to psum, not fp8e4m3"),
        (".engine tensor\n  matmul sbuf[0:128] [512] bf16 -> psum[0:128] [512] fp32\n", "t.asm:2:58: field `acc`: expected `,`, found end of line"),
        (".engine tensor\n  matmul sbuf[0:128] [512] bf16 -> psum[0:128] [512] fp32, add\n", "t.asm:2:60: field `acc`: unknown accumulation mode `add` (expected overwrite, accumulate)"),
        (".engine tensor\n  ldweights sbuf[0:128] [200] bf16\n", "t.asm:2:13: field `src`: the stationary matrix has at most 128 columns (elements per partition), not 200"),
        (".engine tensor\n  ldweights sbuf[0:128] [128] mxfp8\n", "t.asm:2:13: field `src`: mxfp8 needs `scales=` (one e8m0 byte per 32 elements along K)"),
        (".engine tensor\n  ldweights sbuf[0:128] [128] bf16, scales=sbuf[0:4] [128] fp8e4m3\n", "t.asm:2:44: field `scales`: `scales=` applies to mxfp8 operands only"),
        (".engine tensor\n  ldweights sbuf[0:128] [128] mxfp8, scales=sbuf[0:4] [128] bf16\n", "t.asm:2:45: field `scales`: scales are one byte each: use a 1-byte type, not bf16"),
        (".engine tensor\n  transpose sbuf[0:32] [64] fp32 -> psum[0:32] [32] fp32\n", "t.asm:2:37: field `dst`: `dst` has 32 partitions but `src` has 64 elements per partition"),
        (".engine tensor\n  transpose sbuf[0:32] [64] fp32 -> psum[0:64] [64] fp32\n", "t.asm:2:37: field `dst`: `dst` has 64 elements per partition but `src` has 32 partitions"),
        (".engine scalar\n  activation exp sbuf[0:128] [4] fp32 -> sbuf[0:128] [4] fp32, reduce=max sbuf[0:128] [2] fp32\n", "t.asm:2:75: field `reduce`: a reduction writes 1 element per partition, `reduce` has 2"),
        (".engine scalar\n  activation exp sbuf[0:128] [4] fp32 -> sbuf[0:128] [4] fp32, scale=1, scale=2\n", "t.asm:2:73: field `scale`: option `scale` given twice"),
        (".engine scalar\n  activation exp sbuf[0:128] [4] fp32 -> sbuf[0:128] [4] fp32, gain=2\n", "t.asm:2:64: field `operands`: unknown option `gain` (options here: scale=, bias=, reduce=)"),
        (".engine scalar\n  activation exp sbuf[0:128] [4] fp32 sbuf[0:128] [4] fp32\n", "t.asm:2:39: field `dst`: expected `->`, found `sbuf`"),
        (".engine scalar\n  tensor_copy sbuf[0:128] [4] fp32 -> sbuf[0:128] [4] fp32 extra\n", "t.asm:2:60: field `operands`: unexpected `extra` after the last operand"),
        (".engine sync\n  dma_start q0 hbm 0 -> hbm 0x100\n", "t.asm:2:25: field `bytes`: an hbm to hbm copy needs `bytes=`"),
        (".engine sync\n  dma_start q0 hbm 0 -> hbm 0x100, bytes=0\n", "t.asm:2:42: field `bytes`: bytes=0: a dma moves at least 1 byte"),
        (".engine sync\n  dma_start q0 hbm 0 -> sbuf[0:128] [512] bf16, bytes=2048\n", "t.asm:2:55: field `bytes`: bytes=2048 but `dst` holds 1024 bytes per partition (512 x bf16)"),
        (".engine sync\n  dma_start q0 hbm 0xffffffffffffff00 stride 4096 -> sbuf[0:128] [512] bf16\n", "t.asm:2:16: field `src`: hbm rows from 0xffffffffffffff00 with stride 4096 overflow 64-bit addresses"),
        (".engine sync\n  dma_start q0 sbuf[0:128] [512] bf16 -> sbuf[0:64] [512] bf16\n", "t.asm:2:42: field `dst`: `dst` has 64 partitions but `src` has 128"),
        (".engine sync\n.engine sync\n", "t.asm:2:9: field `engine`: engine `sync` already has a section at line 1 (one per engine)"),
        ("  halt\n", "t.asm:1:3: field `mnemonic`: no `.engine` section is open (start one with `.engine NAME`)"),
        ("start: halt\n", "t.asm:1:1: field `label`: no `.engine` section is open (start one with `.engine NAME`)"),
        (".engine vector\n  memset 0.0 -> sbuf[0:128] [1] bf16, value=2\n", "t.asm:2:37: field `operands`: unexpected `,` after the last operand"),
        (".engine sync\n  sem_inc s1, -1\n", "t.asm:2:15: field `delta`: increment -1 out of range 0..=4294967295"),
        (".engine vector\n  memset -> sbuf[0:1] [1] fp32\n", "t.asm:2:10: field `value`: expected a number, found `->`"),
        (".engine vector\n  memset 1 -> dram[0:1] [1] fp32\n", "t.asm:2:15: field `dst`: expected `sbuf` or `psum`, found `dram`"),
        (".engine vector\n  memset 1 -> sbuf[0:1] [] fp32\n", "t.asm:2:26: field `dst`: expected a dimension size, found `]`"),
    ];
    for (text, expect) in cases {
        check_err(text, expect);
    }
}

#[test]
fn documentation_examples_assemble() {
    let doc = include_str!("../../../../../docs/isa.md");
    let example = doc.split("```text\n").nth(1).and_then(|s| s.split("```").next()).unwrap_or("");
    let p = assemble("isa.md", example, &AsmOptions::default()).unwrap_or_else(|e| panic!("{}", render_errors(&e)));
    assert_eq!(p.streams.len(), 3);
    let dma = doc.split("### DMA\n\n```text\n").nth(1).and_then(|s| s.split("```").next()).unwrap_or("");
    let text = format!(".engine sync\n{dma}");
    let p = assemble("isa.md", &text, &AsmOptions::default()).unwrap_or_else(|e| panic!("{}", render_errors(&e)));
    assert_eq!(p.streams[0].1.instrs.len(), 4);
}
