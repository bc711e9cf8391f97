//! [`CycleCosts`]: a workload's compute nodes as kernel-library programs on the cycle-level
//! chip (`--compute cycle`), every other node as [`SystemCosts`] gives it.
//!
//! - **Gemm**: [`crate::gemm`] programs planned by [`crate::plan`] for the chip's core
//!   ([`crate::geometry`]: its array, SBUF and PSUM), in the node's format (bf16, fp16, fp32, fp8, mxfp8). BF16 or FP16 activations against MX weights (mxfp4 or
//!   mxfp8) on a core with `quantize_mx` and an MXFP8 matmul (nc-v4, nc-v5) are quantized to
//!   MXFP8 on the vector engine (the block scales and the cast, as NKI's MX kernels do) and
//!   multiply at the MX rate. Weights stored in mxfp4 (`weight_dtype: "mxfp4"`) against
//!   MXFP8 activations on a core whose `tensor.formats.mxfp4` has MXFP8's MACs per PE (nc-v4)
//!   move at 4 bits a weight and multiply at the MXFP8 rate (the core file's MXFP4
//!   rate; the ISA has no MXFP4 operand, so the matmul is MXFP8's); on other cores (nc-v2,
//!   nc-v3: no MX matmul; nc-v5: MXFP4 at another rate than the ISA's operand) they are
//!   dequantized on the vector engine into the matmul's format, the work a core without
//!   MXFP4 matmuls does. Activations and weights in two other formats
//!   multiply in the slower of the two at the core's rates (the other operand's cast is not
//!   charged).
//! - **Elementwise**: [`crate::elementwise`] programs (128 partitions on any core).
//! - **Attention**: [`crate::attention`]'s flash kernel: per head group (a sequence and a KV
//!   head, its query heads sharing K and V) and tile of 128 query rows, the scores and the
//!   online softmax in SBUF and PSUM, K and V (in decode the KV cache) read from HBM once; a
//!   causal mask halves the keys each query sees. Q, K and V move in BF16 (FP16 if the node's
//!   dtype is). Its program is written for a 128 x 128 array: on another core an attention
//!   node is refused at its line, naming the field.
//! - **Kernel** (an opaque Chakra node: flops and bytes, no shape): the roofline.
//!
//! Each program's time comes with its edges ([`Timing`]: the start until its first data
//! instruction issues, its last one's completion until the end: the DMA start latency and
//! first loads, the last stores): a node tiled into several programs runs them back to back
//! with those edges overlapped ([`repeated`]), and the schedule overlaps consecutive compute
//! nodes' edges the same way ([`edge_overlap_ns`]), as a step compiled into one graph issues
//! the next op's loads while the previous computes.
//!
//! Left out: the bandwidth those early loads take from the op they overlap, and ops that
//! overlap beyond their edges.

use crate::attention::{self, AttnPlan};
use crate::elementwise::{self, EltPlan};
use crate::format::Format;
use crate::gemm;
use crate::geometry::Geometry;
use crate::plan::{self, GemmOp, Plan};
use crate::run::{chip_key, on_threads, program_time, OpRuns, Timing};
use std::collections::{BTreeMap, BTreeSet};
use trnsim_workloads::costs::SystemCosts;
use trnsim_workloads::exec::{edge_overlap_ns, Costs};
use trnsim_workloads::format::Op;

/// Node times with compute nodes run as kernel programs on the cycle-level chip.
pub struct CycleCosts<'a> {
    /// Memory and communication nodes, and the roofline's opaque kernels (its chip is the
    /// one the programs run on).
    pub inner: SystemCosts<'a>,
    chip_key: String,
    dma_piece: u32,
    programs: BTreeSet<String>,
    models: BTreeMap<&'static str, &'static str>,
    op_runs: OpRuns,
}

