//! `trnsim workload llm`: one training step, forward pass, prefill or decode step of a dense
//! or mixture-of-experts transformer as a workload graph, under tensor (`tp`), expert (`ep`),
//! data (`dp`) and pipeline (`pp`) parallelism, from a model preset ([`preset`]) or flags.
//!
//! Ranks: `tp x dp x pp`, tensor-parallel ranks adjacent (rank = (stage x dp + replica) x tp +
//! shard), so a TP group sits inside a server where the fabric has servers. Each replica
//! takes `batch / dp` sequences. Per layer (Megatron-style TP): QKV GEMM (grouped-query:
//! `heads` query heads and `kv_heads` key/value heads of `head_dim`), attention, projection,
//! all-reduce over TP, norm; then the MLP (up GEMM, twice as wide when gated (SwiGLU),
//! activation, down GEMM, all-reduce over TP) or the MoE block (router GEMM, all-to-all
//! dispatch over EP, the rank's expert GEMMs, all-to-all combine, and any shared experts as a
//! dense MLP). With a vocabulary, the LM head closes the last stage. Training adds the
//! backward pass (each GEMM twice: data and weight gradients; attention twice), the gradient
//! all-reduce of each layer over DP overlapping the next layer's backward, and an Adam
//! update. Pipeline stages hold `layers / pp` layers each and pass activations (gradients
//! going back) by send/recv, `micro_batches` at a time in 1F1B order (graph.rs).
//!
//! Modes ([`Mode`]): `forward` (a forward pass of `seq` tokens a sequence, no KV cache),
//! `train`, `prefill` (the `context` tokens of each prompt into the KV cache: its time is the
//! time to first token) and `decode` (one token a sequence against a KV cache of `context`
//! tokens: its time is the time per output token). Inference steps keep the KV cache in HBM
//! (counted in `hbm_bytes_per_rank`) and read it at decode; sliding-window layers (every
//! `sliding_every`-th, from layer 0) attend to at most `sliding_window` tokens and cache as
//! many.
//!
//! Weights sit in HBM in their own formats (`weights`; `expert_weights` for the experts'),
//! activations and the KV cache in `dtype` (an MX `dtype` keeps attention and the KV cache
//! in BF16). At decode, the experts a rank's GEMMs read are those the step's tokens hit: with
//! `T` tokens routed over an EP group (each of its `ep` ranks' tokens) and each token
//! picking `top_k` of `E` experts uniformly at random, an expert is hit with probability
//! `1 - (1 - top_k / E)^T`, so a rank of `E / ep` experts expects `E / ep x (1 - (1 - top_k /
//! E)^T)` of them (rounded up), each taking `T x top_k / E` of the tokens spread over those hit.
//!
//! Left out: sequence/context parallelism, expert load imbalance beyond the uniform
//! `imbalance` factor (which scales every rank's expert tokens and all-to-all bytes to the
//! busiest rank's), the embedding lookup, the KV cache's write at prefill (the projections'
//! output), the sampling after the LM head, the exact masks of sliding-window prefill (a
//! window `w` shorter than the prompt is taken as `seq x w` scores, `w^2 / 2` over the exact
//! count), attention sinks and biases, and paged-attention block granularity.

mod check;
mod graph;
mod pipeline;
pub mod preset;
#[cfg(test)]
mod tests;

use crate::format::{dtype_bytes, dtype_size};

/// The most layers a generated model has (a graph of at most ~40 nodes a layer stays within
/// the format's node limit).
pub const MAX_LAYERS: u32 = 16384;
/// The most micro-batches a pipelined step takes.
pub const MAX_MICRO_BATCHES: u32 = 1024;

/// What one generated step does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A forward pass over `seq` tokens a sequence, with no KV cache.
    Forward,
    /// A training step: forward, backward, gradient all-reduce, update.
    Train,
    /// The prompts (`context` tokens each) into the KV cache: the time to first token.
    Prefill,
    /// One output token per sequence against a KV cache of `context` tokens.
    Decode,
}

impl Mode {
    /// Parses `forward`, `train`, `prefill` or `decode`.
    pub fn parse(s: &str) -> Result<Mode, String> {
        match s {
            "forward" => Ok(Mode::Forward),
            "train" => Ok(Mode::Train),
            "prefill" => Ok(Mode::Prefill),
            "decode" => Ok(Mode::Decode),
            _ => Err(format!("{s:?} is not a mode (allowed: forward, train, prefill, decode)")),
        }
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Forward => "forward",
            Mode::Train => "train",
            Mode::Prefill => "prefill",
            Mode::Decode => "decode",
        }
    }

    /// Prefill or decode: a serving step with a KV cache.
    pub fn serving(self) -> bool {
        matches!(self, Mode::Prefill | Mode::Decode)
    }
}

