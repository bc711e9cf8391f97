//! A Verilated model's ports as its header declares them, and the checks the harness needs of
//! them: at most 128 bits a port (the harness carries a port's value as a `u128`), the declared
//! clock and reset 1-bit inputs. An unpacked array port (`logic [7:0] data_i [4]`, any number
//! of unpacked dimensions) is one port of all its elements at the Rust interface: element k in
//! Verilator's storage order (row-major, each dimension from its low bound: SV index `lo + k`
//! of a one-dimensional array) at bits `k*W .. k*W+W-1`. A port the harness cannot carry is
//! refused with its declaration's `file:line:col` before any C++ is compiled.

use crate::Model;
use std::fs;
use std::path::Path;

/// Widest port the harness carries (a `u128`).
pub const MAX_PORT_BITS: u32 = 128;

/// One port of the top module.
pub(crate) struct Port {
    pub name: String,
    pub input: bool,
    /// Bits of one element (the whole port when `dims` is empty).
    pub elem_width: u32,
    /// 32-bit words of one element when it is wider than 64 bits (`VlWide<N>`), else 0.
    pub words: u32,
    /// Unpacked dimensions (empty: a plain port).
    pub dims: Vec<u32>,
}

impl Port {
    /// Elements (1 for a plain port).
    pub fn elems(&self) -> u64 {
        self.dims.iter().map(|&d| u64::from(d)).product()
    }
    /// Bits at the Rust interface: every element, packed.
    pub fn total_bits(&self) -> u64 {
        self.elems() * u64::from(self.elem_width)
    }
    /// The width the harness sees (checked to fit by [`check`]).
    pub fn width(&self) -> u32 {
        self.total_bits() as u32
    }
    /// The Rust type of one element.
    pub fn elem_ty(&self) -> String {
        match self.elem_width {
            0..=8 => "u8".into(),
            9..=16 => "u16".into(),
            17..=32 => "u32".into(),
            33..=64 => "u64".into(),
            _ => format!("[u32; {}]", self.words),
        }
    }
}

/// Ports from header lines like `VL_IN8(&clk,0,0);`, `VL_OUTW(&out_data,99,0,4);` or, for an
/// unpacked array, `VL_IN8((&data_i)[4],7,0);`.
pub(crate) fn parse(header: &Path) -> Result<Vec<Port>, String> {
    let text = fs::read_to_string(header).map_err(|e| format!("{}: {e}", header.display()))?;
    let mut ports = Vec::new();
    for line in text.lines().map(str::trim) {
        let Some((input, rest)) =
            line.strip_prefix("VL_IN").map(|r| (true, r)).or(line.strip_prefix("VL_OUT").map(|r| (false, r)))
        else {
            continue;
        };
        let Some(open) = rest.find('(') else { continue };
        let inner = rest[open + 1..].trim_end_matches(';').trim_end_matches(')');
        let bad = || format!("{}: cannot read the port line {line:?}", header.display());
        let (decl, nums) = split_decl(inner).ok_or_else(bad)?;
        let f: Vec<&str> = nums.split(',').map(str::trim).collect();
        let num = |i: usize| f.get(i).and_then(|s| s.parse::<u32>().ok()).ok_or_else(bad);
        let (msb, lsb) = (num(0)?, num(1)?);
        let words = if rest.starts_with('W') { num(2)? } else { 0 };
        let (name, dims) = parse_decl(decl).ok_or_else(bad)?;
        ports.push(Port { name, input, elem_width: msb.checked_sub(lsb).ok_or_else(bad)? + 1, words, dims });
    }
    Ok(ports)
}

/// `&name,7,0` or `(&name)[4][2],7,0` into the declaration and the numbers after it.
fn split_decl(inner: &str) -> Option<(&str, &str)> {
    if inner.starts_with("(&") {
        let close = inner.find(')')?;
        let after = &inner[close + 1..];
        let comma = after.find(',')?;
        Some((&inner[..close + 1 + comma], &after[comma + 1..]))
    } else {
        inner.split_once(',')
    }
}

