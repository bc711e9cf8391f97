//! Randomized tests: printing then assembling random valid programs gives them back; garbage
//! (random bytes, random tokens, mutated programs) never panics; 100k lines assemble quickly.

use super::operand::byte_range;
use super::*;
use crate::isa::*;

/// xorshift64*: deterministic per seed, no dependencies.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[(self.next() % items.len() as u64) as usize]
    }
    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
    /// Any f32 but NaN (NaN != NaN would fail the comparison, not the round trip).
    fn float(&mut self) -> f32 {
        match self.range(0, 3) {
            0 => self.range(-4, 4) as f32 * 0.25,
            _ => Some(f32::from_bits(self.next() as u32)).filter(|f| !f.is_nan()).unwrap_or(1.5),
        }
    }
    fn i32(&mut self) -> i32 {
        match self.range(0, 2) {
            0 => self.range(-3, 3) as i32,
            _ => self.next() as i32,
        }
    }
}

const DTYPES: [Dtype; 7] = Dtype::ALL;
const OPTS: AsmOptions =
    AsmOptions { sbuf_partition_bytes: 256 * 1024, sbuf_partitions: 128, psum_partitions: 128, max_errors: 20 };

/// A partition range obeying spec §3's start rules.
fn parts(rng: &mut Rng) -> (u16, u16) {
    match rng.range(0, 2) {
        0 => (rng.pick(&[0, 32, 64, 96]), rng.range(1, 32) as u16),
        1 => (rng.pick(&[0, 64]), rng.range(33, 64) as u16),
        _ => (0, rng.range(65, 128) as u16),
    }
}

/// 1-4 small dimensions with at most `max_elems` elements in all.
fn dims(rng: &mut Rng, max_elems: u64) -> Vec<Dim> {
    let mut out = Vec::new();
    let mut n = 1u64;
    for _ in 0..rng.range(1, 4) {
        let size = rng.range(1, 6) as u64;
        if n * size > max_elems {
            break;
        }
        n *= size;
        out.push(Dim { size: size as u16, stride: rng.range(-8, 8) as i16 });
    }
    if out.is_empty() {
        out.push(Dim { size: 1, stride: rng.range(-2, 2) as i16 });
    }
    out
}

/// A pattern in `mem` placed at a random aligned offset that keeps it inside its partition.
fn place(rng: &mut Rng, mem: Mem, (start, count): (u16, u16), d: &[Dim], dtype: Dtype) -> Ap {
    let mut dims = [Dim::default(); 4];
    dims[..d.len()].copy_from_slice(d);
    let mut ap = Ap { mem, partition_start: start, partitions: count, offset: 0, dims, ndims: d.len() as u8, dtype };
    let (lo, hi) = byte_range(&ap);
    let limit = if mem == Mem::Sbuf { 256 * 1024 } else { 16 * 1024 };
    let e = i64::from(dtype.bytes());
    let first = (-lo + e - 1) / e * e;
    let slots = (limit - hi - first) / e;
    let pick = if rng.coin() { rng.range(0, slots.min(4)) } else { rng.range(0, slots) };
    ap.offset = (first + pick * e) as u32;
    ap
}

/// Where an engine may read from / write to (spec §3).
fn mem_for(rng: &mut Rng, e: Engine, output: bool) -> Mem {
    match e {
        Engine::Tensor if output => Mem::Psum,
        Engine::Tensor | Engine::GpSimd => Mem::Sbuf,
        _ => rng.pick(&[Mem::Sbuf, Mem::Psum]),
    }
}

fn rand_ap(rng: &mut Rng, e: Engine, output: bool, shape: ((u16, u16), &[Dim])) -> Ap {
    let (m, dt) = (mem_for(rng, e, output), rng.pick(&DTYPES));
    place(rng, m, shape.0, shape.1, dt)
}

fn one_per_partition(rng: &mut Rng, e: Engine, p: (u16, u16)) -> Ap {
    let d = [Dim { size: 1, stride: rng.range(-3, 3) as i16 }];
    rand_ap(rng, e, true, (p, &d))
}

fn reg_or_imm(rng: &mut Rng) -> Operand {
    if rng.coin() {
        Operand::Reg(Reg(rng.range(0, 63) as u8))
    } else {
        Operand::Imm(rng.i32())
    }
}

/// The tensor engine's state while generating: the last stationary (K partitions, M columns).
struct TensorState {
    k: (u16, u16),
    m: u16,
}

/// MXFP8 matmul operands pack 4 K-rows per partition, which random shapes rarely respect; the
/// generator keeps matmuls to the other types (tests.rs covers MXFP8 forms by hand).
fn not_mx(ap: Ap) -> Ap {
    if ap.dtype == Dtype::MxFp8E4m3 {
        Ap { dtype: Dtype::Fp8E4m3, ..ap }
    } else {
        ap
    }
}

