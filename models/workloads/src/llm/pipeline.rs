//! Pipeline schedules: each stage's order of micro-batch forward and backward blocks (1F1B
//! in training, forwards in order otherwise), and the graph emitted in an order every stage's
//! in-order queue runs as scheduled.
//!
//! 1F1B (PipeDream-Flush, as Megatron-LM runs it): stage `s` of `p` first runs
//! `min(p - s - 1, m)` forward micro-batches (warm-up), then alternates one forward and one
//! backward, then runs the remaining backwards (cool-down). With uniform stages of forward time
//! `f` and backward time `b` a step takes `(m + p - 1) x (f + b)`, so each stage idles
//! `(p - 1) / (m + p - 1)` of it (the bubble). Gradients accumulate over the micro-batches;
//! the data-parallel gradient all-reduce follows the last one.
//!
//! Left out: interleaved (virtual) stages, zero-bubble schedules, and activation
//! recomputation.

use super::graph::Graph;
use super::{Llm, Mode};
use crate::format::{Op, Queue};

/// One block of a stage's schedule: micro-batch `j`'s forward or backward.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block {
    /// Forward of micro-batch `j`.
    Forward(u32),
    /// Backward of micro-batch `j`.
    Backward(u32),
}

/// Stage `s`'s blocks in order, for `p` stages and `m` micro-batches (1F1B when `train`).
pub fn schedule(s: u32, p: u32, m: u32, train: bool) -> Vec<Block> {
    if !train {
        return (0..m).map(Block::Forward).collect();
    }
    let warm = (p - s - 1).min(m);
    let mut v: Vec<Block> = (0..warm).map(Block::Forward).collect();
    for i in 0..m - warm {
        v.push(Block::Forward(warm + i));
        v.push(Block::Backward(i));
    }
    v.extend((m - warm..m).map(Block::Backward));
    v
}

impl Llm {
    /// Emits every stage's blocks (and the update, training) into `g`: a block is emitted
    /// once what it receives is (the previous stage's forward of its micro-batch, the next
    /// stage's backward), taking the stages in turn, so each stage's nodes sit in the file in
    /// its schedule's order.
    pub(super) fn pipeline(&self, g: &mut Graph, tokens: u64, e: u64) -> Result<(), String> {
        let (p, m) = (self.pp, self.micro_batches);
        let train = self.mode == Mode::Train;
        let stage_size = self.tp * self.dp;
        let per_stage = self.layers / p;
        let mb_tokens = tokens / u64::from(m);
        let plans: Vec<Vec<Block>> = (0..p).map(|s| schedule(s, p, m, train)).collect();
        let mut next = vec![0usize; p as usize];
        // The last node of each (stage, micro-batch) forward and backward block.
        let mut fwd = vec![vec![None::<u32>; m as usize]; p as usize];
        let mut bwd = vec![vec![None::<u32>; m as usize]; p as usize];
        let (mut grads, mut last) = (Vec::new(), None);
        let total: usize = plans.iter().map(Vec::len).sum();
        let mut done = 0;
        while done < total {
            let before = done;
            for s in 0..p {
                let (si, ranks) = (s as usize, (p > 1).then(|| (s * stage_size..(s + 1) * stage_size).collect()));
                let Some(&block) = plans[si].get(next[si]) else { continue };
                let start = g.nodes.len();
                let out = match block {
                    Block::Forward(j) => {
                        let input = if s == 0 { Some(None) } else { fwd[si - 1][j as usize].map(Some) };
                        let Some(mut prev) = input else { continue };
                        for l in s * per_stage..(s + 1) * per_stage {
                            prev = Some(self.layer_forward(g, l, mb_tokens, e, prev, ranks.as_ref()));
                        }
                        if s + 1 < p {
                            let name = format!("stage{s}->stage{}", s + 1);
                            let senders = ranks.clone().unwrap_or_default();
                            prev = Some(self.hop(g, name, senders, i64::from(stage_size), mb_tokens * e, prev));
                        } else if self.vocab > 0 {
                            prev = Some(self.lm_head(g, mb_tokens, prev, ranks.as_ref()));
                        }
                        fwd[si][j as usize] = prev;
                        prev
                    }
                    Block::Backward(j) => {
                        let input = if s + 1 == p { fwd[si][j as usize] } else { bwd[si + 1][j as usize] };
                        let Some(input) = input else { continue };
                        let mut prev = Some(input);
                        for l in (s * per_stage..(s + 1) * per_stage).rev() {
                            let (end, grad) = self.layer_backward(g, l, mb_tokens, e, prev, ranks.as_ref(), j + 1 == m);
                            prev = Some(end);
                            grads.extend(grad);
                        }
                        if s > 0 {
                            // The gradient leaves once the block's compute is done (its weight
                            // gradients too: one backward pass computes both).
                            let computed = g.nodes[start..].iter().rev().find(|n| n.op.queue() == Queue::Compute);
                            let computed = computed.map(|n| n.id).filter(|c| Some(*c) != prev);
                            let name = format!("stage{s}->stage{} grad", s - 1);
                            let senders = ranks.clone().unwrap_or_default();
                            let hop = self.hop(g, name, senders, -i64::from(stage_size), mb_tokens * e, prev);
                            g.nodes[hop as usize].data_deps.extend(computed);
                            prev = Some(hop);
                        }
                        bwd[si][j as usize] = prev;
                        prev
                    }
                };
                if m > 1 {
                    let j = match block {
                        Block::Forward(j) | Block::Backward(j) => j,
                    };
                    for n in &mut g.nodes[start..] {
                        n.name = format!("mb{j}.{}", n.name);
                    }
                }
                last = out.or(last);
                next[si] += 1;
                done += 1;
            }
            if done == before {
                return Err("internal: the pipeline schedule deadlocked".into());
            }
        }
        if train {
            let params = self.layer_params_per_rank() * u64::from(per_stage);
            let mut deps = grads;
            deps.extend(last);
            g.add("adam".into(), Op::Elementwise { elements: params, ops: 12, dtype: "fp32".into() }, &deps, None);
        }
        Ok(())
    }
}
