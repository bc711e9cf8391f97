//! The workload file: per-rank operation graphs in RON (JSON is read too), after MLCommons
//! Chakra's execution traces: compute (COMP), memory (MEM) and communication (COMM) nodes with
//! data and control dependencies.
//!
//! ```ron
//! Workload(
//!     name: "two-layer-tp4",
//!     ranks: 4,                          // rank r runs on chip r of the system
//!     groups: { "tp": [[0, 1, 2, 3]] },  // named group sets: disjoint groups of ranks
//!     repeat: 2,                         // the graph runs twice, back to back
//!     nodes: [
//!         (id: 0, name: "qkv", op: Gemm(m: 4096, k: 4096, n: 3072)),
//!         (id: 1, name: "proj.ar", op: AllReduce(bytes: 33554432, group: "tp"), data_deps: [0]),
//!     ],
//! )
//! ```
//!
//! Every node runs on every rank unless `ranks` lists some. Node ids increase through the
//! file and dependencies name earlier ids, so a graph cannot have a cycle. A collective runs
//! on each group of its group set (`"world"`: all ranks) at once. Ranges are checked where
//! they are read; every error is `file:line:col: field: message`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use trnsim_system::located::{line_col, ConfigError};

/// The most ranks a workload may have.
pub const MAX_RANKS: u32 = 1 << 20;
/// The most nodes a workload may have (before `repeat`).
pub const MAX_NODES: usize = 1 << 20;
/// The most node instances (`nodes x repeat`) per rank.
pub const MAX_INSTANCES: u64 = 1 << 22;
/// The most node instances over all ranks (`ranks x nodes x repeat`; each is a scheduled span
/// of about 40 bytes, so 2^24 is ~700 MB).
pub const MAX_SPANS: u64 = 1 << 24;
/// The largest byte count or dimension a node may name (2^50: a PiB).
pub const MAX_SIZE: u64 = 1 << 50;
/// The most floating-point operations one node may take (2^60: about 30 minutes of a Trn3
/// chip's 671 dense BF16 TFLOPS).
pub const MAX_FLOPS: u64 = 1 << 60;

fn one() -> u32 {
    1
}
fn bf16() -> String {
    "bf16".into()
}
fn is_false(b: &bool) -> bool {
    !*b
}

/// A workload: ranks, named groups of ranks, and the graph every rank runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Name used in reports.
    pub name: String,
    /// How it was made (the generator's command line, or a description).
    #[serde(default)]
    pub source: String,
    /// Ranks (1..=2^20); rank `r` runs on chip `r` of the system.
    pub ranks: u32,
    /// Named group sets: each a list of disjoint groups of ranks (`"world"` is implied).
    #[serde(default)]
    pub groups: BTreeMap<String, Vec<Vec<u32>>>,
    /// Times the whole graph runs, back to back (1..; `nodes x repeat` <= 2^22).
    #[serde(default = "one")]
    pub repeat: u32,
    /// HBM bytes each rank needs (weights, optimizer state, activations); a run refuses a
    /// chip with less. None: not stated, not checked.
    #[serde(default)]
    pub hbm_bytes_per_rank: Option<u64>,
    /// Tokens one pass of the graph processes over all ranks (a training step's or a
    /// prefill's `batch x seq`; a decode step's batch), for tokens/s and tokens per joule.
    /// None: not stated, no per-token figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_per_step: Option<u64>,
    /// An inference workload's serving figures (what one pass is: a prefill of `batch`
    /// prompts of `context` tokens, or one decode step of `batch` sequences): reports give
    /// time to first token or time per output token and tokens/s per chip and per user.
    /// None: not an inference workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serving: Option<Serving>,
    /// The graph.
    pub nodes: Vec<Node>,
}

/// What one pass of an inference workload serves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Serving {
    /// "prefill" (the prompts into the KV cache; its time is the time to first token) or
    /// "decode" (one output token per sequence; its time is the time per output token).
    pub mode: String,
    /// Concurrent sequences (users), 1..=2^24.
    pub batch: u64,
    /// Prefill: the prompt's tokens; decode: the tokens already in the KV cache (0..=2^24).
    pub context: u64,
    /// The KV cache's bytes per rank (included in `hbm_bytes_per_rank`), for reports.
    #[serde(default)]
    pub kv_cache_bytes_per_rank: u64,
}

/// Largest batch or context a serving section may name.
pub const MAX_SERVING: u64 = 1 << 24;

