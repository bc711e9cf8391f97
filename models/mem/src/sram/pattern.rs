//! Tensor access patterns: a partition range plus up to four free-axis dimensions (spec §3).

use crate::sram::error::FieldError;
use crate::sram::geometry::{multiple_of, SramGeometry};

/// Most free-axis dimensions a pattern may have (spec §3: "up to 4-D along F").
pub const MAX_DIMS: usize = 4;

/// One free-axis dimension: `size` elements, `stride` elements apart (spec §3: uint16 sizes,
/// int16 strides). A stride may be zero (broadcast) or negative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Dim {
    /// Elements along this dimension (at least 1).
    pub size: u16,
    /// Distance between consecutive elements, in elements.
    pub stride: i16,
}

impl Dim {
    /// A dimension of `size` elements `stride` elements apart.
    pub const fn new(size: u16, stride: i16) -> Dim {
        Dim { size, stride }
    }
}

/// Which engine-visible part of an SRAM one tensor access touches.
///
/// Partitions `partition_start .. partition_start + partitions` all see the same free-axis
/// pattern: element `(i0, .., in)` of each lies at byte `offset + elem_bytes * sum(ik * stride_k)`
/// of its partition, dimensions listed outermost first (innermost last). Construct with
/// [`AccessPattern::new`]; check against a memory with [`AccessPattern::validate`].
///
/// Leaves out: the v4 indirect (gather/scatter) access along the free axis, and dtype semantics
/// beyond the element size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AccessPattern {
    /// First partition.
    pub partition_start: u32,
    /// Number of partitions (one element per partition per cycle).
    pub partitions: u32,
    /// Byte offset of element (0, .., 0) within each partition.
    pub offset: u32,
    /// Element size in bytes (1: FP8/INT8, 2: BF16/FP16, 4: FP32).
    pub elem_bytes: u32,
    dims: [Dim; MAX_DIMS],
    ndims: u8,
    /// A DMA engine's access: may start at any multiple of a group (8 of 128 partitions)
    /// instead of following the compute engines' start rules.
    dma: bool,
}

const SIZE_FIELDS: [&str; MAX_DIMS] = ["dims[0].size", "dims[1].size", "dims[2].size", "dims[3].size"];

impl AccessPattern {
    /// A pattern with the given free-axis dimensions (outermost first, 1 to 4 of them). Only
    /// the number of dimensions is checked here; the rest is [`AccessPattern::validate`]'s job.
    pub fn new(
        partition_start: u32,
        partitions: u32,
        offset: u32,
        elem_bytes: u32,
        dims: &[Dim],
    ) -> Result<AccessPattern, FieldError> {
        if dims.is_empty() || dims.len() > MAX_DIMS {
            return Err(FieldError::new("dims", format!("{} dimensions (1 to {MAX_DIMS} allowed)", dims.len())));
        }
        let mut d = [Dim::default(); MAX_DIMS];
        d[..dims.len()].copy_from_slice(dims);
        Ok(AccessPattern {
            partition_start,
            partitions,
            offset,
            elem_bytes,
            dims: d,
            ndims: dims.len() as u8,
            dma: false,
        })
    }

    /// A contiguous run of `n` elements per partition.
    pub fn contiguous(partition_start: u32, partitions: u32, offset: u32, elem_bytes: u32, n: u16) -> AccessPattern {
        let mut dims = [Dim::default(); MAX_DIMS];
        dims[0] = Dim::new(n, 1);
        AccessPattern { partition_start, partitions, offset, elem_bytes, dims, ndims: 1, dma: false }
    }

    /// The same pattern as a DMA engine's access: its partition range may start at any partition
    /// (a DMA engine moves the rows of its 8 of 128 partitions that a command gives it, spec §4,
    /// from the command's first row on) instead of following the compute engines' start rules
    /// of spec §3.
    pub fn for_dma(mut self) -> AccessPattern {
        self.dma = true;
        self
    }

    /// The free-axis dimensions, outermost first.
    pub fn dims(&self) -> &[Dim] {
        &self.dims[..self.ndims as usize]
    }

    /// Elements each partition moves (the product of the sizes).
    pub fn elements_per_partition(&self) -> u64 {
        self.dims().iter().map(|d| u64::from(d.size)).product()
    }

    /// Bytes the whole access moves, over all its partitions.
    pub fn bytes(&self) -> u64 {
        self.elements_per_partition() * u64::from(self.partitions) * u64::from(self.elem_bytes)
    }

