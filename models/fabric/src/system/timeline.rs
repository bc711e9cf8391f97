//! A chip's compute as a timeline: a sequence of spans of known length, run back to back from
//! time 0; at the end of each span the timeline rings its chip's collective engine once (a
//! doorbell, as a NeuronCore triggers a collective: spec §7). It is how a step whose compute
//! is known only as durations (a data-parallel backward pass, bucket by bucket) drives the
//! packet-level fabric without modelling the cores.
//!
//! Leaves out: everything inside the compute (engines, SBUF, HBM traffic, and the contention
//! of a collective's DMA traffic with it); a span's length is given, not simulated.

use trnsim_kernel::{Activity, Arg, Component, Ctx, Flow, OutPort, StatsWriter, Time};

/// The timeline component (see the module doc).
pub struct ComputeTimeline {
    /// End of each span, in picoseconds from time 0 (non-decreasing).
    ends_ps: Vec<u64>,
    /// The doorbell output to the chip's collective engine.
    doorbell: OutPort<u32>,
    /// Spans finished (their doorbell is due or sent).
    done: usize,
    /// Doorbells due but not yet sent (the link was busy).
    due: u32,
}

impl ComputeTimeline {
    /// A timeline of spans of `spans_ps` picoseconds each, ringing `doorbell` after each.
    /// Errors: a total past `u64` picoseconds.
    pub fn new(spans_ps: &[u64], doorbell: OutPort<u32>) -> Result<ComputeTimeline, String> {
        let mut at = 0u64;
        let mut ends_ps = Vec::with_capacity(spans_ps.len());
        for &s in spans_ps {
            at = at.checked_add(s).ok_or("compute timeline: total time past 2^64 ps")?;
            ends_ps.push(at);
        }
        Ok(ComputeTimeline { ends_ps, doorbell, done: 0, due: 0 })
    }

    /// When the last span ends, in picoseconds.
    pub fn end_ps(&self) -> u64 {
        self.ends_ps.last().copied().unwrap_or(0)
    }
}

impl Component for ComputeTimeline {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let t = cx.now().as_ps();
        while self.done < self.ends_ps.len() && self.ends_ps[self.done] <= t {
            let start = if self.done == 0 { 0 } else { self.ends_ps[self.done - 1] };
            if let Some(mut tr) = cx.tracer() {
                let track = tr.own_track();
                let arg = Some(Arg { key: "span", value: self.done as i64 });
                tr.slice(
                    track,
                    "compute",
                    Time::from_ps(start),
                    Time::from_ps(self.ends_ps[self.done]),
                    Flow::None,
                    arg,
                );
            }
            self.done += 1;
            self.due += 1;
            cx.progress();
        }
        if self.due > 0 && cx.send(self.doorbell, self.due).is_ok() {
            self.due = 0;
        }
        if let Some(&next) = self.ends_ps.get(self.done) {
            cx.wake_at(Time::from_ps(next));
        }
        // A doorbell the link refused is retried when its credit returns (kernel contract).
        Activity::Idle
    }

    fn has_outstanding_work(&self) -> bool {
        self.done < self.ends_ps.len() || self.due > 0
    }

    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("spans", self.ends_ps.len() as u64);
        out.count("compute_end_ps", self.end_ps());
    }
}
