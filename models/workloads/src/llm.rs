//! `trnsim workload llm`: one training or inference step of a dense or mixture-of-experts
//! transformer as a workload graph, under tensor (`tp`), expert (`ep`), data (`dp`) and
//! pipeline (`pp`) parallelism.
//!
//! Ranks: `tp x dp x pp`, tensor-parallel ranks adjacent (rank = (stage x dp + replica) x tp +
//! shard), so a TP group sits inside a server where the fabric has servers. Each replica
//! takes `batch / dp` sequences. Per layer (Megatron-style TP): QKV GEMM, attention,
//! projection, all-reduce over TP, norm; then the MLP (up GEMM, activation, down GEMM,
//! all-reduce over TP) or the MoE block (router GEMM, all-to-all dispatch over EP, the rank's
//! `experts / ep` expert GEMMs, all-to-all combine). Training adds the backward pass (each
//! GEMM twice: data and weight gradients; attention twice), the gradient all-reduce of each
//! layer over DP overlapping the next layer's backward, and an Adam update. Pipeline stages
//! hold `layers / pp` layers each and pass activations (gradients going back) by send/recv;
//! one micro-batch, so the pipeline bubble is whole.
//!
//! Left out: micro-batch interleaving, sequence/context parallelism, KV-cache decode steps,
//! gated MLPs, and expert load imbalance beyond the uniform `imbalance` factor (which scales
//! every rank's expert tokens and all-to-all bytes to the busiest rank's).

use crate::format::{dtype_bytes, Comm, Node, Op, Workload};
use std::collections::BTreeMap;

/// The most layers a generated model has (a graph of at most ~40 nodes a layer stays within
/// the format's node limit).
pub const MAX_LAYERS: u32 = 16384;

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
    /// Attention heads (divisible by `tp`).
    pub heads: u64,
    /// Experts per MoE layer (divisible by `ep`).
    pub experts: u64,
    /// Experts each token visits.
    pub top_k: u64,
    /// Sequence length.
    pub seq: u64,
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
    /// Element type: bf16, fp16, fp32, fp8, mxfp8.
    pub dtype: String,
    /// A training step (true) or an inference forward pass.
    pub train: bool,
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
            experts: 8,
            top_k: 2,
            seq: 2048,
            batch: 8,
            tp: 4,
            ep: 1,
            dp: 1,
            pp: 1,
            dtype: "bf16".into(),
            train: false,
            imbalance: 1.0,
        }
    }
}

struct Graph {
    nodes: Vec<Node>,
}

impl Graph {
    fn add(&mut self, name: String, op: Op, deps: &[u32], ranks: Option<&Vec<u32>>) -> u32 {
        let id = self.nodes.len() as u32;
        self.nodes.push(Node { id, name, op, data_deps: deps.to_vec(), ctrl_deps: vec![], ranks: ranks.cloned() });
        id
    }
}

fn comm(bytes: u64, group: &str) -> Comm {
    Comm { bytes, group: group.into(), algo: None, duration_ns: 0 }
}

