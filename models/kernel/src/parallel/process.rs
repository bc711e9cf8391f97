//! The process backend: partitions in different processes (MPI ranks) exchange bytes through
//! a [`Transport`] once per window. The kernel knows nothing of MPI: the harness implements
//! [`Transport`] with MPI (feature `mpi`); [`LoopbackTransport`] implements it with threads,
//! so the byte path is tested in every build.
//!
//! Per window, one collective call: rank q gets from every rank its cut-link messages and
//! credits for q (rank 0 also gets its trace records), and every rank gets every rank's
//! summary words, reduced locally in rank order (deterministic). After the last window, one
//! more call brings every rank's statistics to rank 0, which merges them.

use super::part::{PartLink, PartReport};
use super::wire::{get_records, put_records, put_u32, put_u64, Names, Reader};
use super::{
    build_part, check_trace, merge, merge_records, reduce, run_part, words_of, Exchanger, Outcome, ParallelConfig,
    ParallelError, ParallelRun, PartitionTiming, Summary,
};
use crate::builder::SimBuilder;
use crate::error::{BlockedComponent, DeadlockReport};
use crate::link::LinkStats;
use crate::sim::{Simulation, Stop, TraceOptions};
use crate::stats::{Histogram, StatValue, StatsReport, TimeWeighted};
use crate::time::{Dur, Time};
use crate::trace::TraceSink;
use crate::trace_state::{Captured, TraceState};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

/// Moves bytes between the partitions of a run in different processes.
pub trait Transport {
    /// Number of ranks (= partitions).
    fn size(&self) -> u32;
    /// This rank.
    fn rank(&self) -> u32;
    /// A collective every rank calls the same number of times: `out[q]` goes to rank q
    /// (`out[rank]` is ignored) and `inbox[q]` receives what rank q sent here; `words` (the
    /// same length on every rank) are gathered from all ranks into `all`, rank-major.
    fn exchange(
        &mut self,
        out: &[Vec<u8>],
        words: &[u64],
        inbox: &mut [Vec<u8>],
        all: &mut Vec<u64>,
    ) -> Result<(), String>;
}

/// The bytes of a window's mail section with no message and no credit (end marker, count 0).
const EMPTY_SECTION: usize = 8;

/// One process's side of the exchange.
struct ByteExchanger<'a> {
    t: &'a mut dyn Transport,
    me: u32,
    out: Vec<Vec<u8>>,
    inbox: Vec<Vec<u8>>,
    all: Vec<u64>,
    touched: Vec<u32>,
    capture: Captured,
    names: Names,
    waited: Duration,
    /// Told the time reached after each window (rank 0 only).
    on_window: Option<&'a super::WindowHook>,
}

