//! [`Fanout`]: several trace sinks driven as one.

use trnsim_kernel::{Time, TraceError, TraceRecord, TraceSink, TrackDecl};

/// A [`TraceSink`] that forwards every call to each of its sinks, in order.
///
/// Every sink sees every call even after another one failed (so `finish` still flushes and
/// closes the healthy files); the first error is returned, and it names its sink. What it
/// leaves out: recovery; a failed sink keeps receiving calls and may fail again.
#[derive(Default)]
pub struct Fanout {
    sinks: Vec<Box<dyn TraceSink>>,
}

impl Fanout {
    /// A fanout over `sinks`.
    pub fn new(sinks: Vec<Box<dyn TraceSink>>) -> Self {
        Fanout { sinks }
    }

    /// Adds a sink after the others.
    pub fn push(&mut self, sink: Box<dyn TraceSink>) {
        self.sinks.push(sink);
    }

    /// Number of sinks.
    pub fn len(&self) -> usize {
        self.sinks.len()
    }

    /// True if there are no sinks.
    pub fn is_empty(&self) -> bool {
        self.sinks.is_empty()
    }

    fn each(&mut self, mut call: impl FnMut(&mut dyn TraceSink) -> Result<(), TraceError>) -> Result<(), TraceError> {
        let mut first = Ok(());
        for sink in &mut self.sinks {
            let result = call(sink.as_mut());
            if first.is_ok() {
                first = result;
            }
        }
        first
    }
}

impl TraceSink for Fanout {
    fn declare(&mut self, track: &TrackDecl) -> Result<(), TraceError> {
        self.each(|s| s.declare(track))
    }

    fn record(&mut self, rec: &TraceRecord) -> Result<(), TraceError> {
        self.each(|s| s.record(rec))
    }

    fn finish(&mut self, end: Time) -> Result<(), TraceError> {
        self.each(|s| s.finish(end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;
    use trnsim_kernel::{RecordKind, TrackId, TrackKind};

    /// Logs calls into a shared vector; fails every call if `fail` is set.
    struct Probe {
        name: &'static str,
        fail: bool,
        log: Rc<RefCell<Vec<String>>>,
    }

    impl Probe {
        fn call(&mut self, what: &str) -> Result<(), TraceError> {
            self.log.borrow_mut().push(format!("{} {what}", self.name));
            if self.fail {
                return Err(TraceError { sink: self.name.into(), message: what.into() });
            }
            Ok(())
        }
    }

    impl TraceSink for Probe {
        fn declare(&mut self, _: &TrackDecl) -> Result<(), TraceError> {
            self.call("declare")
        }
        fn record(&mut self, _: &TraceRecord) -> Result<(), TraceError> {
            self.call("record")
        }
        fn finish(&mut self, _: Time) -> Result<(), TraceError> {
            self.call("finish")
        }
    }

    #[test]
    fn every_sink_is_called_and_the_first_error_wins() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let probe = |name, fail| Box::new(Probe { name, fail, log: log.clone() }) as Box<dyn TraceSink>;
        let mut fan = Fanout::new(vec![probe("a", false), probe("b", true), probe("c", true)]);
        let decl = TrackDecl { id: TrackId(0), parent: None, name: "x".into(), kind: TrackKind::Slice };
        let err = fan.declare(&decl).err();
        assert_eq!(err.map(|e| e.sink), Some("b".to_string()));
        let rec = TraceRecord { time: Time::ZERO, track: TrackId(0), kind: RecordKind::Counter { value: 1.0 } };
        assert!(fan.record(&rec).is_err());
        assert!(fan.finish(Time::ZERO).is_err());
        assert_eq!(log.borrow().len(), 9, "all three sinks saw all three calls");
        assert_eq!(fan.len(), 3);
    }
}