/// The generator's parameters (the `trnsim workload llm` flags).
#[derive(Clone, Debug, PartialEq)]
pub struct Llm {
    /// "dense" or "moe".
    pub arch: String,
    /// Transformer layers (divisible by `pp`).
    pub layers: u32,
    /// Model width.
    pub hidden: u64,
    /// MLP (or each expert's) inner width.
    pub ffn: u64,
    /// Query heads (divisible by `tp` and by `kv_heads`).
    pub heads: u64,
    /// Key/value heads (grouped-query attention; dividing `tp`, or `tp` dividing it: a rank
    /// then holds one replicated KV head).
    pub kv_heads: u64,
    /// Each head's width.
    pub head_dim: u64,
    /// Gated MLP (SwiGLU: the up GEMM is twice `ffn` wide, gate and up).
    pub gated: bool,
    /// Routed experts per MoE layer (divisible by `ep`).
    pub experts: u64,
    /// Experts each token visits.
    pub top_k: u64,
    /// Shared experts per MoE layer (a dense MLP of `shared_experts x ffn` every token takes,
    /// split over TP).
    pub shared_experts: u64,
    /// Vocabulary (0: no LM head).
    pub vocab: u64,
    /// Sliding-window attention's window in tokens (0: none).
    pub sliding_window: u64,
    /// Every `sliding_every`-th layer, from layer 0, uses the window (1: all).
    pub sliding_every: u32,
    /// Sequence length (forward and train modes).
    pub seq: u64,
    /// Prefill: each prompt's tokens; decode: the tokens already in each sequence's cache.
    pub context: u64,
    /// Sequences per step over all replicas (divisible by `dp`).
    pub batch: u64,
    /// Tensor-parallel degree.
    pub tp: u32,
    /// Expert-parallel degree (divides `tp x dp`).
    pub ep: u32,
    /// Data-parallel degree.
    pub dp: u32,
    /// Pipeline stages.
    pub pp: u32,
    /// Micro-batches a pipelined step splits each replica's batch into (1F1B; divides its
    /// batch).
    pub micro_batches: u32,
    /// Activations' element type: bf16, fp16, fp32, fp8, mxfp8.
    pub dtype: String,
    /// Format of the non-expert weights in HBM (attention, router, dense MLP, LM head).
    pub weights: String,
    /// Format of the experts' weights in HBM (mxfp4 as GPT-OSS ships them).
    pub expert_weights: String,
    /// What the step does.
    pub mode: Mode,
    /// Expert load of the busiest rank over the mean (>= 1).
    pub imbalance: f64,
}

impl Default for Llm {
    fn default() -> Llm {
        Llm {
            arch: "dense".into(),
            layers: 2,
            hidden: 4096,
            ffn: 16384,
            heads: 32,
            kv_heads: 32,
            head_dim: 128,
            gated: false,
            experts: 8,
            top_k: 2,
            shared_experts: 0,
            vocab: 0,
            sliding_window: 0,
            sliding_every: 1,
            seq: 2048,
            context: 0,
            batch: 8,
            tp: 4,
            ep: 1,
            dp: 1,
            pp: 1,
            micro_batches: 1,
            dtype: "bf16".into(),
            weights: "bf16".into(),
            expert_weights: "bf16".into(),
            mode: Mode::Forward,
            imbalance: 1.0,
        }
    }
}

impl Llm {
    /// Ranks: tp x dp x pp.
    pub fn ranks(&self) -> u32 {
        self.tp * self.dp * self.pp
    }

    fn moe(&self) -> bool {
        self.arch == "moe"
    }

    /// Query tokens per sequence this step (decode: 1).
    pub fn q_len(&self) -> u64 {
        match self.mode {
            Mode::Decode => 1,
            Mode::Prefill => self.context,
            _ => self.seq,
        }
    }

    /// Tokens one replica processes per step.
    pub fn tokens_per_replica(&self) -> u64 {
        self.batch / u64::from(self.dp) * self.q_len()
    }

    /// Whether layer `l` uses the sliding window.
    pub fn sliding(&self, l: u32) -> bool {
        self.sliding_window > 0 && l.is_multiple_of(self.sliding_every.max(1))
    }

    /// Keys and values layer `l` attends to per sequence (and, serving, caches).
    pub fn kv_len(&self, l: u32) -> u64 {
        let full = match self.mode {
            Mode::Decode => self.context + 1,
            Mode::Prefill => self.context,
            _ => self.seq,
        };
        if self.sliding(l) {
            full.min(self.sliding_window)
        } else {
            full
        }
    }

    /// Key/value heads on one rank (one replicated head when `tp` exceeds `kv_heads`).
    pub fn kv_heads_per_rank(&self) -> u64 {
        (self.kv_heads / u64::from(self.tp)).max(1)
    }

    /// Columns of one rank's QKV projection.
    pub fn qkv_cols(&self) -> u64 {
        (self.heads / u64::from(self.tp) + 2 * self.kv_heads_per_rank()) * self.head_dim
    }

