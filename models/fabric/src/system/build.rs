//! Assembly: one component per topology node, one kernel link per physical link direction,
//! each chip's step program with the message ids its packets carry.

use super::chip::{ChipHooks, ChipNode, PhaseSteps, Send};
use super::clock::FabricClock;
use super::packet::Packet;
use super::ports::Ports;
use super::switch::SwitchNode;
use super::{CollectiveHandles, MsgMeta};
use crate::collective::schedule::{self, Program, Runs};
use crate::collective::{Collective, Params};
use crate::topo::{NodeKind, RoutingKind, Topology};
use trnsim_kernel::{ClockId, ComponentId, InPort, OutPort, SimBuilder, TrackKind};

/// Component name of node `i`: `chipNNN` for chips, `swNNN` for switches (numbered from 0
/// among switches), zero padded to the digits of the node count (at least 3). On a cluster
/// (`RoutingKind::Cluster`) names say where a node is, so that a by-name partition keeps each
/// UltraServer together: `us3.chip0200` for chips, the topology's own names for switches
/// (`us3.intra.s1.0`, `efa.leaf2`).
pub fn node_name(topo: &Topology, i: usize) -> String {
    let w = topo.nodes.len().to_string().len().max(3);
    let cluster = topo.routing == RoutingKind::Cluster;
    match topo.nodes[i].kind {
        NodeKind::Chip if cluster => format!("us{}.chip{i:0w$}", i / topo.chips_per_server.max(1)),
        NodeKind::Chip => format!("chip{i:0w$}"),
        NodeKind::Switch if cluster => topo.nodes[i].name.clone(),
        NodeKind::Switch => format!("sw{:0w$}", i - topo.chips),
    }
}

/// A topology's nodes reserved in a builder (clock "fabric", components named by
/// [`node_name`]), before anything is linked to them: a caller that hooks cores to the chips'
/// collective engines ([`build_jobs`]) reserves first, so the cores can link to the ids.
#[derive(Clone, Debug)]
pub struct Nodes {
    /// The fabric clock.
    pub clock: FabricClock,
    /// Its id in the builder.
    pub clock_id: ClockId,
    /// Component of each topology node (chips first, then switches).
    pub ids: Vec<ComponentId>,
}