/// `&name` or `(&name)[4][2]` into the name and the unpacked dimensions.
fn parse_decl(decl: &str) -> Option<(String, Vec<u32>)> {
    if let Some(plain) = decl.strip_prefix('&') {
        return Some((plain.to_string(), Vec::new()));
    }
    let rest = decl.strip_prefix("(&")?;
    let (name, mut dims_text) = rest.split_once(')')?;
    let mut dims = Vec::new();
    while let Some(r) = dims_text.strip_prefix('[') {
        let (d, after) = r.split_once(']')?;
        dims.push(d.trim().parse().ok()?);
        dims_text = after;
    }
    (dims_text.is_empty() && !dims.is_empty()).then(|| (name.to_string(), dims))
}

/// Every port fits the harness's 128 bits, and the declared clock (and reset, if any) are 1-bit
/// plain inputs; `clk` is reserved for the clock at the Rust interface. Errors name the port's
/// declaration in the sources (`file:line:col`) when it can be found there.
pub(crate) fn check(m: &Model, ports: &[Port]) -> Result<(), String> {
    // Every port too wide, in source order (Verilator's header groups ports by type).
    let mut wide: Vec<(Option<(usize, usize)>, String)> = ports
        .iter()
        .filter(|p| p.total_bits() > u64::from(MAX_PORT_BITS))
        .map(|p| {
            let shape = if p.dims.is_empty() {
                format!("{} bits", p.elem_width)
            } else {
                let dims: Vec<String> = p.dims.iter().map(|d| format!("[{d}]")).collect();
                format!("an unpacked array {} of {}-bit elements, {} bits in all", dims.join(""), p.elem_width, p.total_bits())
            };
            let (at, prefix) = locate_at(m, &p.name);
            let msg = format!(
                "{prefix}port {}: {shape}; the harness carries at most {MAX_PORT_BITS} bits a port (split it into ports of 128 bits or fewer)",
                p.name
            );
            (at, msg)
        })
        .collect();
    if !wide.is_empty() {
        wide.sort_by_key(|(at, _)| at.unwrap_or((usize::MAX, usize::MAX)));
        return Err(wide.into_iter().map(|(_, m)| m).collect::<Vec<_>>().join("\n"));
    }
    let input1 = |name: &str, what: &str| match ports.iter().find(|p| p.name == name) {
        Some(p) if p.input && p.elem_width == 1 && p.dims.is_empty() => Ok(()),
        Some(_) => {
            Err(format!("{}model {}: {what} `{name}` of {} is not a 1-bit input", locate(m, name), m.name, m.top))
        }
        None => Err(format!(
            "model {}: {} has no {what} input `{name}` (declare it: Model::clock / Model::reset)",
            m.name, m.top
        )),
    };
    input1(&m.clock, "clock")?;
    if m.clock != "clk" && ports.iter().any(|p| p.name == "clk") {
        return Err(format!(
            "{}model {}: the clock is `{}`, but `clk` names another port",
            locate(m, "clk"),
            m.name,
            m.clock
        ));
    }
    if let Some(r) = &m.reset {
        input1(&r.name, "reset")?;
    }
    Ok(())
}

/// `file:line:col: ` of the first mention of `port` after `module TOP` in the sources (the
/// port list), or of its first mention anywhere; empty when no source names it.
pub(crate) fn locate(m: &Model, port: &str) -> String {
    locate_at(m, port).1
}

/// [`locate`], with the (source index, byte offset) it found, for ordering.
fn locate_at(m: &Model, port: &str) -> (Option<(usize, usize)>, String) {
    let texts: Vec<(usize, String, String)> = m
        .sources
        .iter()
        .enumerate()
        .filter_map(|(i, s)| fs::read_to_string(s).ok().map(|t| (i, s.display().to_string(), t)))
        .collect();
    let module = format!("module {}", m.top);
    let found = texts
        .iter()
        .find_map(|(i, file, text)| {
            let at = find_word(text, &module, 0)?;
            find_word(text, port, at + module.len()).map(|pos| (*i, file, text, pos))
        })
        .or_else(|| texts.iter().find_map(|(i, file, text)| find_word(text, port, 0).map(|pos| (*i, file, text, pos))));
    match found {
        Some((i, file, text, pos)) => (Some((i, pos)), format!("{file}:{}: ", line_col(text, pos))),
        None => (None, String::new()),
    }
}

