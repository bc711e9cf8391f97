use super::*;
use crate::sram::geometry::{PSUM, SBUF_NC_V4};
use crate::sram::pattern::Dim;
use crate::sram::test_rng::{random_pattern, XorShift};

fn run_to_end(s: &mut Sram) -> Vec<Completion> {
    let mut out = Vec::new();
    while let Some(t) = s.next_event() {
        s.advance(t);
        while let Some(c) = s.pop_completed() {
            out.push(c);
        }
    }
    out
}

#[test]
fn lone_access_finishes_at_start_plus_overhead_elements_and_latency() {
    let g = SBUF_NC_V4.geometry; // overhead 60, latency 4
    for (dims, elems, cost) in [(vec![Dim::new(1000, 1)], 1000, 1), (vec![Dim::new(10, 400), Dim::new(50, 8)], 500, 2)]
    {
        let mut s = Sram::new("sbuf", g, &["act"]).expect("valid");
        let p = AccessPattern::new(0, 128, 0, 4, &dims).expect("dims");
        let id = s.start(ClientId(0), &p, false, Cycles(7)).expect("valid access");
        let done = run_to_end(&mut s);
        assert_eq!(done.len(), 1);
        assert_eq!((done[0].id, done[0].finish), (id, Cycles(7 + 60 + elems * cost + 4)));
        assert_eq!(s.stats().clients[0].read_bytes, 128 * 4 * elems);
        assert_eq!(s.stats().stepped_cycles, 0, "an uncontended access is never stepped");
    }
}

#[test]
fn a_clients_accesses_stream_in_order_and_overlap_overhead() {
    let mut s = Sram::new("psum", PSUM.geometry, &["pe"]).expect("valid");
    let p = AccessPattern::contiguous(0, 128, 0, 4, 100);
    let a = s.start(ClientId(0), &p, true, Cycles(0)).expect("valid");
    let b = s.start(ClientId(0), &p, true, Cycles(10)).expect("valid");
    let done = run_to_end(&mut s);
    // a streams 60..160, b's overhead ends at 70 but it streams 160..260; latency 2.
    assert_eq!(done.iter().map(|c| (c.id, c.finish.0)).collect::<Vec<_>>(), [(a, 162), (b, 262)]);
}

#[test]
fn disjoint_quarters_share_a_bank_without_conflict() {
    let mut s = Sram::new("psum", PSUM.geometry, &["a", "b"]).expect("valid");
    s.start(ClientId(0), &AccessPattern::contiguous(0, 32, 0, 4, 200), false, Cycles(0)).expect("valid");
    s.start(ClientId(1), &AccessPattern::contiguous(32, 32, 0, 4, 200), false, Cycles(0)).expect("valid");
    let done = run_to_end(&mut s);
    assert_eq!(done.iter().map(|c| c.finish.0).collect::<Vec<_>>(), [262, 262]);
    assert_eq!(s.stats().clients[0].stall_cycles + s.stats().clients[1].stall_cycles, 0);
}

#[test]
fn start_refuses_bad_requests_and_changes_nothing() {
    let g = PSUM.geometry;
    assert!(matches!(Sram::new("p", g, &["a", "a"]), Err(SramError::Client { .. })));
    assert!(matches!(Sram::new("p", g, &[]), Err(SramError::Client { .. })));
    let bad = SramGeometry { banks: 0, ..g };
    assert!(matches!(Sram::new("p", bad, &["a"]), Err(SramError::Geometry { error, .. }) if error.field == "banks"));
    let mut s = Sram::new("nc0.psum", g, &["pe"]).expect("valid");
    let p = AccessPattern::contiguous(0, 128, 0, 4, 8);
    assert!(matches!(s.start(ClientId(1), &p, false, Cycles(0)), Err(SramError::Client { .. })));
    let wide = AccessPattern::contiguous(0, 128, 0, 4, 4097);
    let e = s.start(ClientId(0), &wide, false, Cycles(0)).expect_err("leaves the partition");
    assert!(matches!(&e, SramError::Pattern { client, error, .. } if client == "pe" && error.field == "dims"));
    assert_eq!(
        e.to_string(),
        "sram \"nc0.psum\": access pattern from \"pe\": dims: touch bytes 0..16388, outside the 16384-byte partition"
    );
    s.advance(Cycles(100));
    let e = s.start(ClientId(0), &p, false, Cycles(99)).expect_err("past");
    assert_eq!(e, SramError::TimeWentBack { memory: "nc0.psum".into(), now: Cycles(100), requested: Cycles(99) });
    assert_eq!(s.outstanding(), 0);
}

/// A small memory where random accesses conflict often: 4 banks interleaved every 64 bytes,
/// one read and one write port.
const TINY: SramGeometry = SramGeometry {
    partitions: 128,
    partition_bytes: 4096,
    banks: 4,
    bank_interleave_bytes: 64,
    read_ports: 1,
    write_ports: 1,
    port_bytes: 4,
    access_latency_cycles: 1,
    static_overhead_cycles: 3,
    full_rate_max_stride_bytes: 16,
    strided_port_cycles: 2,
};

