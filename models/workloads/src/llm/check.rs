//! The generator's checks: every flag's range, the divisibility rules of the layout, and
//! that every size the graph holds fits the workload format.

use super::{Llm, Mode, MAX_LAYERS, MAX_MICRO_BATCHES};
use crate::format::{dtype_bytes, dtype_size, MAX_FLOPS, MAX_RANKS, MAX_SIZE};

/// The activation formats the generator writes (whole bytes per element).
const ACT_DTYPES: &str = "bf16, fp16, fp32, fp8, mxfp8";

impl Llm {
    /// Checks the ranges and divisibility rules; the error names the flag and the rule.
    pub fn check(&self) -> Result<(), String> {
        if self.arch != "dense" && self.arch != "moe" {
            return Err(format!("--arch {}: allowed: dense, moe", self.arch));
        }
        self.check_ranges()?;
        self.check_layout()?;
        self.check_sizes()
    }

    fn check_ranges(&self) -> Result<(), String> {
        for (flag, v) in [
            ("--tp", self.tp),
            ("--dp", self.dp),
            ("--pp", self.pp),
            ("--ep", self.ep),
            ("--layers", self.layers),
            ("--micro-batches", self.micro_batches),
            ("--sliding-every", self.sliding_every),
        ] {
            if v == 0 {
                return Err(format!("{flag} 0 is out of range (allowed: >= 1)"));
            }
        }
        if self.layers > MAX_LAYERS {
            return Err(format!("--layers {} is out of range (allowed: 1..={MAX_LAYERS})", self.layers));
        }
        if self.micro_batches > MAX_MICRO_BATCHES {
            let m = self.micro_batches;
            return Err(format!("--micro-batches {m} is out of range (allowed: 1..={MAX_MICRO_BATCHES})"));
        }
        let mut dims = vec![
            ("--hidden", self.hidden),
            ("--ffn", self.ffn),
            ("--heads", self.heads),
            ("--kv-heads", self.kv_heads),
            ("--head-dim", self.head_dim),
            ("--batch", self.batch),
            ("--experts", self.experts),
        ];
        dims.push(if self.mode.serving() { ("--context", self.context) } else { ("--seq", self.seq) });
        for (flag, v) in dims {
            if v == 0 || v > 1 << 24 {
                return Err(format!("{flag} {v} is out of range (allowed: 1..=16777216)"));
            }
        }
        for (flag, v) in [
            ("--vocab", self.vocab),
            ("--sliding-window", self.sliding_window),
            ("--shared-experts", self.shared_experts),
        ] {
            if v > 1 << 24 {
                return Err(format!("{flag} {v} is out of range (allowed: 0..=16777216)"));
            }
        }
        let ranks = u64::from(self.tp).checked_mul(u64::from(self.dp)).and_then(|r| r.checked_mul(u64::from(self.pp)));
        if ranks.is_none_or(|r| r > u64::from(MAX_RANKS)) {
            let (tp, dp, pp) = (self.tp, self.dp, self.pp);
            return Err(format!(
                "--tp x --dp x --pp = {tp} x {dp} x {pp} ranks is out of range (allowed: <= {MAX_RANKS})"
            ));
        }
        if dtype_bytes(&self.dtype).is_none() {
            return Err(format!("--dtype {}: allowed: {ACT_DTYPES}", self.dtype));
        }
        for (flag, d) in [("--weights", &self.weights), ("--expert-weights", &self.expert_weights)] {
            if dtype_size(d).is_none() {
                return Err(format!("{flag} {d}: allowed: {}", crate::format::DTYPES));
            }
        }
        if self.moe() && !(1..=self.experts).contains(&self.top_k) {
            return Err(format!("--top-k {} is out of range (allowed: 1..=--experts {})", self.top_k, self.experts));
        }
        if !(1.0..=1000.0).contains(&self.imbalance) {
            return Err(format!("--imbalance {:?} is out of range (allowed: 1..=1000)", self.imbalance));
        }
        Ok(())
    }

