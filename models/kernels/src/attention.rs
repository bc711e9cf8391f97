//! The flash-attention kernel: one program per core for prefill and decode, each unit of work
//! one head group's (a sequence and a KV head: its query heads share K and V, GQA) tile of at
//! most 128 query rows against all its keys, with the scores, the running max and the running
//! sum kept in SBUF and PSUM (online softmax) and K and V read from HBM once per unit (in
//! decode, the KV cache).
//!
//! Per key tile `j` of at most 512 keys (the structure of NKI's flash attention forward):
//! - tensor: `S = Q Kᵀ` (`Qᵀ` [d x m] stationary, `Kᵀ` [d x keys] moving) into a PSUM bank;
//! - vector: the tile's row max, the new running max, `S - max` into SBUF (BF16);
//! - scalar: `exp` with the row sums (`reduce=add`), and `exp(old max - new max)`, the
//!   correction of what was summed before;
//! - tensor: `P` transposed per 128 keys into PSUM; scalar: copied to SBUF;
//! - tensor: `O_j = P V` (`Pᵀ` blocks stationary, `V` blocks [128 keys x d] moving);
//! - vector: `O = O x corr + O_j`, `l = l x corr + rowsum`; after a unit's last tile
//!   `O / l` (BF16), which the GpSimd engine's DMA stores.
//!
//! The tensor engine computes `S` of the next tile before transposing this one, so it works
//! while the vector and scalar engines run this tile's softmax. Rings: K and V 4 tiles deep, the
//! scores, `P`, `Pᵀ` and the statistics two.
//!
//! Semaphores: s0 K tiles landed, s1 V tiles, s2 Q (one increment per DMA engine each), s3 S
//! computed, s4 softmax prepared (vector), s5 exp done (scalar), s6 transposed, s7 `Pᵀ`
//! copied, s8 `O_j` computed, s9 `O` updated, s10 a unit's output ready, s11 stored.
//!
//! Left out: the values; a causal mask's work (a causal op's keys are halved, as the roofline
//! does); the scale `1/sqrt(d)` (folded into Q); column tiling of the array for short query
//! tiles; a unit's tiles beyond [`MAX_TILES`] (the program is run for the first and its time
//! scaled by the tiles).

use crate::format::Format;
use std::fmt::Write as _;

/// Most key tiles of one unit in a program (longer contexts scale the time by their tiles).
pub const MAX_TILES: u64 = 64;
/// Most key tiles in one program (units beyond run the program again).
const PROGRAM_TILES: u64 = 64;
const KEYS: u64 = 512;
const PAD: u64 = 512;
const KBUF: u32 = 4;
const Q_SBUF: u32 = 0x0;
/// K and V rings: a slot holds a tile of every head group of a unit (at most 4 x 512 BF16).
const K_SBUF: u32 = 0x1000;
const KV_SLOT: u32 = 0x1000;
const V_SBUF: u32 = 0x5000;
const P_SBUF: u32 = 0x9000;
const PT_SBUF: u32 = 0xa000;
const STAT_SBUF: u32 = 0xb000;
const O_SBUF: u32 = 0xc000;
const OUT_SBUF: u32 = 0xc800;
const Q_HBM: u64 = 0;
const K_HBM: u64 = 0x1000_0000;
const V_HBM: u64 = 0x4000_0000;
const O_HBM: u64 = 0x7000_0000;
const CORE_HBM: u64 = 0x1_0000_0000;

/// One core's share of an attention node as a program.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AttnPlan {
    /// Units (a head group's query tile against its keys) per program.
    pub units: u32,
    /// Query rows per head group (1..=128).
    pub rows: u32,
    /// Head groups per unit, on partitions 32 (or 64) apart so the vector and scalar engines
    /// run their softmax in one instruction: 4 of at most 32 rows, 2 of at most 64, else 1.
    pub pack: u32,
    /// The head size (1..=128).
    pub head_dim: u32,
    /// Keys per unit in the program, a multiple of 128: tiles of 512 and a last of the rest.
    pub keys: u32,
    /// Q, K, V and O's format.
    pub format: Format,
    /// The program's time times this is the node's (units run again, longer contexts scaled),
    /// as a fraction `reps_num / reps_den`.
    pub reps_num: u64,
    /// See `reps_num`.
    pub reps_den: u64,
}