impl Exchanger for ByteExchanger<'_> {
    fn export(&mut self, sim: &mut Simulation, _k: u64) -> Result<(Time, u64), ParallelError> {
        let (mut bound, mut n) = (Time::NEVER, 0);
        for (q, out) in self.out.iter_mut().enumerate() {
            out.clear();
            if q as u32 == self.me {
                continue;
            }
            let (t, c) = sim.export_bytes_to(q as u32, out).map_err(ParallelError::Unsupported)?;
            bound = bound.min(t);
            n += c;
            // Nothing for q (no message, no credit: the 8-byte empty section) and no trace
            // records to follow: send nothing, so a quiet window can skip the byte exchange.
            if out.len() == EMPTY_SECTION && sim.core.trace.is_none() {
                out.clear();
            }
        }
        Ok((bound, n))
    }

    fn sync(
        &mut self,
        sim: &mut Simulation,
        _k: u64,
        local: &Summary,
        merger: Option<&mut TraceState>,
    ) -> Result<Summary, ParallelError> {
        let tracing = sim.core.trace.is_some();
        if tracing {
            sim.take_capture(&mut self.capture);
            if self.me != 0 {
                put_records(&mut self.out[0], &self.capture);
                self.capture.clear();
            }
        }
        let t = std::time::Instant::now();
        self.t.exchange(&self.out, &words_of(local), &mut self.inbox, &mut self.all).map_err(ParallelError::Build)?;
        self.waited += t.elapsed();
        let g = reduce(&self.all);
        let mut lists: Vec<Captured> = Vec::new();
        for q in 0..self.inbox.len() as u32 {
            if q == self.me {
                continue;
            }
            let bytes = std::mem::take(&mut self.inbox[q as usize]);
            let mut r = Reader::new(&bytes, "cut-link mail");
            if !bytes.is_empty() {
                sim.import_bytes_from(&mut r, &mut self.touched).map_err(|e| bad(q, e))?;
            }
            if tracing && self.me == 0 {
                let mut recs = Vec::new();
                get_records(&mut r, &mut self.names, &mut recs).map_err(|e| bad(q, e))?;
                lists.push(recs);
            }
            if !r.is_empty() {
                return Err(bad(q, format!("{} unexpected bytes after the window's mail", r.bytes.len())));
            }
            self.inbox[q as usize] = bytes;
        }
        sim.finish_import(&mut self.touched);
        if let Some(m) = merger {
            let mut refs: Vec<&[(Time, u32, crate::trace::TraceRecord)]> = lists.iter().map(|l| l.as_slice()).collect();
            refs.push(self.capture.as_slice());
            merge_records(m, &refs);
            self.capture.clear();
        }
        Ok(g)
    }

    fn waited(&self) -> Duration {
        self.waited
    }

    fn window_done(&self, now: Time) {
        if let Some(h) = self.on_window {
            (h.0)(now);
        }
    }
}

fn bad(q: u32, e: String) -> ParallelError {
    ParallelError::Unsupported(format!("bytes from rank {q}: {e}"))
}

/// Runs this process's partition (its rank) of the system `build` makes, split under
/// `cfg.rule` into one partition per rank (`cfg.threads` must be the transport's size), for at
/// most `limit` or until idle. Every rank must call it with the same system, configuration
/// and `tracing`; rank 0 alone passes the trace `sink`, and only rank 0 calls
/// `cfg.on_window` (under `mpirun` a rank's standard error is usually a pipe, not a
/// terminal). `cfg.report_where` filters each rank's report as it does a threaded run's.
/// Returns the merged run on rank 0 and `None` elsewhere.
pub fn run_transport<B>(
    build: B,
    cfg: &ParallelConfig,
    t: &mut dyn Transport,
    limit: Dur,
    tracing: Option<&TraceOptions>,
    sink: Option<Box<dyn TraceSink>>,
) -> Result<Option<ParallelRun>, ParallelError>
where
    B: Fn() -> Result<SimBuilder, String>,
{
    let (parts, me) = (t.size(), t.rank());
    if cfg.threads != parts {
        return Err(ParallelError::Unsupported(format!(
            "the configuration asks for {} partitions but the transport has {parts} ranks (one partition per rank)",
            cfg.threads
        )));
    }
    // Declared (nothing made) to plan, then dropped; then this rank's partition is built.
    let plan = {
        let declared = crate::BuildScope::Declare.enter(&build).map_err(ParallelError::Build)?;
        declared.plan(&cfg.rule, parts, cfg.min_lookahead)?
    };
    check_trace(tracing)?;
    let sink = if me == 0 { sink } else { None };
    let (sim, merger) = build_part(&build, &plan, me, tracing.is_some(), sink)?;
    // Every partition declares every link id: another rank's statistics name no other.
    let links = sim.core.links.refs.len();
    let mut x = ByteExchanger {
        t,
        me,
        out: vec![Vec::new(); parts as usize],
        inbox: vec![Vec::new(); parts as usize],
        all: Vec::new(),
        touched: Vec::new(),
        capture: Vec::new(),
        names: Names::default(),
        waited: Duration::ZERO,
        on_window: if me == 0 { cfg.on_window.as_ref() } else { None },
    };
    let outcome = run_part(sim, merger, &mut x, (&plan, me), limit, &|_| (), cfg.report_where.as_ref())?;
    // The partition is gone: give its memory back before the statistics arrive (rank 0 then
    // holds the merged report of the whole system, which reuses none of the partition's
    // small freed blocks).
    release_freed_memory();
    // Bring every rank's share to rank 0, one rank per round (every rank takes part in every
    // round): rank 0 decodes each share and frees its bytes before the next arrives, so it
    // holds no more than one rank's encoding besides the statistics decoded so far.
    let mut out = vec![Vec::new(); parts as usize];
    let mut results = vec![Ok(outcome)];
    for q in 1..parts {
        if me == q {
            if let Some(Ok(mine)) = results.first() {
                put_outcome(&mut out[0], mine);
            }
        }
        x.t.exchange(&out, &[], &mut x.inbox, &mut x.all).map_err(ParallelError::Build)?;
        out[0] = Vec::new();
        if me == 0 {
            let bytes = std::mem::take(&mut x.inbox[q as usize]);
            results.push(get_outcome(&mut Reader::new(&bytes, "final statistics"), links).map_err(|e| bad(q, e)));
        }
    }
    if me != 0 {
        return Ok(None);
    }
    drop(x);
    merge(plan, results).map(|(run, _)| Some(run))
}