impl Llm {
    /// Checks the divisibility rules; the error names the rule.
    pub fn check(&self) -> Result<(), String> {
        let bad = |m: String| Err(m);
        if self.arch != "dense" && self.arch != "moe" {
            return bad(format!("--arch {}: allowed: dense, moe", self.arch));
        }
        for (flag, v) in
            [("--tp", self.tp), ("--dp", self.dp), ("--pp", self.pp), ("--ep", self.ep), ("--layers", self.layers)]
        {
            if v == 0 {
                return bad(format!("{flag} 0 is out of range (allowed: >= 1)"));
            }
        }
        if self.layers > MAX_LAYERS {
            return bad(format!("--layers {} is out of range (allowed: 1..={MAX_LAYERS})", self.layers));
        }
        for (flag, v) in [
            ("--hidden", self.hidden),
            ("--ffn", self.ffn),
            ("--heads", self.heads),
            ("--seq", self.seq),
            ("--batch", self.batch),
            ("--experts", self.experts),
        ] {
            if v == 0 || v > 1 << 24 {
                return bad(format!("{flag} {v} is out of range (allowed: 1..=16777216)"));
            }
        }
        let ranks = u64::from(self.tp).checked_mul(u64::from(self.dp)).and_then(|r| r.checked_mul(u64::from(self.pp)));
        if ranks.is_none_or(|r| r > u64::from(crate::format::MAX_RANKS)) {
            let (tp, dp, pp) = (self.tp, self.dp, self.pp);
            return bad(format!(
                "--tp x --dp x --pp = {tp} x {dp} x {pp} ranks is out of range (allowed: <= {})",
                crate::format::MAX_RANKS
            ));
        }
        if dtype_bytes(&self.dtype).is_none() {
            return bad(format!("--dtype {}: allowed: bf16, fp16, fp32, fp8, mxfp8", self.dtype));
        }
        let rules: [(bool, String); 7] = [
            (
                self.heads.is_multiple_of(u64::from(self.tp)),
                format!("--heads {} must divide by --tp {}", self.heads, self.tp),
            ),
            (
                self.hidden.is_multiple_of(self.heads),
                format!("--hidden {} must divide by --heads {}", self.hidden, self.heads),
            ),
            (
                self.ffn.is_multiple_of(u64::from(self.tp)),
                format!("--ffn {} must divide by --tp {}", self.ffn, self.tp),
            ),
            (
                self.batch.is_multiple_of(u64::from(self.dp)),
                format!("--batch {} must divide by --dp {}", self.batch, self.dp),
            ),
            (self.layers.is_multiple_of(self.pp), format!("--layers {} must divide by --pp {}", self.layers, self.pp)),
            (
                (u64::from(self.tp) * u64::from(self.dp)).is_multiple_of(u64::from(self.ep)),
                format!("--ep {} must divide --tp x --dp = {}", self.ep, self.tp * self.dp),
            ),
            (
                self.arch != "moe" || self.experts.is_multiple_of(u64::from(self.ep)),
                format!("--experts {} must divide by --ep {}", self.experts, self.ep),
            ),
        ];
        if let Some((_, m)) = rules.iter().find(|(ok, _)| !ok) {
            return bad(m.clone());
        }
        if self.arch == "moe" && !(1..=self.experts).contains(&self.top_k) {
            return bad(format!("--top-k {} is out of range (allowed: 1..=--experts {})", self.top_k, self.experts));
        }
        if !(1.0..=1000.0).contains(&self.imbalance) {
            return bad(format!("--imbalance {:?} is out of range (allowed: 1..=1000)", self.imbalance));
        }
        self.check_sizes()
    }