/// One operation of the graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    /// Id: increasing through the file.
    pub id: u32,
    /// Name used in reports and traces.
    #[serde(default)]
    pub name: String,
    /// What it does.
    pub op: Op,
    /// Nodes whose results it reads (earlier ids).
    #[serde(default)]
    pub data_deps: Vec<u32>,
    /// Nodes that must finish first without passing data (earlier ids).
    #[serde(default)]
    pub ctrl_deps: Vec<u32>,
    /// Ranks it runs on (default: every rank). For a send/recv: the senders (their receivers
    /// take part too).
    #[serde(default)]
    pub ranks: Option<Vec<u32>>,
}

/// An operation. Compute runs on the rank's NeuronCores, memory on its DMA engines and HBM,
/// communication on its collective engine and the fabric; each kind is one queue per rank,
/// in file order, so compute overlaps communication where the graph allows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Op {
    /// C[m x n] = A[m x k] x B[k x n], `count` times, split over the chip's cores.
    Gemm {
        /// Rows of A and C.
        m: u64,
        /// The contraction.
        k: u64,
        /// Columns of B and C.
        n: u64,
        /// Element type: bf16, fp16, fp32, fp8, mxfp8, mxfp4.
        #[serde(default = "bf16")]
        dtype: String,
        /// Independent GEMMs of this shape (experts, heads): 1 by default.
        #[serde(default = "one")]
        count: u32,
        /// A is already in SBUF (an earlier node of the rank loaded or produced it): not read
        /// from HBM.
        #[serde(default, skip_serializing_if = "is_false")]
        a_resident: bool,
        /// B (the weights) is already in SBUF (prefetched by an earlier node): not read from
        /// HBM.
        #[serde(default, skip_serializing_if = "is_false")]
        b_resident: bool,
        /// B's format in HBM when it differs from `dtype` (weights stored in MXFP4 and
        /// multiplied against activations in `dtype`): B's bytes are this format's, the matmul
        /// runs at the slower of the two formats' rates, and the scaling work is charged on
        /// the vector engine (costs.rs); BF16 or FP16 activations against MX weights on a core
        /// with `quantize_mx` are quantized to MXFP8 and the matmul runs at the weights' rate.
        /// None: B is in `dtype`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        weight_dtype: Option<String>,
    },
    /// Scaled dot-product attention: QKᵀ, softmax, PV for `batch x heads` heads.
    Attention {
        /// Sequences.
        batch: u64,
        /// Heads on this rank.
        heads: u64,
        /// Query length.
        seq: u64,
        /// Key/value length (default: `seq`).
        #[serde(default)]
        kv_seq: Option<u64>,
        /// Key/value heads on this rank (grouped-query attention: each serves `heads /
        /// kv_heads` query heads; default: `heads`). The K and V read are this many heads'.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kv_heads: Option<u64>,
        /// Head dimension.
        head_dim: u64,
        /// Causal mask: half the score matrix is computed.
        #[serde(default)]
        causal: bool,
        /// Element type.
        #[serde(default = "bf16")]
        dtype: String,
    },
    /// An element-wise or activation op over `elements` values, `ops` operations each, on
    /// the vector and scalar engines.
    Elementwise {
        /// Values.
        elements: u64,
        /// Operations per value (1..=1000).
        #[serde(default = "one")]
        ops: u32,
        /// Element type.
        #[serde(default = "bf16")]
        dtype: String,
    },
    /// An opaque compute kernel (an MLCommons Chakra COMP node): `flops` on the tensor
    /// engines and `bytes` of HBM traffic, timed by the roofline, and at least `duration_ns`
    /// (a measured runtime; 0: none). All three 0: a join that takes no time.
    Kernel {
        /// Floating-point operations.
        #[serde(default)]
        flops: u64,
        /// HBM bytes read and written.
        #[serde(default)]
        bytes: u64,
        /// Measured runtime, in ns.
        #[serde(default)]
        duration_ns: u64,
        /// Element type of the flops.
        #[serde(default = "bf16")]
        dtype: String,
    },
    /// DMA from HBM into SBUF.
    Load {
        /// Bytes over the whole chip.
        bytes: u64,
    },
    /// DMA from SBUF into HBM.
    Store {
        /// Bytes over the whole chip.
        bytes: u64,
    },
    /// All-reduce of `bytes` per rank in each group of `group`.
    AllReduce(Comm),
    /// All-gather: `bytes` is each rank's output.
    AllGather(Comm),
    /// Reduce-scatter: `bytes` is each rank's input.
    ReduceScatter(Comm),
    /// All-to-all: `bytes` is each rank's send buffer.
    AllToAll(Comm),
    /// All-to-allv: uneven sizes, `sizes[i][j]` bytes from the group's i-th rank to its j-th
    /// (an MoE dispatch or combine).
    AllToAllV(CommV),
    /// Broadcast from the group's first rank.
    Broadcast(Comm),
    /// Every rank `r` sends `bytes` to rank `r + offset` (mod ranks) and receives from
    /// `r - offset`: a pipeline stage boundary, or a permute.
    SendRecv {
        /// Bytes sent by each rank.
        bytes: u64,
        /// Distance to the receiving rank (non-zero).
        offset: i64,
    },
}