/// Returns the heap's free pages to the operating system (glibc keeps freed memory for reuse,
/// and it would count in the process's peak resident size while the results are merged).
/// Nothing on other C libraries.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists; it is safe to call at
    // any time from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

// ---- The final statistics as bytes ----

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len() as u32);
    out.extend_from_slice(s.as_bytes());
}

fn get_str(r: &mut Reader<'_>) -> Result<String, String> {
    String::from_utf8(r.bytes_u32()?.to_vec()).map_err(|_| "a name is not UTF-8".to_string())
}

fn put_u128(out: &mut Vec<u8>, v: u128) {
    put_u64(out, v as u64);
    put_u64(out, (v >> 64) as u64);
}

fn get_u128(r: &mut Reader<'_>) -> Result<u128, String> {
    Ok(u128::from(r.u64()?) | (u128::from(r.u64()?) << 64))
}

fn put_report(out: &mut Vec<u8>, rep: &StatsReport) {
    put_u32(out, rep.owners.len() as u32);
    for (owner, stats) in &rep.owners {
        put_str(out, owner);
        put_u32(out, stats.len() as u32);
        for (name, v) in stats {
            put_str(out, name);
            match v {
                StatValue::Int(i) => {
                    out.push(0);
                    put_u64(out, *i);
                }
                StatValue::Float(f) => {
                    out.push(1);
                    put_u64(out, f.to_bits());
                }
            }
        }
    }
}

fn get_report(r: &mut Reader<'_>) -> Result<StatsReport, String> {
    let mut rep = StatsReport::default();
    for _ in 0..r.u32()? {
        let owner = get_str(r)?;
        let m = rep.owners.entry(owner).or_default();
        for _ in 0..r.u32()? {
            let name = get_str(r)?;
            let v = match r.u8()? {
                0 => StatValue::Int(r.u64()?),
                1 => StatValue::Float(f64::from_bits(r.u64()?)),
                k => return Err(format!("statistic kind {k}")),
            };
            m.insert(name, v);
        }
    }
    Ok(rep)
}

fn put_link(out: &mut Vec<u8>, s: &LinkStats) {
    for v in [s.msgs, s.bytes, s.refused, s.occupancy.level, s.occupancy.since.as_ps(), s.occupancy.max] {
        put_u64(out, v);
    }
    put_u128(out, s.occupancy.area);
    let h = &s.wait_ps;
    put_u32(out, h.buckets.len() as u32);
    for &b in &h.buckets {
        put_u64(out, b);
    }
    put_u64(out, h.count);
    put_u128(out, h.sum);
    put_u64(out, h.min);
    put_u64(out, h.max);
}

