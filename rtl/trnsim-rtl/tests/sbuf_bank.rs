//! The SBUF / PSUM bank (block 8): the Rust model against a plain reference of the SRAM timing
//! model's port rule, and one block per bank put together as the SRAM model arbitrates against
//! trnsim-mem's `Sram` itself (always); against the Verilated RTL in lock-step, under
//! arbitrary-driven fuzzing and as the SRAM model's banks (feature `rtl`).

use trnsim_kernel::{Cycles, SimRng};
use trnsim_mem::sram::geometry::{PSUM, SBUF_NC_V4};
use trnsim_mem::sram::{AccessPattern, ClientId, Dim, Sram, SramGeometry};
use trnsim_rtl::block::Block;
use trnsim_rtl::model::{sbuf_bank_group_bits, sbuf_bank_port as P, SbufBank, SbufBankStimulus};
use trnsim_rtl::stimulus::Stimulus;

/// The rule written out as the SRAM model's arbiter states it (arbiter.rs `PortUse::try_take`):
/// ports taken per (direction, group); a request checks every group of its mask first and takes
/// one port in each only if all have one left. Returns the grants and the refusals.
fn reference(slots: &[Option<(bool, u128)>], g: u32, r: u32, w: u32) -> (u32, u32) {
    let mut taken = vec![[0u32; 2]; g as usize];
    let (mut grant, mut refused) = (0, 0);
    for (k, s) in slots.iter().enumerate() {
        let Some((write, groups)) = *s else { continue };
        let (d, ports) = if write { (1, w) } else { (0, r) };
        let mine: Vec<usize> = (0..g as usize).filter(|&q| groups >> q & 1 == 1).collect();
        if mine.iter().any(|&q| taken[q][d] >= ports) {
            refused += 1;
            continue;
        }
        for q in mine {
            taken[q][d] += 1;
        }
        grant |= 1 << k;
    }
    (grant, refused)
}

/// The groups slot `k` of ports `v` covers, as a mask: `first..=last` below `g` (none when
/// first > last), each group tested on its own.
fn groups_of_slot(v: &[u128], k: usize, g: u32) -> u128 {
    let gw = sbuf_bank_group_bits(g);
    let field = |p: usize| (v[p] >> (k as u32 * gw)) as u32 & ((1 << gw) - 1);
    let (first, last) = (field(P::REQ_FIRST), field(P::REQ_LAST));
    (0..g).filter(|&q| first <= q && q <= last).fold(0, |m, q| m | 1 << q)
}

fn drive(b: &mut SbufBank, v: &[u128]) {
    for p in [P::RST, P::REQ_VALID, P::REQ_WRITE, P::REQ_FIRST, P::REQ_LAST] {
        b.set_input(p, v[p]);
    }
    b.settle().unwrap();
}

/// Runs `cycles` of `stim` through a model of `n` slots, `g` groups, `r`/`w` ports and checks
/// every grant and the stall count against [`reference`]; returns (grants, refusals).
fn check(n: usize, g: u32, r: u32, w: u32, stim: &mut dyn Stimulus, cycles: u64) -> (u64, u64) {
    let mut b = SbufBank::new(n, g, r, w);
    let mut v = vec![0u128; b.ports().len()];
    let (mut stalls, mut grants, mut refusals) = (0u32, 0u64, 0u64);
    for c in 0..cycles {
        stim.drive(c, &mut v);
        drive(&mut b, &v);
        let rst = v[P::RST] & 1 == 1;
        let slots: Vec<Option<(bool, u128)>> = (0..n)
            .map(|k| {
                (v[P::REQ_VALID] >> k & 1 == 1 && !rst)
                    .then(|| (v[P::REQ_WRITE] >> k & 1 == 1, groups_of_slot(&v, k, g)))
            })
            .collect();
        let (grant, refused) = reference(&slots, g, r, w);
        assert_eq!(b.output(P::GRANT), u128::from(grant), "cycle {c}: slots {slots:?}");
        assert_eq!(b.output(P::STALLS), u128::from(stalls), "cycle {c}");
        grants += u64::from(grant.count_ones());
        refusals += u64::from(refused);
        for (p, x) in v.iter_mut().enumerate() {
            *x = b.output(p);
        }
        stim.observe(c, &v);
        b.posedge().unwrap();
        stalls = if rst { 0 } else { stalls.wrapping_add(refused) };
    }
    (grants, refusals)
}