/// Random accesses (start cycle, client, pattern, write) in start order.
fn random_mix(seed: u64, g: &SramGeometry, clients: usize) -> Vec<(u64, u32, AccessPattern, bool)> {
    let mut rng = XorShift::new(seed);
    let mut t = 0;
    (0..rng.range(1, 20))
        .map(|_| {
            t += rng.range(0, 25) as u64;
            let p = random_pattern(&mut rng, g, 7, 40);
            (t, rng.range(0, clients as i64 - 1) as u32, p, rng.range(0, 2) == 0)
        })
        .collect()
}

/// Runs `mix`, driving by `next_event` (fast) or only by the start cycles (stepped).
fn run_mix(
    g: SramGeometry,
    clients: &[&str],
    mix: &[(u64, u32, AccessPattern, bool)],
    fast: bool,
) -> (Vec<Completion>, SramStats) {
    let mut s = Sram::new("m", g, clients).expect("valid");
    s.set_fast_forward(fast);
    let mut out = Vec::new();
    for &(t, c, p, w) in mix {
        while let Some(e) = s.next_event().filter(|&e| fast && e.0 <= t) {
            s.advance(e);
            out.extend(std::iter::from_fn(|| s.pop_completed()));
        }
        s.start(ClientId(c), &p, w, Cycles(t)).expect("valid access");
    }
    out.extend(run_to_end(&mut s));
    let mut stats = s.stats().clone();
    stats.stepped_cycles = 0;
    (out, stats)
}

#[test]
fn fast_forward_equals_per_cycle_stepping_on_random_mixes() {
    let names = ["pe", "act", "dve", "pool", "dma0", "dma1"];
    let (mut stalls, mut busy) = (0, 0);
    for seed in 0..400 {
        let g = [TINY, PSUM.geometry, SBUF_NC_V4.geometry][seed as usize % 3];
        let clients = &names[..1 + (seed as usize / 3) % names.len()];
        let mix = random_mix(seed, &g, clients.len());
        let (fast, fast_stats) = run_mix(g, clients, &mix, true);
        let (slow, slow_stats) = run_mix(g, clients, &mix, false);
        assert_eq!(fast.len(), mix.len(), "seed {seed}");
        assert_eq!(fast, slow, "seed {seed}");
        assert_eq!(fast_stats, slow_stats, "seed {seed}");
        stalls += fast_stats.clients.iter().map(|c| c.stall_cycles).sum::<u64>();
        busy += fast_stats.busy_cycles;
    }
    assert!(stalls > 0 && busy > stalls);
}

#[test]
fn contention_is_stepped_and_fair() {
    // Three readers on one PSUM bank (1 read port): each gets a third of the cycles.
    let clients = ["a", "b", "c"];
    let mut s = Sram::new("psum", PSUM.geometry, &clients).expect("valid");
    for c in 0..3 {
        s.start(ClientId(c), &AccessPattern::contiguous(0, 128, 0, 4, 300), false, Cycles(0)).expect("valid");
    }
    let done = run_to_end(&mut s);
    let last = done.iter().map(|c| c.finish.0).max().unwrap_or(0);
    assert_eq!(last, 60 + 900 + 2);
    for c in &s.stats().clients {
        assert_eq!((c.read_bytes, c.stall_cycles), (300 * 128 * 4, c.stream_cycles - 300));
    }
    assert_eq!(s.stats().bank_stall_cycles[0], 3 * 900 - 900 - (1 + 2));
}

/// A kernel component driving the memory event-style: it wakes only at the memory's next event
/// or its own next start, as an engine would.
struct Driver {
    sram: Sram,
    todo: Vec<(u64, u32, AccessPattern, bool)>,
    done: Vec<Completion>,
}

impl trnsim_kernel::Component for Driver {
    fn tick(&mut self, cx: &mut trnsim_kernel::Ctx<'_>) -> trnsim_kernel::Activity {
        let now = cx.cycle();
        self.sram.advance(now);
        self.done.extend(std::iter::from_fn(|| self.sram.pop_completed()));
        while let Some(&(t, c, p, w)) = self.todo.first().filter(|a| a.0 == now.0) {
            self.sram.start(ClientId(c), &p, w, Cycles(t)).expect("valid access");
            self.todo.remove(0);
        }
        let next = self.todo.first().map(|a| a.0).into_iter().chain(self.sram.next_event().map(|c| c.0)).min();
        if let Some(t) = next {
            cx.wake_after(Cycles(t - now.0));
        }
        trnsim_kernel::Activity::Idle
    }
    fn report(&self, out: &mut StatsWriter<'_>) {
        self.sram.report(out);
    }
}