/// A collective's size, group set and algorithm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Comm {
    /// Bytes per rank (see the operation).
    pub bytes: u64,
    /// The group set ("world" = all ranks).
    #[serde(default = "world")]
    pub group: String,
    /// ring, rhd, direct, tree, hierarchical, pipelined or auto (default: the Neuron
    /// runtime's size policy, as the benchmarks' collectives use it).
    #[serde(default)]
    pub algo: Option<String>,
    /// A measured time instead of a simulated one, in ns (only with `bytes: 0`: a trace
    /// that records a collective's runtime but not its size).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub duration_ns: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// An all-to-allv's sizes and group set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommV {
    /// `sizes[i][j]`: bytes the group's i-th rank sends to its j-th; a square matrix of the
    /// group's size (every group of the set uses it). The diagonal stays on the chip.
    pub sizes: Vec<Vec<u64>>,
    /// The group set ("world" = all ranks).
    #[serde(default = "world")]
    pub group: String,
}

impl CommV {
    /// The largest number of bytes one rank sends to the others (its send buffer, less what
    /// stays on the chip).
    pub fn max_send_bytes(&self) -> u64 {
        let row = |(i, r): (usize, &Vec<u64>)| -> u64 {
            r.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, b)| *b).fold(0u64, u64::saturating_add)
        };
        self.sizes.iter().enumerate().map(row).max().unwrap_or(0)
    }
}

fn world() -> String {
    "world".into()
}

/// Which queue of a rank runs an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Queue {
    /// The NeuronCores.
    Compute,
    /// DMA and HBM.
    Memory,
    /// The collective engine and the fabric.
    Comm,
}

impl Op {
    /// The queue that runs it.
    pub fn queue(&self) -> Queue {
        match self {
            Op::Gemm { .. } | Op::Attention { .. } | Op::Elementwise { .. } | Op::Kernel { .. } => Queue::Compute,
            Op::Load { .. } | Op::Store { .. } => Queue::Memory,
            _ => Queue::Comm,
        }
    }

    /// The group set a collective runs on.
    pub fn group(&self) -> Option<&str> {
        match self {
            Op::AllToAllV(v) => Some(&v.group),
            _ => self.comm().map(|c| c.group.as_str()),
        }
    }

    /// Bytes per rank of a collective (an all-to-allv: its largest send buffer).
    pub fn comm_bytes(&self) -> u64 {
        match self {
            Op::AllToAllV(v) => v.max_send_bytes(),
            _ => self.comm().map_or(0, |c| c.bytes),
        }
    }

    /// The collective of a communication node (an all-to-allv has none: see [`Op::group`]).
    pub fn comm(&self) -> Option<&Comm> {
        match self {
            Op::AllReduce(c) | Op::AllGather(c) | Op::ReduceScatter(c) | Op::AllToAll(c) | Op::Broadcast(c) => Some(c),
            _ => None,
        }
    }

    /// Lower-case operation name.
    pub fn kind(&self) -> &'static str {
        match self {
            Op::Gemm { .. } => "gemm",
            Op::Attention { .. } => "attention",
            Op::Elementwise { .. } => "elementwise",
            Op::Kernel { .. } => "kernel",
            Op::Load { .. } => "load",
            Op::Store { .. } => "store",
            Op::AllReduce(_) => "all_reduce",
            Op::AllGather(_) => "all_gather",
            Op::ReduceScatter(_) => "reduce_scatter",
            Op::AllToAll(_) => "all_to_all",
            Op::AllToAllV(_) => "all_to_allv",
            Op::Broadcast(_) => "broadcast",
            Op::SendRecv { .. } => "send_recv",
        }
    }
}

/// The compute dtypes a workload node may name.
pub const DTYPES: &str = "bf16, fp16, fp32, fp8, mxfp8, mxfp4";