/// The plan of `pairs` head groups of `rows_total` query rows each (the sequence's queries x
/// the query heads per KV head) against `keys` keys of `head_dim` on `cores` cores.
pub fn plan(
    cores: u32,
    pairs: u64,
    rows_total: u64,
    keys: u64,
    head_dim: u64,
    format: Format,
) -> Result<AttnPlan, String> {
    let what = || format!("attention of {pairs} head groups x {rows_total} rows x {keys} keys x {head_dim}");
    if cores == 0 || pairs == 0 || rows_total == 0 || keys == 0 || !(1..=128).contains(&head_dim) {
        return Err(format!("{}: every size must be at least 1 and the head size at most 128", what()));
    }
    let q_tiles = rows_total.div_ceil(128);
    let rows = rows_total.div_ceil(q_tiles);
    let pack: u64 = match rows {
        0..=32 => 4,
        33..=64 => 2,
        _ => 1,
    };
    let units_total = pairs.checked_mul(q_tiles).ok_or_else(|| format!("{}: too many units", what()))?.div_ceil(pack);
    let per_core = units_total.div_ceil(u64::from(cores));
    let keys_r = keys.div_ceil(128) * 128;
    let tiles = keys_r.div_ceil(KEYS);
    let (prog_keys, tiles_p) = if tiles > MAX_TILES { (MAX_TILES * KEYS, MAX_TILES) } else { (keys_r, tiles) };
    let units = per_core.min((PROGRAM_TILES / tiles_p).max(1));
    let runs = per_core.div_ceil(units);
    let u = |v: u64| u32::try_from(v).map_err(|_| format!("{}: a size does not fit 32 bits", what()));
    Ok(AttnPlan {
        units: u(units)?,
        rows: u(rows)?,
        pack: u(pack)?,
        head_dim: u(head_dim)?,
        keys: u(prog_keys)?,
        format,
        reps_num: runs.checked_mul(keys_r).ok_or_else(|| format!("{}: too many runs", what()))?,
        reps_den: prog_keys,
    })
}

/// Bytes per partition the program's SBUF layout takes (its output ring's end).
const SBUF_BYTES: u32 = OUT_SBUF + 2 * 512;

/// Whether the program runs on a core of geometry `g`: a 128 x 128 array (it addresses 128
/// partitions and packs head groups 32 apart, a quarter of them: a larger PSUM's quarters
/// start elsewhere), 8 PSUM banks of at least 2 KiB and its SBUF layout; `Err` names the core
/// field that does not hold.
pub fn fits(g: &crate::geometry::Geometry) -> Result<(), (&'static str, String)> {
    let short = |field, what: String| Err((field, format!("{what}: the attention kernel needs more")));
    if (g.partitions, g.columns) != (128, 128) {
        let m = format!(
            "the attention kernel is written for a 128 x 128 array, not {} x {} (use --compute roofline)",
            g.partitions, g.columns
        );
        return Err(("tensor.rows", m));
    }
    if g.psum_banks < 8 || g.psum_bank_bytes < 2048 {
        return short(
            "psum.banks",
            format!("{} banks of {} bytes (it takes 8 of 2 KiB)", g.psum_banks, g.psum_bank_bytes),
        );
    }
    if g.sbuf_bpp < SBUF_BYTES {
        return short(
            "sbuf.partition_bytes",
            format!("{} bytes per partition (its layout takes {SBUF_BYTES})", g.sbuf_bpp),
        );
    }
    Ok(())
}

/// Key tiles of a unit: (first key, width) with widths of 512 and a last of the rest.
fn tiles(keys: u32) -> Vec<(u32, u32)> {
    (0..keys.div_ceil(KEYS as u32)).map(|t| (t * 512, (keys - t * 512).min(512))).collect()
}

/// Core `core`'s program of plan `p` on a core of 8 partitions per DMA engine (every preset).
pub fn program(p: &AttnPlan, core: u32) -> String {
    program_on(p, core, 8)
}

