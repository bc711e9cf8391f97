//! The workload graph of one step: layers, stages, the backward pass and the LM head.

use super::{Llm, Mode};
use crate::format::{dtype_bytes, Comm, Node, Op, Serving, Workload};
use std::collections::BTreeMap;

pub(super) struct Graph {
    pub(super) nodes: Vec<Node>,
}

impl Graph {
    pub(super) fn add(&mut self, name: String, op: Op, deps: &[u32], ranks: Option<&Vec<u32>>) -> u32 {
        let id = self.nodes.len() as u32;
        self.nodes.push(Node { id, name, op, data_deps: deps.to_vec(), ctrl_deps: vec![], ranks: ranks.cloned() });
        id
    }
}

fn comm(bytes: u64, group: &str) -> Comm {
    Comm { bytes, group: group.into(), algo: None, duration_ns: 0 }
}

impl Llm {
    /// The workload graph.
    pub fn generate(&self, cmdline: &str) -> Result<Workload, String> {
        self.check()?;
        let e = dtype_bytes(&self.dtype).unwrap_or(2);
        let (tp, dp, pp) = (self.tp, self.dp, self.pp);
        let stage_size = tp * dp;
        let tokens = self.tokens_per_replica();
        let mut groups: BTreeMap<String, Vec<Vec<u32>>> = BTreeMap::new();
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
        self.pipeline(&mut g, tokens, e)?;
        let spans = u64::from(self.ranks()).saturating_mul(g.nodes.len() as u64);
        if spans > crate::format::MAX_SPANS {
            return Err(format!(
                "{} ranks (--tp x --dp x --pp) x {} nodes is more than {} node instances (the schedule keeps each): fewer ranks or layers",
                self.ranks(),
                g.nodes.len(),
                crate::format::MAX_SPANS
            ));
        }
        let what = match self.mode {
            Mode::Train => "training step",
            Mode::Forward => "inference forward pass",
            Mode::Prefill => "prefill: time to first token",
            Mode::Decode => "decode step: time per output token",
        };
        let serving = self.mode.serving().then(|| Serving {
            mode: self.mode.name().into(),
            batch: self.batch,
            context: self.context,
            kv_cache_bytes_per_rank: self.kv_cache_bytes_per_rank(),
        });
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
                match self.mode {
                    Mode::Forward => "infer",
                    m => m.name(),
                }
            ),
            source: format!("{cmdline} ({what})"),
            ranks: self.ranks(),
            groups,
            repeat: 1,
            hbm_bytes_per_rank: Some(self.hbm_bytes_per_rank()),
            tokens_per_step: self.batch.checked_mul(self.q_len()),
            serving,
            nodes: g.nodes,
        })
    }

    /// A pipeline hop: every rank of `senders` sends its TP shard of the activations (or
    /// their gradients) of `token_bytes` per model-width element to the rank `offset` away.
    pub(super) fn hop(
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

    /// A GEMM of activations in `dtype` (training's weight gradients too).
    fn gemm(&self, m: u64, k: u64, n: u64, count: u32) -> Op {
        self.gemm_w(m, k, n, count, &self.dtype.clone())
    }

    /// A GEMM against weights stored in `weights` (forward and data-gradient GEMMs).
    fn gemm_w(&self, m: u64, k: u64, n: u64, count: u32, weights: &str) -> Op {
        let weight_dtype = (weights != self.dtype).then(|| weights.to_string());
        Op::Gemm { m, k, n, dtype: self.dtype.clone(), count, a_resident: false, b_resident: false, weight_dtype }
    }

    /// Layer `l`'s attention over `tokens` query tokens of one replica.
    fn attention(&self, tokens: u64, l: u32) -> Op {
        let (q, kv) = (self.q_len(), self.kv_len(l));
        // A window shorter than the prompt: `q x w` scores, no causal halving.
        let windowed = kv < q;
        let gqa = self.kv_heads != self.heads;
        Op::Attention {
            batch: tokens / q,
            heads: self.heads / u64::from(self.tp),
            seq: q,
            kv_seq: (self.mode.serving() || windowed || kv != q).then_some(kv),
            kv_heads: gqa.then(|| self.kv_heads_per_rank()),
            head_dim: self.head_dim,
            causal: q > 1 && !windowed,
            dtype: self.attn_dtype().to_string(),
        }
    }

    /// The LM head: logits of the tokens that need them (training and forward: every token;
    /// serving: the last of each sequence), the vocabulary split over TP.
    pub(super) fn lm_head(&self, g: &mut Graph, tokens: u64, prev: Option<u32>, r: Option<&Vec<u32>>) -> u32 {
        let m = if self.mode.serving() { self.batch / u64::from(self.dp) } else { tokens };
        let p: Vec<u32> = prev.into_iter().collect();
        let norm = g.add(
            "final_norm".into(),
            Op::Elementwise { elements: tokens * self.hidden, ops: 8, dtype: self.dtype.clone() },
            &p,
            r,
        );
        let head = g.add(
            "lm_head".into(),
            self.gemm_w(m, self.hidden, self.vocab_cols(), 1, &self.weights.clone()),
            &[norm],
            r,
        );
        // Softmax over the logits (and the loss, training): 5 operations each.
        let logits = m * self.vocab_cols();
        g.add(
            "lm_head.softmax".into(),
            Op::Elementwise { elements: logits, ops: 5, dtype: self.dtype.clone() },
            &[head],
            r,
        )
    }

    /// One layer's forward nodes; returns the last.
    pub(super) fn layer_forward(
        &self,
        g: &mut Graph,
        l: u32,
        tokens: u64,
        e: u64,
        prev: Option<u32>,
        r: Option<&Vec<u32>>,
    ) -> u32 {
        let (h, tp) = (self.hidden, u64::from(self.tp));
        let w = self.weights.clone();
        let p: Vec<u32> = prev.into_iter().collect();
        let qkv = g.add(format!("L{l}.qkv"), self.gemm_w(tokens, h, self.qkv_cols(), 1, &w), &p, r);
        let att = g.add(format!("L{l}.attention"), self.attention(tokens, l), &[qkv], r);
        let mut last = g.add(format!("L{l}.proj"), self.gemm_w(tokens, self.attn_width(), h, 1, &w), &[att], r);
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
            self.mlp_forward(g, l, "mlp", self.ffn, tokens, e, norm, r)
        };
        g.add(
            format!("L{l}.norm2"),
            Op::Elementwise { elements: tokens * h, ops: 8, dtype: self.dtype.clone() },
            &[mlp],
            r,
        )
    }

    /// A dense MLP of inner width `f` split over TP (`name`: "mlp", "shared").
    #[allow(clippy::too_many_arguments)]
    fn mlp_forward(
        &self,
        g: &mut Graph,
        l: u32,
        name: &str,
        f: u64,
        tokens: u64,
        e: u64,
        prev: u32,
        r: Option<&Vec<u32>>,
    ) -> u32 {
        let (h, tp, w) = (self.hidden, u64::from(self.tp), self.weights.clone());
        let up = g.add(format!("L{l}.{name}.up"), self.gemm_w(tokens, h, self.up_cols(f / tp), 1, &w), &[prev], r);
        let act = g.add(
            format!("L{l}.{name}.act"),
            Op::Elementwise { elements: tokens * f / tp, ops: 4, dtype: self.dtype.clone() },
            &[up],
            r,
        );
        let down = g.add(format!("L{l}.{name}.down"), self.gemm_w(tokens, f / tp, h, 1, &w), &[act], r);
        if tp > 1 {
            return g.add(format!("L{l}.{name}.all_reduce"), Op::AllReduce(comm(tokens * h * e, "tp")), &[down], r);
        }
        down
    }

    /// Tokens each expert of a rank computes, the all-to-all bytes per rank, and the
    /// experts a rank's GEMMs run: those the step's tokens hit, in expectation (the module's
    /// doc comment), rounded up.
    fn moe_sizes(&self, tokens: u64, e: u64) -> (u64, u64, u32) {
        let local = self.experts / u64::from(self.ep);
        let routed = (tokens * self.top_k) as f64 * self.imbalance;
        let group_tokens = (tokens * u64::from(self.ep)) as f64;
        let miss = (1.0 - self.top_k as f64 / self.experts as f64).powf(group_tokens);
        let hit = ((local as f64 * (1.0 - miss)).ceil() as u64).clamp(1, local);
        let a2a = (routed * (self.hidden * e) as f64).ceil() as u64;
        ((routed / hit as f64).ceil() as u64, a2a, u32::try_from(hit).unwrap_or(u32::MAX))
    }

    fn moe_forward(&self, g: &mut Graph, l: u32, tokens: u64, e: u64, prev: u32, r: Option<&Vec<u32>>) -> u32 {
        let (h, f) = (self.hidden, self.ffn);
        let (per_expert, a2a, hit) = self.moe_sizes(tokens, e);
        let (w, xw) = (self.weights.clone(), self.expert_weights.clone());
        let router = g.add(format!("L{l}.router"), self.gemm_w(tokens, h, self.experts, 1, &w), &[prev], r);
        let mut last = router;
        if self.ep > 1 {
            last = g.add(format!("L{l}.dispatch"), Op::AllToAll(comm(a2a, "ep")), &[router], r);
        }
        let up = g.add(format!("L{l}.experts.up"), self.gemm_w(per_expert, h, self.up_cols(f), hit, &xw), &[last], r);
        let act = g.add(
            format!("L{l}.experts.act"),
            Op::Elementwise { elements: per_expert * f * u64::from(hit), ops: 4, dtype: self.dtype.clone() },
            &[up],
            r,
        );
        let mut down = g.add(format!("L{l}.experts.down"), self.gemm_w(per_expert, f, h, hit, &xw), &[act], r);
        if self.shared_experts > 0 {
            let shared = self.ffn * self.shared_experts;
            down = self.mlp_forward(g, l, "shared", shared, tokens, e, down, r);
        }
        if self.ep > 1 {
            down = g.add(format!("L{l}.combine"), Op::AllToAll(comm(a2a, "ep")), &[down], r);
        }
        down
    }

    /// One layer's backward nodes: returns the last node on the critical path and the
    /// gradient all-reduces (which later nodes need not wait for, but the update does).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn layer_backward(
        &self,
        g: &mut Graph,
        l: u32,
        tokens: u64,
        e: u64,
        prev: Option<u32>,
        r: Option<&Vec<u32>>,
        with_grads: bool,
    ) -> (u32, Vec<u32>) {
        let (h, f, tp) = (self.hidden, self.ffn, u64::from(self.tp));
        let mut d: Vec<u32> = prev.into_iter().collect();
        let mut grads = Vec::new();
        let mut wgrads = Vec::new();
        if self.arch == "moe" {
            let (per_expert, a2a, local) = self.moe_sizes(tokens, e);
            let uf = self.up_cols(f);
            if self.ep > 1 {
                d = vec![g.add(format!("L{l}.combine.bwd"), Op::AllToAll(comm(a2a, "ep")), &d, r)];
            }
            let x = g.add(format!("L{l}.experts.down.dgrad"), self.gemm(per_expert, h, f, local), &d, r);
            wgrads.push(g.add(format!("L{l}.experts.down.wgrad"), self.gemm(f, per_expert, h, local), &d, r));
            let y = g.add(format!("L{l}.experts.up.dgrad"), self.gemm(per_expert, uf, h, local), &[x], r);
            wgrads.push(g.add(format!("L{l}.experts.up.wgrad"), self.gemm(h, per_expert, uf, local), &[x], r));
            d = vec![y];
            if self.ep > 1 {
                d = vec![g.add(format!("L{l}.dispatch.bwd"), Op::AllToAll(comm(a2a, "ep")), &d, r)];
            }
            let expert_params = u64::from(local) * (self.up_cols(1) + 1) * h * f;
            if with_grads && self.tp * self.dp / self.ep > 1 {
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
            let uf = self.up_cols(f / tp);
            let y = g.add(format!("L{l}.mlp.up.dgrad"), self.gemm(tokens, uf, h, 1), &[x], r);
            wgrads.push(g.add(format!("L{l}.mlp.up.wgrad"), self.gemm(h, tokens, uf, 1), &[x], r));
            d = vec![y];
            if tp > 1 {
                d = vec![g.add(format!("L{l}.mlp.dgrad.all_reduce"), Op::AllReduce(comm(tokens * h * e, "tp")), &d, r)];
            }
        }
        let (aw, qc) = (self.attn_width(), self.qkv_cols());
        let pj = g.add(format!("L{l}.proj.dgrad"), self.gemm(tokens, h, aw, 1), &d, r);
        wgrads.push(g.add(format!("L{l}.proj.wgrad"), self.gemm(aw, tokens, h, 1), &d, r));
        let at = g.add(format!("L{l}.attention.bwd"), self.attention(tokens, l), &[pj], r);
        let at2 = g.add(format!("L{l}.attention.bwd2"), self.attention(tokens, l), &[at], r);
        let q = g.add(format!("L{l}.qkv.dgrad"), self.gemm(tokens, qc, h, 1), &[at2], r);
        wgrads.push(g.add(format!("L{l}.qkv.wgrad"), self.gemm(h, tokens, qc, 1), &[at2], r));
        let mut last = q;
        if tp > 1 {
            last = g.add(format!("L{l}.qkv.dgrad.all_reduce"), Op::AllReduce(comm(tokens * h * e, "tp")), &[q], r);
        }
        if with_grads && self.dp > 1 {
            let attn = h * qc + aw * h;
            let dense = attn + if self.arch == "moe" { 0 } else { (self.up_cols(1) + 1) * h * (f / tp) };
            grads.push(g.add(format!("L{l}.grad.all_reduce"), Op::AllReduce(comm(dense * e, "dp")), &wgrads, r));
        }
        (last, grads)
    }
}