    /// The stride in bytes of the innermost dimension that has more than one element (the one
    /// the interface steps along every cycle); 0 when every size is 1.
    pub fn innermost_stride_bytes(&self) -> u64 {
        let d = self.dims().iter().rev().find(|d| d.size > 1);
        d.map_or(0, |d| u64::from(d.stride.unsigned_abs()) * u64::from(self.elem_bytes))
    }

    /// Port cycles per element in `geom`: 1, or `strided_port_cycles` when the innermost stride
    /// exceeds `full_rate_max_stride_bytes` (spec §3's half rate).
    pub fn port_cycles_per_element(&self, geom: &SramGeometry) -> u64 {
        if self.innermost_stride_bytes() > u64::from(geom.full_rate_max_stride_bytes) {
            u64::from(geom.strided_port_cycles)
        } else {
            1
        }
    }

    /// The lowest byte touched and one past the highest, relative to the partition start.
    pub fn byte_range(&self) -> (i64, i64) {
        let e = i64::from(self.elem_bytes);
        let (mut lo, mut hi) = (i64::from(self.offset), i64::from(self.offset) + e);
        for d in self.dims() {
            let reach = i64::from(d.stride) * (i64::from(d.size) - 1).max(0) * e;
            if reach < 0 {
                lo += reach;
            } else {
                hi += reach;
            }
        }
        (lo, hi)
    }

    /// Byte offset (within its partition) of the `k`-th element in pattern order. `k` must be
    /// below [`AccessPattern::elements_per_partition`]; offsets of an invalid pattern wrap.
    pub fn offset_of(&self, mut k: u64) -> u64 {
        let mut off = i64::from(self.offset);
        for d in self.dims().iter().rev() {
            let size = u64::from(d.size.max(1));
            off += (k % size) as i64 * i64::from(d.stride) * i64::from(self.elem_bytes);
            k /= size;
        }
        off as u64
    }

    /// The byte offsets of the elements within a partition, in pattern order (innermost fastest),
    /// without allocating.
    pub fn offsets(&self) -> Offsets {
        let e = i64::from(self.elem_bytes);
        let mut step = [0i64; MAX_DIMS];
        let mut size = [1u16; MAX_DIMS];
        for (k, d) in self.dims().iter().enumerate() {
            step[k] = i64::from(d.stride) * e;
            size[k] = d.size;
        }
        let left = self.elements_per_partition();
        Offsets { step, size, ndims: self.ndims as usize, idx: [0; MAX_DIMS], cur: i64::from(self.offset), left }
    }

    /// Checks the pattern against `geom`; the error names the first bad field. Rules: element
    /// size a power of two no wider than a port; partitions within the memory and starting as
    /// spec §3 requires (more than half the partitions: start 0; more than a quarter: start 0 or
    /// the middle; otherwise a multiple of a quarter, i.e. 0/32/64/96 of 128); sizes non-zero;
    /// offset aligned to the element; every element inside the partition.
    pub fn validate(&self, geom: &SramGeometry) -> Result<(), FieldError> {
        self.validate_elem(geom)?;
        self.validate_partitions(geom)?;
        for (k, d) in self.dims().iter().enumerate() {
            if d.size == 0 {
                return Err(FieldError::new(SIZE_FIELDS[k], "must be at least 1"));
            }
        }
        self.validate_bounds(geom)
    }

    fn validate_elem(&self, geom: &SramGeometry) -> Result<(), FieldError> {
        let e = self.elem_bytes;
        if e == 0 || !e.is_power_of_two() || e > geom.port_bytes {
            let d = format!("{e} bytes (a power of two up to the port width {} bytes)", geom.port_bytes);
            return Err(FieldError::new("elem_bytes", d));
        }
        Ok(())
    }

    fn validate_partitions(&self, geom: &SramGeometry) -> Result<(), FieldError> {
        let (start, n, q) = (self.partition_start, self.partitions, geom.quarter());
        if n == 0 || n > geom.partitions {
            return Err(FieldError::new("partitions", format!("{n} (1 to {} allowed)", geom.partitions)));
        }
        let ok = self.dma
            || if n > 2 * q {
                start == 0
            } else if n > q {
                start == 0 || start == 2 * q
            } else {
                multiple_of(start, q)
            };
        if !ok || start.checked_add(n).filter(|&end| end <= geom.partitions).is_none() {
            let allowed = if self.dma {
                "any partition for a DMA engine".to_string()
            } else if n > 2 * q {
                "0".to_string()
            } else if n > q {
                format!("0 or {}", 2 * q)
            } else {
                format!("a multiple of {q}")
            };
            let d = format!("{start} with {n} partitions (must be {allowed} and end by {})", geom.partitions);
            return Err(FieldError::new("partition_start", d));
        }
        Ok(())
    }