#[test]
fn a_kernel_component_drives_it_event_style_and_reports() {
    let clients = ["pe", "act", "dve"];
    let mix = random_mix(7, &SBUF_NC_V4.geometry, clients.len());
    let (want, _) = run_mix(SBUF_NC_V4.geometry, &clients, &mix, false);
    let sram = Sram::new("sbuf", SBUF_NC_V4.geometry, &clients).expect("valid");
    let mut b = trnsim_kernel::SimBuilder::new();
    let clk = b.clock("sbuf", trnsim_kernel::Frequency::from_mhz(1400)).expect("clock");
    let id = b.add("nc0.sbuf", clk, Driver { sram, todo: mix.clone(), done: Vec::new() }).expect("add");
    let mut sim = b.build().expect("build");
    sim.run_cycles(clk, 100_000).expect("run");
    let driver = sim.component::<Driver>(id).expect("driver");
    assert_eq!(driver.done, want);
    let r = sim.report();
    let read: u64 = mix.iter().filter(|a| !a.3).map(|a| a.2.bytes()).sum();
    assert_eq!(r.int("nc0.sbuf", "read_bytes"), Some(read));
    let accesses: u64 = clients.iter().map(|c| r.int("nc0.sbuf", &format!("{c}_accesses")).unwrap_or(0)).sum();
    assert_eq!(accesses, mix.len() as u64);
    assert!(r.get("nc0.sbuf", "bank15_stall_cycles").is_some());
    assert!(r.get("nc0.sbuf", "pe_latency_cycles_p99").is_some());
}

/// Records a hooked bank's cycles and checks each against the port rule.
struct Recorder {
    bank: u32,
    ports: (u32, u32),
    log: std::rc::Rc<std::cell::RefCell<(u64, u64, u64)>>,
    last: Option<u64>,
}

impl crate::sram::BankPortHook for Recorder {
    fn bank(&self) -> u32 {
        self.bank
    }
    fn cycle(&mut self, now: u64, reqs: &[crate::sram::PortRequest], stalls: u64) {
        assert!(self.last.is_none_or(|l| now > l), "cycles increase");
        self.last = Some(now);
        // Replays the rule: in visiting order, granted iff every group has a port left.
        let mut used = [[0u32; 16]; 2];
        for r in reqs {
            let gs = (0..16).filter(|g| r.groups & (1 << g) != 0);
            let limit = if r.write { self.ports.1 } else { self.ports.0 };
            let fits = gs.clone().all(|g| used[usize::from(r.write)][g] < limit);
            assert_eq!(fits, r.granted, "cycle {now}: {reqs:?}");
            if fits {
                gs.for_each(|g| used[usize::from(r.write)][g] += 1);
            }
        }
        let mut l = self.log.borrow_mut();
        l.0 += 1;
        l.1 += reqs.iter().filter(|r| !r.granted).count() as u64;
        l.2 = stalls;
    }
}

#[test]
fn a_bank_hook_sees_every_arbitrated_cycle_of_its_bank_and_changes_nothing() {
    let names = ["pe", "act", "dve", "pool", "dma0", "dma1"];
    let mut seen = 0;
    for seed in 0..120 {
        let g = [TINY, PSUM.geometry, SBUF_NC_V4.geometry][seed as usize % 3];
        let mix = random_mix(seed, &g, names.len());
        let plain = run_mix(g, &names, &mix, true);
        let bank = (seed as u32 / 3) % g.banks;
        let log = std::rc::Rc::new(std::cell::RefCell::new((0, 0, 0)));
        let mut s = Sram::new("m", g, &names).expect("valid");
        let hook = Recorder { bank, ports: (g.read_ports, g.write_ports), log: log.clone(), last: None };
        s.attach_bank_hook(Box::new(hook)).expect("bank exists");
        let mut out = Vec::new();
        for &(t, c, p, w) in &mix {
            s.start(ClientId(c), &p, w, Cycles(t)).expect("valid access");
            out.extend(std::iter::from_fn(|| s.pop_completed()));
        }
        out.extend(run_to_end(&mut s));
        let mut stats = s.stats().clone();
        stats.stepped_cycles = 0;
        assert_eq!((out, stats), plain, "seed {seed}: the hook changed the run");
        let (cycles, refused, stalls) = *log.borrow();
        assert_eq!(refused, s.stats().bank_stall_cycles[bank as usize], "seed {seed}");
        assert_eq!(stalls, refused, "seed {seed}");
        seen += cycles;
    }
    assert!(seen > 1000, "hooked cycles seen: {seen}");
    let mut s = Sram::new("m", TINY, &names).expect("valid");
    let hook = Recorder { bank: 4, ports: (1, 1), log: Default::default(), last: None };
    assert_eq!(s.attach_bank_hook(Box::new(hook)).unwrap_err(), "m: bank 4 does not exist (banks 0..4)");
}
