//! Functional contents of an HBM stack: sparse 4 KiB pages, allocated on first write; unwritten
//! bytes read as zero.

use fxhash::FxHashMap;

const PAGE: u64 = 4096;

/// The bytes stored in a stack (functional mode only).
#[derive(Default)]
pub struct HbmData {
    pages: FxHashMap<u64, Box<[u8; PAGE as usize]>>,
}

impl HbmData {
    /// Empty memory (all zero).
    pub fn new() -> HbmData {
        HbmData::default()
    }

    /// Copies `out.len()` bytes starting at `addr` into `out`.
    pub fn read(&self, addr: u64, out: &mut [u8]) {
        let mut done = 0;
        while done < out.len() {
            let a = addr + done as u64;
            let (page, off) = (a / PAGE, (a % PAGE) as usize);
            let n = (PAGE as usize - off).min(out.len() - done);
            match self.pages.get(&page) {
                Some(p) => out[done..done + n].copy_from_slice(&p[off..off + n]),
                None => out[done..done + n].fill(0),
            }
            done += n;
        }
    }

    /// Stores `data` starting at `addr`.
    pub fn write(&mut self, addr: u64, data: &[u8]) {
        let mut done = 0;
        while done < data.len() {
            let a = addr + done as u64;
            let (page, off) = (a / PAGE, (a % PAGE) as usize);
            let n = (PAGE as usize - off).min(data.len() - done);
            let p = self.pages.entry(page).or_insert_with(|| Box::new([0; PAGE as usize]));
            p[off..off + n].copy_from_slice(&data[done..done + n]);
            done += n;
        }
    }

    /// Bytes of pages allocated.
    pub fn allocated_bytes(&self) -> u64 {
        self.pages.len() as u64 * PAGE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_read_back_across_pages_and_holes_read_zero() {
        let mut d = HbmData::new();
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        d.write(4000, &data);
        let mut out = vec![9u8; 10_100];
        d.read(3950, &mut out);
        assert!(out[..50].iter().all(|&b| b == 0));
        assert_eq!(&out[50..10_050], &data[..]);
        assert!(out[10_050..].iter().all(|&b| b == 0));
        assert_eq!(d.allocated_bytes(), 4 * 4096);
    }
}