    /// Checks that every tensor, message and parameter count the graph holds fits the
    /// workload format ([`crate::format::MAX_SIZE`]), so that the generator's arithmetic
    /// never wraps and what it writes, the loader accepts.
    fn check_sizes(&self) -> Result<(), String> {
        let limit = crate::format::MAX_SIZE;
        let e = dtype_bytes(&self.dtype).unwrap_or(4);
        let (h, f, tp) = (self.hidden, self.ffn, u64::from(self.tp));
        let tokens = self.batch / u64::from(self.dp) * self.seq;
        let product = |xs: &[u64]| xs.iter().try_fold(1u64, |a, &x| a.checked_mul(x)).filter(|&v| v <= limit);
        let too_big = |what: &str| {
            Err(format!(
                "{what} is more than {limit} (the largest size a workload holds): a smaller model, batch or sequence"
            ))
        };
        let moe = self.arch == "moe";
        let mut sizes: Vec<(&str, Vec<u64>)> = vec![
            ("tokens per replica x --hidden x element bytes", vec![tokens, h, e]),
            ("tokens per replica x --ffn", vec![tokens, f]),
            ("4 x --hidden^2 x element bytes", vec![4, h, h, e]),
            ("2 x --hidden x --ffn x element bytes", vec![2, h, f, e]),
            (
                "activations: tokens per replica x --hidden x element bytes x 8 x --layers",
                vec![tokens, h, e, 8, u64::from(self.layers)],
            ),
        ];
        if moe {
            sizes.push(("--experts x 2 x --hidden x --ffn x element bytes", vec![self.experts, 2, h, f, e]));
            sizes.push(("tokens per replica x --experts", vec![tokens, self.experts]));
            sizes.push(("tokens per replica x --top-k x --hidden x element bytes", vec![tokens, self.top_k, h, e]));
            sizes.push(("tokens per replica x --top-k x --ffn", vec![tokens, self.top_k, f]));
        }
        for (what, xs) in &sizes {
            if product(xs).is_none() {
                return too_big(what);
            }
        }
        // Each node's operations (bounded above: a GEMM's shard and an attention's heads
        // counted whole) at most the format's limit on one node's work.
        let flops_limit = crate::format::MAX_FLOPS;
        let batch = self.batch / u64::from(self.dp);
        let mut works: Vec<(&str, Vec<u64>)> = vec![
            ("2 x tokens per replica x --hidden x --ffn", vec![2, tokens, h, f.max(h)]),
            ("4 x batch per replica x --seq^2 x --hidden (attention)", vec![4, batch, self.seq, self.seq, h]),
        ];
        if moe {
            works.push(("2 x tokens per replica x --top-k x --hidden x --ffn", vec![2, tokens, self.top_k, h, f]));
        }
        for (what, xs) in &works {
            if xs.iter().try_fold(1u64, |a, &x| a.checked_mul(x)).filter(|&v| v <= flops_limit).is_none() {
                return Err(format!(
                    "{what} is more than {flops_limit} operations (the most one node may take): a smaller model, batch or sequence"
                ));
            }
        }
        if moe {
            // Routed tokens with the imbalance: what an expert computes and a rank sends.
            let routed = (tokens * self.top_k) as f64 * self.imbalance;
            if routed * (h.max(f) * e) as f64 > limit as f64 {
                return too_big("tokens per replica x --top-k x --imbalance x --hidden (or --ffn) x element bytes");
            }
        }
        // One rank's parameters (its TP shard and its experts) over its layers, in training
        // with their gradients and optimizer state.
        let mlp = if moe {
            product(&[self.experts / u64::from(self.ep), 2, h, f]).zip(product(&[h, self.experts])).map(|(a, b)| a + b)
        } else {
            Some(2 * h * f / tp)
        };
        let layer = mlp.map(|m| 4 * h * h / tp + m);
        let per_param = if self.train { 2 * e + 12 } else { e };
        if layer.and_then(|l| product(&[l, u64::from(self.layers / self.pp), per_param])).is_none() {
            return too_big("one rank's parameters x --layers / --pp x bytes per parameter");
        }
        Ok(())
    }

    /// Experts on one rank (at most 2^24: [`Llm::check`]).
    fn local_experts(&self) -> u32 {
        u32::try_from(self.experts / u64::from(self.ep)).unwrap_or(u32::MAX)
    }

    /// Ranks: tp x dp x pp.
    pub fn ranks(&self) -> u32 {
        self.tp * self.dp * self.pp
    }

    /// Parameters of one layer on one rank (its TP shard and its experts).
    pub fn layer_params_per_rank(&self) -> u64 {
        let (h, f, tp) = (self.hidden, self.ffn, u64::from(self.tp));
        let attn = 4 * h * h / tp;
        let mlp = if self.arch == "moe" {
            self.experts / u64::from(self.ep) * 2 * h * f + h * self.experts
        } else {
            2 * h * f / tp
        };
        attn + mlp
    }

    /// HBM bytes one rank needs: weights (and in training their gradients and Adam's FP32
    /// master and moments: 12 bytes more per parameter), plus the activations it keeps.
    pub fn hbm_bytes_per_rank(&self) -> u64 {
        let e = dtype_bytes(&self.dtype).unwrap_or(2);
        let params = self.layer_params_per_rank() * u64::from(self.layers / self.pp);
        let per_param = if self.train { 2 * e + 12 } else { e };
        let tokens = self.batch / u64::from(self.dp) * self.seq;
        let acts = tokens * self.hidden * e * 8 * u64::from(self.layers / self.pp);
        params.saturating_mul(per_param).saturating_add(acts)
    }

