//! A VCD of a list of ports, with the `vcd` crate; writes only values that changed.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;
use vcd::{IdCode, TimescaleUnit, Value, Writer};
use verilator_sys::PortInfo;

pub(crate) struct VcdOut {
    w: Option<Writer<BufWriter<File>>>,
    ids: Vec<(IdCode, u32)>,
    last: Vec<Option<u128>>,
}

impl VcdOut {
    pub(crate) fn create(path: &Path, top: &str, ports: &[PortInfo]) -> io::Result<Self> {
        let mut w = Writer::new(BufWriter::new(File::create(path)?));
        w.timescale(1, TimescaleUnit::NS)?;
        w.add_module("TOP")?;
        w.add_module(top)?;
        let mut ids = Vec::new();
        for p in ports {
            ids.push((w.add_wire(p.width, p.name)?, p.width));
        }
        w.upscope()?;
        w.upscope()?;
        w.enddefinitions()?;
        Ok(VcdOut { w: Some(w), ids, last: vec![None; ports.len()] })
    }

    pub(crate) fn dump(&mut self, t: u64, values: &[u128]) -> io::Result<()> {
        let Some(w) = self.w.as_mut() else { return Ok(()) };
        let mut stamped = false;
        for (i, (&(id, width), &v)) in self.ids.iter().zip(values).enumerate() {
            if self.last[i] == Some(v) {
                continue;
            }
            if !stamped {
                w.timestamp(t)?;
                stamped = true;
            }
            self.last[i] = Some(v);
            if width == 1 {
                w.change_scalar(id, if v & 1 == 1 { Value::V1 } else { Value::V0 })?;
            } else {
                let bits = (0..width).rev().map(|b| if b < 128 && (v >> b) & 1 == 1 { Value::V1 } else { Value::V0 });
                w.change_vector(id, bits)?;
            }
        }
        Ok(())
    }

    pub(crate) fn disable(&mut self) {
        self.w = None;
    }
}

impl Drop for VcdOut {
    fn drop(&mut self) {
        if let Some(w) = self.w.as_mut() {
            let _ = w.flush();
        }
    }
}
