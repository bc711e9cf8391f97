//! Crossbar arbiters: which inputs connect to which outputs in one crossbar cycle.
//!
//! **Contract.** An arbiter sees only the [`Requests`] of one crossbar cycle: for each input,
//! the outputs it has a cell ready for. The switch has already removed every pair it cannot
//! serve now (an input or output still busy with a multi-cell packet, an output queue without
//! room, a packet still in the port-to-port pipeline), and in single-FIFO mode each input
//! requests at most the output of its head packet. The arbiter fills a [`Matching`] using only
//! requested pairs, at most one output per input and one input per output. It may keep private
//! state between calls (round-robin pointers) but may not read or change the switch's queues,
//! and must be deterministic (no randomness unless drawn from a generator it owns). The switch
//! checks every matching in debug builds.
//!
//! Registry: [`ARBITERS`] and [`by_name`]. One file per implementation. An arbiter from
//! elsewhere (e.g. trnsim-rtl's Verilated iSLIP) is plugged into a switch instance with
//! [`super::Switch::with_arbiter`], or into a bench with an [`ArbiterProvider`].

mod islip;
mod round_robin;

pub use islip::Islip;
pub use round_robin::RoundRobin;

use super::portset::PortSet;

/// The request matrix of one crossbar cycle: `rows[i]` = the outputs input `i` requests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requests {
    /// Per input, the requested outputs.
    pub rows: Vec<PortSet>,
}

impl Requests {
    /// No requests, for an `n`-port switch.
    pub fn new(n: usize) -> Requests {
        Requests { rows: vec![PortSet::new(n); n] }
    }
    /// Ports of the switch.
    pub fn ports(&self) -> usize {
        self.rows.len()
    }
    /// Withdraws every request.
    pub fn clear(&mut self) {
        self.rows.iter_mut().for_each(PortSet::clear);
    }
    /// Input `i` requests output `j`.
    pub fn add(&mut self, i: usize, j: usize) {
        self.rows[i].insert(j);
    }
    /// Whether nothing is requested.
    pub fn is_empty(&self) -> bool {
        self.rows.iter().all(PortSet::is_empty)
    }
    /// The transpose: per output, the inputs requesting it (into `cols`, reused).
    pub fn columns_into(&self, cols: &mut Vec<PortSet>) {
        let n = self.ports();
        if cols.len() != n {
            *cols = vec![PortSet::new(n); n];
        }
        cols.iter_mut().for_each(PortSet::clear);
        for (i, row) in self.rows.iter().enumerate() {
            for j in row.iter() {
                cols[j].insert(i);
            }
        }
    }
}

/// A crossbar configuration: `out_of[i]` = the output input `i` is connected to, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matching {
    /// Per input, its output.
    pub out_of: Vec<Option<u16>>,
}

impl Matching {
    /// The empty matching for `n` ports.
    pub fn new(n: usize) -> Matching {
        Matching { out_of: vec![None; n] }
    }
    /// Disconnects everything.
    pub fn clear(&mut self) {
        self.out_of.iter_mut().for_each(|o| *o = None);
    }
    /// Connects input `i` to output `j`.
    pub fn connect(&mut self, i: usize, j: usize) {
        self.out_of[i] = Some(j as u16);
    }
    /// Matched pairs (input, output), by input.
    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.out_of.iter().enumerate().filter_map(|(i, o)| o.map(|j| (i, j as usize)))
    }
    /// Number of matched pairs.
    pub fn size(&self) -> usize {
        self.out_of.iter().flatten().count()
    }
    /// Why this is not a legal matching for `req`, if it is not: a pair that was not
    /// requested, or an output used twice.
    pub fn check(&self, req: &Requests) -> Result<(), String> {
        let mut used = PortSet::new(req.ports());
        for (i, j) in self.pairs() {
            if !req.rows[i].contains(j) {
                return Err(format!("input {i} matched to output {j}, which it did not request"));
            }
            if used.contains(j) {
                return Err(format!("output {j} matched twice"));
            }
            used.insert(j);
        }
        Ok(())
    }
}

/// Computes one crossbar matching per call. See the module docs for the contract.
///
/// Not `Send`: an arbiter may wrap a Verilated model, which must stay on the thread that built
/// it (components are built and run on one thread, partitioned runs build one per thread).
pub trait Arbiter {
    /// Name used in configs (see [`ARBITERS`]).
    fn name(&self) -> &'static str;
    /// Fills `m` (cleared by the arbiter) with a matching of `req`.
    fn arbitrate(&mut self, req: &Requests, m: &mut Matching);
}