/// [`program`] on a core of `dma_ppe` partitions per DMA engine (its semaphore counts: one
/// increment per engine a DMA touches). The program addresses 128 partitions and 8 PSUM banks
/// of 2 KiB: it runs on 128 x 128 arrays ([`fits`]).
pub fn program_on(p: &AttnPlan, core: u32, dma_ppe: u32) -> String {
    let g = Gen::new(p, core, dma_ppe.max(1));
    let mut e = Streams::default();
    let tiles = tiles(p.keys);
    let nt = tiles.len() as u32;
    let jobs: Vec<Job> = (0..p.units)
        .flat_map(|u| tiles.iter().enumerate().map(move |(t, &(k0, w))| Job { u, t: t as u32, k0, w }))
        .collect();
    let last = |job: &Job| job.t + 1 == nt;
    g.loads(&mut e.sync, &jobs, nt);
    g.tensor_s(&mut e.te, &jobs, 0);
    for j in 0..jobs.len() {
        if j + 1 < jobs.len() {
            g.tensor_s(&mut e.te, &jobs, j + 1);
        }
        g.tensor_t(&mut e.te, &jobs[j], j as u32);
        g.tensor_pv(&mut e.te, &jobs[j], j as u32);
    }
    g.vector_prep(&mut e.ve, &jobs[0], 0);
    for j in 0..jobs.len() {
        if j + 1 < jobs.len() {
            g.vector_prep(&mut e.ve, &jobs[j + 1], j as u32 + 1);
        }
        g.vector_update(&mut e.ve, &jobs[j], j as u32, last(&jobs[j]));
    }
    for (j, job) in jobs.iter().enumerate() {
        g.scalar(&mut e.act, job, j as u32);
    }
    g.stores(&mut e.pool);
    e.finish()
}

#[derive(Clone, Copy)]
struct Job {
    u: u32,
    t: u32,
    k0: u32,
    w: u32,
}

#[derive(Default)]
struct Streams {
    sync: String,
    te: String,
    ve: String,
    act: String,
    pool: String,
}

impl Streams {
    fn finish(self) -> String {
        let mut out = String::new();
        for (name, s) in
            [("sync", self.sync), ("tensor", self.te), ("vector", self.ve), ("scalar", self.act), ("gpsimd", self.pool)]
        {
            let _ = write!(out, ".engine {name}\n{s}    halt\n\n");
        }
        out
    }
}

/// Addresses and figures one program's streams share.
struct Gen<'a> {
    p: &'a AttnPlan,
    dt: &'static str,
    e: u32,
    m: u32,
    d: u32,
    base: u64,
    /// Head groups per unit, the partitions between them, and the partitions the softmax
    /// spans (`0..r`).
    pack: u32,
    slot: u32,
    r: u32,
    /// Partitions per DMA engine.
    ppe: u32,
}

impl<'a> Gen<'a> {
    /// DMA engines a transfer over partitions `0..parts` touches.
    fn engines(&self, parts: u32) -> u32 {
        parts.div_ceil(self.ppe)
    }