    fn validate_bounds(&self, geom: &SramGeometry) -> Result<(), FieldError> {
        if !multiple_of(self.offset, self.elem_bytes) {
            let d = format!("{} is not aligned to the {}-byte element", self.offset, self.elem_bytes);
            return Err(FieldError::new("offset", d));
        }
        if self.offset >= geom.partition_bytes {
            let d = format!("{} is beyond the {}-byte partition", self.offset, geom.partition_bytes);
            return Err(FieldError::new("offset", d));
        }
        let (lo, hi) = self.byte_range();
        if lo < 0 || hi > i64::from(geom.partition_bytes) {
            let d = format!("touch bytes {lo}..{hi}, outside the {}-byte partition", geom.partition_bytes);
            return Err(FieldError::new("dims", d));
        }
        Ok(())
    }
}

/// Iterator over one partition's element byte offsets in pattern order (see
/// [`AccessPattern::offsets`]). Holds a few integers; never allocates.
#[derive(Clone, Debug)]
pub struct Offsets {
    step: [i64; MAX_DIMS],
    size: [u16; MAX_DIMS],
    ndims: usize,
    idx: [u16; MAX_DIMS],
    cur: i64,
    left: u64,
}

impl Iterator for Offsets {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let out = self.cur as u32;
        for k in (0..self.ndims).rev() {
            self.idx[k] += 1;
            self.cur += self.step[k];
            if self.idx[k] < self.size[k] {
                break;
            }
            self.cur -= self.step[k] * i64::from(self.size[k]);
            self.idx[k] = 0;
        }
        Some(out)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.left).unwrap_or(usize::MAX);
        (n, usize::try_from(self.left).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sram::geometry::{PSUM, SBUF_NC_V2};
    use crate::sram::test_rng::{random_pattern, XorShift};

    fn pat(start: u32, n: u32, offset: u32, elem: u32, dims: &[(u16, i16)]) -> AccessPattern {
        let dims: Vec<Dim> = dims.iter().map(|&(s, t)| Dim::new(s, t)).collect();
        AccessPattern::new(start, n, offset, elem, &dims).expect("1-4 dims")
    }

    #[test]
    fn validation_rules_name_the_field() {
        let g = SBUF_NC_V2.geometry; // 128 partitions x 196608 bytes, 4-byte ports
        let ok = None;
        #[rustfmt::skip]
        let table: &[(AccessPattern, Option<&str>)] = &[
            (pat(0, 128, 0, 4, &[(512, 1)]), ok),
            (pat(0, 65, 0, 2, &[(8, 1)]), ok),
            (pat(32, 65, 0, 2, &[(8, 1)]), Some("partition_start")),   // >64 partitions: start 0
            (pat(64, 64, 0, 2, &[(8, 1)]), ok),                        // 33-64: 0 or 64
            (pat(32, 33, 0, 2, &[(8, 1)]), Some("partition_start")),
            (pat(96, 33, 0, 2, &[(8, 1)]), Some("partition_start")),
            (pat(96, 32, 0, 2, &[(8, 1)]), ok),                        // <=32: 0/32/64/96
            (pat(32, 1, 0, 2, &[(8, 1)]), ok),
            (pat(16, 16, 0, 2, &[(8, 1)]), Some("partition_start")),
            (pat(96, 32, 0, 2, &[(8, 1)]), ok),
            (pat(u32::MAX, 1, 0, 2, &[(8, 1)]), Some("partition_start")),
            (pat(0, 0, 0, 2, &[(8, 1)]), Some("partitions")),
            (pat(0, 129, 0, 2, &[(8, 1)]), Some("partitions")),
            (pat(0, 1, 0, 3, &[(8, 1)]), Some("elem_bytes")),
            (pat(0, 1, 0, 8, &[(8, 1)]), Some("elem_bytes")),
            (pat(0, 1, 0, 0, &[(8, 1)]), Some("elem_bytes")),
            (pat(0, 1, 0, 4, &[(2, 1), (0, 1)]), Some("dims[1].size")),
            (pat(0, 1, 0, 4, &[(2, 1), (3, 1), (4, 1), (0, 1)]), Some("dims[3].size")),
            (pat(0, 1, 2, 4, &[(8, 1)]), Some("offset")),             // misaligned
            (pat(0, 1, 196_608, 1, &[(1, 1)]), Some("offset")),       // past the end
            (pat(0, 1, 196_604, 4, &[(1, 1)]), ok),                   // last element
            (pat(0, 1, 196_604, 4, &[(2, 1)]), Some("dims")),         // one past
            (pat(0, 1, 8, 4, &[(3, -1)]), ok),                        // negative stride down to 0
            (pat(0, 1, 8, 4, &[(4, -1)]), Some("dims")),              // below 0
            (pat(0, 1, 0, 4, &[(65_535, 0)]), ok),                    // broadcast
        ];
        for (k, (p, want)) in table.iter().enumerate() {
            assert_eq!(p.validate(&g).err().map(|e| e.field), *want, "row {k}: {p:?}");
        }
        // A DMA engine's access may start at any partition (a command's first row need not
        // be the first of an engine's eight), but must still end by the last.
        for (start, n, want) in [(23, 1, ok), (3, 5, ok), (16, 8, ok), (127, 1, ok), (127, 2, Some("partition_start"))]
        {
            let p = pat(start, n, 0, 4, &[(8, 1)]).for_dma();
            assert_eq!(p.validate(&g).err().map(|e| e.field), want, "DMA {start}+{n}");
        }
        assert_eq!(pat(23, 1, 0, 4, &[(8, 1)]).validate(&g).err().map(|e| e.field), Some("partition_start"));
        let five = [Dim::new(1, 1); 5];
        assert_eq!(AccessPattern::new(0, 1, 0, 4, &five).map_err(|e| e.field), Err("dims"));
        assert_eq!(AccessPattern::new(0, 1, 0, 4, &[]).map_err(|e| e.field), Err("dims"));
    }

    fn naive_offsets(p: &AccessPattern) -> Vec<u32> {
        let mut d = [Dim::new(1, 0); MAX_DIMS];
        d[MAX_DIMS - p.dims().len()..].copy_from_slice(p.dims());
        let e = i64::from(p.elem_bytes);
        let mut out = Vec::new();
        for a in 0..d[0].size as i64 {
            for b in 0..d[1].size as i64 {
                for c in 0..d[2].size as i64 {
                    for x in 0..d[3].size as i64 {
                        let s = [a, b, c, x].iter().zip(&d).map(|(i, d)| i * i64::from(d.stride)).sum::<i64>();
                        out.push((i64::from(p.offset) + s * e) as u32);
                    }
                }
            }
        }
        out
    }

    #[test]
    fn offsets_match_a_naive_nested_loop() {
        for seed in 0..500 {
            let mut rng = XorShift::new(seed);
            let g = if seed % 2 == 0 { SBUF_NC_V2.geometry } else { PSUM.geometry };
            let p = random_pattern(&mut rng, &g, 9, 300);
            let want = naive_offsets(&p);
            assert_eq!(p.offsets().collect::<Vec<_>>(), want, "seed {seed}: {p:?}");
            assert_eq!(p.elements_per_partition(), want.len() as u64);
            for (k, &o) in want.iter().enumerate() {
                assert_eq!(p.offset_of(k as u64), u64::from(o), "seed {seed} k {k}");
            }
        }
    }

    #[test]
    fn innermost_stride_decides_the_rate() {
        let g = SBUF_NC_V2.geometry;
        assert_eq!(pat(0, 128, 0, 4, &[(64, 4)]).port_cycles_per_element(&g), 1); // 16 B
        assert_eq!(pat(0, 128, 0, 4, &[(64, 5)]).port_cycles_per_element(&g), 2); // 20 B
        assert_eq!(pat(0, 128, 64, 4, &[(8, -16)]).port_cycles_per_element(&g), 2);
        // A size-1 innermost dimension never steps: the next one sets the rate.
        assert_eq!(pat(0, 128, 0, 2, &[(64, 1), (1, 100)]).port_cycles_per_element(&g), 1);
        assert_eq!(pat(0, 128, 0, 2, &[(64, 100), (1, 1)]).port_cycles_per_element(&g), 2);
    }
}