/// Plain random requests over any group numbers (first above last, and numbers beyond the
/// bank's groups, too; in half the cycles each slot's pair is put in order), any valid/write
/// mix.
struct AnyRanges {
    rng: SimRng,
    n: usize,
    g: u32,
}

impl Stimulus for AnyRanges {
    fn drive(&mut self, cycle: u64, v: &mut [u128]) {
        let ordered = self.rng.chance(0.5);
        let gw = sbuf_bank_group_bits(self.g);
        v[P::RST] = u128::from(cycle < 2 || self.rng.below(3000) == 0);
        v[P::REQ_VALID] = u128::from(self.rng.next_u64() as u32) & ((1 << self.n) - 1);
        v[P::REQ_WRITE] = u128::from(self.rng.next_u64() as u32) & ((1 << self.n) - 1);
        let (mut first, mut last) = (0u128, 0u128);
        for k in 0..self.n as u32 {
            let mut f = self.rng.below(1 << gw);
            let mut l = self.rng.below(1 << gw);
            if ordered && f > l {
                (f, l) = (l, f);
            }
            first |= u128::from(f) << (k * gw);
            last |= u128::from(l) << (k * gw);
        }
        (v[P::REQ_FIRST], v[P::REQ_LAST]) = (first, last);
    }
}

#[test]
fn sbuf_bank_model_follows_the_sram_models_port_rule() {
    // The shipped stimulus on the two built configurations, then odd shapes with any ranges.
    for (r, w, seed) in [(2, 2, 1), (1, 1, 2)] {
        let (grants, refusals) = check(32, 16, r, w, &mut SbufBankStimulus::new(32, 16, seed), 100_000);
        assert!(grants > 400_000 && refusals > 200_000, "{r}R{w}W: {grants} grants, {refusals} refusals");
    }
    for (n, g, r, w) in [(8, 16, 2, 1), (5, 3, 1, 2), (1, 4, 1, 1), (32, 4, 3, 2), (6, 32, 1, 1), (18, 128, 1, 2)] {
        let mut s = AnyRanges { rng: SimRng::new(u64::from(g) * 7 + n as u64, 0), n, g };
        let (grants, refusals) = check(n, g, r, w, &mut s, 30_000);
        assert!(grants > 10_000, "{n}x{g} {r}R{w}W: {grants} grants, {refusals} refusals");
        assert!(n == 1 || refusals > 1_000, "{n}x{g} {r}R{w}W: {grants} grants, {refusals} refusals");
    }
}

#[test]
fn sbuf_bank_reactive_clients_follow_the_rule_and_retry() {
    let mut s = trnsim_rtl::model::SbufBankClients::new(32, 16, 5);
    let (grants, refusals) = check(32, 16, 1, 1, &mut s, 100_000);
    assert!(grants > 50_000 && refusals > 50_000, "{grants} grants, {refusals} refusals");
}

/// One access of the check against the SRAM timing model below.
struct Access {
    client: usize,
    start: u64,
    pattern: AccessPattern,
    write: bool,
}

/// A valid random access: a partition range as the compute engines' start rules or a DMA
/// engine's 8 partitions allow, FP32 or BF16 elements, a contiguous or strided run (strided:
/// two port cycles per element) from the first 128 bytes of the partition.
fn random_access(rng: &mut SimRng, geom: &SramGeometry, client: usize, start: u64) -> Access {
    loop {
        let (ps, n, dma) = match rng.below(5) {
            0 => (0, 128, false),
            1 => (64 * rng.below(2) as u32, 64, false),
            2 => (32 * rng.below(4) as u32, 1 + rng.below(32) as u32, false),
            3 => (0, 65 + rng.below(63) as u32, false),
            _ => (8 * rng.below(16) as u32, 8, true),
        };
        let e = [2, 4][rng.below(2) as usize];
        let len = 1 + rng.below(40) as u16;
        let stride = [1, 1, 2, 8][rng.below(4) as usize];
        // A hot 128 bytes of the partition (two banks of 64-byte interleaving): accesses meet.
        let offset = e * rng.below(u64::from(128 / e)) as u32;
        let Ok(mut p) = AccessPattern::new(ps, n, offset, e, &[Dim::new(len, stride)]) else { continue };
        if dma {
            p = p.for_dma();
        }
        if p.validate(geom).is_ok() {
            return Access { client, start, pattern: p, write: rng.chance(0.5) };
        }
    }
}

