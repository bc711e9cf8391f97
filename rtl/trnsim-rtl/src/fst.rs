//! FST copies of the diff's VCDs (`trnsim diff --vcd DIR --fst`): GTKWave, Surfer and most
//! viewers open FST faster than VCD and it is several times smaller. The conversion streams
//! the VCD (scopes, variables, aliases, timestamps, scalar and vector changes, `x` and `z`)
//! into the `fst-writer` crate, flushing a value-change section every 16 MiB of buffered
//! changes, so memory stays bounded whatever the VCD's length.
//!
//! Leaves out: real and string variables (no waveform trnsim writes has them; they are refused
//! by name), and VCD comments, dates and versions (the FST says it was written by trnsim).

use fst_writer::{
    FstBodyWriter, FstFileType, FstHeaderWriter, FstInfo, FstScopeType, FstSignalId, FstSignalType, FstVarDirection,
    FstVarType,
};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::Path;
use vcd::{Command, IdCode, TimescaleUnit, Value};

type Out = BufWriter<File>;

/// Buffered value changes flushed into a section past this size.
const FLUSH_BYTES: usize = 16 << 20;

enum State {
    /// Before the first scope or variable: the timescale may still come.
    Start(i8),
    Header(FstHeaderWriter<Out>),
    Body(FstBodyWriter<Out>),
}

/// Writes `fst` with the waveform of `vcd`. Errors name the file and what failed.
pub fn vcd_to_fst(vcd: &Path, fst: &Path) -> Result<(), String> {
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", vcd.display());
    let input = File::open(vcd).map_err(|e| at(&e))?;
    let mut state = State::Start(-9);
    let mut ids: HashMap<IdCode, FstSignalId> = HashMap::new();
    let mut bits = Vec::new();
    for cmd in vcd::Parser::new(BufReader::new(input)) {
        let cmd = cmd.map_err(|e| at(&e))?;
        state = step(state, cmd, fst, &mut ids, &mut bits).map_err(|e| at(&e))?;
    }
    match step(state, Command::Enddefinitions, fst, &mut ids, &mut bits).map_err(|e| at(&e))? {
        State::Body(body) => body.finish().map(drop).map_err(|e| format!("{}: {e}", fst.display())),
        _ => Err(at(&"no variables")),
    }
}

fn exponent(n: u32, unit: TimescaleUnit) -> Result<i8, String> {
    let base: i8 = match unit {
        TimescaleUnit::S => 0,
        TimescaleUnit::MS => -3,
        TimescaleUnit::US => -6,
        TimescaleUnit::NS => -9,
        TimescaleUnit::PS => -12,
        TimescaleUnit::FS => -15,
    };
    match n {
        1 => Ok(base),
        10 => Ok(base + 1),
        100 => Ok(base + 2),
        _ => Err(format!("timescale {n} (1, 10 or 100)")),
    }
}

fn open(fst: &Path, exp: i8) -> Result<FstHeaderWriter<Out>, String> {
    let info = FstInfo {
        start_time: 0,
        timescale_exponent: exp,
        version: "trnsim".into(),
        date: String::new(),
        file_type: FstFileType::Verilog,
    };
    FstHeaderWriter::open(fst, &info).map_err(|e| format!("{}: {e}", fst.display()))
}

