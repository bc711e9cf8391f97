//! Swap-in: RTL blocks inside a running system, in place of their models.
//!
//! The switch's crossbar arbiter is the first: [`BlockArbiter`] is a trnsim-fabric
//! [`Arbiter`] backed by any [`Block`] with the `islip_arbiter` ports (the Verilated RTL, or
//! the Rust port-level model), and [`RtlArbiters`] is the [`ArbiterProvider`] that gives it to
//! the switch instances a config lists, optionally recording each one's inputs into a port
//! trace ([`crate::trace`]) that `trnsim diff BLOCK --stimulus trace:FILE` replays.
//!
//! ```text
//!   Switch "sw" ── Requests ──► BlockArbiter ── req bits ──► [Recorder ─►] Rtl<IslipArbiterN8I1>
//!              ◄─ Matching ───              ◄─ match_valid, match_out ──
//! ```
//!
//! **Clocking.** The switch calls its arbiter once per crossbar cycle that has requests; each
//! call is one RTL clock (set `req`, settle, read the matching, rising edge). Crossbar cycles
//! without requests are not clocked: with no requests the arbiter grants nothing and its
//! pointers hold, so an idle RTL cycle changes no state and skipping it is exact (the
//! identical-statistics test checks the whole run). Construction clocks one reset cycle.
//!
//! **Errors.** An arbiter cannot fail a switch tick, so an RTL error (`$fatal`) makes the
//! arbiter grant nothing from then on and is kept in the provider's [`SwapStatus`]; check
//! [`RtlArbiters::check`] after the run.

use crate::block::{Block, PortInfo};
use crate::registry::{self, BlockEntry};
use crate::trace::Recorder;
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use trnsim_fabric::switch::{Arbiter, ArbiterProvider, Matching, Requests, SwitchConfig};

/// What happened to one swapped-in instance.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SwapStatus {
    /// Switch instance name.
    pub instance: String,
    /// The registry block it runs.
    pub block: &'static str,
    /// RTL clocks (arbitrations, plus the reset cycle).
    pub cycles: u64,
    /// The first RTL error, if any.
    pub error: Option<String>,
    /// The trace file its inputs were recorded to.
    pub recorded: Option<PathBuf>,
}

/// A fabric [`Arbiter`] backed by a [`Block`] with the `islip_arbiter` ports: `rst`, `req`
/// (`n * n` bits, bit `i * n + j`: input `i` requests output `j`), `match_valid` (`n`),
/// `match_out` (`n` fields of `ceil(log2 n)` bits).
pub struct BlockArbiter<B: Block> {
    block: B,
    n: usize,
    w: u32,
    /// rst, req, match_valid, match_out.
    ports: [usize; 4],
    failed: bool,
    status: Rc<RefCell<SwapStatus>>,
}

impl<B: Block> BlockArbiter<B> {
    /// Wraps `block` (an `n`-port arbiter) and clocks one reset cycle. The error names the
    /// port whose name or width does not fit.
    pub fn new(block: B, n: usize, status: Rc<RefCell<SwapStatus>>) -> Result<BlockArbiter<B>, String> {
        let w = usize::BITS - n.saturating_sub(1).leading_zeros();
        let want = [("rst", true, 1), ("req", true, (n * n) as u32), ("match_valid", false, n as u32)];
        let want = [want[0], want[1], want[2], ("match_out", false, n as u32 * w)];
        let mut ports = [0; 4];
        for (slot, (name, input, width)) in ports.iter_mut().zip(want) {
            let p = block.ports().iter().position(|p| p.name == name);
            let p = p.ok_or_else(|| format!("the arbiter block has no port {name}"))?;
            if block.ports()[p] != (PortInfo { name, input, width }) {
                return Err(format!("arbiter port {name}: {:?}, want {width} bits for {n} ports", block.ports()[p]));
            }
            *slot = p;
        }
        let mut a = BlockArbiter { block, n, w, ports, failed: false, status };
        a.clock(1, 0);
        Ok(a)
    }

    /// The wrapped block.
    pub fn block(&self) -> &B {
        &self.block
    }

    /// One clock with these inputs; the matching (valid bits, fields) read before the edge.
    fn clock(&mut self, rst: u128, req: u128) -> Option<(u128, u128)> {
        if self.failed {
            return None;
        }
        let [p_rst, p_req, p_valid, p_out] = self.ports;
        self.block.set_input(p_rst, rst);
        self.block.set_input(p_req, req);
        let r = self.block.settle().map(|()| (self.block.output(p_valid), self.block.output(p_out)));
        let r = r.and_then(|m| self.block.posedge().map(|()| m));
        let mut st = self.status.borrow_mut();
        st.cycles += 1;
        match r {
            Ok(m) => Some(m),
            Err(e) => {
                let at = st.cycles - 1;
                st.error.get_or_insert(format!("cycle {at}: {e}"));
                self.failed = true;
                None
            }
        }
    }
}