impl<'a> CycleCosts<'a> {
    /// Compute nodes on `inner`'s chip, the rest from `inner`.
    pub fn new(inner: SystemCosts<'a>) -> CycleCosts<'a> {
        let dma_piece = u32::try_from(trnsim_workloads::costs::dma_bytes_per_partition(inner.chip)).unwrap_or(4096);
        CycleCosts {
            chip_key: chip_key(inner.chip),
            dma_piece,
            inner,
            programs: BTreeSet::new(),
            models: BTreeMap::new(),
            op_runs: OpRuns::default(),
        }
    }

    /// Simulates distinct programs on `r.jobs` threads ([`Costs::prepare`]) and keeps their
    /// times in `r.disk` too; neither changes a time.
    pub fn with_op_runs(mut self, r: OpRuns) -> Self {
        self.op_runs = r;
        self
    }

    /// Distinct programs this run's nodes ran as (simulated, or found in the op cache).
    pub fn programs_run(&self) -> usize {
        self.programs.len()
    }

    /// Which model timed each node kind this run met: `cycle` or `roofline`.
    pub fn models(&self) -> &BTreeMap<&'static str, &'static str> {
        &self.models
    }

    /// Whether every compute node of `w` has a kernel this chip runs, before anything runs:
    /// the first that does not is an error located at its node (`file:line:col: op.dtype:
    /// ...`).
    pub fn check(&self, w: &trnsim_workloads::format::Checked) -> Result<(), String> {
        for (i, n) in w.w.nodes.iter().enumerate() {
            let r = match &n.op {
                Op::Gemm { dtype, weight_dtype, .. } => {
                    self.gemm_format(dtype, weight_dtype.as_deref().unwrap_or(dtype)).map(|_| ())
                }
                Op::Attention { dtype, .. } => self.gemm_format(dtype, dtype).map(|_| ()),
                _ => Ok(()),
            };
            r.map_err(|e| w.node_error(i, "op.dtype", &e))?;
            // The core's geometry: a tile of the node fits its SBUF, PSUM and array.
            let r = match &n.op {
                Op::Gemm { .. } => self.gemm_op(&n.op).and_then(|g| {
                    let geo = self.geometry()?;
                    plan::plan_on(self.inner.chip.spec.cores, &geo, &g).map(|_| ())
                }),
                Op::Attention { .. } => self.check_attention(),
                _ => Ok(()),
            };
            r.map_err(|e| w.node_error(i, "op", &e))?;
        }
        Ok(())
    }

    /// The kernel-library GEMM of a workload GEMM node: its format (checked against the
    /// core's) and weight storage.
    fn gemm_op(&self, op: &Op) -> Result<GemmOp, String> {
        let Op::Gemm { m, k, n, dtype, count, a_resident, b_resident, weight_dtype } = op else {
            return Err("not a gemm".into());
        };
        let weights = weight_dtype.as_deref().unwrap_or(dtype);
        let (format, mxfp4, a_quantize) = self.gemm_format(dtype, weights)?;
        let native = mxfp4 && format == Format::Mxfp8 && self.native_mxfp4();
        Ok(GemmOp {
            m: *m,
            k: *k,
            n: *n,
            count: *count,
            a_resident: *a_resident,
            b_resident: *b_resident,
            format,
            w_mxfp4: mxfp4 && !native,
            w_native_mxfp4: native,
            a_quantize,
        })
    }

    /// Whether the attention kernel runs on this chip's core (`core.FIELD: ...` where not).
    fn check_attention(&self) -> Result<(), String> {
        let geo = self.geometry()?;
        attention::fits(&geo).map_err(|(field, m)| format!("core {}: core.{field}: {m}", self.inner.chip.core.name))
    }

    /// The chip's core geometry the kernels tile by; `Err` names the core field it cannot tile
    /// on (`core.FIELD: ...`).
    pub fn geometry(&self) -> Result<Geometry, String> {
        let core = &self.inner.chip.core;
        Geometry::of(core).map_err(|(field, m)| format!("core {}: core.{field}: {m}", core.name))
    }

    /// A GEMM node's time in ns.
    pub fn gemm_ns(&mut self, g: &GemmOp) -> Result<f64, String> {
        Ok(self.gemm_timed(g)?.0)
    }

    /// A GEMM node's time and edges in ns ([`repeated`]).
    fn gemm_timed(&mut self, g: &GemmOp) -> Result<(f64, f64, f64), String> {
        let geo = self.geometry()?;
        let mut p = plan::plan_on(self.inner.chip.spec.cores, &geo, g)?;
        p.variant.dma_piece = self.dma_piece;
        Ok(repeated(self.gemm_program(&p)?, p.reps as f64))
    }

    /// Per-core program texts of a GEMM plan on this chip.
    pub fn gemm_texts(&self, p: &Plan) -> Vec<String> {
        (0..self.inner.chip.spec.cores).map(|i| gemm::program_in(&p.shape, i, &p.variant, &p.geometry)).collect()
    }

    /// One program of plan `p`, in ns (cached).
    pub fn gemm_program_ns(&mut self, p: &Plan) -> Result<f64, String> {
        Ok(self.gemm_program(p)?.ns())
    }

    /// One program of plan `p` with its edges (cached).
    fn gemm_program(&mut self, p: &Plan) -> Result<Timing, String> {
        let key = format!("{}|gemm|{:?}|{:?}", self.chip_key, p.shape, p.variant);
        p.shape.check_in(&p.variant, &p.geometry)?;
        let (t, _) = program_time(&self.op_runs, self.inner.chip, &self.chip_key, &key, "gemm", || self.gemm_texts(p))?;
        self.programs.insert(key);
        Ok(t)
    }

    /// An elementwise node's time in ns.
    pub fn elementwise_ns(&mut self, elements: u64, ops: u32, dtype: &str) -> Result<f64, String> {
        Ok(self.elementwise_timed(elements, ops, dtype)?.0)
    }

    fn elementwise_timed(&mut self, elements: u64, ops: u32, dtype: &str) -> Result<(f64, f64, f64), String> {
        let p = elementwise::plan(self.inner.chip.spec.cores, elements, ops, elt_format(dtype))?;
        let key = format!("{}|elementwise|{:?}", self.chip_key, EltPlan { reps: 1, ..p });
        let chip = self.inner.chip;
        let ppe = chip.core.dma.partitions_per_engine;
        let texts = || (0..chip.spec.cores).map(|i| elementwise::program_on(&p, i, ppe)).collect();
        let (t, _) = program_time(&self.op_runs, chip, &self.chip_key, &key, "elementwise", texts)?;
        self.programs.insert(key);
        Ok(repeated(t, p.reps as f64))
    }

    /// The core's tensor engine takes MXFP4 at MXFP8's MACs per PE (`tensor.formats.mxfp4`).
    fn native_mxfp4(&self) -> bool {
        let f = &self.inner.chip.core.tensor.formats;
        matches!((f.mxfp4, f.mxfp8), (Some(a), Some(b)) if a.macs_per_pe == b.macs_per_pe)
    }

    /// The core quantizes to MXFP8 on its vector engine (`costs.vector.quantize_mx`) and
    /// multiplies MXFP8 at the ISA's packing: 16-bit activations against MX weights are then
    /// quantized on the chip and multiplied at the MX rate.
    fn quantizes_to_mx(&self, dtype: &str, weights: &str) -> bool {
        let core = &self.inner.chip.core;
        trnsim_workloads::costs::quantize_mx_ops(core, dtype, weights).is_some()
            && matches!(core.tensor.formats.mxfp8, Some(r) if r.macs_per_pe == Format::Mxfp8.rows_per_partition())
    }

    /// The matmul format of a GEMM in `dtype` against weights in `weights`, whether the
    /// weights are stored in MXFP4, and whether the activations are quantized to MXFP8 on the
    /// chip ([`Self::quantizes_to_mx`]: BF16 or FP16 activations against MX weights); checked
    /// against the core's formats.
    fn gemm_format(&self, dtype: &str, weights: &str) -> Result<(Format, bool, bool), String> {
        let mxfp4 = weights == "mxfp4";
        if self.quantizes_to_mx(dtype, weights) {
            return Ok((Format::Mxfp8, mxfp4, true));
        }
        let want = match (dtype, mxfp4) {
            ("mxfp4" | "mxfp8", _) => "mxfp8",
            (d, _) => d,
        };
        let f = Format::of_dtype(want).ok_or_else(|| {
            format!("dtype {dtype}: the NeuronCore ISA has no {dtype} matmul operand (use --compute roofline)")
        })?;
        let core = &self.inner.chip.core;
        // Mixed formats multiply in the slower of the two (the other operand arrives in it).
        let f = match Format::of_dtype(weights) {
            Some(w) if !mxfp4 && w != f => {
                let rate = |x: Format| trnsim_workloads::costs::tensor_rate(core, x.asm());
                match (rate(f), rate(w)) {
                    (Some(a), Some(b)) if a < b => f,
                    (Some(_), Some(_)) => w,
                    _ => return Err(format!("core {} has no {} or no {} matmul", core.name, f.asm(), w.asm())),
                }
            }
            None if !mxfp4 => {
                return Err(format!(
                    "weights in {weights}: the NeuronCore ISA has no {weights} matmul operand (use --compute roofline)"
                ))
            }
            _ => f,
        };
        let rate = core.tensor.formats.entries().find(|(k, _)| *k == f.asm()).and_then(|(_, r)| r);
        match rate {
            Some(r) if r.macs_per_pe == f.rows_per_partition() => Ok((f, mxfp4, false)),
            Some(r) => Err(format!(
                "core {}'s {} matmul does {} MACs per PE per column (tensor.formats.{}.macs_per_pe); the ISA's {} operand packs {} K-row(s) per partition, so only --compute roofline runs it",
                core.name,
                f.asm(),
                r.macs_per_pe,
                f.asm(),
                f.asm(),
                f.rows_per_partition()
            )),
            None => Err(format!("core {} has no {} matmul", core.name, f.asm())),
        }
    }

    fn attention_timed(&mut self, op: &Op) -> Result<(f64, f64, f64), String> {
        let Op::Attention { batch, heads, seq, kv_seq, kv_heads, head_dim, causal, dtype } = op else {
            return Err("not an attention".into());
        };
        let kv = kv_seq.unwrap_or(*seq);
        let kvh = kv_heads.unwrap_or(*heads).max(1);
        let group = heads.div_ceil(kvh);
        let keys = if *causal { kv.div_ceil(2) } else { kv };
        self.gemm_format(dtype, dtype)?;
        // Q, K, V and O in a 2-byte format: the dtype's, else BF16.
        let f = match elt_format(dtype) {
            f @ (Format::Bf16 | Format::Fp16) => f,
            _ => Format::Bf16,
        };
        let pairs = batch.saturating_mul(kvh);
        let p = attention::plan(self.inner.chip.spec.cores, pairs, seq.saturating_mul(group), keys, *head_dim, f)?;
        let key = format!("{}|attention|{:?}", self.chip_key, AttnPlan { reps_num: 1, reps_den: 1, ..p.clone() });
        let chip = self.inner.chip;
        let ppe = chip.core.dma.partitions_per_engine;
        let texts = || (0..chip.spec.cores).map(|i| attention::program_on(&p, i, ppe)).collect();
        let (t, _) = program_time(&self.op_runs, chip, &self.chip_key, &key, "attention", texts)?;
        self.programs.insert(key);
        Ok(repeated(t, p.reps_num as f64 / p.reps_den as f64))
    }
}

/// `reps` runs of a program timed `t` back to back (a tiled node), each overlapping its
/// neighbours' edges as consecutive nodes do ([`edge_overlap_ns`]): the node's time, the
/// first run's head and the last run's tail, in ns. A fraction of a run (a node smaller than
/// one program) scales all three.
fn repeated(t: Timing, reps: f64) -> (f64, f64, f64) {
    let (ns, head, tail) = (t.ns(), t.head_ns(), t.tail_ns());
    if reps <= 1.0 {
        return (ns * reps, head * reps, tail * reps);
    }
    (ns * reps - (reps - 1.0) * edge_overlap_ns(ns, tail, ns, head), head, tail)
}

/// The SBUF format of an elementwise op in `dtype`: activations in an MX format are BF16
/// (they are quantized for a matmul, not stored so), unknown ones BF16.
fn elt_format(dtype: &str) -> Format {
    match Format::of_dtype(dtype) {
        Some(Format::Mxfp8) | None => Format::Bf16,
        Some(f) => f,
    }
}

impl Costs for CycleCosts<'_> {
    /// Simulates the programs of `ops`' distinct compute nodes with a shape (GEMM, attention,
    /// elementwise) on [`CycleCosts::with_op_runs`]' threads, into the op cache: the nodes'
    /// times, asked for in order afterwards, are then found there. Errors are left for that
    /// pass to meet in order (the first failure stops the threads).
    fn prepare(&mut self, ops: &[&Op]) {
        let mut distinct: Vec<&Op> = Vec::new();
        for &op in ops {
            if matches!(op, Op::Gemm { .. } | Op::Elementwise { .. } | Op::Attention { .. }) && !distinct.contains(&op)
            {
                distinct.push(op);
            }
        }
        if self.op_runs.jobs <= 1 || distinct.len() <= 1 {
            return;
        }
        let (chip, fabric, eff) = (self.inner.chip, self.inner.fabric, self.inner.gemm_efficiency);
        let runs = &self.op_runs;
        on_threads(distinct.len(), runs.jobs, &|i| {
            let mut c = CycleCosts::new(SystemCosts::new(chip, fabric, eff)).with_op_runs(runs.clone());
            c.compute_ns(distinct[i]).is_ok()
        });
    }

