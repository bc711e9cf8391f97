//! The systems of a sweep's points, costing what each point changes: points that set the same
//! system fields to the same values share one system, every distinct system is validated once
//! before anything runs (one at a time, none kept), and a point's system is built again when
//! the point runs and dropped when no running point needs it. So a sweep holds at most a few
//! systems at once, however many points it has (a system of a 128-chip UltraCluster is about
//! 0.7 MB), and refuses a bad value before the first run as before.
//!
//! The cost of that bound: a point whose system differs from its neighbour's (the system
//! sweep varying fastest, or several workers) validates its system twice, once up front and
//! once to run.

use std::sync::{Arc, Mutex};
use trnsim_system::doc::{Resolved, SystemDoc};

/// A system as a point runs on it: the document (its name, its energy table) and the
/// validated system.
pub type System = Arc<(SystemDoc, Resolved)>;

/// The systems of a sweep's points (see the module docs).
pub struct PointSystems<'a> {
    base: &'a SystemDoc,
    /// The base system validated, when some point sets nothing in it.
    base_sys: Option<System>,
    /// The distinct system settings, as `--sweep PATH=VALUE` texts.
    distinct: Vec<Vec<String>>,
    /// Each point's entry in `distinct` (None: the base system).
    of_point: Vec<Option<usize>>,
    /// Recently built systems, by entry in `distinct`, newest last; at most `keep`.
    cache: Mutex<Vec<(usize, System)>>,
    keep: usize,
}