/// The first occurrence of `word` at or after byte `from` not inside a longer identifier.
fn find_word(text: &str, word: &str, from: usize) -> Option<usize> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    let mut at = from;
    while let Some(i) = text.get(at..)?.find(word) {
        let pos = at + i;
        let before = text[..pos].chars().next_back().is_some_and(ident);
        let after = text[pos + word.len()..].chars().next().is_some_and(ident);
        if !before && !after {
            return Some(pos);
        }
        at = pos + word.len();
    }
    None
}

/// `line:col` (1-based, columns in characters) of byte `pos`.
fn line_col(text: &str, pos: usize) -> String {
    let before = &text[..pos];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("{line}:{col}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(lines: &str) -> Vec<Port> {
        let dir = std::env::temp_dir().join(format!("vlt-ports-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let h = dir.join("V.h");
        fs::write(&h, lines).unwrap();
        parse(&h).unwrap()
    }

    #[test]
    fn plain_wide_and_unpacked_ports_are_read() {
        let p = header(
            "    VL_IN8(&clk,0,0);\n    VL_OUTW(&out_data,99,0,4);\n    VL_IN8((&data_i)[4],7,0);\n    VL_INW((&m)[2][3],69,0,3);\n",
        );
        assert_eq!(p.len(), 4);
        assert_eq!((p[0].name.as_str(), p[0].width(), p[0].input), ("clk", 1, true));
        assert_eq!((p[1].name.as_str(), p[1].width(), p[1].words, p[1].input), ("out_data", 100, 4, false));
        assert_eq!((p[2].name.as_str(), p[2].dims.clone(), p[2].total_bits()), ("data_i", vec![4], 32));
        assert_eq!((p[3].name.as_str(), p[3].dims.clone(), p[3].total_bits()), ("m", vec![2, 3], 420));
    }

    #[test]
    fn ports_over_128_bits_are_refused_at_their_declaration() {
        let dir = std::env::temp_dir().join(format!("vlt-ports-loc-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let sv = dir.join("top.sv");
        fs::write(
            &sv,
            "// data_i is wide\nmodule top (\n  input logic clk,\n  input logic [7:0] data_i [17]\n);\nendmodule\n",
        )
        .unwrap();
        let m = Model::new("t", "T", "top", [&sv]);
        let ports = vec![
            Port { name: "clk".into(), input: true, elem_width: 1, words: 0, dims: vec![] },
            Port { name: "data_i".into(), input: true, elem_width: 8, words: 0, dims: vec![17] },
        ];
        let e = check(&m, &ports).unwrap_err();
        assert!(e.starts_with(&format!("{}:4:21: port data_i: an unpacked array [17]", sv.display())), "{e}");
        assert!(e.contains("136 bits in all"), "{e}");
        let ok = vec![ports[0].clone_shape(), Port { dims: vec![16], ..ports[1].clone_shape() }];
        check(&m, &ok).unwrap();
        let wide =
            vec![ports[0].clone_shape(), Port { elem_width: 129, words: 5, dims: vec![], ..ports[1].clone_shape() }];
        assert!(check(&m, &wide).unwrap_err().contains("port data_i: 129 bits"));
        // Every port too wide is named, in source order whatever the header's order.
        let both = [Port { elem_width: 200, words: 7, ..ports[0].clone_shape() }, ports[1].clone_shape()];
        let e = check(&m, &[both[1].clone_shape(), both[0].clone_shape()]).unwrap_err();
        let lines: Vec<&str> = e.lines().collect();
        assert_eq!(lines.len(), 2, "{e}");
        assert!(lines[0].contains(":3:15: port clk: 200 bits") && lines[1].contains(":4:21: port data_i"), "{e}");
    }

    impl Port {
        fn clone_shape(&self) -> Port {
            Port {
                name: self.name.clone(),
                input: self.input,
                elem_width: self.elem_width,
                words: self.words,
                dims: self.dims.clone(),
            }
        }
    }
}
