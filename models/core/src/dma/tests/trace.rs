//! Tracing: a slice per packet on the engine's track, the command's flow ended at completion,
//! and a flow started by each semaphore increment.

use super::{load, rig};
use crate::dma::DmaParams;
use crate::msg::SemOp;
use std::cell::RefCell;
use std::rc::Rc;
use trnsim_kernel::{Flow, RecordKind, Time, TraceError, TraceOptions, TraceRecord, TraceSink, TrackDecl};

#[derive(Clone, Default)]
struct Collect(Rc<RefCell<(Vec<TrackDecl>, Vec<TraceRecord>)>>);

impl TraceSink for Collect {
    fn declare(&mut self, track: &TrackDecl) -> Result<(), TraceError> {
        self.0.borrow_mut().0.push(track.clone());
        Ok(())
    }
    fn record(&mut self, rec: &TraceRecord) -> Result<(), TraceError> {
        self.0.borrow_mut().1.push(*rec);
        Ok(())
    }
    fn finish(&mut self, _end: Time) -> Result<(), TraceError> {
        Ok(())
    }
}

#[test]
fn packets_are_slices_on_engine_tracks_and_the_command_ends_its_flow() {
    // 16 partitions from 8: engines 1 and 2, 8 packets each.
    let mut r = rig(DmaParams::v4(), vec![(Time::ZERO, load(77, 0, 0, 8, 16, 4096))], false);
    let sink = Collect::default();
    r.sim.attach_trace(Box::new(sink.clone()), &TraceOptions::default());
    r.run();
    r.sim.finish_trace().unwrap();
    let (decls, recs) = &*sink.0.borrow();
    let track = |name: &str| decls.iter().find(|d| d.name == name).map(|d| d.id).unwrap();
    let packets = |t| {
        recs.iter()
            .filter(|x: &&TraceRecord| x.track == t && matches!(x.kind, RecordKind::Slice { name: "packet", .. }))
            .count()
    };
    assert_eq!(packets(track("engine1")), 8);
    assert_eq!(packets(track("engine2")), 8);
    assert_eq!(packets(track("engine0")), 0);
    let ends: Vec<_> = recs
        .iter()
        .filter_map(|x| match x.kind {
            RecordKind::Slice { name: "dma", start, end, flow: Flow::End(f), .. } => Some((f, start, end)),
            _ => None,
        })
        .collect();
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].0, 77, "the command's flow id");
    assert!(ends[0].2.since(ends[0].1).as_ns_f64() > 1300.0);
    let steps: Vec<u64> = recs
        .iter()
        .filter_map(|x| match x.kind {
            RecordKind::Instant { name: "sem_inc", flow: Flow::Step(f), .. } => Some(f),
            _ => None,
        })
        .collect();
    let sent: Vec<u64> = r
        .sem_ops()
        .iter()
        .map(|(_, op)| match op {
            SemOp::Inc { flow, .. } => *flow,
            _ => 0,
        })
        .collect();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps, sent, "each increment carries the flow its instant starts");
}