impl<'a> PointSystems<'a> {
    /// The systems of `points` on `base`, where `in_system(path)` says whether a swept path is
    /// a field of the system (the others are left to the caller); `workers` points run at
    /// once. Checks every distinct setting's fields and energy table first, then validates
    /// every distinct system in the order of the points that first use it; the first error
    /// is returned.
    pub fn new(
        base: &'a SystemDoc,
        points: &[Vec<(String, String)>],
        in_system: impl Fn(&str) -> bool,
        workers: usize,
    ) -> Result<PointSystems<'a>, String> {
        let mut index = std::collections::HashMap::new();
        let mut distinct: Vec<Vec<String>> = Vec::new();
        let mut of_point = Vec::with_capacity(points.len());
        for p in points {
            let sets: Vec<String> =
                p.iter().filter(|(path, _)| in_system(path)).map(|(path, v)| format!("{path}={v}")).collect();
            if sets.is_empty() {
                of_point.push(None);
                continue;
            }
            let k = *index.entry(sets.clone()).or_insert_with(|| {
                distinct.push(sets);
                distinct.len() - 1
            });
            of_point.push(Some(k));
        }
        let mut s = PointSystems {
            base,
            base_sys: None,
            distinct,
            of_point,
            cache: Mutex::new(Vec::new()),
            keep: workers.max(1),
        };
        // A cheap pass first: each distinct setting's own fields (set and type-checked) and its
        // energy table, so that a bad value late in a long sweep is refused before the systems
        // ahead of it are validated in full.
        for d in 0..s.distinct.len() {
            s.with_settings(d)?.energy()?;
        }
        let mut checked = vec![false; s.distinct.len()];
        for k in 0..s.of_point.len() {
            match s.of_point[k] {
                None if s.base_sys.is_none() => {
                    let sys = base.resolve()?;
                    s.base_sys = Some(Arc::new((base.clone(), sys)));
                }
                Some(d) if !checked[d] => {
                    checked[d] = true;
                    drop(s.build(d)?);
                }
                _ => {}
            }
        }
        Ok(s)
    }

    /// The number of points.
    pub fn len(&self) -> usize {
        self.of_point.len()
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        self.of_point.is_empty()
    }

    /// The number of distinct systems the points set (the base not counted).
    pub fn distinct(&self) -> usize {
        self.distinct.len()
    }

    /// Point `k`'s system: shared with the points that set the same values, built again when
    /// no recent point kept it.
    pub fn get(&self, k: usize) -> Result<System, String> {
        let Some(d) = self.of_point.get(k).copied().flatten() else {
            return self.base_sys.clone().ok_or_else(|| format!("point {k} has no system"));
        };
        let lock = || self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, s)) = lock().iter().find(|(i, _)| *i == d) {
            return Ok(s.clone());
        }
        let s = Arc::new(self.build(d)?);
        let mut c = lock();
        if !c.iter().any(|(i, _)| *i == d) {
            if c.len() >= self.keep {
                c.remove(0);
            }
            c.push((d, s.clone()));
        }
        Ok(s)
    }

    /// The base system with distinct setting `d` applied, validated.
    fn build(&self, d: usize) -> Result<(SystemDoc, Resolved), String> {
        let doc = self.with_settings(d)?;
        let sys = doc.resolve()?;
        Ok((doc, sys))
    }

    /// The base document with distinct setting `d` applied (each field set and type-checked).
    fn with_settings(&self, d: usize) -> Result<SystemDoc, String> {
        let mut doc = self.base.clone();
        for s in &self.distinct[d] {
            doc.set_from("--sweep", s)?;
        }
        Ok(doc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    fn host_w(s: &System) -> f64 {
        s.1.chip().and_then(|c| c.energy.as_ref()).map_or(-1.0, |e| e.static_w.host_per_chip)
    }

    #[test]
    fn points_setting_the_same_values_share_one_system_and_a_bad_one_is_refused_up_front() {
        let base = SystemDoc::open("trn3-chip").unwrap();
        const HOST: &str = "energy.static_w.host_per_chip";
        let points: Vec<_> = ["70", "80", "70"]
            .iter()
            .flat_map(|v| [pt(&[(HOST, v), ("workload.repeat", "1")]), pt(&[(HOST, v), ("workload.repeat", "2")])])
            .chain([pt(&[("workload.repeat", "3")])])
            .collect();
        let in_system = |p: &str| !p.starts_with("workload.");
        let s = PointSystems::new(&base, &points, in_system, 1).unwrap();
        assert_eq!((s.len(), s.distinct()), (7, 2));
        let (a, b) = (s.get(0).unwrap(), s.get(1).unwrap());
        assert!(Arc::ptr_eq(&a, &b), "neighbours setting the same value share their system");
        assert_eq!(host_w(&a), 70.0);
        assert_eq!(host_w(&s.get(2).unwrap()), 80.0);
        // Built again once it left the cache: the same system.
        assert!(!Arc::ptr_eq(&a, &s.get(4).unwrap()));
        assert_eq!(host_w(&s.get(4).unwrap()), 70.0);
        let preset = base.energy().unwrap().unwrap().static_w.host_per_chip;
        assert_eq!(host_w(&s.get(6).unwrap()), preset);
        // A bad value at the last point is refused before any point's system is handed out.
        let mut bad = points.clone();
        bad.push(pt(&[(HOST, "-1")]));
        let e = PointSystems::new(&base, &bad, in_system, 1).err().unwrap();
        assert!(e.contains("energy.static_w.host_per_chip: -1 is not allowed"), "{e}");
    }

    #[test]
    fn a_bad_field_late_in_a_sweep_is_refused_before_the_systems_ahead_of_it_are_validated() {
        let base = SystemDoc::open("trn3-chip").unwrap();
        // The first point's system fails only when validated in full (stacks x cores_per_stack
        // must equal cores); the last point's value fails its own field's check. The cheap pass
        // over every point's fields runs first, so the last point's error is the one returned.
        let points = vec![pt(&[("chip.hbm.stacks", "3")]), pt(&[("energy.static_w.host_per_chip", "-1")])];
        let e = PointSystems::new(&base, &points, |_| true, 1).err().unwrap();
        assert!(e.contains("energy.static_w.host_per_chip: -1 is not allowed"), "{e}");
        let e = PointSystems::new(&base, &points[..1], |_| true, 1).err().unwrap();
        assert!(e.contains("must equal cores"), "{e}");
    }
}