    fn check_layout(&self) -> Result<(), String> {
        let (tp, dp, ep) = (u64::from(self.tp), u64::from(self.dp), u64::from(self.ep));
        let per_replica = self.batch / dp.max(1);
        let rules: [(bool, String); 9] = [
            (self.heads.is_multiple_of(tp), format!("--heads {} must divide by --tp {}", self.heads, self.tp)),
            (
                self.heads.is_multiple_of(self.kv_heads),
                format!("--heads {} must divide by --kv-heads {}", self.heads, self.kv_heads),
            ),
            (
                self.kv_heads.is_multiple_of(tp) || tp.is_multiple_of(self.kv_heads),
                format!(
                    "--kv-heads {} must divide by --tp {} (or --tp by it: each rank then holds a copy of one KV head)",
                    self.kv_heads, self.tp
                ),
            ),
            (self.ffn.is_multiple_of(tp), format!("--ffn {} must divide by --tp {}", self.ffn, self.tp)),
            (self.batch.is_multiple_of(dp), format!("--batch {} must divide by --dp {}", self.batch, self.dp)),
            (self.layers.is_multiple_of(self.pp), format!("--layers {} must divide by --pp {}", self.layers, self.pp)),
            ((tp * dp).is_multiple_of(ep), format!("--ep {} must divide --tp x --dp = {}", self.ep, tp * dp)),
            (
                !self.moe() || self.experts.is_multiple_of(ep),
                format!("--experts {} must divide by --ep {}", self.experts, self.ep),
            ),
            (
                per_replica.is_multiple_of(u64::from(self.micro_batches)),
                format!(
                    "--micro-batches {} must divide each replica's batch (--batch / --dp = {per_replica})",
                    self.micro_batches
                ),
            ),
        ];
        if let Some((_, m)) = rules.iter().find(|(ok, _)| !ok) {
            return Err(m.clone());
        }
        if self.micro_batches > 1 && self.pp == 1 {
            return Err("--micro-batches applies to a pipeline (--pp >= 2)".into());
        }
        if self.micro_batches > 1 && self.mode == Mode::Decode {
            return Err("--micro-batches: a decode step is one token a sequence; pipeline it with --batch".into());
        }
        Ok(())
    }

