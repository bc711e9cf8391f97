//! The kernel benchmark: a ring of clocked modules passing tokens through credit-based FIFOs.
//!
//! ```text
//!   m0 ──► m1 ──► m2 ──► ... ──► m(N-1)
//!    ▲                              │
//!    └──────────────────────────────┘   each arrow: a link of depth D, latency 1, credit 1
//! ```
//!
//! Each module, on each edge, moves at most one token from its input to its output when the
//! output has a credit, incrementing the token's 64-bit payload. Token `j` starts with payload
//! `j` in the input of module `floor(j * N / T)`. At the end the payloads left in the ring must
//! sum to `T(T-1)/2 + hops`: no token was lost, duplicated or skipped an increment.
//! `scripts/systemc/ring.cpp` is the same model in SystemC, with identical hop counts.

use serde::Serialize;
use trnsim_kernel::{
    Activity, Component, Ctx, Forward, Frequency, InPort, LinkSpec, OutPort, SimBuilder, SimOptions, Simulation,
    StatsWriter,
};

/// One ring module.
pub struct RingModule {
    input: InPort<u64>,
    output: OutPort<u64>,
    hops: u64,
}

impl Component for RingModule {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        match cx.forward(self.input, self.output, |v: u64| v.wrapping_add(1)) {
            Forward::Moved { more } => {
                self.hops += 1;
                if more {
                    Activity::Busy
                } else {
                    Activity::Idle
                }
            }
            Forward::Empty | Forward::Blocked => Activity::Idle,
        }
    }

    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("hops", self.hops);
    }
}

/// Ring parameters.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct RingParams {
    /// Modules in the ring.
    pub modules: u32,
    /// Tokens circulating.
    pub tokens: u32,
    /// FIFO depth of each module's input.
    pub depth: u32,
}

/// Builds the ring on one 1 GHz clock.
pub fn build(p: RingParams, opts: SimOptions) -> Result<Simulation, String> {
    builder(p, opts)?.build().map_err(|e| e.to_string())
}

/// The ring, assembled but not built (for partitioned runs).
pub fn builder(p: RingParams, opts: SimOptions) -> Result<SimBuilder, String> {
    if p.modules == 0 || p.depth == 0 {
        return Err("the ring needs at least 1 module and depth >= 1".into());
    }
    if u64::from(p.tokens) > u64::from(p.modules) * u64::from(p.depth) {
        return Err(format!("{} tokens do not fit in {} modules x depth {}", p.tokens, p.modules, p.depth));
    }
    let mut b = SimBuilder::with_options(opts);
    let clk = b.clock("clk", Frequency::from_mhz(1000)).map_err(|e| e.to_string())?;
    let n = p.modules as usize;
    let ids: Vec<_> =
        (0..n).map(|i| b.reserve(&format!("ring.m{i}"), clk)).collect::<Result<_, _>>().map_err(|e| e.to_string())?;
    let spec = LinkSpec::default().latency(1).depth(p.depth).credit_latency(1);
    let mut outs = Vec::with_capacity(n);
    let mut ins = vec![None; n];
    for i in 0..n {
        let j = (i + 1) % n;
        let (tx, rx) = b.link::<u64>(ids[i], "out", ids[j], "in", spec).map_err(|e| e.to_string())?;
        outs.push(tx);
        ins[j] = Some(rx);
    }
    let ins: Vec<InPort<u64>> = ins.into_iter().flatten().collect();
    for j in 0..u64::from(p.tokens) {
        let m = (j * p.modules as u64 / u64::from(p.tokens)) as usize;
        b.preload(ins[m], j).map_err(|e| e.to_string())?;
    }
    for i in 0..n {
        b.install(ids[i], RingModule { input: ins[i], output: outs[i], hops: 0 }).map_err(|e| e.to_string())?;
    }
    Ok(b)
}

/// Total hops, tokens left in the ring, and the sum of their payloads (callers check these
/// against `T` and `T(T-1)/2 + hops`).
pub fn tally(sim: &mut Simulation) -> Result<(u64, u64, u64), String> {
    let mut hops = 0;
    let n = sim.component_count();
    for i in 0..n {
        let id = sim.component_id(&format!("ring.m{i}")).ok_or("ring module missing")?;
        hops += sim.component::<RingModule>(id).map(|m| m.hops).ok_or("not a ring module")?;
    }
    let mut sum = 0u64;
    let mut count = 0u64;
    for l in 0..sim.links().len() {
        let id = trnsim_kernel::LinkId::from_index(l);
        for v in sim.link_contents::<u64>(id).ok_or("ring link is not u64")? {
            sum = sum.wrapping_add(*v);
            count += 1;
        }
    }
    Ok((hops, count, sum))
}
