//! Coverage: bins, crosses, guards, sequences and merging.
use super::*;

fn ports() -> Vec<PortInfo> {
    vec![
        PortInfo { name: "a", width: 4, input: true },
        PortInfo { name: "b", width: 1, input: false },
        PortInfo { name: "c", width: 1, input: false },
    ]
}

#[test]
fn every_kind_of_bin_counts_what_it_says() {
    let covers = vec![
        Cover::ranges("a.range", Expr::port("a"), &[("low", 0, 3), ("high", 4, 15)]),
        Cover::bits("a.bits", "a"),
        Cover::lanes("a.lanes", "a", 2, 2, 4),
        Cover::transitions("b.edges", Expr::port("b"), &[(0, 1), (1, 0)]),
        Cover::cross("bxc", vec![("b", Expr::port("b")), ("c", Expr::port("c"))], &[3]),
    ];
    let mut c = Coverage::new(&covers, &ports()).unwrap();
    c.sample(&[0b0001, 0, 0]);
    c.sample(&[0b0110, 1, 0]);
    c.sample(&[0b1110, 1, 1]); // b & c: ignored
    let r = c.report();
    assert_eq!(r.points[0].hit, 2);
    assert_eq!(r.points[1].hit, 4, "bits 0..3 all seen");
    assert_eq!(r.points[2].hit, 5, "lane0 in {{1,2}}, lane1 in {{0,1,3}}");
    assert_eq!((r.points[3].bins[0].hits, r.points[3].bins[1].hits), (1, 0));
    assert_eq!(r.points[4].bins.len(), 3, "the ignored combination has no bin");
    assert_eq!(r.holes().iter().filter(|h| h.starts_with("b.edges")).count(), 1);
    assert!(r.table(4).contains("holes: "));
    assert!(Coverage::new(&[Cover::bits("x", "nope")], &ports()).err().unwrap().contains("no port nope"));
    let huge = Cover::lanes("huge", "a", 1 << 20, 4, 16);
    assert!(Coverage::new(&[huge], &ports()).err().unwrap().contains("bins"));
}

#[test]
fn merging_runs_adds_hits_by_point_and_bin_name() {
    let covers = vec![Cover::ranges("a.range", Expr::port("a"), &[("low", 0, 3), ("high", 4, 15)])];
    let run = |vals: &[u128]| {
        let mut c = Coverage::new(&covers, &ports()).unwrap();
        for &a in vals {
            c.sample(&[a, 0, 0]);
        }
        c.report()
    };
    let (mut low, high) = (run(&[1, 2]), run(&[9]));
    assert_eq!((low.hit, high.hit), (1, 1));
    low.merge(&high);
    assert_eq!((low.hit, low.bins, low.percent()), (2, 2, 100.0));
    assert_eq!((low.points[0].bins[0].hits, low.points[0].bins[1].hits), (2, 1));
    // A point only the other run has is kept, with its hits.
    let other = vec![Cover::bits("b.bits", "b")];
    let mut c = Coverage::new(&other, &ports()).unwrap();
    c.sample(&[0, 1, 0]);
    low.merge(&c.report());
    assert_eq!((low.points.len(), low.hit, low.bins), (2, 3, 3));
}

#[test]
fn any_is_true_when_some_term_is() {
    // "some lane of a at 3, or c": a term per lane.
    let any = Expr::Any(vec![
        Expr::Eq(Box::new(Expr::Lane("a", 0, 2)), 3),
        Expr::Eq(Box::new(Expr::Lane("a", 1, 2)), 3),
        Expr::port("c"),
    ]);
    let mut c = Coverage::new(&[Cover::values("any", any, 0..=1)], &ports()).unwrap();
    for (v, hit) in [([0b0110, 0, 0], 0), ([0b1100, 0, 0], 1), ([0, 0, 1], 1), ([0b0011, 1, 0], 1)] {
        let before = c.report().points[0].bins[1].hits;
        c.sample(&v);
        assert_eq!(c.report().points[0].bins[1].hits - before, hit, "{v:?}");
    }
}