    /// The workload graph.
    pub fn generate(&self, cmdline: &str) -> Result<Workload, String> {
        self.check()?;
        let e = dtype_bytes(&self.dtype).unwrap_or(2);
        let (tp, dp, pp) = (self.tp, self.dp, self.pp);
        let stage_size = tp * dp;
        let tokens = self.batch / u64::from(dp) * self.seq;
        let mut groups: BTreeMap<String, Vec<Vec<u32>>> = BTreeMap::new();
        let stage_ranks = |s: u32| -> Vec<u32> { (s * stage_size..(s + 1) * stage_size).collect() };
        let set = |f: &dyn Fn(u32) -> Vec<Vec<u32>>| (0..pp).flat_map(f).collect::<Vec<_>>();
        groups.insert(
            "tp".into(),
            set(&|s| (0..dp).map(|d| ((s * dp + d) * tp..(s * dp + d + 1) * tp).collect()).collect()),
        );
        groups
            .insert("dp".into(), set(&|s| (0..tp).map(|t| (0..dp).map(|d| (s * dp + d) * tp + t).collect()).collect()));
        groups.insert(
            "ep".into(),
            set(&|s| {
                (0..stage_size / self.ep)
                    .map(|g| (0..self.ep).map(|k| s * stage_size + g * self.ep + k).collect())
                    .collect()
            }),
        );
        groups.insert(
            "edp".into(),
            set(&|s| {
                (0..self.ep)
                    .map(|k| (0..stage_size / self.ep).map(|g| s * stage_size + g * self.ep + k).collect())
                    .collect()
            }),
        );
        let mut g = Graph { nodes: Vec::new() };
        let per_stage = self.layers / pp;
        let mut prev: Option<u32> = None;
        for s in 0..pp {
            let ranks = (pp > 1).then(|| stage_ranks(s));
            for l in s * per_stage..(s + 1) * per_stage {
                prev = Some(self.layer_forward(&mut g, l, tokens, e, prev, ranks.as_ref()));
            }
            if s + 1 < pp {
                let name = format!("stage{s}->stage{}", s + 1);
                prev = Some(self.hop(&mut g, name, stage_ranks(s), i64::from(stage_size), tokens * e, prev));
            }
        }
        if self.train {
            let mut grads = Vec::new();
            for s in (0..pp).rev() {
                let ranks = (pp > 1).then(|| stage_ranks(s));
                for l in (s * per_stage..(s + 1) * per_stage).rev() {
                    let (last, grad) = self.layer_backward(&mut g, l, tokens, e, prev, ranks.as_ref());
                    prev = Some(last);
                    grads.extend(grad);
                }
                if s > 0 {
                    let name = format!("stage{s}->stage{} grad", s - 1);
                    prev = Some(self.hop(&mut g, name, stage_ranks(s), -i64::from(stage_size), tokens * e, prev));
                }
            }
            let params = self.layer_params_per_rank() * u64::from(per_stage);
            let mut deps = grads;
            deps.extend(prev);
            g.add("adam".into(), Op::Elementwise { elements: params, ops: 12, dtype: "fp32".into() }, &deps, None);
        }
        let spans = u64::from(self.ranks()).saturating_mul(g.nodes.len() as u64);
        if spans > crate::format::MAX_SPANS {
            return Err(format!(
                "{} ranks (--tp x --dp x --pp) x {} nodes is more than {} node instances (the schedule keeps each): fewer ranks or layers",
                self.ranks(),
                g.nodes.len(),
                crate::format::MAX_SPANS
            ));
        }
        let what = if self.train { "training step" } else { "inference forward pass" };
        Ok(Workload {
            name: format!(
                "llm-{}-{}l-h{}-tp{}-ep{}-dp{}-pp{}-{}",
                self.arch,
                self.layers,
                self.hidden,
                tp,
                self.ep,
                dp,
                pp,
                if self.train { "train" } else { "infer" }
            ),
            source: format!("{cmdline} ({what})"),
            ranks: self.ranks(),
            groups,
            repeat: 1,
            hbm_bytes_per_rank: Some(self.hbm_bytes_per_rank()),
            tokens_per_step: self.batch.checked_mul(self.seq),
            nodes: g.nodes,
        })
    }

    /// A pipeline hop: every rank of `senders` sends its TP shard of the activations (or
    /// their gradients) of `token_bytes` per model-width element to the rank `offset` away.
    fn hop(
        &self,
        g: &mut Graph,
        name: String,
        senders: Vec<u32>,
        offset: i64,
        token_bytes: u64,
        prev: Option<u32>,
    ) -> u32 {
        let bytes = token_bytes * self.hidden / u64::from(self.tp);
        g.add(name, Op::SendRecv { bytes, offset }, &prev.into_iter().collect::<Vec<_>>(), Some(&senders))
    }