/// Every arbiter by config name, with what it does: the registry.
pub const ARBITERS: &[(&str, &str)] = &[
    (
        "islip",
        "iSLIP (McKeown 1999): request, round-robin grant, round-robin accept, `iterations` rounds; \
         pointers move only on first-iteration accepts, so they desynchronize",
    ),
    (
        "round-robin",
        "RRM (McKeown 1999 §II): as iSLIP but a grant pointer moves past every grant, accepted or \
         not, so pointers synchronize (about 63 % under uniform Bernoulli traffic)",
    ),
];

/// The arbiter called `name` for a switch of `ports` ports, running `iterations` rounds of
/// request-grant-accept per crossbar cycle; `None` if the name is unknown.
pub fn by_name(name: &str, ports: usize, iterations: u32) -> Option<Box<dyn Arbiter>> {
    match name {
        "islip" => Some(Box::new(Islip::new(ports, iterations))),
        "round-robin" => Some(Box::new(RoundRobin::new(ports, iterations))),
        _ => None,
    }
}

/// Supplies the arbiter of a switch instance in place of the one its config names (e.g. the
/// RTL for the instances a system config lists): `Ok(None)` keeps the config's.
pub trait ArbiterProvider {
    /// The arbiter for the switch called `instance`, configured as `cfg`.
    fn arbiter(&mut self, instance: &str, cfg: &super::SwitchConfig) -> Result<Option<Box<dyn Arbiter>>, String>;
}

/// Every switch keeps the arbiter its config names.
pub struct ConfigArbiters;

impl ArbiterProvider for ConfigArbiters {
    fn arbiter(&mut self, _: &str, _: &super::SwitchConfig) -> Result<Option<Box<dyn Arbiter>>, String> {
        Ok(None)
    }
}

/// The names of all arbiters, comma-separated (for error messages).
pub fn names() -> String {
    ARBITERS.iter().map(|a| a.0).collect::<Vec<_>>().join(", ")
}

/// The request-grant-accept loop shared by iSLIP and RRM; they differ only in how the grant
/// pointer moves (`move_on_accept_only`).
pub(crate) struct RoundRobinPointers {
    /// Per output: the input it grants first.
    pub grant: Vec<usize>,
    /// Per input: the output it accepts first.
    pub accept: Vec<usize>,
    pub iterations: u32,
    cols: Vec<PortSet>,
    grants: Vec<PortSet>,
    free_in: PortSet,
    free_out: PortSet,
}

impl RoundRobinPointers {
    pub fn new(n: usize, iterations: u32) -> Self {
        RoundRobinPointers {
            grant: vec![0; n],
            accept: vec![0; n],
            iterations: iterations.max(1),
            cols: vec![PortSet::new(n); n],
            grants: vec![PortSet::new(n); n],
            free_in: PortSet::full(n),
            free_out: PortSet::full(n),
        }
    }

    /// Runs the iterations. iSLIP moves a grant pointer one past the granted input only when
    /// the grant is accepted in the first iteration; RRM moves it past every first-iteration
    /// grant. Both move an accept pointer one past the accepted output in the first iteration.
    pub fn run(&mut self, req: &Requests, m: &mut Matching, move_on_accept_only: bool) {
        let n = req.ports();
        m.clear();
        req.columns_into(&mut self.cols);
        self.free_in = PortSet::full(n);
        self.free_out = PortSet::full(n);
        for it in 0..self.iterations {
            self.grants.iter_mut().for_each(PortSet::clear);
            let mut any = false;
            for j in self.free_out.iter() {
                if let Some(i) = self.cols[j].first_from(&self.free_in, self.grant[j]) {
                    self.grants[i].insert(j);
                    any = true;
                    if it == 0 && !move_on_accept_only {
                        self.grant[j] = (i + 1) % n;
                    }
                }
            }
            if !any {
                break;
            }
            for i in 0..n {
                let Some(j) = self.grants[i].first_from(&self.free_out, self.accept[i]) else { continue };
                m.connect(i, j);
                self.free_in.remove(i);
                self.free_out.remove(j);
                if it == 0 {
                    self.accept[i] = (j + 1) % n;
                    if move_on_accept_only {
                        self.grant[j] = (i + 1) % n;
                    }
                }
            }
        }
    }
}