/// Bytes per element of a compute dtype as it sits in memory, an MX format's shared E8M0
/// scale (one byte per 32 elements, OCP MX v1.0) included: MXFP8 33/32, MXFP4 17/32.
pub fn dtype_size(d: &str) -> Option<f64> {
    match d {
        "mxfp4" => Some(17.0 / 32.0),
        "mxfp8" => Some(33.0 / 32.0),
        _ => dtype_bytes(d).map(|b| b as f64),
    }
}

/// Whole bytes per element of a dtype the LLM generator writes (MX formats: the elements'
/// byte, scales left out; MXFP4 has no whole-byte size).
pub fn dtype_bytes(d: &str) -> Option<u64> {
    match d {
        "fp8" | "mxfp8" => Some(1),
        "bf16" | "fp16" => Some(2),
        "fp32" => Some(4),
        _ => None,
    }
}

/// A checked workload: the file as written, and each named group set resolved.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The workload.
    pub w: Workload,
    /// Group sets by name, "world" included.
    pub groups: BTreeMap<String, Vec<Vec<u32>>>,
    /// Each node's ranks (every rank when the node names none).
    pub node_ranks: Vec<Vec<u32>>,
    /// Where `hbm_bytes_per_rank` is written (`file:line:col`), for errors found against a
    /// system.
    pub hbm_at: String,
    /// The file's name and text (errors of overridden values are located in it), shared by
    /// every workload made from it with overrides (a sweep's points copy no text).
    pub source: Arc<(String, String)>,
}

impl Checked {
    /// An error found against a system in node `i`'s `key` (`op.bytes`: its `bytes:`, or the
    /// node where it has none), located as `file:line:col: nodes[i].key (name): message`.
    pub fn node_error(&self, i: usize, key: &str, message: &str) -> String {
        let (file, text) = &*self.source;
        let n = &self.w.nodes[i];
        let last = key.rsplit('.').next().unwrap_or(key);
        let field = format!("nodes[{i}].{key} ({})", n.name);
        Locator { file, text }.at_node(n.id, last, field, message.to_string()).to_string()
    }

    /// Where the first `key:` of the file is, as `file:line:col` (for errors found later,
    /// against a system).
    pub fn at(&self, key: &str) -> String {
        let (file, text) = &*self.source;
        let e = Locator { file, text }.at_key(key, String::new(), String::new());
        format!("{}:{}:{}", e.file, e.line, e.col)
    }

    /// The workload with `PATH=VALUE` overrides (paths in the workload, with or without a
    /// leading `workload.`: `repeat`, `nodes[3].op.Gemm.m` or `nodes[3].m`; applied by
    /// `overrides::apply`), checked again as a file is; `flag` names the option in errors
    /// ("--set", "--sweep").
    pub fn with(&self, flag: &str, assignments: &[String]) -> Result<Checked, String> {
        if assignments.is_empty() {
            return Ok(self.clone());
        }
        let w = crate::overrides::apply(&self.w, flag, assignments)?;
        check_source(Arc::clone(&self.source), w).map_err(|e| format!("{e} (with {flag} {})", assignments.join(", ")))
    }
}

/// Reads a workload file (RON, or JSON when it ends in `.json`).
pub fn load(path: &std::path::Path) -> Result<Checked, ConfigError> {
    let (file, text) = trnsim_system::located::read_ron_file(path)?;
    parse(&file, &text)
}

/// Parses and checks workload text named `file`: JSON when it starts with `{`, else RON
/// (told apart by content, whatever the file's extension).
pub fn parse(file: &str, text: &str) -> Result<Checked, ConfigError> {
    let w: Workload = if is_json(text) {
        trnsim_system::located::from_json(file, text)?
    } else {
        trnsim_system::located::from_ron(file, text)?
    };
    check(file, text, w)
}

/// Whether workload `text` is JSON (its first character, after white space and a byte-order
/// mark, is `{`); RON workloads start with `Workload(`, `(` or a comment.
pub fn is_json(text: &str) -> bool {
    text.trim_start_matches('\u{feff}').trim_start().starts_with('{')
}

/// Writes `w` as RON text (what `trnsim workload` writes).
pub fn to_ron(w: &Workload) -> Result<String, String> {
    let cfg = ron::ser::PrettyConfig::new().depth_limit(3).struct_names(true);
    ron::ser::to_string_pretty(w, cfg).map_err(|e| e.to_string())
}

struct Locator<'a> {
    file: &'a str,
    text: &'a str,
}