    fn gemm(&self, m: u64, k: u64, n: u64, count: u32) -> Op {
        Op::Gemm { m, k, n, dtype: self.dtype.clone(), count, a_resident: false, b_resident: false }
    }

    fn attention(&self, tokens: u64) -> Op {
        Op::Attention {
            batch: tokens / self.seq,
            heads: self.heads / u64::from(self.tp),
            seq: self.seq,
            kv_seq: None,
            head_dim: self.hidden / self.heads,
            causal: true,
            dtype: self.dtype.clone(),
        }
    }

    /// One layer's forward nodes; returns the last.
    fn layer_forward(
        &self,
        g: &mut Graph,
        l: u32,
        tokens: u64,
        e: u64,
        prev: Option<u32>,
        r: Option<&Vec<u32>>,
    ) -> u32 {
        let (h, tp) = (self.hidden, u64::from(self.tp));
        let p: Vec<u32> = prev.into_iter().collect();
        let qkv = g.add(format!("L{l}.qkv"), self.gemm(tokens, h, 3 * h / tp, 1), &p, r);
        let att = g.add(format!("L{l}.attention"), self.attention(tokens), &[qkv], r);
        let mut last = g.add(format!("L{l}.proj"), self.gemm(tokens, h / tp, h, 1), &[att], r);
        if tp > 1 {
            last = g.add(format!("L{l}.proj.all_reduce"), Op::AllReduce(comm(tokens * h * e, "tp")), &[last], r);
        }
        let norm = g.add(
            format!("L{l}.norm1"),
            Op::Elementwise { elements: tokens * h, ops: 8, dtype: self.dtype.clone() },
            &[last],
            r,
        );
        let mlp = if self.arch == "moe" {
            self.moe_forward(g, l, tokens, e, norm, r)
        } else {
            self.mlp_forward(g, l, tokens, e, norm, r)
        };
        g.add(
            format!("L{l}.norm2"),
            Op::Elementwise { elements: tokens * h, ops: 8, dtype: self.dtype.clone() },
            &[mlp],
            r,
        )
    }

    fn mlp_forward(&self, g: &mut Graph, l: u32, tokens: u64, e: u64, prev: u32, r: Option<&Vec<u32>>) -> u32 {
        let (h, f, tp) = (self.hidden, self.ffn, u64::from(self.tp));
        let up = g.add(format!("L{l}.mlp.up"), self.gemm(tokens, h, f / tp, 1), &[prev], r);
        let act = g.add(
            format!("L{l}.mlp.act"),
            Op::Elementwise { elements: tokens * f / tp, ops: 4, dtype: self.dtype.clone() },
            &[up],
            r,
        );
        let down = g.add(format!("L{l}.mlp.down"), self.gemm(tokens, f / tp, h, 1), &[act], r);
        if tp > 1 {
            return g.add(format!("L{l}.mlp.all_reduce"), Op::AllReduce(comm(tokens * h * e, "tp")), &[down], r);
        }
        down
    }

    /// Tokens each expert of a rank computes, and the all-to-all bytes per rank.
    fn moe_sizes(&self, tokens: u64, e: u64) -> (u64, u64) {
        let local = self.experts / u64::from(self.ep);
        let routed = (tokens * self.top_k) as f64 * self.imbalance;
        ((routed / local as f64).ceil() as u64, (routed * (self.hidden * e) as f64).ceil() as u64)
    }

    fn moe_forward(&self, g: &mut Graph, l: u32, tokens: u64, e: u64, prev: u32, r: Option<&Vec<u32>>) -> u32 {
        let (h, f) = (self.hidden, self.ffn);
        let local = self.local_experts();
        let (per_expert, a2a) = self.moe_sizes(tokens, e);
        let router = g.add(format!("L{l}.router"), self.gemm(tokens, h, self.experts, 1), &[prev], r);
        let mut last = router;
        if self.ep > 1 {
            last = g.add(format!("L{l}.dispatch"), Op::AllToAll(comm(a2a, "ep")), &[router], r);
        }
        let up = g.add(format!("L{l}.experts.up"), self.gemm(per_expert, h, f, local), &[last], r);
        let act = g.add(
            format!("L{l}.experts.act"),
            Op::Elementwise { elements: per_expert * f * u64::from(local), ops: 4, dtype: self.dtype.clone() },
            &[up],
            r,
        );
        let mut down = g.add(format!("L{l}.experts.down"), self.gemm(per_expert, f, h, local), &[act], r);
        if self.ep > 1 {
            down = g.add(format!("L{l}.combine"), Op::AllToAll(comm(a2a, "ep")), &[down], r);
        }
        down
    }