fn tensor_instr(rng: &mut Rng, st: &mut TensorState) -> Instr {
    let mx_or = |rng: &mut Rng, src: &Ap| {
        (src.dtype == Dtype::MxFp8E4m3).then(|| {
            let (p, d) = (parts(rng), dims(rng, 64));
            place(rng, Mem::Sbuf, p, &d, Dtype::Fp8E4m3)
        })
    };
    match rng.range(0, 2) {
        0 => {
            st.k = parts(rng);
            let d = dims(rng, 128);
            st.m = d.iter().map(|d| d.size).product();
            let src = not_mx(rand_ap(rng, Engine::Tensor, false, (st.k, &d)));
            Instr::LoadStationary { scales: mx_or(rng, &src), src }
        }
        1 => {
            let d = dims(rng, 512);
            let n: u16 = d.iter().map(|d| d.size).product();
            let src = not_mx(rand_ap(rng, Engine::Tensor, false, (st.k, &d)));
            let dt = rng.pick(&[Dtype::Fp32, Dtype::Bf16]);
            let dst = place(rng, Mem::Psum, (0, st.m), &[Dim { size: n, stride: 1 }], dt);
            let acc = rng.pick(&[Accumulate::Overwrite, Accumulate::Accumulate]);
            Instr::MultiplyMoving { scales: mx_or(rng, &src), src, dst, acc }
        }
        _ => {
            let (p, d) = (parts(rng), dims(rng, 128));
            let f: u16 = d.iter().map(|d| d.size).product();
            let src = rand_ap(rng, Engine::Tensor, false, (p, &d));
            let dst = rand_ap(rng, Engine::Tensor, true, ((0, f), &[Dim { size: p.1, stride: 1 }]));
            Instr::Transpose { src, dst }
        }
    }
}

fn compute_instr(rng: &mut Rng, e: Engine, kind: i64) -> Instr {
    let (p, d) = (parts(rng), dims(rng, 4096));
    let ops = AluOp::ALL;
    let reduce_ops = [AluOp::Add, AluOp::Mul, AluOp::Max, AluOp::Min];
    let src = rand_ap(rng, e, false, (p, &d));
    let dst = rand_ap(rng, e, true, (p, &d));
    match kind {
        0 => Instr::TensorTensor { op: rng.pick(&ops), a: src, b: rand_ap(rng, e, false, (p, &d)), dst },
        1 => Instr::TensorScalar { op: rng.pick(&ops), src, imm: rng.float(), dst },
        2 => {
            let reduce = rng.coin().then(|| (rng.pick(&reduce_ops), one_per_partition(rng, e, p)));
            let func = rng.pick(&ActFn::ALL);
            Instr::Activation { func, src, dst, scale: rng.float(), bias: rng.float(), reduce }
        }
        3 => Instr::TensorReduce { op: rng.pick(&reduce_ops), src, dst: one_per_partition(rng, e, p) },
        4 => Instr::TensorCopy { src, dst },
        5 => Instr::Memset { dst, value: rng.float() },
        6 => {
            // quantize_mx: 32..128 partitions from 0, 4 K-rows per partition, scales on an
            // eighth of the partitions.
            let (parts, cols) = (32 * rng.range(1, 4) as u16, rng.range(1, 16) as u16);
            let d = [Dim { size: 4 * cols, stride: 1 }];
            let (sm, dm, cm) = (mem_for(rng, e, false), mem_for(rng, e, true), mem_for(rng, e, true));
            let dt = rng.pick(&[Dtype::Bf16, Dtype::Fp16]);
            let src = place(rng, sm, (0, parts), &d, dt);
            let dst = place(rng, dm, (0, parts), &d, Dtype::MxFp8E4m3);
            let sd = [Dim { size: cols, stride: 1 }];
            let scales = place(rng, cm, (0, parts / 8), &sd, Dtype::Fp8E4m3);
            Instr::QuantizeMx { src, dst, scales }
        }
        _ => Instr::Iota { dst, base: rng.i32(), step: rng.i32(), partition_step: rng.i32() },
    }
}

fn dma_side(rng: &mut Rng, chip: Ap, hbm: bool) -> DmaAddr {
    if hbm {
        DmaAddr::Hbm { addr: rng.next() >> rng.range(8, 40), partition_stride: rng.next() >> rng.range(40, 63) }
    } else {
        DmaAddr::OnChip(chip)
    }
}