fn get_link(r: &mut Reader<'_>) -> Result<LinkStats, String> {
    let (msgs, bytes, refused) = (r.u64()?, r.u64()?, r.u64()?);
    let (level, since, max) = (r.u64()?, Time::from_ps(r.u64()?), r.u64()?);
    let area = get_u128(r)?;
    let n = r.u32()? as usize;
    if n > r.bytes.len() / 8 {
        return Err("histogram longer than its bytes".into());
    }
    let buckets = (0..n).map(|_| r.u64()).collect::<Result<Vec<_>, _>>()?;
    let wait_ps = Histogram { buckets, count: r.u64()?, sum: get_u128(r)?, min: r.u64()?, max: r.u64()? };
    let occupancy = TimeWeighted { level, since, area, max };
    Ok(LinkStats { msgs, bytes, refused, occupancy, wait_ps })
}

fn put_strs(out: &mut Vec<u8>, v: &[String]) {
    put_u32(out, v.len() as u32);
    for s in v {
        put_str(out, s);
    }
}

fn get_strs(r: &mut Reader<'_>) -> Result<Vec<String>, String> {
    (0..r.u32()?).map(|_| get_str(r)).collect()
}

fn put_outcome(out: &mut Vec<u8>, o: &Outcome<()>) {
    match &o.stop {
        Ok(Stop::Limit) => out.push(0),
        Ok(Stop::Idle) => out.push(1),
        Ok(Stop::Condition) => out.push(2),
        Err(d) => {
            out.push(3);
            put_u64(out, d.time.as_ps());
            put_u64(out, d.stalled_for.as_ps());
            put_u64(out, d.messages_in_links);
            put_u32(out, d.blocked.len() as u32);
            for b in &d.blocked {
                put_str(out, &b.name);
                put_str(out, &b.why);
            }
            put_strs(out, &d.full_links);
            put_strs(out, &d.cycle);
        }
    }
    put_u64(out, o.now.as_ps());
    put_report(out, &o.report.comps);
    put_u32(out, o.report.links.len() as u32);
    for l in &o.report.links {
        put_u32(out, l.id);
        put_link(out, &l.stats);
        out.push(l.sides);
        put_str(out, &l.name);
    }
    put_u64(out, o.report.ticks);
    put_u64(out, o.report.left_out);
    let tm = &o.timing;
    for v in [tm.components as u64, tm.ticks, tm.windows, tm.busy.as_nanos() as u64, tm.waiting.as_nanos() as u64] {
        put_u64(out, v);
    }
    put_u64(out, o.trace_records);
}

/// A rank's final statistics, read back; its links' ids must be below `n_links`.
fn get_outcome(r: &mut Reader<'_>, n_links: usize) -> Result<Outcome<()>, String> {
    let stop = match r.u8()? {
        0 => Ok(Stop::Limit),
        1 => Ok(Stop::Idle),
        2 => Ok(Stop::Condition),
        3 => {
            let (time, stalled_for, messages_in_links) = (Time::from_ps(r.u64()?), Dur::from_ps(r.u64()?), r.u64()?);
            let blocked = (0..r.u32()?)
                .map(|_| Ok(BlockedComponent { name: get_str(r)?, why: get_str(r)? }))
                .collect::<Result<Vec<_>, String>>()?;
            let (full_links, cycle) = (get_strs(r)?, get_strs(r)?);
            Err(DeadlockReport { time, stalled_for, messages_in_links, blocked, full_links, cycle })
        }
        k => return Err(format!("stop kind {k}")),
    };
    let now = Time::from_ps(r.u64()?);
    let comps = get_report(r)?;
    let mut links = Vec::new();
    for _ in 0..r.u32()? {
        let (id, stats, sides) = (r.u32()?, get_link(r)?, r.u8()?);
        if id as usize >= n_links {
            return Err(format!("link id {id} in a system of {n_links} links"));
        }
        links.push(PartLink { id, stats, sides, name: get_str(r)? });
    }
    let (ticks, left_out) = (r.u64()?, r.u64()?);
    let (components, tticks, windows, busy, waiting) = (r.u64()?, r.u64()?, r.u64()?, r.u64()?, r.u64()?);
    let timing = PartitionTiming {
        components: components as usize,
        ticks: tticks,
        windows,
        busy: Duration::from_nanos(busy),
        waiting: Duration::from_nanos(waiting),
    };
    let trace_records = r.u64()?;
    let report = PartReport { comps, links, ticks, left_out };
    Ok(Outcome { stop, now, report, timing, trace_records, inspected: () })
}