impl Locator<'_> {
    /// An error at node `id`'s `key` (or at the node, or the file's start).
    fn at_node(&self, id: u32, key: &str, field: String, message: String) -> ConfigError {
        let pos = self.node_pos(id).unwrap_or(0);
        let pos = self.text[pos..].find(&format!("{key}:")).map_or(pos, |p| {
            let next = self.text[pos + 1..].find("id:").map_or(usize::MAX, |n| n + 1);
            if p < next {
                pos + p
            } else {
                pos
            }
        });
        self.err_at(pos, field, message)
    }

    /// An error at the `id` of the `i`-th node (0-based) in file order: the node itself,
    /// wherever another node has the same id.
    fn at_index(&self, i: usize, field: String, message: String) -> ConfigError {
        let start = self.text.find("nodes").unwrap_or(0);
        let pos = id_keys(&self.text[start..]).nth(i).map_or(start, |p| start + p);
        self.err_at(pos, field, message)
    }

    fn node_pos(&self, id: u32) -> Option<usize> {
        let ron = format!("id: {id},");
        let json = format!("\"id\": {id},");
        self.text.find(&ron).or_else(|| self.text.find(&json))
    }

    /// An error at the first `key:` in the text.
    fn at_key(&self, key: &str, field: String, message: String) -> ConfigError {
        let pos = self.text.find(&format!("{key}:")).or_else(|| self.text.find(&format!("\"{key}\":"))).unwrap_or(0);
        self.err_at(pos, field, message)
    }

    fn err_at(&self, pos: usize, field: String, message: String) -> ConfigError {
        let (line, col) = line_col(self.text, pos);
        ConfigError { file: self.file.into(), line, col, field, message }
    }
}

/// The byte offsets of the `id` keys in RON or JSON `text` (`id:` or `"id":`, outside
/// strings), in order.
fn id_keys(text: &str) -> impl Iterator<Item = usize> + '_ {
    let b = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            let at = i;
            if b[i] == b'"' {
                let s = i + 1;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                if text.get(s..i.saturating_sub(1)) == Some("id")
                    && text[i.min(b.len())..].trim_start().starts_with(':')
                {
                    return Some(at);
                }
                continue;
            }
            let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
            i += 1;
            if b[at] == b'i'
                && b.get(at + 1) == Some(&b'd')
                && (at == 0 || !ident(b[at - 1]))
                && text[at + 2..].trim_start().starts_with(':')
            {
                return Some(at);
            }
        }
        None
    })
}

/// Checks a workload read from `text` of `file`: ranges, ids, dependencies, groups.
pub fn check(file: &str, text: &str, w: Workload) -> Result<Checked, ConfigError> {
    check_source(Arc::new((file.to_string(), text.to_string())), w)
}

