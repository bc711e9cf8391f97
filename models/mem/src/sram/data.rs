//! The contents of an SRAM for functional runs, stored in pages allocated on first write.

use crate::sram::error::SramError;
use crate::sram::geometry::SramGeometry;
use crate::sram::pattern::AccessPattern;

/// Bytes per storage page (per partition). Elements never straddle pages: offsets are
/// element-aligned and elements are at most 4 bytes.
pub const PAGE_BYTES: u32 = 4096;

/// The bytes held by one SRAM, for functional (data-carrying) runs. Pages of [`PAGE_BYTES`] per
/// partition are allocated on first write; unwritten bytes read as zero, so a timing-only run,
/// or a sparse one, holds almost nothing (an NC-v4 SBUF costs a 64 KiB page table until written).
///
/// Buffers are laid out in pattern order, partition-major: for each partition of the range in
/// order, its elements in [`AccessPattern::offsets`] order, each `elem_bytes` little-endian bytes.
///
/// Leaves out: timing (see [`crate::sram::Sram`]), dtype conversion and rounding (only FP32
/// accumulation is modeled), and the v4 BF16 read-upcast-add-round PSUM accumulation.
#[derive(Clone, Debug)]
pub struct SramData {
    name: String,
    geom: SramGeometry,
    pages_per_partition: usize,
    pages: Vec<Option<Box<[u8]>>>,
}

impl SramData {
    /// Empty (all-zero) contents for a memory named `name` of geometry `geom`.
    pub fn new(name: &str, geom: SramGeometry) -> Result<SramData, SramError> {
        geom.validate().map_err(|error| SramError::Geometry { memory: name.to_string(), error })?;
        let pages_per_partition = geom.partition_bytes.div_ceil(PAGE_BYTES) as usize;
        let pages = vec![None; pages_per_partition * geom.partitions as usize];
        Ok(SramData { name: name.to_string(), geom, pages_per_partition, pages })
    }

    /// Bytes of page storage allocated so far (the page table itself not counted).
    pub fn allocated_bytes(&self) -> u64 {
        self.pages.iter().flatten().count() as u64 * u64::from(PAGE_BYTES)
    }

    /// Frees every page: all contents read as zero again.
    pub fn clear(&mut self) {
        self.pages.iter_mut().for_each(|p| *p = None);
    }

    /// Copies the pattern's elements into `out` (length: [`AccessPattern::bytes`]).
    pub fn read(&self, p: &AccessPattern, out: &mut [u8]) -> Result<(), SramError> {
        self.check(p, "out", out.len() as u64, p.bytes())?;
        let e = p.elem_bytes as usize;
        let mut chunks = out.chunks_exact_mut(e);
        for part in p.partition_start..p.partition_start + p.partitions {
            for (off, dst) in p.offsets().zip(&mut chunks) {
                match self.page(part, off) {
                    Some((page, at)) => dst.copy_from_slice(&page[at..at + e]),
                    None => dst.fill(0),
                }
            }
        }
        Ok(())
    }

    /// Copies `data` (length: [`AccessPattern::bytes`]) into the pattern's elements; a later
    /// element of the same pattern overwrites an earlier one at the same address.
    pub fn write(&mut self, p: &AccessPattern, data: &[u8]) -> Result<(), SramError> {
        self.check(p, "data", data.len() as u64, p.bytes())?;
        let e = p.elem_bytes as usize;
        let mut chunks = data.chunks_exact(e);
        for part in p.partition_start..p.partition_start + p.partitions {
            for (off, src) in p.offsets().zip(&mut chunks) {
                let (page, at) = self.page_mut(part, off);
                page[at..at + e].copy_from_slice(src);
            }
        }
        Ok(())
    }

    /// Near-memory FP32 accumulation (the tensor engine's PSUM accumulate-write): each element
    /// (4 bytes, `elem_bytes` must be 4) becomes `stored + value` in FP32, in pattern order.
    /// `values` has one entry per element over all partitions.
    pub fn accumulate_f32(&mut self, p: &AccessPattern, values: &[f32]) -> Result<(), SramError> {
        let elems = p.elements_per_partition().saturating_mul(u64::from(p.partitions));
        self.check(p, "values", values.len() as u64, elems)?;
        if p.elem_bytes != 4 {
            let error =
                crate::sram::FieldError::new("elem_bytes", format!("{} (FP32 accumulation needs 4)", p.elem_bytes));
            return Err(SramError::Pattern { memory: self.name.clone(), client: String::new(), error });
        }
        let mut vals = values.iter();
        for part in p.partition_start..p.partition_start + p.partitions {
            for (off, v) in p.offsets().zip(&mut vals) {
                let (page, at) = self.page_mut(part, off);
                let cell = &mut page[at..at + 4];
                let old = f32::from_le_bytes([cell[0], cell[1], cell[2], cell[3]]);
                cell.copy_from_slice(&(old + v).to_le_bytes());
            }
        }
        Ok(())
    }

    fn check(&self, p: &AccessPattern, field: &'static str, got: u64, expected: u64) -> Result<(), SramError> {
        let memory = self.name.clone();
        p.validate(&self.geom).map_err(|error| SramError::Pattern {
            memory: memory.clone(),
            client: String::new(),
            error,
        })?;
        if got != expected {
            return Err(SramError::Length { memory, field, expected, got });
        }
        Ok(())
    }

    fn index(&self, part: u32, off: u32) -> (usize, usize) {
        let page = part as usize * self.pages_per_partition + (off / PAGE_BYTES) as usize;
        (page, (off % PAGE_BYTES) as usize)
    }

    fn page(&self, part: u32, off: u32) -> Option<(&[u8], usize)> {
        let (k, at) = self.index(part, off);
        self.pages[k].as_deref().map(|p| (p, at))
    }

