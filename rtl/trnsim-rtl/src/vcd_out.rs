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

/// One VCD of a diff's both sides: scope `model` and scope `rtl` with every port (the model's
/// port order), and scope `mismatch` with one 1-bit signal per compared output port, high in
/// the cycles where that port's difference counts. A cycle `c` is at time `10c` (Verilator's
/// low phase in the per-side VCDs), so the three line up.
pub(crate) struct MergedVcd {
    w: Writer<BufWriter<File>>,
    model: Vec<(IdCode, u32)>,
    rtl: Vec<(IdCode, u32)>,
    mismatch: Vec<IdCode>,
    last: Vec<Option<u128>>,
    values: Vec<u128>,
}

impl MergedVcd {
    /// A VCD at `path` of `ports` on both sides and a mismatch signal per name in `outputs`.
    pub(crate) fn create(path: &Path, top: &str, ports: &[PortInfo], outputs: &[&str]) -> io::Result<Self> {
        let mut w = Writer::new(BufWriter::new(File::create(path)?));
        w.timescale(1, TimescaleUnit::NS)?;
        w.add_module(top)?;
        let side = |w: &mut Writer<BufWriter<File>>, name: &str| -> io::Result<Vec<(IdCode, u32)>> {
            w.add_module(name)?;
            let ids =
                ports.iter().map(|p| Ok((w.add_wire(p.width, p.name)?, p.width))).collect::<io::Result<Vec<_>>>()?;
            w.upscope()?;
            Ok(ids)
        };
        let model = side(&mut w, "model")?;
        let rtl = side(&mut w, "rtl")?;
        w.add_module("mismatch")?;
        let mismatch = outputs.iter().map(|n| w.add_wire(1, n)).collect::<io::Result<Vec<_>>>()?;
        w.upscope()?;
        w.upscope()?;
        w.enddefinitions()?;
        let n = 2 * ports.len() + outputs.len();
        Ok(MergedVcd { w, model, rtl, mismatch, last: vec![None; n], values: vec![0; n] })
    }

    /// Cycle `cycle`: the model's port values, the DUT's (by the model's port index) and each
    /// output's mismatch. An I/O error stops the file (it is a debugging aid).
    pub(crate) fn dump(
        &mut self,
        cycle: u64,
        model: &[u128],
        dut: impl Fn(usize) -> u128,
        mismatch: impl Iterator<Item = bool>,
    ) {
        let np = self.model.len();
        self.values[..np].copy_from_slice(&model[..np]);
        for i in 0..np {
            self.values[np + i] = dut(i);
        }
        for (k, m) in mismatch.enumerate() {
            self.values[2 * np + k] = u128::from(m);
        }
        if self.write(cycle * 10).is_err() {
            self.mismatch.clear();
            self.model.clear();
            self.rtl.clear();
        }
    }

    fn write(&mut self, t: u64) -> io::Result<()> {
        let ids = self.model.iter().chain(&self.rtl).copied().chain(self.mismatch.iter().map(|&id| (id, 1)));
        let mut stamped = false;
        for (k, (id, width)) in ids.enumerate() {
            let v = self.values[k];
            if self.last[k] == Some(v) {
                continue;
            }
            if !stamped {
                self.w.timestamp(t)?;
                stamped = true;
            }
            self.last[k] = Some(v);
            if width == 1 {
                self.w.change_scalar(id, if v & 1 == 1 { Value::V1 } else { Value::V0 })?;
            } else {
                let bits = (0..width).rev().map(|b| if b < 128 && (v >> b) & 1 == 1 { Value::V1 } else { Value::V0 });
                self.w.change_vector(id, bits)?;
            }
        }
        Ok(())
    }
}

impl Drop for MergedVcd {
    fn drop(&mut self) {
        let _ = self.w.flush();
    }
}