/// [`check`] of a workload read from `source` (file name, text), kept shared.
fn check_source(source: Arc<(String, String)>, mut w: Workload) -> Result<Checked, ConfigError> {
    let (file, text) = (source.0.as_str(), source.1.as_str());
    let at = Locator { file, text };
    // A dependency named twice is one dependency (a list naming one node a million times
    // costs its length once, here, not at every use).
    for n in &mut w.nodes {
        for deps in [&mut n.data_deps, &mut n.ctrl_deps] {
            if deps.len() > 1 {
                let mut seen = std::collections::HashSet::with_capacity(deps.len());
                deps.retain(|d| seen.insert(*d));
            }
        }
    }
    if !(1..=MAX_RANKS).contains(&w.ranks) {
        return Err(at.at_key(
            "ranks",
            "ranks".into(),
            format!("{} is out of range (allowed: 1..={MAX_RANKS})", w.ranks),
        ));
    }
    if w.nodes.is_empty() || w.nodes.len() > MAX_NODES {
        let m = format!("{} nodes is out of range (allowed: 1..={MAX_NODES})", w.nodes.len());
        return Err(at.at_key("nodes", "nodes".into(), m));
    }
    let instances = (w.nodes.len() as u64).checked_mul(u64::from(w.repeat));
    if w.repeat == 0 || instances.is_none_or(|n| n > MAX_INSTANCES) {
        let m = format!("{} is out of range (allowed: 1.., with nodes x repeat <= {MAX_INSTANCES})", w.repeat);
        return Err(at.at_key("repeat", "repeat".into(), m));
    }
    let spans = instances.and_then(|n| n.checked_mul(u64::from(w.ranks)));
    if spans.is_none_or(|n| n > MAX_SPANS) {
        let m = format!(
            "ranks ({}) x nodes ({}) x repeat ({}) is more than {MAX_SPANS} node instances (the schedule keeps each)",
            w.ranks,
            w.nodes.len(),
            w.repeat
        );
        return Err(at.at_key("repeat", "repeat".into(), m));
    }
    let groups = check_groups(&at, &w)?;
    let mut node_ranks = Vec::with_capacity(w.nodes.len());
    let mut prev: Option<u32> = None;
    let mut index = std::collections::HashMap::new();
    for (i, n) in w.nodes.iter().enumerate() {
        let f = |k: &str| format!("nodes[{i}].{k}");
        if prev.is_some_and(|p| n.id <= p) {
            let m = format!(
                "{} is out of order (ids increase through the file; the one before is {})",
                n.id,
                prev.unwrap_or(0)
            );
            return Err(at.at_index(i, f("id"), m));
        }
        prev = Some(n.id);
        for d in n.data_deps.iter().chain(&n.ctrl_deps) {
            if !index.contains_key(d) {
                let m = format!("{d} is not an earlier node's id (a dependency names a node above it)");
                return Err(at.at_node(n.id, "deps", f("data_deps"), m));
            }
        }
        index.insert(n.id, i);
        let ranks = match &n.ranks {
            Some(rs) if rs.is_empty() => {
                let m = "an empty rank list runs the node nowhere (leave `ranks` out to run it on every rank)";
                return Err(at.at_node(n.id, "ranks", f("ranks"), m.into()));
            }
            Some(rs) => {
                if let Some(r) = rs.iter().find(|&&r| r >= w.ranks) {
                    return Err(at.at_node(n.id, "ranks", f("ranks"), format!("rank {r} is not in 0..{}", w.ranks)));
                }
                let mut v = rs.clone();
                v.sort_unstable();
                v.dedup();
                v
            }
            None => (0..w.ranks).collect(),
        };
        check_op(&at, n, i, &w, &groups, &ranks)?;
        node_ranks.push(match &n.op {
            Op::SendRecv { offset, .. } => with_receivers(&ranks, *offset, w.ranks),
            _ => ranks,
        });
    }
    check_serving(&at, &w)?;
    let e = at.at_key("hbm_bytes_per_rank", String::new(), String::new());
    let hbm_at = format!("{}:{}:{}", e.file, e.line, e.col);
    Ok(Checked { w, groups, node_ranks, hbm_at, source })
}

/// A serving section: a known mode, batch and context in range, and `tokens_per_step` what
/// the mode processes (prefill: batch x context; decode: batch).
fn check_serving(at: &Locator<'_>, w: &Workload) -> Result<(), ConfigError> {
    let Some(s) = &w.serving else { return Ok(()) };
    let err = |k: &str, m: String| Err(at.at_key(k, format!("serving.{k}"), m));
    if s.mode != "prefill" && s.mode != "decode" {
        return err("mode", format!("unknown mode {:?} (allowed: prefill, decode)", s.mode));
    }
    if !(1..=MAX_SERVING).contains(&s.batch) {
        return err("batch", format!("{} is out of range (allowed: 1..={MAX_SERVING})", s.batch));
    }
    let min = u64::from(s.mode == "prefill");
    if !(min..=MAX_SERVING).contains(&s.context) {
        return err("context", format!("{} is out of range (allowed: {min}..={MAX_SERVING})", s.context));
    }
    if s.kv_cache_bytes_per_rank > MAX_SIZE {
        let m = format!("{} is out of range (allowed: 0..={MAX_SIZE})", s.kv_cache_bytes_per_rank);
        return err("kv_cache_bytes_per_rank", m);
    }
    let want = if s.mode == "prefill" { s.batch * s.context } else { s.batch };
    if w.tokens_per_step != Some(want) {
        let m = format!(
            "a {} of batch {} and context {} processes {want} tokens a pass; tokens_per_step says {:?}",
            s.mode, s.batch, s.context, w.tokens_per_step
        );
        return err("mode", m);
    }
    Ok(())
}