    /// One layer's backward nodes: returns the last node on the critical path and the
    /// gradient all-reduces (which later nodes need not wait for, but the update does).
    fn layer_backward(
        &self,
        g: &mut Graph,
        l: u32,
        tokens: u64,
        e: u64,
        prev: Option<u32>,
        r: Option<&Vec<u32>>,
    ) -> (u32, Vec<u32>) {
        let (h, f, tp) = (self.hidden, self.ffn, u64::from(self.tp));
        let mut d: Vec<u32> = prev.into_iter().collect();
        let mut grads = Vec::new();
        let mut wgrads = Vec::new();
        if self.arch == "moe" {
            let local = self.local_experts();
            let (per_expert, a2a) = self.moe_sizes(tokens, e);
            if self.ep > 1 {
                d = vec![g.add(format!("L{l}.combine.bwd"), Op::AllToAll(comm(a2a, "ep")), &d, r)];
            }
            let x = g.add(format!("L{l}.experts.down.dgrad"), self.gemm(per_expert, h, f, local), &d, r);
            wgrads.push(g.add(format!("L{l}.experts.down.wgrad"), self.gemm(f, per_expert, h, local), &d, r));
            let y = g.add(format!("L{l}.experts.up.dgrad"), self.gemm(per_expert, f, h, local), &[x], r);
            wgrads.push(g.add(format!("L{l}.experts.up.wgrad"), self.gemm(h, per_expert, f, local), &[x], r));
            d = vec![y];
            if self.ep > 1 {
                d = vec![g.add(format!("L{l}.dispatch.bwd"), Op::AllToAll(comm(a2a, "ep")), &d, r)];
            }
            let expert_params = u64::from(local) * 2 * h * f;
            if self.tp * self.dp / self.ep > 1 {
                grads.push(g.add(
                    format!("L{l}.experts.grad.all_reduce"),
                    Op::AllReduce(comm(expert_params * e, "edp")),
                    &wgrads,
                    r,
                ));
            }
            wgrads.clear();
        } else {
            let x = g.add(format!("L{l}.mlp.down.dgrad"), self.gemm(tokens, h, f / tp, 1), &d, r);
            wgrads.push(g.add(format!("L{l}.mlp.down.wgrad"), self.gemm(f / tp, tokens, h, 1), &d, r));
            let y = g.add(format!("L{l}.mlp.up.dgrad"), self.gemm(tokens, f / tp, h, 1), &[x], r);
            wgrads.push(g.add(format!("L{l}.mlp.up.wgrad"), self.gemm(h, tokens, f / tp, 1), &[x], r));
            d = vec![y];
            if tp > 1 {
                d = vec![g.add(format!("L{l}.mlp.dgrad.all_reduce"), Op::AllReduce(comm(tokens * h * e, "tp")), &d, r)];
            }
        }
        let pj = g.add(format!("L{l}.proj.dgrad"), self.gemm(tokens, h, h / tp, 1), &d, r);
        wgrads.push(g.add(format!("L{l}.proj.wgrad"), self.gemm(h / tp, tokens, h, 1), &d, r));
        let at = g.add(format!("L{l}.attention.bwd"), self.attention(tokens), &[pj], r);
        let at2 = g.add(format!("L{l}.attention.bwd2"), self.attention(tokens), &[at], r);
        let q = g.add(format!("L{l}.qkv.dgrad"), self.gemm(tokens, 3 * h / tp, h, 1), &[at2], r);
        wgrads.push(g.add(format!("L{l}.qkv.wgrad"), self.gemm(h, tokens, 3 * h / tp, 1), &[at2], r));
        let mut last = q;
        if tp > 1 {
            last = g.add(format!("L{l}.qkv.dgrad.all_reduce"), Op::AllReduce(comm(tokens * h * e, "tp")), &[q], r);
        }
        if self.dp > 1 {
            let dense = 4 * h * h / tp + if self.arch == "moe" { 0 } else { 2 * h * f / tp };
            grads.push(g.add(format!("L{l}.grad.all_reduce"), Op::AllReduce(comm(dense * e, "dp")), &wgrads, r));
        }
        (last, grads)
    }
}