/// The SRAM timing model's arbitration rebuilt from one block per bank (`make()`, a model or the
/// RTL, 32 slots of 16 groups with the geometry's ports): each cycle the clients whose head
/// access is past its static overhead are visited in the model's rotating order, each presents
/// its current element's bank and groups (the model's group mask, a contiguous range, as its
/// first and last group) in the next slot of that bank's block, and the blocks' grants move the
/// elements. Returns each access's finish cycle (in start order), each bank's stall count from
/// its block, and the most requests one bank had in a cycle.
fn sram_from_blocks<B: Block>(
    geom: &SramGeometry,
    clients: usize,
    accesses: &[Access],
    mut make: impl FnMut() -> B,
) -> (Vec<u64>, Vec<u64>, usize) {
    let banks = geom.banks as usize;
    let mut blocks: Vec<B> = (0..banks).map(|_| make()).collect();
    // Ports by name (the RTL's order is Verilator's, not the model's).
    let port = |n: &str| blocks[0].ports().iter().position(|p| p.name == n).unwrap();
    let [rst, valid, write, first, last, grant, stalls] =
        ["rst", "req_valid", "req_write", "req_first", "req_last", "grant", "stalls"].map(port);
    // Per client: (access index, units done) of its queued accesses, in start order.
    let mut queues: Vec<std::collections::VecDeque<(usize, u64)>> = vec![Default::default(); clients];
    let mut finish = vec![0u64; accesses.len()];
    let (mut next, mut done, mut priority, mut c, mut most) = (0, 0, 0, 0u64, 0);
    let groups_of = |p: &AccessPattern| {
        let (q, lo, hi) = (geom.group(), p.partition_start, p.partition_start + p.partitions);
        (0..16u32).filter(|k| lo < (k + 1) * q && hi > k * q).fold(0u16, |m, k| m | 1 << k)
    };
    // The mask as the range the block takes: first and last group, the mask being contiguous.
    let range_of = |m: u16| {
        let (lo, hi) = (m.trailing_zeros(), 15 - m.leading_zeros());
        assert_eq!(u32::from(m), (2u32 << hi) - (1 << lo), "groups {m:#06x} are one contiguous range");
        (u128::from(lo), u128::from(hi))
    };
    let ready = |a: &Access| a.start + u64::from(geom.static_overhead_cycles);
    for b in &mut blocks {
        b.set_input(rst, 1);
        b.settle().unwrap();
        b.posedge().unwrap();
        b.set_input(rst, 0);
    }
    while done < accesses.len() {
        while next < accesses.len() && accesses[next].start <= c {
            queues[accesses[next].client].push_back((next, 0));
            next += 1;
        }
        let order: Vec<usize> = (0..clients)
            .map(|j| (priority + j) % clients)
            .filter(|&ci| queues[ci].front().is_some_and(|&(i, _)| ready(&accesses[i]) <= c))
            .collect();
        if order.is_empty() {
            let heads = queues.iter().filter_map(|q| q.front()).map(|&(i, _)| ready(&accesses[i]));
            c = heads.chain(accesses.get(next).map(|a| a.start)).min().expect("work left");
            continue;
        }
        // Each bank's slots: (client, write, groups) in visiting order.
        let mut slots: Vec<Vec<usize>> = vec![Vec::new(); banks];
        let mut inputs = vec![(0u128, 0u128, 0u128, 0u128); banks];
        for &ci in &order {
            let (i, units) = queues[ci][0];
            let a = &accesses[i];
            let elem = units / a.pattern.port_cycles_per_element(geom);
            let bank = geom.bank_of(a.pattern.offset_of(elem)) as usize;
            let k = slots[bank].len() as u32;
            let (v, wr, f, l) = &mut inputs[bank];
            let (lo, hi) = range_of(groups_of(&a.pattern));
            *v |= 1 << k;
            *wr |= u128::from(a.write) << k;
            *f |= lo << (4 * k);
            *l |= hi << (4 * k);
            slots[bank].push(ci);
        }
        most = most.max(slots.iter().map(Vec::len).max().unwrap_or(0));
        for (b, block) in blocks.iter_mut().enumerate() {
            let (v, wr, f, l) = inputs[b];
            block.set_input(valid, v);
            block.set_input(write, wr);
            block.set_input(first, f);
            block.set_input(last, l);
            block.settle().unwrap();
            let granted = block.output(grant);
            for (k, &ci) in slots[b].iter().enumerate() {
                if granted >> k & 1 == 1 {
                    let (i, units) = &mut queues[ci][0];
                    let a = &accesses[*i];
                    *units += 1;
                    if *units == a.pattern.elements_per_partition() * a.pattern.port_cycles_per_element(geom) {
                        finish[*i] = c + 1 + u64::from(geom.access_latency_cycles);
                        queues[ci].pop_front();
                        done += 1;
                    }
                }
            }
            block.posedge().unwrap();
        }
        priority = (order[0] + 1) % clients;
        c += 1;
    }
    (finish, blocks.iter().map(|b| b.output(stalls) as u64).collect(), most)
}