    /// One rank's share of the attention output's width (the projection's contraction).
    pub fn attn_width(&self) -> u64 {
        self.heads / u64::from(self.tp) * self.head_dim
    }

    /// Columns of an up GEMM of inner width `f` (twice `f` when gated).
    pub fn up_cols(&self, f: u64) -> u64 {
        if self.gated {
            2 * f
        } else {
            f
        }
    }

    /// The element type attention and the KV cache use: `dtype`, or BF16 for an MX `dtype`.
    pub fn attn_dtype(&self) -> &str {
        if self.dtype.starts_with("mx") {
            "bf16"
        } else {
            &self.dtype
        }
    }

    /// Columns of one rank's LM head shard (the vocabulary over TP, rounded up).
    pub fn vocab_cols(&self) -> u64 {
        self.vocab.div_ceil(u64::from(self.tp))
    }

    /// Weight bytes of one layer on one rank (its TP shard and its experts), each weight in
    /// its format.
    pub fn layer_weight_bytes(&self) -> f64 {
        let w = dtype_size(&self.weights).unwrap_or(2.0);
        let xw = dtype_size(&self.expert_weights).unwrap_or(2.0);
        let (h, f, tp) = (self.hidden as f64, self.ffn as f64, self.tp as f64);
        let attn = h * self.qkv_cols() as f64 + self.attn_width() as f64 * h;
        let mlp = |inner: f64| h * self.up_cols(1) as f64 * inner + inner * h;
        let ffn = if self.moe() {
            let local = (self.experts / u64::from(self.ep)) as f64;
            local * mlp(f) * xw + h * self.experts as f64 * w + mlp(f * self.shared_experts as f64 / tp) * w
        } else {
            mlp(f / tp) * w
        };
        attn * w + ffn
    }

    /// Parameters of one layer on one rank (its TP shard and its experts).
    pub fn layer_params_per_rank(&self) -> u64 {
        let (h, f, tp) = (self.hidden, self.ffn, u64::from(self.tp));
        let attn = h * self.qkv_cols() + self.attn_width() * h;
        let up = self.up_cols(1);
        let mlp = if self.moe() {
            self.experts / u64::from(self.ep) * (up + 1) * h * f
                + h * self.experts
                + (up + 1) * h * (f * self.shared_experts / tp)
        } else {
            (up + 1) * h * (f / tp)
        };
        attn + mlp
    }

    /// LM head (and embedding) bytes on one rank: the last stage's head, the first stage's
    /// embedding table, both on one stage when `pp` is 1.
    fn vocab_weight_bytes(&self) -> f64 {
        let tables = if self.pp == 1 { 2.0 } else { 1.0 };
        tables * (self.vocab_cols() * self.hidden) as f64 * dtype_size(&self.weights).unwrap_or(2.0)
    }

    /// KV cache bytes one rank holds (serving modes; 0 otherwise): per sequence of its
    /// replica, each of its stage's layers keeps K and V of its KV heads for the tokens that
    /// layer attends to.
    pub fn kv_cache_bytes_per_rank(&self) -> u64 {
        if !self.mode.serving() {
            return 0;
        }
        let e = dtype_bytes(self.attn_dtype()).unwrap_or(2);
        let per_stage = self.layers / self.pp;
        // The stage with the most full-attention layers (stage 0 holds layer 0).
        let tokens: u64 = (0..per_stage).map(|l| self.kv_len(l)).sum();
        let seqs = self.batch / u64::from(self.dp);
        seqs * tokens * 2 * self.kv_heads_per_rank() * self.head_dim * e
    }

    /// HBM bytes one rank needs: weights in their formats (in training with their gradients
    /// and Adam's FP32 master and moments: 12 bytes more per parameter), the KV cache
    /// (serving), plus the activations it keeps (training and forward: 8 of the model width
    /// per token per layer; serving: the widest working tensor, 4 times).
    pub fn hbm_bytes_per_rank(&self) -> u64 {
        let e = dtype_bytes(&self.dtype).unwrap_or(2);
        let layers = u64::from(self.layers / self.pp);
        let tokens = self.tokens_per_replica();
        if self.mode.serving() {
            let weights = (self.layer_weight_bytes() * layers as f64 + self.vocab_weight_bytes()).ceil() as u64;
            let widest = self.hidden.max(self.up_cols(self.ffn)).max(self.vocab_cols());
            let acts = tokens.saturating_mul(widest).saturating_mul(4 * e);
            return weights.saturating_add(self.kv_cache_bytes_per_rank()).saturating_add(acts);
        }
        let tables = if self.pp == 1 { 2 } else { 1 };
        let params = self.layer_params_per_rank() * layers + tables * self.vocab_cols() * self.hidden;
        let per_param = if self.mode == Mode::Train { 2 * e + 12 } else { e };
        let acts = tokens * self.hidden * e * 8 * layers;
        params.saturating_mul(per_param).saturating_add(acts)
    }
}