#[test]
fn gt_compares_two_fields() {
    // "lane 1 of a above lane 0".
    let gt = Expr::Gt(Box::new(Expr::Lane("a", 1, 2)), Box::new(Expr::Lane("a", 0, 2)));
    let mut c = Coverage::new(&[Cover::values("gt", gt, 0..=1)], &ports()).unwrap();
    for (v, hit) in [([0b0110, 0, 0], 0), ([0b1001, 0, 0], 1), ([0b1111, 0, 0], 0), ([0b0100, 0, 0], 1)] {
        let before = c.report().points[0].bins[1].hits;
        c.sample(&v);
        assert_eq!(c.report().points[0].bins[1].hits - before, hit, "{v:?}");
    }
}

#[test]
fn a_guard_samples_only_where_it_holds_and_constants_and_negation_evaluate() {
    // a's values only while b is 0 (`iff (!b)`); a transition spans sampled cycles only.
    let covers = vec![
        Cover::values("a.when_b_low", Expr::port("a"), 0..=3).iff(!Expr::port("b")),
        Cover::transitions("a.arcs_when_b_low", Expr::port("a"), &[(1, 3)]).iff(!Expr::port("b")),
        Cover::ranges("a_gt_5", Expr::Gt(Box::new(Expr::port("a")), Box::new(Expr::Const(5))), &[("yes", 1, 1)]),
    ];
    let mut c = Coverage::new(&covers, &ports()).unwrap();
    for (a, b) in [(1, 0), (2, 1), (3, 0), (0, 1), (6, 1)] {
        c.sample(&[a, b, 0]);
    }
    let r = c.report();
    let hits = |p: usize| r.points[p].bins.iter().map(|b| b.hits).collect::<Vec<_>>();
    assert_eq!(hits(0), [0, 1, 0, 1], "2 and 0 were sampled with b high: not counted");
    assert_eq!(hits(1), [1], "1 then (2, guarded out) then 3: the arc 1->3 over sampled cycles");
    assert_eq!(hits(2), [1]);
    let bad = vec![Cover::bits("x", "a").iff(Expr::port("nope"))];
    assert!(Coverage::new(&bad, &ports()).err().unwrap().contains("nope"));
}

#[test]
fn sequences_count_each_time_the_last_values_match() {
    let covers = vec![Cover::sequences("a.seq", Expr::port("a"), &[&[0, 1, 2], &[2, 2], &[5, 5, 5, 5]])];
    let mut c = Coverage::new(&covers, &ports()).unwrap();
    for a in [0, 1, 2, 2, 2, 0, 1, 2] {
        c.sample(&[a, 0, 0]);
    }
    let r = c.report();
    assert_eq!(r.points[0].bins.iter().map(|b| b.bin.as_str()).collect::<Vec<_>>(), ["0=>1=>2", "2=>2", "5=>5=>5=>5"]);
    assert_eq!(r.points[0].bins.iter().map(|b| b.hits).collect::<Vec<_>>(), [2, 2, 0]);
    assert!(Coverage::new(&[Cover::sequences("s", Expr::port("a"), &[&[1]])], &ports()).is_err());
}

#[test]
fn a_cross_of_value_bins_has_a_bin_per_combination() {
    let a: &[(&str, u128, u128)] = &[("low", 0, 3), ("high", 4, 15)];
    let b: &[(&str, u128, u128)] = &[("off", 0, 0), ("on", 1, 1)];
    let covers = vec![Cover::cross_bins("a x b", &[("a", Expr::port("a"), a), ("b", Expr::port("b"), b)])];
    let mut c = Coverage::new(&covers, &ports()).unwrap();
    for (x, y) in [(1, 0), (9, 1), (9, 1), (20, 1)] {
        c.sample(&[x, y, 0]);
    }
    let r = c.report();
    let bins: Vec<(&str, u64)> = r.points[0].bins.iter().map(|b| (b.bin.as_str(), b.hits)).collect();
    // 20 is in no range of a: no bin.
    assert_eq!(bins, [("a=low,b=off", 1), ("a=low,b=on", 0), ("a=high,b=off", 0), ("a=high,b=on", 2)]);
    let wide: Vec<(&str, u128, u128)> = (0..300).map(|k| ("v", k, k)).collect();
    let huge = Cover::cross_bins("big", &[("a", Expr::port("a"), &wide), ("b", Expr::port("b"), &wide)]);
    assert!(Coverage::new(&[huge], &ports()).err().unwrap().contains("bins"));
}