impl<B: Block> Arbiter for BlockArbiter<B> {
    fn name(&self) -> &'static str {
        "rtl"
    }

    fn arbitrate(&mut self, req: &Requests, m: &mut Matching) {
        let n = self.n;
        let mut bits = 0u128;
        for (i, row) in req.rows.iter().enumerate() {
            for j in row.iter() {
                bits |= 1 << (i * n + j);
            }
        }
        m.clear();
        let Some((valid, out)) = self.clock(0, bits) else { return };
        let mask = (1u128 << self.w) - 1;
        for i in 0..n {
            if valid >> i & 1 == 1 {
                m.connect(i, ((out >> (i as u32 * self.w)) & mask) as usize);
            }
        }
    }
}

/// Which implementation a swapped-in instance runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Impl {
    /// The Verilated RTL (feature `rtl`).
    Rtl,
    /// The Rust port-level model of the same block (runs the swap-in path without Verilator).
    BlockModel,
}

/// An [`ArbiterProvider`]: the listed switch instances get the RTL arbiter (the registry
/// block matching their config, or the registered block named by `INSTANCE=BLOCK`, any with
/// an arbiter's ports for the switch's size: a block crate's too), every other one keeps its
/// model.
pub struct RtlArbiters {
    instances: Vec<String>,
    imp: Impl,
    record: Option<PathBuf>,
    status: Vec<Rc<RefCell<SwapStatus>>>,
}

impl RtlArbiters {
    /// The instances named in `instances` (`INSTANCE` or `INSTANCE=BLOCK`) run `imp`.
    pub fn new<S: AsRef<str>>(instances: &[S], imp: Impl) -> RtlArbiters {
        let instances = instances.iter().map(|s| s.as_ref().to_string()).collect();
        RtlArbiters { instances, imp, record: None, status: Vec::new() }
    }

    /// Records each swapped instance's inputs to `path` (with more than one instance:
    /// `path.INSTANCE`).
    pub fn record_to(mut self, path: PathBuf) -> RtlArbiters {
        self.record = Some(path);
        self
    }

    /// The registry block for a switch config: `islip_n{ports}_i{iterations}` for `islip`,
    /// `rrm_n{ports}_i{iterations}` for `round-robin`.
    pub fn block_for(cfg: &SwitchConfig) -> Result<&'static BlockEntry, String> {
        let kind = match cfg.arbiter.as_str() {
            "islip" => "islip",
            "round-robin" => "rrm",
            other => return Err(format!("an arbiter with RTL (islip, round-robin), not {other:?}")),
        };
        let name = format!("{kind}_n{}_i{}", cfg.ports, cfg.iterations);
        registry::find(&name).ok_or_else(|| {
            let have: Vec<&str> = registry::BLOCKS
                .iter()
                .map(|b| b.name)
                .filter(|n| n.starts_with("islip") || n.starts_with("rrm"))
                .collect();
            format!("an arbiter with RTL: {name} is not verilated (have: {})", have.join(", "))
        })
    }

    /// Every swapped instance's status, in build order.
    pub fn status(&self) -> Vec<SwapStatus> {
        self.status.iter().map(|s| s.borrow().clone()).collect()
    }

    /// Whether `instance` is listed: with the block it names (`INSTANCE=BLOCK`), if any.
    fn listed(&self, instance: &str) -> Option<Option<&str>> {
        self.instances.iter().find_map(|i| match i.split_once('=') {
            Some((n, b)) if n.trim_end() == instance => Some(Some(b.trim())),
            None if i == instance => Some(None),
            _ => None,
        })
    }

    /// Whether every listed instance was swapped in and ran without an RTL error.
    pub fn check(&self) -> Result<(), String> {
        let st = self.status();
        let bare = |i: &String| i.split_once('=').map_or(i.clone(), |(n, _)| n.trim_end().to_string());
        if let Some(i) = self.instances.iter().map(bare).find(|i| !st.iter().any(|s| &s.instance == i)) {
            return Err(format!("no switch instance called {i:?} was built"));
        }
        match st.iter().find_map(|s| s.error.as_ref().map(|e| (s, e))) {
            Some((s, e)) => Err(format!("{} ({}): {e}", s.instance, s.block)),
            None => Ok(()),
        }
    }
}