    fn page_mut(&mut self, part: u32, off: u32) -> (&mut [u8], usize) {
        let (k, at) = self.index(part, off);
        let page = self.pages[k].get_or_insert_with(|| vec![0u8; PAGE_BYTES as usize].into_boxed_slice());
        (page, at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sram::geometry::{PSUM, SBUF_NC_V4};
    use crate::sram::pattern::Dim;
    use crate::sram::test_rng::{random_pattern, XorShift};

    #[test]
    fn round_trip_in_pattern_order() {
        let mut d = SramData::new("sbuf", SBUF_NC_V4.geometry).expect("valid");
        let p = AccessPattern::new(32, 2, 8, 2, &[Dim::new(3, 4), Dim::new(2, -1)]).expect("dims");
        let data: Vec<u8> = (0..p.bytes() as u8).collect();
        d.write(&p, &data).expect("valid");
        let mut back = vec![0; data.len()];
        d.read(&p, &mut back).expect("valid");
        assert_eq!(back, data);
        // Element (1, 1) is at byte 8 + 2 * (4 - 1) = 14: element 3 of partition 32, 9 overall.
        let one = AccessPattern::contiguous(32, 2, 14, 2, 1);
        let mut e = [0; 4];
        d.read(&one, &mut e).expect("valid");
        assert_eq!(e, [6, 7, 18, 19]);
    }

    #[test]
    fn random_round_trips_read_back_what_was_written() {
        let g = SBUF_NC_V4.geometry;
        for seed in 0..100 {
            let mut rng = XorShift::new(seed);
            let mut d = SramData::new("sbuf", g).expect("valid");
            let p = random_pattern(&mut rng, &g, 6, 500);
            let data: Vec<u8> = (0..p.bytes()).map(|_| rng.next() as u8).collect();
            d.write(&p, &data).expect("valid");
            // Expected: the last element written at each address (patterns may alias).
            let e = p.elem_bytes as usize;
            let addrs: Vec<(u32, u32)> = (p.partition_start..p.partition_start + p.partitions)
                .flat_map(|q| p.offsets().map(move |o| (q, o)))
                .collect();
            let mut last = std::collections::HashMap::new();
            for (k, a) in addrs.iter().enumerate() {
                last.insert(*a, &data[k * e..(k + 1) * e]);
            }
            let want: Vec<u8> = addrs.iter().flat_map(|a| last[a].iter().copied()).collect();
            let mut back = vec![0; data.len()];
            d.read(&p, &mut back).expect("valid");
            assert_eq!(back, want, "seed {seed}");
        }
    }

    #[test]
    fn sparse_writes_allocate_only_their_pages() {
        let g = SBUF_NC_V4.geometry;
        let mut d = SramData::new("sbuf", g).expect("valid");
        assert_eq!(d.allocated_bytes(), 0);
        d.write(&AccessPattern::contiguous(0, 1, 0, 4, 1), &[1, 2, 3, 4]).expect("valid");
        d.write(&AccessPattern::contiguous(96, 32, 200_000, 4, 4), &[7; 32 * 16]).expect("valid");
        assert_eq!(d.allocated_bytes(), 33 * u64::from(PAGE_BYTES)); // of 32 MiB
        let mut out = [9u8; 8];
        d.read(&AccessPattern::contiguous(64, 1, 100_000, 4, 2), &mut out).expect("valid");
        assert_eq!(out, [0; 8]);
        assert_eq!(d.allocated_bytes(), 33 * u64::from(PAGE_BYTES), "reads allocate nothing");
        d.clear();
        assert_eq!(d.allocated_bytes(), 0);
    }

    #[test]
    fn psum_accumulates_fp32_in_place() {
        let mut d = SramData::new("psum", PSUM.geometry).expect("valid");
        let bank3 = AccessPattern::contiguous(0, 2, 3 * 2048, 4, 2);
        d.accumulate_f32(&bank3, &[1.0, 2.0, 3.0, 4.0]).expect("valid");
        d.accumulate_f32(&bank3, &[0.5, 0.25, -3.0, 1e-8]).expect("valid");
        let mut raw = [0u8; 16];
        d.read(&bank3, &mut raw).expect("valid");
        let got: Vec<f32> = raw.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        assert_eq!(got, [1.5, 2.25, 0.0, 4.0 + 1e-8]);
        // A broadcast pattern accumulates every value into the same cell, in order.
        let same = AccessPattern::new(0, 1, 0, 4, &[Dim::new(3, 0)]).expect("dims");
        d.accumulate_f32(&same, &[1.0, 2.0, 3.0]).expect("valid");
        let mut cell = [0u8; 4];
        d.read(&AccessPattern::contiguous(0, 1, 0, 4, 1), &mut cell).expect("valid");
        assert_eq!(f32::from_le_bytes(cell), 6.0);
    }

    #[test]
    fn data_errors_name_the_argument() {
        let mut d = SramData::new("psum", PSUM.geometry).expect("valid");
        let p = AccessPattern::contiguous(0, 2, 0, 2, 4);
        let e = d.write(&p, &[0; 15]).expect_err("short");
        assert_eq!(e, SramError::Length { memory: "psum".into(), field: "data", expected: 16, got: 15 });
        let e = d.accumulate_f32(&p, &[0.0; 8]).expect_err("bf16");
        assert!(matches!(e, SramError::Pattern { error, .. } if error.field == "elem_bytes"));
        let e = d.read(&AccessPattern::contiguous(1, 2, 0, 2, 4), &mut [0; 16]).expect_err("start");
        assert!(matches!(e, SramError::Pattern { error, .. } if error.field == "partition_start"));
    }
}