/// The senders of a send/recv and the ranks they send to, sorted.
fn with_receivers(senders: &[u32], offset: i64, ranks: u32) -> Vec<u32> {
    let mut v: Vec<u32> = senders.iter().copied().chain(senders.iter().map(|&r| receiver(r, offset, ranks))).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The rank `r` sends to in a send/recv of `offset` among `ranks`.
pub fn receiver(r: u32, offset: i64, ranks: u32) -> u32 {
    (i64::from(r) + offset).rem_euclid(i64::from(ranks)) as u32
}

fn check_groups(at: &Locator<'_>, w: &Workload) -> Result<BTreeMap<String, Vec<Vec<u32>>>, ConfigError> {
    let mut out = BTreeMap::new();
    for (name, set) in &w.groups {
        let f = format!("groups.{name}");
        if name == "world" {
            return Err(at.at_key("groups", f, "\"world\" is built in (all ranks); name the set otherwise".into()));
        }
        let mut seen = vec![false; w.ranks as usize];
        for g in set {
            if g.is_empty() {
                return Err(at.at_key("groups", f, "an empty group".into()));
            }
            for &r in g {
                let slot = seen
                    .get_mut(r as usize)
                    .ok_or_else(|| at.at_key("groups", f.clone(), format!("rank {r} is not in 0..{}", w.ranks)))?;
                if *slot {
                    return Err(at.at_key("groups", f, format!("rank {r} is in two groups of the set")));
                }
                *slot = true;
            }
        }
        out.insert(name.clone(), set.clone());
    }
    out.insert("world".into(), vec![(0..w.ranks).collect()]);
    Ok(out)
}

fn check_op(
    at: &Locator<'_>,
    n: &Node,
    i: usize,
    w: &Workload,
    groups: &BTreeMap<String, Vec<Vec<u32>>>,
    ranks: &[u32],
) -> Result<(), ConfigError> {
    let f = |k: &str| format!("nodes[{i}].op.{k}");
    let size = |k: &str, v: u64, min: u64| -> Result<(), ConfigError> {
        if v < min || v > MAX_SIZE {
            return Err(at.at_node(n.id, k, f(k), format!("{v} is out of range (allowed: {min}..={MAX_SIZE})")));
        }
        Ok(())
    };
    // A node's floating-point operations (2 m k n x count for a GEMM, 4 b h s s_kv d for
    // attention) at most MAX_FLOPS, with checked arithmetic.
    let work = |flops: Option<u64>, k: &str| -> Result<(), ConfigError> {
        match flops.filter(|&v| v <= MAX_FLOPS) {
            Some(_) => Ok(()),
            None => {
                let m =
                    format!("the node's operations exceed {MAX_FLOPS} (2^60; about 30 minutes of a Trn3 chip's peak)");
                Err(at.at_node(n.id, k, f(k), m))
            }
        }
    };
    let dtype = |d: &str| -> Result<(), ConfigError> {
        dtype_size(d)
            .map(|_| ())
            .ok_or_else(|| at.at_node(n.id, "dtype", f("dtype"), format!("unknown dtype {d:?} (allowed: {DTYPES})")))
    };
    match &n.op {
        Op::Gemm { m, k, n: cols, dtype: d, count, weight_dtype, .. } => {
            size("m", *m, 1)?;
            size("k", *k, 1)?;
            size("n", *cols, 1)?;
            size("count", u64::from(*count), 1)?;
            dtype(d)?;
            if let Some(wd) = weight_dtype {
                dtype_size(wd).ok_or_else(|| {
                    at.at_node(
                        n.id,
                        "weight_dtype",
                        f("weight_dtype"),
                        format!("unknown dtype {wd:?} (allowed: {DTYPES})"),
                    )
                })?;
            }
            let flops = [*m, *k, *cols, u64::from(*count)].iter().try_fold(2u64, |a, &b| a.checked_mul(b));
            work(flops, "m")?;
        }
        Op::Attention { batch, heads, seq, kv_seq, kv_heads, head_dim, dtype: d, .. } => {
            for (k, v) in [("batch", *batch), ("heads", *heads), ("seq", *seq), ("head_dim", *head_dim)] {
                size(k, v, 1)?;
            }
            if let Some(kv) = kv_heads {
                if *kv == 0 || *kv > *heads {
                    let m = format!("{kv} is out of range (allowed: 1..=heads = {heads})");
                    return Err(at.at_node(n.id, "kv_heads", f("kv_heads"), m));
                }
            }
            size("kv_seq", kv_seq.unwrap_or(*seq), 1)?;
            dtype(d)?;
            let dims = [*batch, *heads, *seq, kv_seq.unwrap_or(*seq), *head_dim];
            work(dims.iter().try_fold(4u64, |a, &b| a.checked_mul(b)), "batch")?;
        }
        Op::Elementwise { elements, ops, dtype: d } => {
            size("elements", *elements, 1)?;
            if !(1..=1000).contains(ops) {
                return Err(at.at_node(n.id, "ops", f("ops"), format!("{ops} is out of range (allowed: 1..=1000)")));
            }
            dtype(d)?;
        }
        Op::Kernel { flops, bytes, duration_ns, dtype: d } => {
            for (k, v) in [("flops", *flops), ("bytes", *bytes), ("duration_ns", *duration_ns)] {
                size(k, v, 0)?;
            }
            dtype(d)?;
        }
        Op::Load { bytes } | Op::Store { bytes } => size("bytes", *bytes, 1)?,
        Op::SendRecv { bytes, offset } => {
            size("bytes", *bytes, 1)?;
            if *offset == 0 || offset.unsigned_abs() >= u64::from(w.ranks) {
                let m = format!("{offset} is out of range (allowed: non-zero, |offset| < ranks = {})", w.ranks);
                return Err(at.at_node(n.id, "offset", f("offset"), m));
            }
        }
        other => {
            let group = other.group().ok_or_else(|| at.at_node(n.id, "op", f("op"), "not a collective".into()))?;
            if let Some(c) = other.comm() {
                size("duration_ns", c.duration_ns, 0)?;
                if c.duration_ns > 0 && c.bytes > 0 {
                    let m = "a collective has bytes (simulated) or duration_ns (measured), not both".to_string();
                    return Err(at.at_node(n.id, "duration_ns", f("duration_ns"), m));
                }
                size("bytes", c.bytes, if c.duration_ns > 0 { 0 } else { 1 })?;
                if let Some(a) = &c.algo {
                    if !ALGOS.contains(&a.as_str()) {
                        let m = format!("unknown algorithm {a:?} (allowed: {})", ALGOS.join(", "));
                        return Err(at.at_node(n.id, "algo", f("algo"), m));
                    }
                }
            }
            let set = groups.get(group).ok_or_else(|| {
                let known: Vec<&str> = groups.keys().map(String::as_str).collect();
                at.at_node(
                    n.id,
                    "group",
                    f("group"),
                    format!("unknown group set {group:?} (known: {})", known.join(", ")),
                )
            })?;
            // The node's ranks must be exactly the union of some groups of the set.
            let mut covered: Vec<u32> =
                set.iter().filter(|g| g.iter().any(|r| ranks.binary_search(r).is_ok())).flatten().copied().collect();
            covered.sort_unstable();
            if covered != ranks {
                let m = format!(
                    "group set {group:?} does not split the node's ranks into whole groups (a collective runs on every rank of each group it touches)"
                );
                return Err(at.at_node(n.id, "group", f("group"), m));
            }
            if set.iter().any(|g| g.len() < 2 && ranks.contains(&g[0])) {
                return Err(at.at_node(
                    n.id,
                    "group",
                    f("group"),
                    "a collective needs groups of at least 2 ranks".into(),
                ));
            }
            if let Op::AllToAllV(v) = other {
                check_sizes(at, n, i, v, set, ranks)?;
            }
        }
    }
    Ok(())
}

/// Collective algorithms a node may name.
pub const ALGOS: [&str; 7] = ["ring", "rhd", "direct", "tree", "hierarchical", "pipelined", "auto"];

/// An all-to-allv's matrix: square, of every touched group's size, each row's sum in range.
fn check_sizes(
    at: &Locator<'_>,
    n: &Node,
    i: usize,
    v: &CommV,
    set: &[Vec<u32>],
    ranks: &[u32],
) -> Result<(), ConfigError> {
    let f = format!("nodes[{i}].op.sizes");
    let k = v.sizes.len();
    for g in set.iter().filter(|g| g.iter().any(|r| ranks.binary_search(r).is_ok())) {
        if g.len() != k {
            let m = format!("{k} rows for a group of {} ranks (one row per rank of the group)", g.len());
            return Err(at.at_node(n.id, "sizes", f, m));
        }
    }
    for (r, row) in v.sizes.iter().enumerate() {
        if row.len() != k {
            let m = format!("row {r} has {} entries, not {k} (a square matrix of the group's size)", row.len());
            return Err(at.at_node(n.id, "sizes", format!("{f}[{r}]"), m));
        }
        let sum = row.iter().try_fold(0u64, |a, &b| a.checked_add(b).filter(|s| *s <= MAX_SIZE));
        if sum.is_none() {
            let m = format!("row {r} sends more than {MAX_SIZE} bytes (allowed: 0..={MAX_SIZE} per rank)");
            return Err(at.at_node(n.id, "sizes", format!("{f}[{r}]"), m));
        }
    }
    if v.max_send_bytes() == 0 {
        return Err(at.at_node(n.id, "sizes", f, "every rank sends 0 bytes to the others".into()));
    }
    Ok(())
}