/// One VCD command applied to the writer's state.
fn step(
    state: State,
    cmd: Command,
    fst: &Path,
    ids: &mut HashMap<IdCode, FstSignalId>,
    bits: &mut Vec<u8>,
) -> Result<State, String> {
    let err = |e: fst_writer::FstWriteError| e.to_string();
    Ok(match (state, cmd) {
        (State::Start(_), Command::Timescale(n, u)) => State::Start(exponent(n, u)?),
        (State::Start(exp), c @ (Command::ScopeDef(..) | Command::VarDef(..))) => {
            step(State::Header(open(fst, exp)?), c, fst, ids, bits)?
        }
        (State::Header(mut h), Command::ScopeDef(_, name)) => {
            h.scope(name, "", FstScopeType::Module).map_err(err)?;
            State::Header(h)
        }
        (State::Header(mut h), Command::Upscope) => {
            h.up_scope().map_err(err)?;
            State::Header(h)
        }
        (State::Header(mut h), Command::VarDef(kind, size, code, name, index)) => {
            if matches!(kind, vcd::VarType::Real | vcd::VarType::String) || size == 0 {
                return Err(format!("variable {name}: real, string and zero-width variables are not converted"));
            }
            let full = match index {
                Some(i) => format!("{name} {i}"),
                None => name,
            };
            let alias = ids.get(&code).copied();
            let id = h
                .var(full, FstSignalType::bit_vec(size), FstVarType::Wire, FstVarDirection::Implicit, alias)
                .map_err(err)?;
            ids.insert(code, id);
            State::Header(h)
        }
        (State::Header(h), Command::Enddefinitions) => State::Body(h.finish().map_err(err)?),
        (State::Body(mut b), Command::Timestamp(t)) => {
            b.time_change(t).map_err(err)?;
            if b.size() > FLUSH_BYTES {
                b.flush().map_err(err)?;
            }
            State::Body(b)
        }
        (State::Body(mut b), Command::ChangeScalar(code, v)) => {
            let id = *ids.get(&code).ok_or_else(|| format!("a change of undeclared variable {code}"))?;
            b.signal_change(id, &[char_of(v)]).map_err(err)?;
            State::Body(b)
        }
        (State::Body(mut b), Command::ChangeVector(code, v)) => {
            let id = *ids.get(&code).ok_or_else(|| format!("a change of undeclared variable {code}"))?;
            bits.clear();
            bits.extend(v.iter().map(char_of));
            b.signal_change(id, bits).map_err(err)?;
            State::Body(b)
        }
        (State::Body(_), Command::ChangeReal(code, _) | Command::ChangeString(code, _)) => {
            return Err(format!("variable {code}: real and string changes are not converted"));
        }
        (State::Body(b), Command::Enddefinitions) => State::Body(b),
        (s, _) => s,
    })
}

fn char_of(v: Value) -> u8 {
    match v {
        Value::V0 => b'0',
        Value::V1 => b'1',
        Value::X => b'x',
        Value::Z => b'z',
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{ModelVcd, PortInfo};

    #[test]
    fn a_model_vcd_converts_to_an_fst_with_the_same_signals_and_changes() {
        let dir = std::env::temp_dir().join(format!("trnsim-fst-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (v, f) = (dir.join("t.vcd"), dir.join("t.fst"));
        let ports = [
            PortInfo { name: "clk", input: true, width: 1 },
            PortInfo { name: "d", input: true, width: 8 },
            PortInfo { name: "wide", input: false, width: 100 },
        ];
        {
            let mut m = ModelVcd::create(&v, "top", &ports, 0).unwrap();
            for c in 0..50u128 {
                let mut vals = [0, c * 3, c << 90 | c];
                m.dump(0, &mut vals, false);
                m.dump(0, &mut vals, true);
            }
        }
        vcd_to_fst(&v, &f).unwrap();
        let bytes = std::fs::read(&f).unwrap();
        assert!(bytes.len() > 64, "an FST header and sections");
        // Read back with the reference-compatible reader: every variable, every change.
        let mut r = fst_reader::FstReader::open(BufReader::new(File::open(&f).unwrap())).unwrap();
        let mut names = Vec::new();
        r.read_hierarchy(|h| {
            if let fst_reader::FstHierarchyEntry::Var { name, length, .. } = h {
                names.push((name, length));
            }
        })
        .unwrap();
        assert_eq!(names, [("clk".to_string(), 1), ("d".to_string(), 8), ("wide".to_string(), 100)]);
        let mut last_d = String::new();
        let mut changes = 0;
        r.read_signals(&fst_reader::FstFilter::all(), |_t, h, val| {
            if let fst_reader::FstSignalValue::String(s) = val {
                changes += 1;
                if h.get_index() == 1 {
                    last_d = String::from_utf8_lossy(s).into_owned();
                }
            }
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(last_d, format!("{:08b}", 49 * 3), "d's last value");
        assert!(changes >= 100, "clock edges and data: {changes}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_that_is_not_a_vcd_is_an_error_naming_it() {
        let dir = std::env::temp_dir().join(format!("trnsim-fst-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let v = dir.join("bad.vcd");
        std::fs::write(&v, "$timescale 7 ns $end\n").unwrap();
        let e = vcd_to_fst(&v, &dir.join("bad.fst")).unwrap_err();
        assert!(e.starts_with(&v.display().to_string()) && e.contains("timescale 7"), "{e}");
        std::fs::write(&v, "").unwrap();
        assert!(vcd_to_fst(&v, &dir.join("bad.fst")).unwrap_err().contains("no variables"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
