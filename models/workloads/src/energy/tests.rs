//! Energy accounting on schedules of known times: every joule is a count times its price or a
//! static power times the step, once.

use super::{account, actions, chip_static_w, Prices, DYNAMIC, PARTS};
use crate::exec::{self, Costs};
use crate::format::{self, Op};
use trnsim_system::doc::SystemDoc;

/// Compute 1000 ns, memory 500 ns, collectives 2000 ns, send/recv 700 ns.
struct Fixed;

impl Costs for Fixed {
    fn compute_ns(&mut self, _: &Op) -> Result<f64, String> {
        Ok(1000.0)
    }
    fn memory_ns(&mut self, _: &Op) -> Result<f64, String> {
        Ok(500.0)
    }
    fn comm_ns(&mut self, _: &Op, groups: &[Vec<usize>]) -> Result<Vec<f64>, String> {
        Ok(vec![2000.0; groups.len()])
    }
    fn send_recv_ns(&mut self, _: u64, pairs: &[(usize, usize)]) -> Result<Vec<f64>, String> {
        Ok(vec![700.0; pairs.len()])
    }
}

const ONE_GEMM: &str = r#"Workload(name: "g", ranks: 1, nodes: [
    (id: 0, name: "g", op: Gemm(m: 1024, k: 2048, n: 512, dtype: "fp8")),
])"#;

const TWO: &str = r#"Workload(name: "two", ranks: 2, nodes: [
    (id: 0, name: "g", op: Gemm(m: 1024, k: 2048, n: 512, dtype: "fp8")),
    (id: 1, name: "ld", op: Load(bytes: 1048576)),
    (id: 2, name: "ar", op: AllReduce((bytes: 65536)), data_deps: [0]),
])"#;

fn system(name: &str) -> (SystemDoc, trnsim_system::doc::Resolved) {
    let doc = SystemDoc::open(name).unwrap();
    let sys = doc.resolve().unwrap();
    (doc, sys)
}

#[test]
fn a_gemms_energy_is_its_counts_times_their_prices_plus_static_power() {
    let (doc, sys) = system("trn3-chip");
    let (chip, t) = (sys.chip().unwrap(), doc.energy().unwrap().unwrap());
    let c = format::parse("g.ron", ONE_GEMM).unwrap();
    let rep = exec::run(&c, 1, &mut Fixed).unwrap();
    let e = account(&c, &rep, chip, None, &t);
    let part = |n: &str| e.parts_j.iter().find(|(k, _)| k == n).unwrap().1;
    let macs = 1024.0 * 2048.0 * 512.0;
    assert_eq!(part("tensor"), macs * t.tensor_pj_per_mac.fp8 * 1e-12);
    // The HBM reads A and B, writes C, once each.
    let a = actions::of_local(&c.w.nodes[0].op, 128).unwrap();
    assert_eq!((a.hbm_read_bytes, a.hbm_write_bytes), ((1024.0 * 2048.0 + 2048.0 * 512.0), 1024.0 * 512.0));
    let dynamic = Prices::new(&t, chip).energy(&a);
    for (k, pj) in dynamic.iter().enumerate() {
        assert_eq!(e.parts_j[k].1, pj * 1e-12, "{}", PARTS[k]);
    }
    let statics = chip_static_w(&t, chip, 0);
    for (k, w) in statics.iter().enumerate() {
        assert_eq!(e.parts_j[DYNAMIC + k].1, w * 1e-6, "{}: 1000 ns of static power", PARTS[DYNAMIC + k]);
    }
    let sum: f64 = e.parts_j.iter().map(|(_, j)| j).sum();
    assert_eq!(e.total_j, sum);
    // The chip's mean power: static + the GEMM's energy over the step it fills.
    let dyn_j: f64 = dynamic.iter().sum::<f64>() * 1e-12;
    assert!((e.chip_avg_w[0] - (statics.iter().sum::<f64>() + dyn_j / 1e-6)).abs() < 1e-9);
    assert_eq!(e.chip_peak_w[0], e.chip_avg_w[0], "one span filling the step: peak = mean");
}