    fn new(p: &'a AttnPlan, core: u32, ppe: u32) -> Gen<'a> {
        Gen {
            p,
            dt: p.format.asm(),
            e: p.format.bytes(),
            m: p.rows,
            d: p.head_dim,
            base: u64::from(core % 2) * CORE_HBM,
            pack: p.pack,
            slot: 128 / p.pack,
            r: (p.pack - 1) * (128 / p.pack) + p.rows,
            ppe,
        }
    }

    fn stat(&self, what: u32, j: u32) -> String {
        format!("sbuf[0:{}] +{:#x} [1:1] fp32", self.r, STAT_SBUF + (what * 2 + j % 2) * 4)
    }

    /// Q per unit, then its tiles' K and V, each into its ring once the ring's slot is free.
    fn loads(&self, s: &mut String, jobs: &[Job], nt: u32) {
        let (m, d, e, dt, g) = (self.m, self.d, self.e, self.dt, self.pack);
        let unit_bytes =
            (u64::from(self.p.keys) * u64::from(d) * u64::from(e) * 2 + u64::from(m * d * e)) * u64::from(g);
        for (j, job) in jobs.iter().enumerate() {
            let j = j as u32;
            let ub = self.base + u64::from(job.u) * unit_bytes.div_ceil(4096) * 4096;
            if job.t == 0 {
                if job.u >= 2 {
                    let _ = writeln!(s, "    sem_wait s3 >= {}", (job.u - 1) * nt);
                }
                let stride = u64::from(g * m * e) + PAD;
                let _ = writeln!(
                    s,
                    "    dma_start q0 hbm {:#x} stride {stride} -> sbuf[0:{d}] +{:#x} [{}:1] {dt}, sem=s2",
                    Q_HBM + ub,
                    Q_SBUF + (job.u % 2) * 512,
                    g * m
                );
            }
            if j >= KBUF {
                let _ = writeln!(s, "    sem_wait s3 >= {}", j - KBUF + 1);
            }
            let ks = u64::from(g * job.w * e) + PAD;
            let tile_off = u64::from(job.k0) * u64::from(d) * u64::from(e) * 2 * u64::from(g);
            let _ = writeln!(
                s,
                "    dma_start q0 hbm {:#x} stride {ks} -> sbuf[0:{d}] +{:#x} [{}:1] {dt}, sem=s0",
                K_HBM + ub + tile_off,
                K_SBUF + (j % KBUF) * KV_SLOT,
                g * job.w
            );
            if j >= KBUF {
                let _ = writeln!(s, "    sem_wait s8 >= {}", j - KBUF + 1);
            }
            let nb = job.w / 128;
            let vs = u64::from(g * nb * d * e) + PAD;
            let _ = writeln!(
                s,
                "    dma_start q0 hbm {:#x} stride {vs} -> sbuf[0:128] +{:#x} [{}:1] {dt}, sem=s1",
                V_HBM + ub + tile_off,
                V_SBUF + (j % KBUF) * KV_SLOT,
                g * nb * d
            );
        }
    }

    /// `S_j = Q Kᵀ`.
    fn tensor_s(&self, s: &mut String, jobs: &[Job], j: usize) {
        let (job, j) = (jobs[j], j as u32);
        let (m, d, dt) = (self.m, self.d, self.dt);
        let _ = writeln!(s, "    sem_wait s2 >= {}", self.engines(d) * (job.u + 1));
        let _ = writeln!(s, "    sem_wait s0 >= {}", self.engines(d) * (j + 1));
        if j >= 2 {
            let _ = writeln!(s, "    sem_wait s4 >= {}", j - 1);
        }
        for i in 0..self.pack {
            let q = Q_SBUF + (job.u % 2) * 512 + i * m * self.e;
            let _ = writeln!(s, "    ldweights sbuf[0:{d}] +{q:#x} [{m}:1] {dt}");
            let _ = writeln!(
                s,
                "    matmul sbuf[0:{d}] +{:#x} [{}:1] {dt} -> psum[{}:{m}] bank{} +0 [{}:1] fp32, overwrite",
                K_SBUF + (j % KBUF) * KV_SLOT + i * job.w * self.e,
                job.w,
                i * self.slot,
                j % 2,
                job.w
            );
        }
        s.push_str("    sem_inc s3, 1\n");
    }

    /// `P_j` transposed per 128 keys into PSUM.
    fn tensor_t(&self, s: &mut String, job: &Job, j: u32) {
        let (m, e, dt) = (self.r, self.e, self.dt);
        let _ = writeln!(s, "    sem_wait s5 >= {}", j + 1);
        if j >= 2 {
            let _ = writeln!(s, "    sem_wait s7 >= {}", j - 1);
        }
        for b in 0..job.w / 128 {
            let _ = writeln!(
                s,
                "    transpose sbuf[0:{m}] +{:#x} [128:1] {dt} -> psum[0:128] bank{} +{:#x} [{m}:1] fp32",
                P_SBUF + (j % 2) * 1024 + b * 128 * e,
                2 + j % 2,
                b * m * 4
            );
        }
        s.push_str("    sem_inc s6, 1\n");
    }

    /// `O_j = P V`, accumulated over the tile's 128-key blocks.
    fn tensor_pv(&self, s: &mut String, job: &Job, j: u32) {
        let (m, d, e, dt) = (self.m, self.d, self.e, self.dt);
        let _ = writeln!(s, "    sem_wait s7 >= {}", j + 1);
        let _ = writeln!(s, "    sem_wait s1 >= {}", self.engines(128) * (j + 1));
        if j >= 2 {
            let _ = writeln!(s, "    sem_wait s9 >= {}", j - 1);
        }
        let nb = job.w / 128;
        for i in 0..self.pack {
            for b in 0..nb {
                let acc = if b == 0 { "overwrite" } else { "accumulate" };
                let pt = PT_SBUF + (j % 2) * 1024 + (b * self.r + i * self.slot) * e;
                let _ = writeln!(s, "    ldweights sbuf[0:128] +{pt:#x} [{m}:1] {dt}");
                let _ = writeln!(
                    s,
                    "    matmul sbuf[0:128] +{:#x} [{d}:1] {dt} -> psum[{}:{m}] bank{} +0 [{d}:1] fp32, {acc}",
                    V_SBUF + (j % KBUF) * KV_SLOT + (i * nb + b) * d * e,
                    i * self.slot,
                    4 + j % 2
                );
            }
        }
        s.push_str("    sem_inc s8, 1\n");
    }

    /// The tile's max, the running max, `S - max` into `P_j`.
    fn vector_prep(&self, s: &mut String, job: &Job, j: u32) {
        let (m, w, dt) = (self.r, job.w, self.dt);
        let _ = writeln!(s, "    sem_wait s3 >= {}", j + 1);
        if j >= 2 {
            let _ = writeln!(s, "    sem_wait s5 >= {}", j - 1);
            let _ = writeln!(s, "    sem_wait s6 >= {}", j - 1);
        }
        let sc = format!("psum[0:{m}] bank{} +0 [{w}:1] fp32", j % 2);
        let (mt, mx, prev, diff) = (self.stat(0, j), self.stat(1, j), self.stat(1, j + 1), self.stat(2, j));
        let _ = writeln!(s, "    tensor_reduce max {sc} -> {mt}");
        if job.t == 0 {
            let _ = writeln!(s, "    tensor_copy {mt} -> {mx}");
        } else {
            let _ = writeln!(s, "    tensor_tensor max {mt}, {prev} -> {mx}");
            let _ = writeln!(s, "    tensor_tensor sub {prev}, {mx} -> {diff}");
        }
        let bc = format!("sbuf[0:{m}] +{:#x} [{w}:0] fp32", STAT_SBUF + (2 + j % 2) * 4);
        let _ =
            writeln!(s, "    tensor_tensor sub {sc}, {bc} -> sbuf[0:{m}] +{:#x} [{w}:1] {dt}", P_SBUF + (j % 2) * 1024);
        s.push_str("    sem_inc s4, 1\n");
    }

    /// `O = O x corr + O_j` and `l = l x corr + rowsum`; after a unit's last tile `O / l`.
    fn vector_update(&self, s: &mut String, job: &Job, j: u32, last: bool) {
        let (m, d, dt) = (self.r, self.d, self.dt);
        let _ = writeln!(s, "    sem_wait s8 >= {}", j + 1);
        let o = format!("sbuf[0:{m}] +{O_SBUF:#x} [{d}:1] fp32");
        let oj = format!("psum[0:{m}] bank{} +0 [{d}:1] fp32", 4 + j % 2);
        let l = format!("sbuf[0:{m}] +{:#x} [1:1] fp32", STAT_SBUF + 64);
        let (lt, corr) = (self.stat(3, j), self.stat(4, j));
        if job.t == 0 {
            let _ = writeln!(s, "    tensor_copy {oj} -> {o}");
            let _ = writeln!(s, "    tensor_copy {lt} -> {l}");
        } else {
            let cb = format!("sbuf[0:{m}] +{:#x} [{d}:0] fp32", STAT_SBUF + (8 + j % 2) * 4);
            let _ = writeln!(s, "    tensor_tensor mul {o}, {cb} -> {o}");
            let _ = writeln!(s, "    tensor_tensor add {o}, {oj} -> {o}");
            let _ = writeln!(s, "    tensor_tensor mul {l}, {corr} -> {l}");
            let _ = writeln!(s, "    tensor_tensor add {l}, {lt} -> {l}");
        }
        s.push_str("    sem_inc s9, 1\n");
        if last {
            if job.u >= 2 {
                let _ = writeln!(s, "    sem_wait s11 >= {}", self.engines(m) * (job.u - 1));
            }
            let lb = format!("sbuf[0:{m}] +{:#x} [{d}:0] fp32", STAT_SBUF + 64);
            let _ = writeln!(
                s,
                "    tensor_tensor div {o}, {lb} -> sbuf[0:{m}] +{:#x} [{d}:1] {dt}",
                OUT_SBUF + (job.u % 2) * 512
            );
            s.push_str("    sem_inc s10, 1\n");
        }
    }

    /// `exp` of the tile with its row sums and the correction, then `Pᵀ` from PSUM to SBUF.
    fn scalar(&self, s: &mut String, job: &Job, j: u32) {
        let (m, w, dt) = (self.r, job.w, self.dt);
        let _ = writeln!(s, "    sem_wait s4 >= {}", j + 1);
        let pj = format!("sbuf[0:{m}] +{:#x} [{w}:1] {dt}", P_SBUF + (j % 2) * 1024);
        let _ = writeln!(s, "    activation exp {pj} -> {pj}, reduce=add {}", self.stat(3, j));
        if job.t > 0 {
            let _ = writeln!(s, "    activation exp {} -> {}", self.stat(2, j), self.stat(4, j));
        }
        s.push_str("    sem_inc s5, 1\n");
        let _ = writeln!(s, "    sem_wait s6 >= {}", j + 1);
        if j >= 2 {
            let _ = writeln!(s, "    sem_wait s8 >= {}", j - 1);
        }
        let n = w / 128 * m;
        let _ = writeln!(
            s,
            "    activation identity psum[0:128] bank{} +0 [{n}:1] fp32 -> sbuf[0:128] +{:#x} [{n}:1] {dt}",
            2 + j % 2,
            PT_SBUF + (j % 2) * 1024
        );
        s.push_str("    sem_inc s7, 1\n");
    }

    /// Each unit's `O` to HBM.
    fn stores(&self, s: &mut String) {
        let (m, d, e, dt) = (self.r, self.d, self.e, self.dt);
        let stride = u64::from(d * e) + PAD;
        for u in 0..self.p.units {
            let _ = writeln!(s, "    sem_wait s10 >= {}", u + 1);
            let _ = writeln!(
                s,
                "    dma_start q1 sbuf[0:{m}] +{:#x} [{d}:1] {dt} -> hbm {:#x} stride {stride}, sem=s11",
                OUT_SBUF + (u % 2) * 512,
                self.base + O_HBM + u64::from(u) * u64::from(m) * stride
            );
        }
        let _ = writeln!(s, "    sem_wait s11 >= {}", self.engines(m) * self.p.units);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assembles(p: &AttnPlan) -> String {
        let src = program(p, 1);
        trnsim_core::isa::asm::assemble("attn", &src, &Default::default())
            .map_err(|e| trnsim_core::isa::asm::render_errors(&e))
            .unwrap();
        src
    }

    #[test]
    fn decode_and_prefill_plans_assemble_and_read_k_and_v_once_per_unit() {
        // gpt-oss decode: 8 sequences x 8 KV heads, 8 query heads each, 2049 keys of 64.
        let p = plan(8, 64, 8, 2049, 64, Format::Bf16).unwrap();
        assert_eq!((p.units, p.pack, p.rows, p.keys), (2, 4, 8, 2176), "4 tiles of 512 and one of 128");
        let src = assembles(&p);
        assert_eq!(src.matches("sem=s0").count(), 2 * 5, "one K DMA per unit and tile");
        assert_eq!(src.matches("sem=s2").count(), 2, "one Q per unit");
        assert!(src.contains("-> psum[96:8] bank0"), "the fourth head group's scores 96 partitions down");
        // Prefill: 2048 queries x 8 heads per group, causal: 1024 keys.
        let p = plan(8, 64, 2048 * 8, 1024, 64, Format::Bf16).unwrap();
        assert_eq!((p.rows, p.keys), (128, 1024));
        assert_eq!(p.units as u64 * 2, PROGRAM_TILES);
        assembles(&p);
        // A context longer than a program's tiles scales.
        let p = plan(8, 8, 8, 1 << 17, 128, Format::Fp16).unwrap();
        assert_eq!((p.keys as u64, p.reps_num / p.reps_den), (MAX_TILES * 512, 4));
        assembles(&p);
        assert!(plan(8, 1, 1, 1, 256, Format::Bf16).is_err(), "head size above 128");
    }
}