#[cfg(test)]
mod tests {
    use super::Llm;

    #[test]
    fn extreme_parameters_are_refused_or_generate_what_the_loader_accepts() {
        // A valid model with one to three parameters set to an edge value or an ordinary one,
        // at random: the generator never wraps (overflow checks are on in tests) and never
        // writes a workload the loader refuses.
        let mut rng = trnsim_kernel::SimRng::new(0x11a, 0);
        let big = [1, 2, 3, 4, 8, 64, 4096, 65536, 1 << 20, 1 << 24, (1 << 24) + 1, u64::from(u32::MAX), u64::MAX];
        let small = [0, 1, 2, 4, 8, 16, 1024, 16384, 16385, 1 << 20, u64::from(u32::MAX)];
        let (mut ok, mut refused) = (0, 0);
        for case in 0..1500 {
            let mut llm = Llm {
                arch: if case % 2 == 0 { "dense" } else { "moe" }.into(),
                hidden: 1024,
                ffn: 2048,
                heads: 8,
                seq: 256,
                batch: 8,
                tp: 2,
                dp: 2,
                ep: 2,
                experts: 8,
                dtype: ["bf16", "fp32", "fp8"][case % 3].into(),
                train: case % 4 < 2,
                ..Llm::default()
            };
            for _ in 0..=rng.below(3) {
                let field = rng.below(14);
                let mut draw = |xs: &[u64]| xs[usize::try_from(rng.below(xs.len() as u64)).unwrap()];
                let as_u32 = |x: u64| u32::try_from(x).unwrap_or(u32::MAX);
                match field {
                    0 => llm.layers = as_u32(draw(&small)),
                    1 => llm.hidden = draw(&big),
                    2 => llm.ffn = draw(&big),
                    3 => llm.heads = draw(&big),
                    4 => llm.experts = draw(&big),
                    5 => llm.top_k = draw(&big),
                    6 => llm.seq = draw(&big),
                    7 => llm.batch = draw(&big),
                    8 => llm.tp = as_u32(draw(&small)),
                    9 => llm.ep = as_u32(draw(&small)),
                    10 => llm.dp = as_u32(draw(&small)),
                    11 => llm.pp = as_u32(draw(&small)),
                    12 => {
                        llm.imbalance = f64::from_bits(
                            [1.0f64, 1.5, 1000.0, 1e300, f64::NAN].map(f64::to_bits)
                                [usize::try_from(draw(&[0, 1, 2, 3, 4])).unwrap()],
                        )
                    }
                    _ => llm.train = !llm.train,
                }
            }
            match llm.generate("test") {
                // (Graphs of thousands of layers are read back once, below.)
                Ok(w) if w.nodes.len() > 10_000 => ok += 1,
                Ok(w) => {
                    ok += 1;
                    let text = crate::format::to_ron(&w).unwrap();
                    if let Err(e) = crate::format::parse("generated.ron", &text) {
                        panic!("{llm:?}: generated a workload the loader refuses: {e}");
                    }
                }
                Err(_) => refused += 1,
            }
        }
        assert!(ok > 150 && refused > 150, "{ok} generated, {refused} refused: the draws should reach both");
        // The largest graph, every layer allowed, a trained MoE over pipeline stages, holds no
        // more nodes than the loader takes.
        let most = Llm {
            arch: "moe".into(),
            layers: super::MAX_LAYERS,
            train: true,
            tp: 2,
            dp: 2,
            pp: 2,
            ep: 4,
            heads: 8,
            hidden: 1024,
            ffn: 1024,
            seq: 64,
            ..Llm::default()
        };
        let w = most.generate("test").unwrap();
        let n = w.nodes.len() as u64;
        assert!(n <= crate::format::MAX_NODES as u64 && n * 8 <= crate::format::MAX_SPANS, "{n} nodes");
    }
}