#[test]
fn nodes_add_without_double_counting_and_idle_chips_draw_exactly_static_power() {
    let (doc, sys) = system("trn3-gen1-ultraserver");
    let (chip, topo, t) = (sys.chip().unwrap(), sys.fabric().unwrap(), doc.energy().unwrap().unwrap());
    let c = format::parse("two.ron", TWO).unwrap();
    let rep = exec::run(&c, topo.chips, &mut Fixed).unwrap();
    let e = account(&c, &rep, chip, Some(topo), &t);
    // Each node's dynamic energy, priced alone, times the 2 ranks that run it.
    let prices = Prices::new(&t, chip);
    let mut want = [0.0f64; DYNAMIC];
    for (i, n) in c.w.nodes.iter().enumerate() {
        let a = actions::of_local(&n.op, 128).or_else(|| actions::of_comm(&c, i, Some(topo), 256)).unwrap();
        for (w, p) in want.iter_mut().zip(prices.energy(&a)) {
            *w += 2.0 * p * 1e-12;
        }
    }
    for k in 0..DYNAMIC {
        let got = e.parts_j[k].1;
        assert!((got - want[k]).abs() <= 1e-12 * want[k].abs().max(1e-30), "{}: {got} vs {}", PARTS[k], want[k]);
    }
    assert!(e.parts_j[8].1 > 0.0 && e.parts_j[9].1 > 0.0, "the all-reduce crosses links and switches");
    assert_eq!(e.chips, 64);
    assert_eq!(e.servers, 4);
    for k in 2..64 {
        assert_eq!(e.chip_avg_w[k], e.chip_static_w[k], "chip {k} runs nothing");
        assert_eq!(e.chip_peak_w[k], e.chip_static_w[k]);
    }
    assert!(e.chip_peak_w[0] > e.chip_avg_w[0], "the GEMM and the load overlap, then the all-reduce runs alone");
    let sum: f64 = e.parts_j.iter().map(|(_, j)| j).sum();
    assert_eq!(e.total_j, sum);
}

#[test]
fn the_cost_of_a_step_is_amortized_capital_plus_energy_at_the_pue() {
    let (doc, sys) = system("trn3-gen1-ultraserver");
    let (chip, topo, t) = (sys.chip().unwrap(), sys.fabric().unwrap(), doc.energy().unwrap().unwrap());
    let c = format::parse("two.ron", TWO).unwrap();
    let rep = exec::run(&c, topo.chips, &mut Fixed).unwrap();
    let e = account(&c, &rep, chip, Some(topo), &t);
    let tco = &t.tco;
    let switches = topo.nodes.iter().filter(|n| n.kind == trnsim_fabric::topo::NodeKind::Switch).count();
    assert_eq!(switches, 21);
    let ends: u32 = topo.edges.iter().map(|x| x.servers).sum();
    let capex = 64.0 * (tco.chip_usd + tco.server_usd_per_chip + tco.nic_usd)
        + 21.0 * tco.switch_usd
        + f64::from(ends) * tco.cable_usd_per_port;
    assert_eq!(e.capex_usd, capex);
    let per_step = capex * e.step_s / (tco.amortization_years * 365.25 * 86_400.0);
    let energy = e.total_j * tco.pue / 3.6e6 * tco.usd_per_kwh;
    assert!((e.cost_per_step_usd - (per_step + energy)).abs() <= 1e-15 * e.cost_per_step_usd);
}

/// On an UltraCluster, a collective between two UltraServers crosses EFA: its bytes are priced
/// at the NIC's figure (sender's and receiver's), not as NeuronLink bits; one inside an
/// UltraServer is NeuronLink only.
#[test]
fn a_collective_across_ultraservers_pays_the_efa_nics() {
    let (_, sys) = system("trn3-gen1-ultracluster-2");
    let topo = sys.fabric().unwrap();
    let per = topo.chips_per_server as u32;
    assert_eq!(topo.chips as u32, 2 * per);
    let ar = |pairs: Vec<(u32, u32)>| {
        let groups: Vec<String> = pairs.iter().map(|(a, b)| format!("[{a}, {b}]")).collect();
        let text = format!(
            r#"Workload(name: "ar", ranks: {}, groups: {{"g": [{}]}}, nodes: [
    (id: 0, name: "ar", op: AllReduce((bytes: 1048576, group: "g"))),
])"#,
            2 * per,
            groups.join(", ")
        );
        let c = format::parse("ar.ron", &text).unwrap();
        actions::of_comm(&c, 0, Some(topo), 256).unwrap()
    };
    let inside = ar((0..per).map(|k| (2 * k, 2 * k + 1)).collect());
    assert!(inside.link_bits > 0.0 && inside.efa_bytes == 0.0, "{inside:?}");
    let across = ar((0..per).map(|k| (k, k + per)).collect());
    // Two ranks a group: each puts 2 (n-1)/n = 1 x its buffer on the wire, all of it through
    // two NICs.
    assert_eq!(across.efa_bytes, 1048576.0 * 2.0, "{across:?}");
    assert_eq!(across.link_bits, 0.0, "{across:?}");
}