/// Clients of the SRAM in the rebuild: up to that many requests on one bank in a cycle, more
/// than half the block's 32 slots.
const CLIENTS: usize = 20;

/// 2,000 random accesses by [`CLIENTS`] clients over 4,000 cycles on `geom` with short bank
/// interleaving (so that accesses cross banks and meet) and a short static overhead, sorted by
/// start.
fn sram_workload(geom: SramGeometry, seed: u64) -> (SramGeometry, Vec<Access>) {
    let geom = SramGeometry { bank_interleave_bytes: 64, static_overhead_cycles: 6, ..geom };
    let mut rng = SimRng::new(seed, 0);
    let mut accesses: Vec<Access> = (0..2_000)
        .map(|_| {
            let (client, start) = (rng.below(CLIENTS as u64) as usize, rng.below(4_000));
            random_access(&mut rng, &geom, client, start)
        })
        .collect();
    accesses.sort_by_key(|a| a.start);
    (geom, accesses)
}

/// The blocks, one per bank, put together as the SRAM model arbitrates, give the SRAM model's
/// own results: every access's finish cycle and every bank's `bank_stall_cycles`, with the
/// model's skipping of uncontended runs on and off, on the v4 SBUF (2R/2W) and PSUM (1R/1W)
/// geometries with short bank interleaving (so that accesses cross banks).
#[test]
fn sbuf_bank_blocks_reproduce_the_sram_timing_model() {
    for (name, geom) in [("sbuf", SBUF_NC_V4.geometry), ("psum", PSUM.geometry)] {
        let (geom, accesses) = sram_workload(geom, 11);
        let names: Vec<String> = (0..CLIENTS).map(|c| format!("c{c}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let (r, w) = (geom.read_ports, geom.write_ports);
        let (finish, stalls, most) = sram_from_blocks(&geom, CLIENTS, &accesses, || SbufBank::new(32, 16, r, w));
        eprintln!(
            "{name}: {} cycles, stalls per bank {stalls:?}, up to {most} requests on a bank",
            finish.iter().max().unwrap()
        );
        assert!(most > 8, "{name}: more requests on one bank than the 8 slots of old: {most}");
        assert!(stalls.iter().sum::<u64>() > 2_000, "{name}: contention: {stalls:?}");
        for fast in [true, false] {
            let mut sram = Sram::new(name, geom, &names).unwrap();
            sram.set_fast_forward(fast);
            for a in &accesses {
                sram.start(ClientId(a.client as u32), &a.pattern, a.write, Cycles(a.start)).unwrap();
            }
            sram.advance(Cycles(finish.iter().max().unwrap() + 1));
            let mut got = vec![0u64; accesses.len()];
            while let Some(done) = sram.pop_completed() {
                got[done.id.0 as usize] = done.finish.0;
            }
            assert_eq!(got, finish, "{name} (skipping {fast}): finish cycles");
            assert_eq!(sram.stats().bank_stall_cycles, stalls, "{name} (skipping {fast}): stalls per bank");
        }
    }
}

#[cfg(feature = "rtl")]
mod rtl {
    use super::*;
    use arbitrary::{Arbitrary, Unstructured};
    use trnsim_rtl::diff::{diff, DiffConfig, DiffError};
    use trnsim_rtl::rtl::Rtl;
    use trnsim_rtl::stimulus::Replay;
    use trnsim_rtl::verilator_sys::models::{PsumBankN32G16R1W1, SbufBankN32G16R2W2};
    use trnsim_rtl::verilator_sys::Verilated;

    #[derive(Arbitrary, Debug)]
    struct Step {
        rst: u8, // reset only when 0: rare
        valid: u32,
        write: u32,
        first: u128,
        last: u128,
        /// Each slot's first and last group put in order (a range of at least one group).
        ranges: bool,
    }

    /// A fuzz case for a 32-slot, 16-group bank: steps held 1..=4 cycles.
    fn vectors(bytes: &[u8]) -> Vec<Vec<u128>> {
        let mut u = Unstructured::new(bytes);
        let mut out = Vec::new();
        while let Ok((s, rep)) = <(Step, u8)>::arbitrary(&mut u) {
            if u.is_empty() {
                break;
            }
            let mut v = vec![0u128; 8];
            v[P::RST] = (s.rst == 0) as u128;
            v[P::REQ_VALID] = s.valid as u128;
            v[P::REQ_WRITE] = s.write as u128;
            (v[P::REQ_FIRST], v[P::REQ_LAST]) = (s.first, s.last);
            if s.ranges {
                let (mut f, mut l) = (0u128, 0u128);
                for k in 0..32 {
                    let (a, b) = ((s.first >> (4 * k)) & 15, (s.last >> (4 * k)) & 15);
                    f |= a.min(b) << (4 * k);
                    l |= a.max(b) << (4 * k);
                }
                (v[P::REQ_FIRST], v[P::REQ_LAST]) = (f, l);
            }
            out.extend(std::iter::repeat_n(v, 1 + rep as usize % 4));
        }
        out
    }

    fn cases(count: u64, seed: u64) -> impl Iterator<Item = Vec<Vec<u128>>> {
        let mut rng = SimRng::new(seed, 0);
        (0..count).map(move |_| {
            let log_len = 9 + rng.below(7);
            let len = rng.below(1 << log_len) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            vectors(&bytes)
        })
    }

    #[test]
    fn sbuf_bank_n32_g16_r2w2_rtl_matches_model_for_1m_random_cycles() {
        let t = std::time::Instant::now();
        let cfg = DiffConfig::sbuf_bank(1_000_000);
        let r = diff(
            || SbufBank::new(32, 16, 2, 2),
            Rtl::<SbufBankN32G16R2W2>::new,
            || SbufBankStimulus::new(32, 16, 33),
            &cfg,
        );
        let r = r.unwrap_or_else(|e| panic!("{e}"));
        let dt = t.elapsed().as_secs_f64();
        eprintln!(
            "sbuf_bank n32 g16 r2w2: {} cycles in {dt:.2} s = {:.2} Mcycles/s",
            r.cycles,
            r.cycles as f64 / dt / 1e6
        );
    }

    #[test]
    fn psum_bank_n32_g16_r1w1_rtl_matches_model() {
        let cfg = DiffConfig::sbuf_bank(300_000);
        let r = diff(
            || SbufBank::new(32, 16, 1, 1),
            Rtl::<PsumBankN32G16R1W1>::new,
            || SbufBankStimulus::new(32, 16, 7),
            &cfg,
        );
        r.unwrap_or_else(|e| panic!("{e}"));
    }

    /// The SRAM timing model rebuilt from RTL banks (16 `SbufBankN32G16R2W2`, 8
    /// `PsumBankN32G16R1W1`) gives the same finish cycles and stalls per bank as from the models.
    #[test]
    fn rtl_banks_reproduce_the_sram_timing_model() {
        let (geom, accesses) = sram_workload(SBUF_NC_V4.geometry, 12);
        let (r, w) = (geom.read_ports, geom.write_ports);
        let model = sram_from_blocks(&geom, CLIENTS, &accesses, || SbufBank::new(32, 16, r, w));
        let rtl = sram_from_blocks(&geom, CLIENTS, &accesses, || Rtl::<SbufBankN32G16R2W2>::new().unwrap());
        assert_eq!(rtl, model, "sbuf");
        let (geom, accesses) = sram_workload(PSUM.geometry, 13);
        let model = sram_from_blocks(&geom, CLIENTS, &accesses, || SbufBank::new(32, 16, 1, 1));
        let rtl = sram_from_blocks(&geom, CLIENTS, &accesses, || Rtl::<PsumBankN32G16R1W1>::new().unwrap());
        assert_eq!(rtl, model, "psum");
        assert!(model.1.iter().sum::<u64>() > 10_000, "contention: {:?}", model.1);
    }

    #[test]
    fn sbuf_bank_port_widths_match_the_model() {
        let m = SbufBank::new(32, 16, 2, 2);
        type V = SbufBankN32G16R2W2;
        for p in m.ports() {
            let k = <V as Verilated>::port(p.name).unwrap_or_else(|| panic!("no port {}", p.name));
            assert_eq!(<V as Verilated>::PORTS[k], *p);
        }
        assert_eq!(<V as Verilated>::PORTS.len(), m.ports().len());
    }

    #[test]
    fn fuzz_sbuf_bank_rtl_never_diverges_from_model_on_arbitrary_stimulus() {
        let mut total = 0;
        for (c, vs) in cases(300, 0x5bf).enumerate() {
            let cfg = DiffConfig::sbuf_bank(vs.len() as u64);
            total += vs.len();
            let r = diff(|| SbufBank::new(32, 16, 2, 2), Rtl::<SbufBankN32G16R2W2>::new, || Replay(vs.clone()), &cfg);
            r.unwrap_or_else(|e| panic!("sbuf case {c}: {e}"));
            let r = diff(|| SbufBank::new(32, 16, 1, 1), Rtl::<PsumBankN32G16R1W1>::new, || Replay(vs.clone()), &cfg);
            r.unwrap_or_else(|e| panic!("psum case {c}: {e}"));
        }
        assert!(total > 50_000, "{total} cycles fuzzed");
    }

    /// For scripts/mutate.sh (run with `--ignored`): both configurations for
    /// `SBUF_DIFF_CYCLES` cycles (default 1M) from `SBUF_DIFF_SEED`; prints cycles-to-detection
    /// and fails on a divergence.
    #[test]
    #[ignore]
    fn sbuf_bank_diff_probe() {
        let env = |k: &str, d: u64| std::env::var(k).ok().and_then(|s| s.parse().ok()).unwrap_or(d);
        let (cycles, seed) = (env("SBUF_DIFF_CYCLES", 1_000_000), env("SBUF_DIFF_SEED", 1));
        let cfg = DiffConfig::sbuf_bank(cycles);
        let runs = [
            (
                "n32_g16_r2w2",
                diff(
                    || SbufBank::new(32, 16, 2, 2),
                    Rtl::<SbufBankN32G16R2W2>::new,
                    || SbufBankStimulus::new(32, 16, seed),
                    &cfg,
                ),
            ),
            (
                "psum_n32_g16_r1w1",
                diff(
                    || SbufBank::new(32, 16, 1, 1),
                    Rtl::<PsumBankN32G16R1W1>::new,
                    || SbufBankStimulus::new(32, 16, seed),
                    &cfg,
                ),
            ),
        ];
        let mut failed = false;
        for (name, r) in runs {
            match r {
                Ok(r) => println!("sbuf_bank {name}: {} cycles, no divergence", r.cycles),
                Err(DiffError::Diverged(d)) => {
                    println!("sbuf_bank {name}: DETECTED after {} cycles\n{d}", d.cycle + 1);
                    failed = true;
                }
                Err(e) => {
                    println!("sbuf_bank {name}: error: {e}");
                    failed = true;
                }
            }
        }
        assert!(!failed, "divergence");
    }
}