fn dma_instr(rng: &mut Rng) -> Instr {
    let count = rng.range(1, 128) as u16;
    let p = (rng.range(0, i64::from(128 - count)) as u16, count);
    let d = dims(rng, 64);
    let dt = rng.pick(&DTYPES);
    let same_size: Vec<Dtype> = DTYPES.into_iter().filter(|x| x.bytes() == dt.bytes()).collect();
    let (ma, mb, dt_b) = (rng.pick(&[Mem::Sbuf, Mem::Psum]), rng.pick(&[Mem::Sbuf, Mem::Psum]), rng.pick(&same_size));
    let a = place(rng, ma, p, &d, dt);
    let b = place(rng, mb, p, &d, dt_b);
    let (src_hbm, dst_hbm) = rng.pick(&[(true, false), (false, true), (false, false), (true, true)]);
    let mut bytes = d.iter().map(|d| u32::from(d.size)).product::<u32>() * dt.bytes();
    if src_hbm && dst_hbm {
        bytes = rng.range(1, 1 << 24) as u32;
    }
    let sem = rng.coin().then(|| Sem(rng.range(0, 63) as u8));
    let (src, dst) = (dma_side(rng, a, src_hbm), dma_side(rng, b, dst_hbm));
    Instr::DmaStart { queue: rng.range(0, 15) as u8, src, dst, bytes_per_partition: bytes, sem }
}

fn control_instr(rng: &mut Rng) -> Instr {
    let sem = Sem(rng.range(0, 63) as u8);
    let v = rng.next() as u32 >> rng.range(0, 31);
    match rng.range(0, 5) {
        0 => Instr::SemWait { sem, value: v },
        1 => Instr::SemSet { sem, value: v },
        2 => Instr::SemInc { sem, delta: v },
        3 => {
            let op = rng.pick(&[RegOp::Mov, RegOp::Add, RegOp::Sub, RegOp::Mul]);
            let b = if op == RegOp::Mov { Operand::Imm(0) } else { reg_or_imm(rng) };
            Instr::RegAlu { op, dst: Reg(rng.range(0, 63) as u8), a: reg_or_imm(rng), b }
        }
        4 => match rng.pick(&[Cond::Always, Cond::Eq, Cond::Ne, Cond::Lt, Cond::Ge]) {
            Cond::Always => Instr::Branch { cond: Cond::Always, a: Operand::Imm(0), b: Operand::Imm(0), target: 0 },
            cond => Instr::Branch { cond, a: reg_or_imm(rng), b: reg_or_imm(rng), target: 0 },
        },
        _ => Instr::Halt,
    }
}

fn random_instr(rng: &mut Rng, e: Engine, st: &mut TensorState) -> Instr {
    loop {
        let kind = rng.range(0, 7);
        let i = match rng.range(0, 9) {
            0..=2 if e == Engine::Tensor => tensor_instr(rng, st),
            0..=4 if e != Engine::Tensor => compute_instr(rng, e, kind),
            5 | 6 => dma_instr(rng),
            _ => control_instr(rng),
        };
        if i.engines().contains(&e) {
            return i;
        }
    }
}

fn random_program(seed: u64) -> Program {
    let mut rng = Rng::new(seed);
    let mut engines = Engine::ALL.to_vec();
    for i in (1..engines.len()).rev() {
        engines.swap(i, rng.range(0, i as i64) as usize);
    }
    engines.truncate(rng.range(0, 5) as usize);
    let streams = engines.into_iter().map(|e| (e, random_stream(&mut rng, e))).collect();
    Program { source: format!("random{seed}.asm"), streams }
}

fn random_stream(rng: &mut Rng, e: Engine) -> Stream {
    let n = rng.range(0, 40) as usize;
    let mut st = TensorState { k: (0, 128), m: 128 };
    let mut instrs: Vec<Instr> = (0..n).map(|_| random_instr(rng, e, &mut st)).collect();
    for i in &mut instrs {
        if let Instr::Branch { target, .. } = i {
            *target = rng.range(0, n as i64 - 1) as u32;
        }
    }
    Stream { lines: vec![0; n], instrs }
}

#[test]
fn random_programs_round_trip_through_text() {
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..400 {
        let p = random_program(seed);
        seen.extend(p.streams.iter().flat_map(|(_, s)| s.instrs.iter().map(|i| i.mnemonic())));
        let text = print(&p);
        let q =
            assemble(&p.source, &text, &OPTS).unwrap_or_else(|e| panic!("seed {seed}: {}\n{text}", render_errors(&e)));
        let shape = |p: &Program| p.streams.iter().map(|(e, s)| (*e, s.instrs.clone())).collect::<Vec<_>>();
        assert_eq!(shape(&q), shape(&p), "seed {seed}\n{text}");
        assert_eq!(print(&q), text);
        assert_eq!(assemble(&q.source, &text, &OPTS), Ok(q));
    }
    assert_eq!(seen.len(), super::parse::MNEMONICS.len(), "the generator missed some: {seen:?}");
}