impl ArbiterProvider for RtlArbiters {
    fn arbiter(&mut self, instance: &str, cfg: &SwitchConfig) -> Result<Option<Box<dyn Arbiter>>, String> {
        let Some(bound) = self.listed(instance).map(|b| b.map(str::to_string)) else {
            return Ok(None);
        };
        let entry = match bound.as_deref() {
            Some(b) => registry::find(b)
                .ok_or_else(|| format!("{instance}={b}: no block called {b:?} (known: {})", registry::names()))?,
            None => RtlArbiters::block_for(cfg)?,
        };
        let block = match self.imp {
            Impl::Rtl => (entry.make_rtl)().map_err(|e| format!("{}: {e}", entry.name))?,
            Impl::BlockModel => (entry.make_model)(),
        };
        let recorded = self.record.as_ref().map(|p| match self.instances.len() {
            1 => p.clone(),
            _ => PathBuf::from(format!("{}.{instance}", p.display())),
        });
        let block: Box<dyn Block> = match &recorded {
            Some(p) => Box::new(
                Recorder::to_file(block, entry.name, p)
                    .map_err(|e| format!("cannot record to {}: {e}", p.display()))?,
            ),
            None => block,
        };
        let status = Rc::new(RefCell::new(SwapStatus {
            instance: instance.to_string(),
            block: entry.name,
            recorded,
            ..SwapStatus::default()
        }));
        self.status.push(status.clone());
        let a = BlockArbiter::new(block, usize::from(cfg.ports), status);
        let a = a.map_err(|e| if bound.is_some() { format!("{instance}={}: {e}", entry.name) } else { e })?;
        Ok(Some(Box::new(a)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ArbMode, IslipArbiter};
    use trnsim_fabric::switch::Islip;
    use trnsim_kernel::SimRng;

    #[test]
    fn block_arbiter_on_the_model_equals_the_fabric_islip() {
        let st = Rc::new(RefCell::new(SwapStatus::default()));
        let mut b = BlockArbiter::new(IslipArbiter::new(8, 1, ArbMode::Islip), 8, st.clone()).unwrap();
        let mut f = Islip::new(8, 1);
        let (mut r, mut m1, mut m2) = (Requests::new(8), Matching::new(8), Matching::new(8));
        let mut rng = SimRng::new(1, 0);
        for _ in 0..2000 {
            r.clear();
            for i in 0..8 {
                for j in 0..8 {
                    if rng.chance(0.3) {
                        r.add(i, j);
                    }
                }
            }
            b.arbitrate(&r, &mut m1);
            f.arbitrate(&r, &mut m2);
            assert_eq!(m1, m2);
        }
        assert_eq!(st.borrow().cycles, 2001, "one reset cycle, then one per arbitration");
    }

    #[test]
    fn block_arbiter_names_a_port_that_does_not_fit() {
        let st = Rc::new(RefCell::new(SwapStatus::default()));
        let e = BlockArbiter::new(IslipArbiter::new(4, 1, ArbMode::Islip), 8, st).err().unwrap();
        assert!(e.starts_with("arbiter port req:"), "{e}");
    }

    #[test]
    fn rtl_arbiters_pick_the_registry_block_and_report_unbuilt_instances() {
        let cfg = trnsim_fabric::switch::traffic::study_config(8);
        assert_eq!(RtlArbiters::block_for(&cfg).unwrap().name, "islip_n8_i1");
        let rrm = SwitchConfig { arbiter: "round-robin".into(), iterations: 3, ..cfg.clone() };
        assert_eq!(RtlArbiters::block_for(&rrm).unwrap().name, "rrm_n8_i3");
        let none = SwitchConfig { ports: 32, ..cfg.clone() };
        assert!(RtlArbiters::block_for(&none)
            .unwrap_err()
            .starts_with("an arbiter with RTL: islip_n32_i1 is not verilated (have: islip_n4_i1"));
        let mut p = RtlArbiters::new(&["sw", "sw9"], Impl::BlockModel);
        assert!(p.arbiter("other", &cfg).unwrap().is_none());
        assert!(p.arbiter("sw", &cfg).unwrap().is_some());
        assert_eq!(p.check().unwrap_err(), "no switch instance called \"sw9\" was built");
    }

    #[test]
    fn a_bound_arbiter_block_is_used_if_it_has_the_switchs_ports() {
        let cfg = trnsim_fabric::switch::traffic::study_config(8);
        let mut p =
            RtlArbiters::new(&["sw=rrm_n8_i3", "sw2=islip_n4_i1", "sw3=link_fifo", "sw4=nope"], Impl::BlockModel);
        assert!(p.arbiter("sw", &cfg).unwrap().is_some());
        assert_eq!(p.status()[0].block, "rrm_n8_i3");
        let e = p.arbiter("sw2", &cfg).err().unwrap();
        assert!(e.starts_with("sw2=islip_n4_i1: arbiter port req:"), "{e}");
        let e = p.arbiter("sw3", &cfg).err().unwrap();
        assert_eq!(e, "sw3=link_fifo: the arbiter block has no port req");
        let e = p.arbiter("sw4", &cfg).err().unwrap();
        assert!(e.starts_with("sw4=nope: no block called \"nope\" (known: link_fifo, "), "{e}");
    }
}