/// A [`Transport`] between threads of one process (for tests of the byte path, and as the
/// reference the MPI transport must match).
pub struct LoopbackTransport {
    rank: u32,
    shared: Arc<Loopback>,
}

struct Loopback {
    size: u32,
    /// [src * size + dst].
    mail: Vec<Mutex<Vec<u8>>>,
    words: Vec<Mutex<Vec<u64>>>,
    barrier: Barrier,
}

impl LoopbackTransport {
    /// `size` connected endpoints, one per rank.
    pub fn group(size: u32) -> Vec<LoopbackTransport> {
        let n = size as usize;
        let shared = Arc::new(Loopback {
            size,
            mail: (0..n * n).map(|_| Mutex::new(Vec::new())).collect(),
            words: (0..n).map(|_| Mutex::new(Vec::new())).collect(),
            barrier: Barrier::new(n),
        });
        (0..size).map(|rank| LoopbackTransport { rank, shared: shared.clone() }).collect()
    }
}

impl Transport for LoopbackTransport {
    fn size(&self) -> u32 {
        self.shared.size
    }
    fn rank(&self) -> u32 {
        self.rank
    }
    fn exchange(
        &mut self,
        out: &[Vec<u8>],
        words: &[u64],
        inbox: &mut [Vec<u8>],
        all: &mut Vec<u64>,
    ) -> Result<(), String> {
        let (s, me) = (&*self.shared, self.rank as usize);
        let n = s.size as usize;
        for (q, bytes) in out.iter().enumerate().filter(|(q, _)| *q != me) {
            let mut slot = s.mail[me * n + q].lock().map_err(|_| "loopback: poisoned")?;
            slot.clear();
            slot.extend_from_slice(bytes);
        }
        *s.words[me].lock().map_err(|_| "loopback: poisoned")? = words.to_vec();
        s.barrier.wait();
        all.clear();
        for (q, ib) in inbox.iter_mut().enumerate().take(n) {
            all.extend_from_slice(&s.words[q].lock().map_err(|_| "loopback: poisoned")?);
            if q != me {
                let slot = s.mail[q * n + me].lock().map_err(|_| "loopback: poisoned")?;
                ib.clear();
                ib.extend_from_slice(&slot);
            }
        }
        s.barrier.wait();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rank's final statistics come back as they went, names included, and a link id beyond
    /// the system's links is refused (it would size the merged link table).
    #[test]
    fn final_statistics_round_trip_and_a_link_id_beyond_the_system_is_refused() {
        let link = |id, name: &str| PartLink { id, stats: LinkStats::default(), sides: 1, name: name.into() };
        let report = PartReport {
            comps: StatsReport::default(),
            links: vec![link(2, "a.x -> b.y"), link(4, "")],
            ticks: 7,
            left_out: 3,
        };
        let o = Outcome {
            stop: Ok(Stop::Idle),
            now: Time::from_ps(1000),
            report,
            timing: PartitionTiming::default(),
            trace_records: 0,
            inspected: (),
        };
        let mut bytes = Vec::new();
        put_outcome(&mut bytes, &o);
        let back = get_outcome(&mut Reader::new(&bytes, "test"), 5).unwrap();
        let got: Vec<(u32, &str)> = back.report.links.iter().map(|l| (l.id, l.name.as_str())).collect();
        assert_eq!(got, [(2, "a.x -> b.y"), (4, "")]);
        assert_eq!((back.report.ticks, back.report.left_out, back.now), (7, 3, Time::from_ps(1000)));
        let err = get_outcome(&mut Reader::new(&bytes, "test"), 4).err().unwrap();
        assert_eq!(err, "link id 4 in a system of 4 links");
    }
}