/// Assembles `text` with a small error cap; must return, not panic.
fn survive(text: &str) {
    let opts = AsmOptions { max_errors: 3, ..OPTS };
    if let Err(e) = assemble("soup.asm", text, &opts) {
        assert!(!e.is_empty() && e.len() <= 3);
        assert!(e.iter().all(|e| e.line >= 1 && e.column >= 1));
    }
}

#[test]
fn byte_soup_never_panics() {
    let mut rng = Rng::new(7);
    let alphabet = b" \t\n\r#.,:[]+-=>_0123456789abefxqrs";
    for _ in 0..3000 {
        let n = rng.range(0, 300) as usize;
        let bytes: Vec<u8> =
            (0..n).map(|_| if rng.range(0, 3) == 0 { rng.next() as u8 } else { rng.pick(alphabet) }).collect();
        survive(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn token_soup_never_panics() {
    const WORDS: &[&str] = &[
        ".engine",
        "tensor",
        "vector",
        "scalar",
        "gpsimd",
        "sync",
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
        "sbuf",
        "psum",
        "hbm",
        "stride",
        "bank0",
        "bank7",
        "bank8",
        "bank99999999999",
        "[",
        "]",
        ":",
        ",",
        "->",
        ">=",
        "=",
        "+",
        "0",
        "1",
        "128",
        "65535",
        "65536",
        "-1",
        "-32768",
        "0xffffffff",
        "0xffffffffffffffff",
        "99999999999999999999",
        "1e39",
        "nan",
        "-inf",
        "bf16",
        "fp32",
        "mxfp8",
        "i32",
        "r0",
        "r63",
        "r64",
        "s1",
        "q15",
        "q16",
        "add",
        "max",
        "mov",
        "lt",
        "always",
        "exp",
        "overwrite",
        "accumulate",
        "scales",
        "scale",
        "bias",
        "reduce",
        "bytes",
        "sem",
        "base",
        "step",
        "partition_step",
        "x:",
        "loop",
        "loop:",
        "\n",
        "\n",
        "\n",
        "#",
    ];
    let mut rng = Rng::new(11);
    for _ in 0..3000 {
        let n = rng.range(0, 60) as usize;
        let words: Vec<&str> = (0..n).map(|_| rng.pick(WORDS)).collect();
        survive(&words.join(if rng.coin() { " " } else { "" }));
    }
}

#[test]
fn mutated_programs_never_panic() {
    let mut rng = Rng::new(13);
    for seed in 0..300 {
        let text = print(&random_program(seed)).into_bytes();
        for _ in 0..10 {
            let mut t = text.clone();
            for _ in 0..rng.range(1, 4) {
                if t.is_empty() {
                    break;
                }
                let i = rng.range(0, t.len() as i64 - 1) as usize;
                match rng.range(0, 2) {
                    0 => t[i] = rng.pick(b"0123456789-+:,[]x \n"),
                    1 => drop(t.remove(i)),
                    _ => t.insert(i, rng.pick(b"09-:,[] \n")),
                }
            }
            survive(&String::from_utf8_lossy(&t));
        }
    }
}

#[test]
fn a_hundred_thousand_lines_assemble_quickly() {
    let vector = [
        "    tensor_tensor add sbuf[0:128] +0x0 [4:512, 128:1] bf16, psum[0:128] bank2 +0x0 [512:1] fp32 -> sbuf[0:128] +0x1000 [512:1] bf16",
        "    tensor_scalar mul sbuf[64:64] +0x20 [256:2] fp32, 0.125 -> sbuf[0:64] +0x8000 [256:1] bf16",
        "    tensor_reduce max sbuf[0:128] +0x0 [512:1] fp32 -> sbuf[0:128] +0x9000 [1:1] fp32  # row max",
    ];
    let sync = [
        "    dma_start q3 hbm 0x1000 stride 1024 -> sbuf[0:128] +0x0 [512:1] bf16, bytes=1024, sem=s1",
        "    sem_wait s1 >= 16",
        "    reg add r1, r1, 1",
    ];
    let mut text = String::new();
    for (name, body) in [("vector", vector), ("sync", sync)] {
        text.push_str(&format!(".engine {name}\n"));
        for k in 0..50_000 {
            text.push_str(body[k % body.len()]);
            text.push('\n');
        }
    }
    let t = std::time::Instant::now();
    let p = assemble("big.asm", &text, &OPTS).unwrap_or_else(|e| panic!("{}", render_errors(&e)));
    let took = t.elapsed();
    eprintln!("100k lines assembled in {took:?}");
    assert_eq!(p.streams[0].1.instrs.len() + p.streams[1].1.instrs.len(), 100_000);
    assert!(took.as_secs_f64() < 10.0, "{took:?}");
}
