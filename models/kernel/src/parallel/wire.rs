//! Bytes for partitions in different processes (MPI ranks): cut-link messages and credits,
//! trace records and the final statistics, in a little-endian format private to trnsim (both
//! ends are the same binary). Decoding never panics: bad bytes are an error naming what broke.

use crate::time::Time;
use crate::trace::{Arg, Flow, RecordKind, TraceRecord, TrackId};
use fxhash::FxHashMap;

/// Appends little-endian words.
pub(crate) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends a little-endian u64.
pub(crate) fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Reads from a byte slice, front to back.
pub(crate) struct Reader<'a> {
    pub bytes: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8], what: &'static str) -> Reader<'a> {
        Reader { bytes, what }
    }
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.bytes.len() < n {
            return Err(format!("{}: truncated ({} bytes left, {n} needed)", self.what, self.bytes.len()));
        }
        let (a, b) = self.bytes.split_at(n);
        self.bytes = b;
        Ok(a)
    }
    pub fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    pub fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub fn u64(&mut self) -> Result<u64, String> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    pub fn bytes_u32(&mut self) -> Result<&'a [u8], String> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len() as u32);
    out.extend_from_slice(s.as_bytes());
}

fn put_flow(out: &mut Vec<u8>, f: Flow) {
    match f {
        Flow::None => out.push(0),
        Flow::Step(id) => {
            out.push(1);
            put_u64(out, id);
        }
        Flow::End(id) => {
            out.push(2);
            put_u64(out, id);
        }
    }
}

fn put_arg(out: &mut Vec<u8>, a: Option<Arg>) {
    match a {
        None => out.push(0),
        Some(a) => {
            out.push(1);
            put_str(out, a.key);
            put_u64(out, a.value as u64);
        }
    }
}

/// Encodes captured trace records: (step time, component, record) each.
pub(crate) fn put_records(out: &mut Vec<u8>, recs: &[(Time, u32, TraceRecord)]) {
    put_u32(out, recs.len() as u32);
    for (t, c, r) in recs {
        put_u64(out, t.as_ps());
        put_u32(out, *c);
        put_u64(out, r.time.as_ps());
        put_u32(out, r.track.0);
        match r.kind {
            RecordKind::Slice { name, start, end, flow, arg } => {
                out.push(0);
                put_str(out, name);
                put_u64(out, start.as_ps());
                put_u64(out, end.as_ps());
                put_flow(out, flow);
                put_arg(out, arg);
            }
            RecordKind::Instant { name, flow, arg } => {
                out.push(1);
                put_str(out, name);
                put_flow(out, flow);
                put_arg(out, arg);
            }
            RecordKind::Counter { value } => {
                out.push(2);
                put_u64(out, value.to_bits());
            }
            RecordKind::Signal { value } => {
                out.push(3);
                put_u64(out, value);
            }
        }
    }
}

/// Names of records decoded from other processes, interned once each (records hold
/// `&'static str`; a run has a bounded set of names, so leaking one copy of each is fine).
#[derive(Default)]
pub(crate) struct Names {
    map: FxHashMap<Vec<u8>, &'static str>,
}

impl Names {
    fn get(&mut self, r: &mut Reader<'_>) -> Result<&'static str, String> {
        let b = r.bytes_u32()?;
        if let Some(&s) = self.map.get(b) {
            return Ok(s);
        }
        let s = std::str::from_utf8(b).map_err(|_| "trace record: a name is not UTF-8".to_string())?;
        let leaked: &'static str = Box::leak(s.to_string().into_boxed_str());
        self.map.insert(b.to_vec(), leaked);
        Ok(leaked)
    }
}

fn get_flow(r: &mut Reader<'_>) -> Result<Flow, String> {
    Ok(match r.u8()? {
        0 => Flow::None,
        1 => Flow::Step(r.u64()?),
        2 => Flow::End(r.u64()?),
        k => return Err(format!("trace record: flow kind {k}")),
    })
}

fn get_arg(r: &mut Reader<'_>, names: &mut Names) -> Result<Option<Arg>, String> {
    Ok(match r.u8()? {
        0 => None,
        1 => Some(Arg { key: names.get(r)?, value: r.u64()? as i64 }),
        k => return Err(format!("trace record: arg kind {k}")),
    })
}

/// Decodes records encoded by [`put_records`], appending them to `into`.
pub(crate) fn get_records(
    r: &mut Reader<'_>,
    names: &mut Names,
    into: &mut Vec<(Time, u32, TraceRecord)>,
) -> Result<(), String> {
    let n = r.u32()?;
    for _ in 0..n {
        let t = Time::from_ps(r.u64()?);
        let c = r.u32()?;
        let time = Time::from_ps(r.u64()?);
        let track = TrackId(r.u32()?);
        let kind = match r.u8()? {
            0 => {
                let name = names.get(r)?;
                let start = Time::from_ps(r.u64()?);
                let end = Time::from_ps(r.u64()?);
                RecordKind::Slice { name, start, end, flow: get_flow(r)?, arg: get_arg(r, names)? }
            }
            1 => {
                let name = names.get(r)?;
                RecordKind::Instant { name, flow: get_flow(r)?, arg: get_arg(r, names)? }
            }
            2 => RecordKind::Counter { value: f64::from_bits(r.u64()?) },
            3 => RecordKind::Signal { value: r.u64()? },
            k => return Err(format!("trace record: kind {k}")),
        };
        into.push((t, c, TraceRecord { time, track, kind }));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_bad_bytes_are_errors() {
        let recs = vec![
            (
                Time::from_ps(5),
                3,
                TraceRecord {
                    time: Time::from_ps(5),
                    track: TrackId(7),
                    kind: RecordKind::Slice {
                        name: "step",
                        start: Time::from_ps(1),
                        end: Time::from_ps(5),
                        flow: Flow::Step(9),
                        arg: Some(Arg { key: "k", value: -2 }),
                    },
                },
            ),
            (
                Time::from_ps(6),
                4,
                TraceRecord { time: Time::from_ps(6), track: TrackId(1), kind: RecordKind::Counter { value: 2.5 } },
            ),
        ];
        let mut b = Vec::new();
        put_records(&mut b, &recs);
        let mut names = Names::default();
        let mut back = Vec::new();
        get_records(&mut Reader::new(&b, "t"), &mut names, &mut back).unwrap();
        assert_eq!(back, recs);
        for cut in 0..b.len() {
            let mut v = Vec::new();
            assert!(get_records(&mut Reader::new(&b[..cut], "t"), &mut names, &mut v).is_err(), "cut {cut}");
        }
    }
}
