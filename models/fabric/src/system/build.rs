//! Assembly: one component per topology node, one kernel link per physical link direction,
//! each chip's step program with the message ids its packets carry.

use super::chip::{ChipNode, Send};
use super::clock::FabricClock;
use super::packet::Packet;
use super::ports::Ports;
use super::switch::SwitchNode;
use super::{CollectiveHandles, MsgMeta};
use crate::collective::{schedule, Collective, Params};
use crate::topo::{NodeKind, Topology};
use trnsim_kernel::{ComponentId, InPort, OutPort, SimBuilder};

/// Component name of node `i`: `chipNNN` for chips, `swNNN` for switches (numbered from 0
/// among switches), zero padded to the digits of the node count (at least 3).
pub fn node_name(topo: &Topology, i: usize) -> String {
    let w = topo.nodes.len().to_string().len().max(3);
    match topo.nodes[i].kind {
        NodeKind::Chip => format!("chip{i:0w$}"),
        NodeKind::Switch => format!("sw{:0w$}", i - topo.chips),
    }
}

/// Adds the components (clock "fabric") and links of `coll` on `topo` with a per-chip buffer
/// of `size` bytes (`auto` resolved by [`Collective::resolve`]) to `b`.
pub fn build_collective(
    b: &mut SimBuilder,
    topo: &Topology,
    coll: Collective,
    size: u64,
    p: &Params,
) -> Result<CollectiveHandles, String> {
    let n = topo.chips;
    let coll = coll.resolve(n, size);
    let progs = schedule::build(coll.op, coll.algo, n, size, &topo.ring)?;
    let clock = FabricClock::for_topology(topo);
    let clk = b.clock("fabric", clock.freq).map_err(|e| e.to_string())?;
    let ids: Vec<ComponentId> = (0..topo.nodes.len())
        .map(|i| b.reserve(&node_name(topo, i), clk).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;

    // Messages in (source chip, step, send) order; each gets a slot at its destination.
    let pkt = topo.packet_bytes;
    let mut msgs = Vec::new();
    let mut inbound: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut steps: Vec<Vec<(Vec<Send>, u32)>> = Vec::with_capacity(n);
    let mut min_packet = pkt;
    for (c, prog) in progs.iter().enumerate() {
        let mut chip_steps = Vec::with_capacity(prog.len());
        for (s, step) in prog.iter().enumerate() {
            let mut sends = Vec::with_capacity(step.sends.len());
            for &(dst, bytes) in &step.sends {
                if dst == c {
                    return Err(format!("chip{c} step {s} sends to itself (not supported by the per-node build)"));
                }
                let id = u32::try_from(msgs.len()).map_err(|_| "more than 2^32 messages")?;
                let packets = bytes.div_ceil(u64::from(pkt)).max(1);
                let last = bytes - (packets - 1) * u64::from(pkt);
                min_packet = min_packet.min(last as u32);
                let rx_slot = inbound[dst].len() as u32;
                inbound[dst].push(u32::try_from(packets).map_err(|_| "message of more than 2^32 packets")?);
                msgs.push(MsgMeta { src: c, dst, bytes, tag: s as u32, rx_slot });
                sends.push(Send { dst: dst as u32, bytes, msg: id, rx_slot });
            }
            chip_steps.push((sends, step.recvs));
        }
        steps.push(chip_steps);
    }

    // One kernel link per physical link: `tx.<to>.<k>` on the sender, `rx.<from>.<k>` on the
    // receiver. A node's outputs are grouped by edge in edge order.
    let mut ins: Vec<Vec<InPort<Packet>>> = vec![Vec::new(); topo.nodes.len()];
    let mut outs: Vec<Vec<(OutPort<Packet>, u32)>> = vec![Vec::new(); topo.nodes.len()];
    let mut edge_links = Vec::with_capacity(topo.edges.len());
    // Credits return over the physical link alone: the smallest edge latency (no switch).
    let credit_ps = topo.edges.iter().map(|e| e.latency_ps).min().unwrap_or(0);
    for e in &topo.edges {
        let spec = clock.link_spec(e, min_packet, pkt, credit_ps);
        let bpc = clock.bytes_per_cycle(e);
        let (from, to) = (node_name(topo, e.from), node_name(topo, e.to));
        edge_links.push((e.from, outs[e.from].len(), e.servers as usize));
        for k in 0..e.servers {
            let (o, i) = b
                .link::<Packet>(ids[e.from], &format!("tx.{to}.{k}"), ids[e.to], &format!("rx.{from}.{k}"), spec)
                .map_err(|e| e.to_string())?;
            outs[e.from].push((o, bpc));
            ins[e.to].push(i);
        }
    }

    let mut steps = steps.into_iter();
    let mut inbound = inbound.into_iter();
    for (node, (inputs, outputs)) in ins.into_iter().zip(outs).enumerate() {
        // Candidate output links towards each chip, in (edge, link) order.
        let routes: Vec<Vec<u32>> = (0..n)
            .map(|d| {
                let mut r = Vec::new();
                for &e in topo.next_edges(node, d) {
                    let (from, off, k) = edge_links[e as usize];
                    debug_assert_eq!(from, node, "a next edge leaves its node");
                    r.extend((off..off + k).map(|l| l as u32));
                }
                r
            })
            .collect();
        let ports = Ports::new(inputs, outputs, &routes);
        let r = match topo.nodes[node].kind {
            NodeKind::Chip => {
                let (s, ib) = (steps.next().expect("one program per chip"), inbound.next().expect("one per chip"));
                b.install(ids[node], ChipNode::new(node as u32, pkt, p.step_overhead.as_ps(), ports, s, ib))
            }
            NodeKind::Switch => b.install(ids[node], SwitchNode::new(ports)),
        };
        r.map_err(|e| e.to_string())?;
    }
    Ok(CollectiveHandles {
        coll,
        size,
        clock,
        clock_id: clk,
        nodes: ids,
        chips: n,
        edge_links,
        msgs,
        edge_count: topo.edges.len(),
    })
}
