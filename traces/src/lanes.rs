//! Lane assignment: keeps the slices of one track properly nested for viewers by moving slices
//! that would overlap onto extra "lane" tracks.
//!
//! Each track owns lanes `0..n` (lane 0 is the track itself). A lane remembers the latest end of
//! the slices placed on it; a slice `[start, end)` goes to the first lane whose latest end is
//! `<= start`, and a new lane is opened when none fits. So the slices of one lane are disjoint
//! and placed in start order, which is what both Perfetto (BEGIN/END pairs) and Chrome JSON
//! (`X` events) need, whatever order the slices arrive in.
//!
//! What it leaves out: nesting. A slice inside another (a child recorded before its parent
//! ends) goes to a different lane rather than below its parent, because slices arrive complete
//! and possibly out of order, so no stack can be kept. Lanes are never reclaimed, and the search
//! is linear in the number of lanes (tracks with hundreds of concurrent slices should be split
//! by the model into one track per slot instead).

/// The name of lane `lane` (>= 1) of track `name`: a profiler-style row (`"... - Row 0"`)
/// continues as `"... - Row k"`; any other track's lanes are `"<name> #k"`.
pub(crate) fn lane_name(name: &str, lane: usize) -> String {
    match name.strip_suffix(" - Row 0") {
        Some(base) => format!("{base} - Row {lane}"),
        None => format!("{name} #{lane}"),
    }
}

/// Where a slice was placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Placement {
    /// Lane index: 0 is the track itself, k > 0 is the lane track `"<name> #k"`.
    pub lane: usize,
    /// True if this slice opened the lane (the writer must declare the lane track now).
    pub is_new: bool,
}

/// The lanes of one track, each with the latest end time placed on it.
#[derive(Clone, Debug)]
pub(crate) struct Lanes {
    ends: Vec<u64>,
}

impl Default for Lanes {
    fn default() -> Self {
        Lanes { ends: vec![0] }
    }
}

impl Lanes {
    /// Places `[start, end)` (`end >= start`, any unit) on the first lane free at `start`.
    pub(crate) fn place(&mut self, start: u64, end: u64) -> Placement {
        debug_assert!(end >= start);
        if let Some(lane) = self.ends.iter().position(|&e| e <= start) {
            self.ends[lane] = end;
            return Placement { lane, is_new: false };
        }
        self.ends.push(end);
        Placement { lane: self.ends.len() - 1, is_new: true }
    }

    /// Number of lanes, including the track itself.
    #[cfg(test)]
    pub(crate) fn count(&self) -> usize {
        self.ends.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place_all(slices: &[(u64, u64)]) -> Vec<(usize, bool)> {
        let mut l = Lanes::default();
        slices.iter().map(|&(s, e)| l.place(s, e)).map(|p| (p.lane, p.is_new)).collect()
    }

    #[test]
    fn profiler_rows_continue_by_number_and_other_lanes_by_hash() {
        assert_eq!(lane_name("Tensor Engine - Row 0", 2), "Tensor Engine - Row 2");
        assert_eq!(lane_name("queue3", 1), "queue3 #1");
        assert_eq!(lane_name("Row 0", 1), "Row 0 #1");
    }

    #[test]
    fn back_to_back_and_zero_length_slices_share_lane_zero() {
        let got = place_all(&[(0, 416), (416, 833), (833, 833), (833, 1250)]);
        assert_eq!(got, vec![(0, false); 4]);
    }

    #[test]
    fn overlapping_slices_open_lanes_and_reuse_them() {
        // [0,10) on 0; [5,15) overlaps -> lane 1; [8,9) overlaps both -> lane 2;
        // [10,20) fits lane 0 again; [15,16) fits lane 1 (end 15), not lane 0 (end 20).
        let got = place_all(&[(0, 10), (5, 15), (8, 9), (10, 20), (15, 16)]);
        assert_eq!(got, vec![(0, false), (1, true), (2, true), (0, false), (1, false)]);
    }

    #[test]
    fn nested_slices_go_to_separate_lanes() {
        // Children end first, so they are recorded before their parent [0,10): the parent
        // overlaps them and gets lane 1; a later child still fits lane 0 after its siblings.
        let got = place_all(&[(2, 4), (5, 6), (0, 10), (6, 8), (1, 2)]);
        assert_eq!(got, vec![(0, false), (0, false), (1, true), (0, false), (2, true)]);
    }

    #[test]
    fn out_of_order_arrivals_never_overlap_on_a_lane() {
        // Arrival order differs from start order: [20,30) first, then the earlier [0,5).
        let mut l = Lanes::default();
        let arrivals = [(20, 30), (0, 5), (5, 20), (30, 31), (25, 40), (0, 0)];
        let mut per_lane: Vec<Vec<(u64, u64)>> = Vec::new();
        for (s, e) in arrivals {
            let p = l.place(s, e);
            if p.is_new {
                assert_eq!(p.lane, per_lane.len(), "lanes open in order");
            }
            per_lane.resize(l.count(), Vec::new());
            per_lane[p.lane].push((s, e));
        }
        for lane in &per_lane {
            for w in lane.windows(2) {
                assert!(w[0].1 <= w[1].0, "disjoint and in start order: {lane:?}");
            }
        }
        assert_eq!(l.count(), 3);
    }
}
