use super::*;
use crate::block::Block;
use crate::model::LinkFifo;

fn fifo_ports() -> Vec<PortInfo> {
    LinkFifo::new(64, 4).ports().to_vec()
}

fn idx(ports: &[PortInfo], n: &str) -> usize {
    ports.iter().position(|p| p.name == n).unwrap()
}

fn library() -> Vec<Sequence> {
    let fill = Sequence::new("fill", 3)
        .item(Item::new(4, 8).set("in_valid", Dist::value(1)).set("out_ready", Dist::value(0)))
        .item(Item::new(2, 2).set("in_valid", Dist::value(0)).set("out_ready", Dist::value(1)));
    let mixed = Sequence::new("mixed", 1).item(
        Item::new(20, 40)
            .set("in_valid", Dist::new(&[(0, 0, 1), (1, 1, 3)]))
            .set("in_data", Dist::new(&[(0, 15, 1), (1 << 60, (1 << 60) + 15, 1)]))
            .set("out_ready", Dist::any()),
    );
    vec![fill, mixed]
}

fn run(seed: u64, cycles: u64) -> (Vec<Vec<u128>>, Constrained) {
    let ports = fifo_ports();
    let mut s = Constrained::new(&ports, seed, library()).unwrap();
    let mut out = Vec::new();
    for c in 0..cycles {
        let mut v = vec![0u128; ports.len()];
        s.drive(c, &mut v);
        out.push(v);
    }
    (out, s)
}

#[test]
fn draws_keep_the_declared_ranges_and_weights_and_a_seed_repeats_them() {
    let ports = fifo_ports();
    let (rows, s) = run(3, 20_000);
    assert_eq!(rows, run(3, 20_000).0, "same seed, same inputs");
    assert_ne!(rows, run(4, 20_000).0);
    let (rst, data) = (idx(&ports, "rst"), idx(&ports, "in_data"));
    assert_eq!((rows[0][rst], rows[1][rst], rows[2][rst]), (1, 1, 0), "reset in cycles 0 and 1");
    for r in &rows {
        let d = r[data];
        assert!(d <= 15 || (1 << 60..=(1 << 60) + 15).contains(&d), "in_data {d:#x} outside its ranges");
    }
    // Sequence weights 3 : 1.
    let st = s.started();
    let (fill, mixed) = (st[0].1 as f64, st[1].1 as f64);
    assert!((fill / (fill + mixed) - 0.75).abs() < 0.05, "{st:?}");
    // Within "mixed", in_valid is 1 three times in four; the two data ranges half each.
    let valid = idx(&ports, "in_valid");
    let ready = idx(&ports, "out_ready");
    let mixed_rows: Vec<&Vec<u128>> =
        rows.iter().filter(|r| r[ready] > 1 || (r[data] > 0 && r[data] < 1 << 60)).collect();
    assert!(mixed_rows.len() > 1000);
    let v = mixed_rows.iter().filter(|r| r[valid] == 1).count() as f64 / mixed_rows.len() as f64;
    assert!((v - 0.75).abs() < 0.05, "{v}");
}

#[test]
fn a_sequence_runs_its_items_in_order_for_their_cycles() {
    let ports = fifo_ports();
    let lib = vec![Sequence::new("fill", 1)
        .item(Item::new(4, 8).set("in_valid", Dist::value(1)).set("out_ready", Dist::value(0)))
        .item(Item::new(2, 2).set("in_valid", Dist::value(0)).set("out_ready", Dist::value(1)))];
    let mut s = Constrained::new(&ports, 1, lib).unwrap();
    let (valid, ready) = (idx(&ports, "in_valid"), idx(&ports, "out_ready"));
    let mut trace = String::new();
    for c in 0..200 {
        let mut v = vec![0u128; ports.len()];
        s.drive(c, &mut v);
        trace.push(if v[valid] == 1 && v[ready] == 0 { 'f' } else { 'd' });
    }
    // Runs of 4..=8 fills, each followed by exactly 2 drains.
    for run in trace.split("dd").filter(|r| !r.is_empty()) {
        assert!((4..=8).contains(&run.len()) && !run.contains('d'), "{trace}");
    }
}

#[test]
fn relations_hold_by_drawing_again_and_an_impossible_one_is_counted() {
    let ports = fifo_ports();
    fn small_sum(p: &Ports, v: &[u128]) -> bool {
        p.get(v, "in_data") + 4 * p.get(v, "out_ready") < 10
    }
    fn never(_: &Ports, _: &[u128]) -> bool {
        false
    }
    let item = Item::new(1, 1)
        .set("in_data", Dist::new(&[(0, 15, 1)]))
        .set("out_ready", Dist::any())
        .constraint("small sum", small_sum);
    let mut s = Constrained::new(&ports, 9, vec![Sequence::new("s", 1).item(item)]).unwrap();
    let (data, ready) = (idx(&ports, "in_data"), idx(&ports, "out_ready"));
    for c in 0..2000 {
        let mut v = vec![0u128; ports.len()];
        s.drive(c, &mut v);
        assert!(v[data] + 4 * v[ready] < 10, "cycle {c}: {} + 4 x {}", v[data], v[ready]);
    }
    assert!(s.unsatisfied().is_empty());
    let item = Item::new(1, 1).set("in_data", Dist::any()).constraint("never", never);
    let mut s = Constrained::new(&ports, 9, vec![Sequence::new("s", 1).item(item)]).unwrap();
    for c in 0..10 {
        s.drive(c, &mut vec![0u128; ports.len()]);
    }
    assert_eq!(s.unsatisfied(), [("never", 10)]);
}

#[test]
fn declarations_the_block_cannot_take_are_errors_naming_them() {
    let ports = fifo_ports();
    let one = |item: Item| Constrained::new(&ports, 1, vec![Sequence::new("s", 1).item(item)]).err().unwrap();
    assert_eq!(
        one(Item::new(1, 2).set("nope", Dist::any())),
        "sequence s item 0: port nope: not an input of the block"
    );
    assert_eq!(
        one(Item::new(1, 2).set("count", Dist::any())),
        "sequence s item 0: port count: not an input of the block"
    );
    assert_eq!(
        one(Item::new(1, 2).set("in_valid", Dist::new(&[(2, 3, 1)]))),
        "sequence s item 0: port in_valid: range 0x2..=0x3 is not within 1 bits"
    );
    assert_eq!(
        one(Item::new(1, 2).set("in_valid", Dist::new(&[(1, 1, 0)]))),
        "sequence s item 0: port in_valid: no range with a positive weight"
    );
    assert_eq!(one(Item::new(3, 2)), "sequence s item 0: cycles 3..=2 (1 <= lo <= hi)");
    assert!(Constrained::new(&ports, 1, vec![]).is_err());
    assert_eq!(Constrained::new(&ports, 1, vec![Sequence::new("e", 1)]).err().unwrap(), "sequence e: no items");
}