/// Reserves one component per node of `topo` on a new clock "fabric".
pub fn reserve_nodes(b: &mut SimBuilder, topo: &Topology) -> Result<Nodes, String> {
    let clock = FabricClock::for_topology(topo);
    let clock_id = b.clock("fabric", clock.freq).map_err(|e| e.to_string())?;
    let ids = (0..topo.nodes.len())
        .map(|i| b.reserve(&node_name(topo, i), clock_id).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    Ok(Nodes { clock, clock_id, ids })
}

/// One collective of a sequence run by [`build_jobs`].
#[derive(Clone, Debug)]
pub struct Job {
    /// Name (reports, errors).
    pub name: String,
    /// Each chip's step program as runs of equal steps (index = chip; an empty program: the
    /// chip takes no part; [`schedule::runs_of`] makes one from a step list). The schedule
    /// contract holds within the job: a message sent in the sender's step `s` counts for the
    /// receiver's step `s` of this job.
    pub progs: Vec<Runs>,
    /// Doorbells each taking part chip waits for on *each* of its doorbell inputs before this
    /// job's first step, counted from the previous job's threshold (0: starts as soon as the
    /// previous job is complete).
    pub doorbells: u64,
}

impl Job {
    /// `coll` over all `n` chips of a topology with ring order `ring`, `size` bytes per chip
    /// (`auto` resolved), needing `doorbells` triggers.
    pub fn collective(
        name: &str,
        coll: Collective,
        n: usize,
        size: u64,
        ring: &[usize],
        doorbells: u64,
    ) -> Result<Job, String> {
        let coll = coll.resolve(n, size);
        let progs = schedule::build(coll.op, coll.algo, n, size, ring)?;
        Ok(Job::new(name, progs, doorbells))
    }

    /// `coll` over the chips `members` (their order is the ring order) of a topology with
    /// `chips` chips; the others take no part.
    pub fn among(
        name: &str,
        coll: Collective,
        chips: usize,
        members: &[usize],
        size: u64,
        doorbells: u64,
    ) -> Result<Job, String> {
        let coll = coll.resolve(members.len(), size);
        let progs = schedule::for_members(coll.op, coll.algo, chips, members, size, chips)
            .map_err(|e| format!("job {name}: {e}"))?;
        Ok(Job::new(name, progs, doorbells))
    }

    /// A job of step lists `progs` (one per chip), kept as runs of equal steps.
    pub fn new(name: &str, progs: Vec<Program>, doorbells: u64) -> Job {
        Job { name: name.into(), progs: progs.into_iter().map(schedule::runs_of).collect(), doorbells }
    }
}

/// Adds the components (clock "fabric") and links of `coll` on `topo` with a per-chip buffer
/// of `size` bytes to `b`: the same programs as [`crate::collective::run`] (`auto` resolved by
/// [`Collective::resolve_in`], the hierarchical algorithms grouped by the topology's servers).
pub fn build_collective(
    b: &mut SimBuilder,
    topo: &Topology,
    coll: Collective,
    size: u64,
    p: &Params,
) -> Result<CollectiveHandles, String> {
    let n = topo.chips;
    let coll = coll.resolve_in(n, size, Some(topo.chips_per_server));
    let progs = schedule::build_runs(coll.op, coll.algo, n, size, &topo.ring, topo.chips_per_server)?;
    let job = Job { name: coll.op.name().into(), progs, doorbells: 0 };
    let nodes = reserve_nodes(b, topo)?;
    let h = build_jobs(b, topo, &nodes, &[job], p, Vec::new(), false)?;
    Ok(CollectiveHandles {
        coll,
        size,
        clock: nodes.clock,
        clock_id: nodes.clock_id,
        nodes: nodes.ids,
        chips: n,
        edge_links: h.edge_links,
        msgs: h.msgs,
        edge_count: topo.edges.len(),
    })
}

/// What [`build_jobs`] added.
#[derive(Clone, Debug)]
pub struct JobHandles {
    /// Per topology edge: (sender node, index of its first output link, parallel links).
    pub edge_links: Vec<(usize, usize, usize)>,
    /// Every message, in (source chip, step, send) order; `tag` = the sender's step index
    /// counted over all its jobs. Empty unless the builder makes every component (a
    /// partition's builder keeps only what its own components need).
    pub msgs: Vec<MsgMeta>,
    /// Per chip, per job: (first step index, step count) in the chip's program.
    pub job_steps: Vec<Vec<(u32, u32)>>,
}

/// Installs the nodes reserved by [`reserve_nodes`] and links them: every chip runs `jobs` in
/// order (see [`ChipNode`]'s phases), chip `c` with `hooks[c]` (missing entries: no hooks).
/// With `trace_links`, every output link of every node gets a trace track (named
/// `tx.<to>.<k>`) with a slice per packet.
pub fn build_jobs(
    b: &mut SimBuilder,
    topo: &Topology,
    nodes: &Nodes,
    jobs: &[Job],
    p: &Params,
    hooks: Vec<ChipHooks>,
    trace_links: bool,
) -> Result<JobHandles, String> {
    let n = topo.chips;
    let ids = &nodes.ids;
    let clock = nodes.clock;
    for j in jobs {
        if j.progs.len() != n {
            return Err(format!("job {}: {} programs for {n} chips", j.name, j.progs.len()));
        }
    }
    // Each chip's first step index in each job.
    let mut job_steps: Vec<Vec<(u32, u32)>> = vec![Vec::with_capacity(jobs.len()); n];
    for (c, js) in job_steps.iter_mut().enumerate() {
        let mut at = 0u32;
        for j in jobs {
            let len = j.progs[c].iter().try_fold(0u32, |a, (_, k)| a.checked_add(*k)).ok_or("more than 2^32 steps")?;
            js.push((at, len));
            at = at.checked_add(len).ok_or("more than 2^32 steps")?;
        }
    }

    // Messages in (source chip, job, step, send) order; each gets a slot at its destination.
    // Ids and slots count every message; programs, inbound tables and the message list are
    // kept only for the chips this builder makes (a partition's own: `SimBuilder::builds`).
    let pkt = topo.packet_bytes;
    let all = b.builds_all();
    let makes: Vec<bool> = (0..n).map(|c| b.builds(ids[c])).collect();
    let mut msgs = Vec::new();
    let mut next_msg = 0u32;
    let mut inbound_len = vec![0u32; n];
    let mut inbound: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut phases: Vec<Vec<PhaseSteps>> = Vec::with_capacity(n);
    let mut min_packet = pkt;
    for c in 0..n {
        let mut chip_phases = Vec::with_capacity(if makes[c] { jobs.len() } else { 0 });
        let mut need = 0u64;
        for (ji, j) in jobs.iter().enumerate() {
            need += j.doorbells;
            let (first, _) = job_steps[c][ji];
            let mut chip_steps = Vec::with_capacity(if makes[c] { job_steps[c][ji].1 as usize } else { 0 });
            let steps = j.progs[c].iter().flat_map(|(step, k)| std::iter::repeat_n(step, *k as usize));
            for (s, step) in steps.enumerate() {
                let mut sends = Vec::with_capacity(if makes[c] { step.sends.len() } else { 0 });
                for &(dst, bytes) in &step.sends {
                    if dst == c {
                        return Err(format!(
                            "job {}: chip{c} step {s} sends to itself (not supported by the per-node build)",
                            j.name
                        ));
                    }
                    if dst >= n {
                        return Err(format!("job {}: chip{c} step {s} sends to chip {dst} of {n}", j.name));
                    }
                    let (dfirst, dlen) = job_steps[dst][ji];
                    if s as u32 >= dlen {
                        return Err(format!(
                            "job {}: chip{c} step {s} sends to chip{dst}, which has only {dlen} steps in the job",
                            j.name
                        ));
                    }
                    let id = next_msg;
                    next_msg = next_msg.checked_add(1).ok_or("more than 2^32 messages")?;
                    let packets = bytes.div_ceil(u64::from(pkt)).max(1);
                    let last = bytes - (packets - 1) * u64::from(pkt);
                    min_packet = min_packet.min(last as u32);
                    let rx_slot = inbound_len[dst];
                    inbound_len[dst] += 1;
                    if makes[dst] {
                        inbound[dst].push(u32::try_from(packets).map_err(|_| "message of more than 2^32 packets")?);
                    }
                    let tag = first + s as u32;
                    if all {
                        msgs.push(MsgMeta { src: c, dst, bytes, tag, rx_slot });
                    }
                    if makes[c] {
                        sends.push(Send { dst: dst as u32, bytes, msg: id, rx_slot, rx_tag: dfirst + s as u32 });
                    }
                }
                if makes[c] {
                    chip_steps.push((sends, step.recvs));
                }
            }
            if makes[c] {
                chip_phases.push(PhaseSteps { steps: chip_steps, need });
            }
        }
        phases.push(chip_phases);
    }
    // One kernel link per physical link: `tx.<to>.<k>` on the sender, `rx.<from>.<k>` on the
    // receiver. A node's outputs are grouped by edge in edge order.
    let mut ins: Vec<Vec<InPort<Packet>>> = vec![Vec::new(); topo.nodes.len()];
    let mut outs: Vec<Vec<(OutPort<Packet>, u32)>> = vec![Vec::new(); topo.nodes.len()];
    let mut edge_links = Vec::with_capacity(topo.edges.len());
    // Credits return over the physical link alone: the smallest edge latency (no switch).
    let credit_ps = topo.edges.iter().map(|e| e.latency_ps).min().unwrap_or(0);
    // Names made once per node and link index, joined into port names only where a link is
    // named (a partition names none of the links it has no end of).
    let names: Vec<String> = (0..topo.nodes.len()).map(|i| node_name(topo, i)).collect();
    let most = topo.edges.iter().map(|e| e.servers).max().unwrap_or(0);
    let ks: Vec<String> = (0..most).map(|k| k.to_string()).collect();
    for e in &topo.edges {
        let spec = clock.link_spec(e, min_packet, pkt, credit_ps);
        let bpc = clock.bytes_per_cycle(e);
        let (from, to) = (names[e.from].as_str(), names[e.to].as_str());
        edge_links.push((e.from, outs[e.from].len(), e.servers as usize));
        for k in ks.iter().take(e.servers as usize) {
            let k = k.as_str();
            let (o, i) = b
                .link::<Packet>(ids[e.from], ["tx.", to, ".", k], ids[e.to], ["rx.", from, ".", k], spec)
                .map_err(|e| e.to_string())?;
            outs[e.from].push((o, bpc));
            ins[e.to].push(i);
        }
    }

    for (c, &id) in ids.iter().enumerate().take(n) {
        let waits = jobs.iter().any(|j| j.doorbells > 0 && !j.progs[c].is_empty());
        // (A chip another partition makes may have been skipped here, hooks and all: the
        // declaration that planned the run checked it.)
        let skipped = b.in_partition() && !b.builds(id);
        if waits && !skipped && hooks.get(c).is_none_or(|h| h.doorbells.is_empty()) {
            return Err(format!("chip{c} waits for doorbells but nothing is hooked to ring it"));
        }
    }
    let mut phases = phases.into_iter();
    let mut inbound = inbound.into_iter();
    let mut hooks = hooks.into_iter();
    for (node, (inputs, outputs)) in ins.into_iter().zip(outs).enumerate() {
        if !b.builds(ids[node]) {
            // Made in another partition: no routes, queues or program here.
            if topo.nodes[node].kind == NodeKind::Chip {
                let _ = (phases.next(), inbound.next(), hooks.next());
            }
            b.elsewhere(ids[node]).map_err(|e| e.to_string())?;
            continue;
        }
        // Candidate output links towards each chip, in (edge, link) order.
        let routes: Vec<Vec<u32>> = (0..n)
            .map(|d| {
                let mut r = Vec::new();
                for e in topo.next_edges(node, d) {
                    let (from, off, k) = edge_links[e as usize];
                    debug_assert_eq!(from, node, "a next edge leaves its node");
                    r.extend((off..off + k).map(|l| l as u32));
                }
                r
            })
            .collect();
        let out_names: Vec<String> = if trace_links {
            topo.edges
                .iter()
                .filter(|e| e.from == node)
                .flat_map(|e| (0..e.servers).map(move |k| (e.to, k)))
                .map(|(to, k)| format!("tx.{}.{k}", names[to]))
                .collect()
        } else {
            Vec::new()
        };
        let mut ports = Ports::new(inputs, outputs, &routes);
        for (k, name) in out_names.iter().enumerate() {
            let track = b.track(ids[node], name, TrackKind::Slice);
            ports.set_track(k, track);
        }
        let r = match topo.nodes[node].kind {
            NodeKind::Chip => {
                let (ph, ib) = (phases.next().expect("one program per chip"), inbound.next().expect("one per chip"));
                let hk = hooks.next().unwrap_or_default();
                let overhead = p.step_overhead.as_ps();
                b.install_with(ids[node], move || Ok(ChipNode::new(node as u32, pkt, overhead, ports, ph, ib, hk)))
            }
            NodeKind::Switch => b.install_with(ids[node], move || Ok(SwitchNode::new(ports))),
        };
        r.map_err(|e| e.to_string())?;
    }
    Ok(JobHandles { edge_links, msgs, job_steps })
}