    /// Checks that every tensor, message and parameter count the graph holds fits the
    /// workload format ([`MAX_SIZE`]), so that the generator's arithmetic never wraps and what
    /// it writes, the loader accepts.
    fn check_sizes(&self) -> Result<(), String> {
        let limit = MAX_SIZE;
        let e = dtype_bytes(&self.dtype).unwrap_or(4);
        let h = self.hidden;
        let f = self.ffn.max(self.ffn.saturating_mul(self.shared_experts));
        let kv_max = if self.mode.serving() { self.q_len().max(self.context.saturating_add(1)) } else { self.seq };
        let tokens = (self.batch / u64::from(self.dp)).checked_mul(self.q_len());
        let Some(tokens) = tokens else {
            return Err("--batch x the sequence's tokens is too large".into());
        };
        let product = |xs: &[u64]| xs.iter().try_fold(1u64, |a, &x| a.checked_mul(x)).filter(|&v| v <= limit);
        let too_big = |what: &str| {
            Err(format!(
                "{what} is more than {limit} (the largest size a workload holds): a smaller model, batch or sequence"
            ))
        };
        let moe = self.moe();
        let width = (self.heads + 2 * self.kv_heads).max(h);
        let mut sizes: Vec<(&str, Vec<u64>)> = vec![
            ("tokens per replica x --hidden x element bytes", vec![tokens, h, e]),
            ("tokens per replica x 2 x --ffn", vec![tokens, 2, f]),
            ("(--heads + 2 x --kv-heads) x --head-dim x --hidden x element bytes", vec![width, self.head_dim, h, 4]),
            ("2 x 2 x --hidden x --ffn x element bytes", vec![4, h, f, e]),
            ("tokens per replica x --vocab x element bytes", vec![tokens, self.vocab.max(1), e]),
            (
                "activations: tokens per replica x --hidden x element bytes x 8 x --layers",
                vec![tokens, h, e, 8, u64::from(self.layers)],
            ),
            (
                "KV cache: --batch x context x 2 x --kv-heads x --head-dim x --layers",
                vec![self.batch, kv_max, 2, self.kv_heads, self.head_dim, 4, u64::from(self.layers)],
            ),
        ];
        if moe {
            sizes.push(("--experts x 3 x --hidden x --ffn x element bytes", vec![self.experts, 3, h, f, e]));
            sizes.push(("tokens per replica x --experts", vec![tokens, self.experts]));
            sizes.push(("tokens per replica x --top-k x --hidden x element bytes", vec![tokens, self.top_k, h, e]));
            sizes.push(("tokens per replica x --top-k x 2 x --ffn", vec![tokens, self.top_k, 2, f]));
            sizes.push(("tokens per replica x --ep", vec![tokens, u64::from(self.ep)]));
        }
        for (what, xs) in &sizes {
            if product(xs).is_none() {
                return too_big(what);
            }
        }
        // Each node's operations (bounded above: a GEMM's shard and an attention's heads
        // counted whole) at most the format's limit on one node's work.
        let batch = self.batch / u64::from(self.dp);
        let mut works: Vec<(&str, Vec<u64>)> = vec![
            ("2 x tokens per replica x --hidden x 2 x --ffn", vec![2, tokens, h, 2 * f.max(h)]),
            ("2 x tokens per replica x --hidden x --vocab", vec![2, tokens, h, self.vocab.max(1)]),
            (
                "2 x tokens per replica x --hidden x (--heads + 2 x --kv-heads) x --head-dim",
                vec![2, tokens, h, width, self.head_dim],
            ),
            (
                "4 x batch per replica x query tokens x context x --heads x --head-dim (attention)",
                vec![4, batch, self.q_len(), kv_max, self.heads, self.head_dim],
            ),
        ];
        if moe {
            works.push(("2 x tokens per replica x --top-k x --hidden x 2 x --ffn", vec![4, tokens, self.top_k, h, f]));
        }
        for (what, xs) in &works {
            if xs.iter().try_fold(1u64, |a, &x| a.checked_mul(x)).filter(|&v| v <= MAX_FLOPS).is_none() {
                return Err(format!(
                    "{what} is more than {MAX_FLOPS} operations (the most one node may take): a smaller model, batch or sequence"
                ));
            }
        }
        if moe {
            // Routed tokens with the imbalance: what an expert computes and a rank sends.
            let routed = (tokens * self.top_k) as f64 * self.imbalance;
            if routed * (h.max(2 * f) * e) as f64 > limit as f64 {
                return too_big("tokens per replica x --top-k x --imbalance x --hidden (or --ffn) x element bytes");
            }
        }
        // One rank's parameters (its TP shard and its experts) over its layers, in training
        // with their gradients and optimizer state.
        let local = self.experts / u64::from(self.ep);
        let mlp = if moe {
            product(&[local, 3, h, self.ffn]).zip(product(&[h, self.experts])).map(|(a, b)| a + b)
        } else {
            Some(3 * h * (self.ffn / u64::from(self.tp)))
        };
        let layer = mlp.and_then(|m| product(&[h, width, self.head_dim, 2]).map(|a| a + m));
        let per_param = if self.mode == Mode::Train { 2 * e + 12 } else { e.max(2) };
        if layer.and_then(|l| product(&[l, u64::from(self.layers / self.pp), per_param])).is_none() {
            return too_big("one rank's parameters x --layers / --pp x bytes per parameter");
        }
        Ok(())
    }
}
