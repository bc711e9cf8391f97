//! A written VCD, read back with the `vcd` crate's parser (independent of our writer's code),
//! holds exactly the valid/data/credits changes the link semantics predict.

use std::collections::BTreeMap;
use trnsim_kernel::{Activity, Component, Ctx, Dur, Frequency, InPort, LinkSpec, OutPort, SimBuilder, TraceOptions};

struct Producer {
    out: OutPort<u64>,
    next: u64,
}

impl Component for Producer {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        if self.next < 13 && cx.send(self.out, self.next).is_ok() {
            self.next += 1;
        }
        if self.next < 13 {
            Activity::Busy
        } else {
            Activity::Idle
        }
    }
}

struct Consumer {
    input: InPort<u64>,
}

impl Component for Consumer {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let _ = cx.recv(self.input);
        Activity::Idle
    }
}

/// (time ps, value) changes per signal name, last value per timestamp, unchanged values dropped.
fn read_changes(bytes: &[u8]) -> BTreeMap<String, Vec<(u64, u64)>> {
    let mut p = vcd::Parser::new(bytes);
    let header = p.parse_header().expect("vcd header parses");
    let mut names = BTreeMap::new();
    fn walk(items: &[vcd::ScopeItem], names: &mut BTreeMap<vcd::IdCode, String>) {
        for it in items {
            match it {
                vcd::ScopeItem::Scope(s) => walk(&s.items, names),
                vcd::ScopeItem::Var(v) => {
                    names.insert(v.code, v.reference.clone());
                }
                _ => {}
            }
        }
    }
    walk(&header.items, &mut names);
    let mut t = 0u64;
    let mut per: BTreeMap<String, BTreeMap<u64, u64>> = BTreeMap::new();
    for cmd in p {
        match cmd.expect("vcd body parses") {
            vcd::Command::Timestamp(ts) => t = ts,
            vcd::Command::ChangeScalar(id, v) => {
                let bit = u64::from(v == vcd::Value::V1);
                per.entry(names[&id].clone()).or_default().insert(t, bit);
            }
            vcd::Command::ChangeVector(id, v) => {
                let x = v.iter().fold(0u64, |acc, b| (acc << 1) | u64::from(b == vcd::Value::V1));
                per.entry(names[&id].clone()).or_default().insert(t, x);
            }
            _ => {}
        }
    }
    per.into_iter()
        .map(|(k, m)| {
            let mut out: Vec<(u64, u64)> = Vec::new();
            for (t, v) in m {
                if out.last().map(|l| l.1) != Some(v) {
                    out.push((t, v));
                }
            }
            (k, out)
        })
        .collect()
}

#[test]
fn vcd_of_a_credit_link_reads_back_with_the_predicted_changes() {
    let mut b = SimBuilder::new();
    let clk = b.clock("clk", Frequency::from_mhz(1000)).unwrap();
    let p = b.reserve("p", clk).unwrap();
    let c = b.reserve("c", clk).unwrap();
    let (tx, rx) = b.link::<u64>(p, "out", c, "in", LinkSpec::default().latency(1).depth(2).credit_latency(1)).unwrap();
    b.install(p, Producer { out: tx, next: 10 }).unwrap();
    b.install(c, Consumer { input: rx }).unwrap();
    let mut sim = b.build().unwrap();
    let dir = crate::common::scratch("vcd_reads_back");
    let path = dir.join("link.vcd");
    let sink = trnsim_traces::VcdWriter::create(&path).expect("create vcd");
    let link = sim.links()[0].name.clone();
    assert_eq!(link, "p.out -> c.in");
    sim.attach_trace(
        Box::new(sink),
        &TraceOptions {
            link_occupancy: false,
            signal_links: trnsim_kernel::LinkSelection::Only(vec![trnsim_kernel::LinkId::from_index(0)]),
        },
    );
    sim.run_until_idle(Dur::from_us(1)).unwrap();
    sim.finish_trace().unwrap();
    let ch = read_changes(&std::fs::read(&path).unwrap());
    // Sends at cycles 0, 1, 2 (the third uses the credit returned at cycle 2); receives at
    // 1, 2, 3 return credits visible at 2, 3, 4.
    assert_eq!(ch["valid"], [(0, 1), (3000, 0)], "{ch:?}");
    assert_eq!(ch["data"], [(0, 10), (1000, 11), (2000, 12)], "{ch:?}");
    assert_eq!(ch["credits"], [(0, 1), (1000, 0), (3000, 1), (4000, 2)], "{ch:?}");
}