    fn compute_ns(&mut self, op: &Op) -> Result<f64, String> {
        Ok(self.compute_timing(op)?.0)
    }

    /// GEMM, elementwise and attention nodes with their programs' edges ([`run::Timing`],
    /// [`repeated`]); other compute nodes the roofline's, without edges.
    ///
    /// [`run::Timing`]: crate::run::Timing
    fn compute_timing(&mut self, op: &Op) -> Result<(f64, f64, f64), String> {
        let kind = op.kind();
        match op {
            Op::Gemm { .. } => {
                let g = self.gemm_op(op)?;
                self.models.insert(kind, "cycle");
                self.gemm_timed(&g).map_err(|e| format!("{e} (use --compute roofline)"))
            }
            Op::Elementwise { elements, ops, dtype } => {
                self.models.insert(kind, "cycle");
                self.elementwise_timed(*elements, *ops, dtype)
            }
            Op::Attention { .. } => {
                self.check_attention()?;
                self.models.insert(kind, "cycle");
                self.attention_timed(op)
            }
            other => {
                self.models.insert(kind, "roofline");
                Ok((self.inner.compute_ns(other)?, 0.0, 0.0))
            }
        }
    }
    fn memory_ns(&mut self, op: &Op) -> Result<f64, String> {
        self.models.insert(op.kind(), "cycle");
        self.inner.memory_ns(op)
    }
    fn comm_ns(&mut self, op: &Op, groups: &[Vec<usize>]) -> Result<Vec<f64>, String> {
        self.inner.comm_ns(op, groups)
    }
    fn send_recv_ns(&mut self, bytes: u64, pairs: &[(usize, usize)]) -> Result<Vec<f64>, String> {
        self.inner.send_recv_ns(bytes, pairs)
    }
}
