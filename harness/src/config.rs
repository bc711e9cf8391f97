//! RON system configs: clocks, generic components, links and run control, deserialized with
//! serde into typed structs and validated. Every error names the file, line, column and field,
//! and the allowed values or range.
//!
//! ```ron
//! (
//!     seed: 7,
//!     clocks: [(name: "core", freq: "1.4GHz"), (name: "fabric", freq: "2.4GHz")],
//!     components: [
//!         (name: "src", clock: "core", kind: Source(count: 100, bytes: 64, rate: 0.5)),
//!         (name: "sink", clock: "fabric", kind: Sink),
//!     ],
//!     links: [(from: "src.out", to: "sink.in", latency: 2, depth: 4)],
//!     run: (limit: "100us"),
//! )
//! ```

use serde::Deserialize;
use std::path::Path;
use trnsim_kernel::{Bandwidth, Dur, Frequency};
use trnsim_system::located::{from_ron, line_col, read_ron_file, ConfigError};

/// A whole system description.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemConfig {
    /// Seed for every random stream of the run (required: results depend on it).
    pub seed: u64,
    /// Clock domains.
    pub clocks: Vec<ClockCfg>,
    /// Components.
    pub components: Vec<ComponentCfg>,
    /// Point-to-point links.
    pub links: Vec<LinkCfg>,
    /// Run control.
    pub run: RunCfg,
}

/// A clock domain: `(name: "core", freq: "1.4GHz")`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockCfg {
    /// Unique name.
    pub name: String,
    /// Frequency with unit: "2.4GHz", "1400MHz".
    pub freq: String,
}

/// A component: `(name: "src", clock: "core", kind: Source(...))`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComponentCfg {
    /// Unique name; dots nest in traces ("chip0.dma").
    pub name: String,
    /// Name of its clock.
    pub clock: String,
    /// What it is.
    pub kind: KindCfg,
}

/// The generic component kinds.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum KindCfg {
    /// Injects `count` packets of `bytes` bytes, each cycle with probability `rate`. Port: out.
    Source {
        /// Packets to send.
        count: u64,
        /// Packet size in bytes (1..=1048576).
        bytes: u32,
        /// Injection probability per cycle, in (0, 1].
        rate: f64,
    },
    /// Forwards after `delay` cycles with `slots` entries. Ports: in, out.
    Relay {
        /// Pipeline delay in cycles (1..=1000000000).
        delay: u64,
        /// Pipeline capacity (1..=1048576).
        slots: u32,
    },
    /// Consumes packets, measures latency. Port: in.
    Sink,
}

impl KindCfg {
    /// (input ports, output ports) of this kind.
    pub fn ports(&self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            KindCfg::Source { .. } => (&[], &["out"]),
            KindCfg::Relay { .. } => (&["in"], &["out"]),
            KindCfg::Sink => (&["in"], &[]),
        }
    }
}

/// A link: `(from: "src.out", to: "sink.in", latency: 2, depth: 4)`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    /// "component.port" of the sender.
    pub from: String,
    /// "component.port" of the receiver.
    pub to: String,
    /// Latency in the sender's cycles (1..=1000000000).
    pub latency: u64,
    /// Receiver buffer depth in messages (1..=1048576).
    pub depth: u32,
    /// Credit-return latency in the receiver's cycles (1..=1000000000; default 1).
    #[serde(default = "one")]
    pub credit_latency: u64,
    /// Optional limit: "32B/cycle" or "2msg/cycle".
    #[serde(default, deserialize_with = "some_string")]
    pub bandwidth: Option<String>,
}

fn one() -> u64 {
    1
}

/// Reads a plain string into `Some` (so configs write `bandwidth: "32B/cycle"`, not `Some(..)`).
fn some_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    String::deserialize(d).map(Some)
}

/// Run control: `(limit: "100us")`; the run also stops when the system goes idle.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunCfg {
    /// Simulated-time limit: "100us", "2ms".
    pub limit: String,
    /// Deadlock window, e.g. "1ms" (default: 100us, or twice the longest legal silence of the
    /// system if that is longer; a window given must exceed that silence).
    #[serde(default, deserialize_with = "some_string")]
    pub deadlock_window: Option<String>,
}

/// A validated system: the config plus its parsed quantities.
#[derive(Clone, Debug)]
pub struct System {
    /// The config as written.
    pub cfg: SystemConfig,
    /// Parsed clock frequencies, by clock index.
    pub freqs: Vec<Frequency>,
    /// Parsed link bandwidths, by link index.
    pub bandwidths: Vec<Bandwidth>,
    /// Parsed run limit.
    pub limit: Dur,
    /// Parsed deadlock window.
    pub deadlock_window: Dur,
    /// For each link: (from component index, from port, to component index, to port).
    pub endpoints: Vec<(usize, String, usize, String)>,
}

/// Reads and validates a config file.
pub fn load(path: &Path) -> Result<System, ConfigError> {
    let (file, text) = read_ron_file(path)?;
    parse(&file, &text)
}

/// Validates any RON file trnsim reads, told apart by its top-level struct name: `ChipSpec` (a
/// chip, [`trnsim_system::chip::load`]), `UltraServerSpec` ([`trnsim_system::chip::ultraserver::load`]),
/// `TopologySpec` (a fabric, `trnsim_fabric::topo::load`), anything else a system config
/// ([`load`]). Returns a one-line summary, or the located error.
pub fn check_file(path: &Path) -> Result<String, String> {
    let text = trnsim_kernel::input::read_text(path)
        .map(trnsim_system::located::strip_bom)
        .map_err(|e| format!("{}:0:0: (file): cannot read: {e}", path.display()))?;
    let f = path.display();
    if trnsim_workloads::format::is_json(&text) {
        return check_workload(path, &text);
    }
    match trnsim_system::chip::top_level_name(&text).as_deref() {
        Some("Workload") => check_workload(path, &text),
        Some("ChipSpec") => {
            let c = trnsim_system::chip::load(path).map_err(|e| e.to_string())?;
            let s = &c.spec;
            Ok(format!(
                "{f}: ok (chip {}: {} cores, {} HBM stacks, {} DMA engines, {} CC cores, {} NeuronLink ports)",
                s.name,
                s.cores,
                s.hbm.stacks,
                s.cores * c.dma.engines,
                s.cc_cores,
                s.neuronlink.ports
            ))
        }
        Some("UltraServerSpec") => {
            let u = trnsim_system::chip::ultraserver::load(path)?;
            Ok(format!(
                "{f}: ok (UltraServer {}: {} x {} on {}, {} servers, {} links per chip)",
                u.spec.name,
                u.spec.chips,
                u.spec.chip,
                u.spec.fabric,
                u.spec.documented.servers,
                u.links_per_chip()
            ))
        }
        Some("UltraClusterSpec") => {
            let doc = trnsim_system::doc::SystemDoc::load(path)?;
            let trnsim_system::doc::Resolved::UltraCluster(c) = doc.resolve_for(trnsim_system::cluster::Level::Flow)?
            else {
                return Err(format!("{f}: not an UltraCluster"));
            };
            let t = &c.topology;
            // Checked for the flow-level network; say when the packet-level one refuses it.
            let (max_us, max_chips) = trnsim_system::cluster::Level::Packet.limits();
            let only = if c.spec.ultraservers > max_us || t.chips > max_chips {
                "; flow-level network only (--network flow)"
            } else {
                ""
            };
            Ok(format!(
                "{f}: ok (UltraCluster {}: {} x {} = {} chips, scale-out {} leaves and {} spines of {}, {} nodes, {} link directions{only})",
                c.spec.name,
                c.spec.ultraservers,
                c.spec.ultraserver,
                t.chips,
                c.scale_out.shape(c.ultraserver.topology.chips).map_or(0, |s| s.leaves),
                c.scale_out.spines,
                c.switch.spec.name,
                t.nodes.len(),
                t.edges.len()
            ))
        }
        Some("ScaleOutSwitchSpec") => {
            let (file, text) = trnsim_system::located::read_ron_file(path).map_err(|e| e.to_string())?;
            let spec = trnsim_system::located::from_ron(&file, &text).map_err(|e| e.to_string())?;
            let sw = trnsim_system::cluster::check_switch(&file, &text, spec).map_err(|e| e.to_string())?;
            Ok(format!(
                "{f}: ok (scale-out switch {}: {} ports of {} Gb/s, {} ps)",
                sw.spec.name, sw.spec.radix, sw.spec.port_Gbps, sw.latency_ps
            ))
        }
        Some("TopologySpec") => {
            let t = trnsim_fabric::topo::load(path)?;
            Ok(format!(
                "{f}: ok (topology {}: {} chips, {} nodes, {} link directions)",
                t.name,
                t.chips,
                t.nodes.len(),
                t.edges.len()
            ))
        }
        _ => {
            let sys = load(path).map_err(|e| e.to_string())?;
            let c = &sys.cfg;
            Ok(format!(
                "{f}: ok ({} clocks, {} components, {} links)",
                c.clocks.len(),
                c.components.len(),
                c.links.len()
            ))
        }
    }
}

/// `trnsim config check` of a workload file (RON or JSON, told apart by content): checked as
/// `trnsim run --workload` checks it before a system is chosen.
fn check_workload(path: &Path, text: &str) -> Result<String, String> {
    let c = trnsim_workloads::format::parse(&path.display().to_string(), text).map_err(|e| e.to_string())?;
    Ok(format!(
        "{}: ok (workload {}: {} ranks, {} nodes, {} group sets)",
        path.display(),
        trnsim_system::doc::suggest::clip(&c.w.name),
        c.w.ranks,
        c.w.nodes.len(),
        c.groups.len()
    ))
}

/// Parses and validates config text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<System, ConfigError> {
    let cfg: SystemConfig = from_ron(file, text)?;
    Validator { file, text }.validate(cfg)
}

/// The largest link latency, credit latency and relay delay, in cycles (a second at 1 GHz).
pub const MAX_CYCLES: u64 = 1_000_000_000;

/// The largest relay capacity, in packets.
pub const MAX_SLOTS: u32 = 1 << 20;

/// The deadlock window when a config gives none: this, or twice the system's longest legal
/// silence ([`System::longest_silence`]) if that is longer.
pub const DEFAULT_DEADLOCK_WINDOW: Dur = Dur::from_us(100);

struct Validator<'a> {
    file: &'a str,
    text: &'a str,
}

/// Byte offsets of the elements of the top-level list `key: [...]` in RON `text` (skipping
/// strings and comments), so an error about element `i` points into that element: O(text).
fn element_starts(text: &str, key: &str) -> Vec<usize> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut depth) = (0usize, 0i32);
    let mut list_depth: Option<i32> = None;
    let mut expect_elem = false;
    let mut last_ident: (usize, usize) = (0, 0);
    while i < b.len() {
        let c = b[i];
        match c {
            b'"' => {
                if expect_elem {
                    out.push(i);
                    expect_elem = false;
                }
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut nest = 0;
                while i + 1 < b.len() {
                    if b[i] == b'/' && b[i + 1] == b'*' {
                        nest += 1;
                        i += 2;
                    } else if b[i] == b'*' && b[i + 1] == b'/' {
                        nest -= 1;
                        i += 2;
                        if nest == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                continue;
            }
            b'(' | b'[' | b'{' => {
                if expect_elem {
                    out.push(i);
                    expect_elem = false;
                }
                depth += 1;
                if c == b'[' && list_depth.is_none() && depth == 2 && &text[last_ident.0..last_ident.1] == key {
                    list_depth = Some(depth);
                    expect_elem = true;
                }
            }
            b')' | b']' | b'}' => {
                if list_depth == Some(depth) {
                    return out;
                }
                depth -= 1;
            }
            b',' if list_depth == Some(depth) => expect_elem = true,
            c if c.is_ascii_alphanumeric() || c == b'_' => {
                let s = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                if expect_elem {
                    out.push(s);
                    expect_elem = false;
                }
                last_ident = (s, i);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Checks `v` in `lo..=hi`; the message gives the range.
fn in_range(v: u64, lo: u64, hi: u64, unit: &str) -> Result<(), String> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(format!("{v} is out of range (allowed: {lo}..={hi}{unit})"))
    }
}

impl Validator<'_> {
    /// An error at `needle` inside element `i` of list `list` (its start if absent).
    fn err_at(&self, starts: &[usize], i: usize, needle: &str, field: String, message: String) -> ConfigError {
        let start = starts.get(i).copied().unwrap_or(0);
        let end = starts.get(i + 1).copied().unwrap_or(self.text.len());
        let pos = self.text[start..end].find(needle).map_or(start, |p| p + start);
        let (line, col) = line_col(self.text, pos);
        ConfigError { file: self.file.into(), line, col, field, message }
    }

    /// An error at `needle` after the first `anchor` (for the `run` section).
    fn err(&self, anchor: &str, needle: &str, field: String, message: String) -> ConfigError {
        let start = self.text.find(anchor).unwrap_or(0);
        let pos = self.text[start..].find(needle).map(|p| p + start).or_else(|| self.text.find(needle)).unwrap_or(0);
        let (line, col) = line_col(self.text, pos);
        ConfigError { file: self.file.into(), line, col, field, message }
    }

    fn validate(&self, cfg: SystemConfig) -> Result<System, ConfigError> {
        let clock_at = element_starts(self.text, "clocks");
        let comp_at = element_starts(self.text, "components");
        let link_at = element_starts(self.text, "links");
        let mut freqs = Vec::new();
        let mut clock_index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (i, c) in cfg.clocks.iter().enumerate() {
            let name_lit = format!("{:?}", c.name);
            if let Some(first) = clock_index.insert(c.name.as_str(), i) {
                return Err(self.err_at(
                    &clock_at,
                    i,
                    &name_lit,
                    format!("clocks[{i}].name"),
                    format!("duplicate clock name {name_lit} (first defined as clocks[{first}])"),
                ));
            }
            let f: Frequency = c.freq.parse().and_then(|f| trnsim_kernel::Clock::new(&c.name, f).map(|_| f)).map_err(
                |e: trnsim_kernel::QuantityError| {
                    let m = if e.to_string().contains("500GHz") {
                        e.to_string()
                    } else {
                        format!("{e} (allowed: 1Hz..=500GHz)")
                    };
                    self.err_at(&clock_at, i, &format!("{:?}", c.freq), format!("clocks[{i}].freq"), m)
                },
            )?;
            freqs.push(f);
        }
        if cfg.clocks.is_empty() {
            return Err(self.err("clocks", "clocks", "clocks".into(), "at least one clock is required".into()));
        }
        let clock_names = || cfg.clocks.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ");
        let mut comp_index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (i, c) in cfg.components.iter().enumerate() {
            let name_lit = format!("{:?}", c.name);
            if let Some(first) = comp_index.insert(c.name.as_str(), i) {
                return Err(self.err_at(
                    &comp_at,
                    i,
                    &name_lit,
                    format!("components[{i}].name"),
                    format!("duplicate component name {name_lit} (first defined as components[{first}])"),
                ));
            }
            if !clock_index.contains_key(c.clock.as_str()) {
                return Err(self.err_at(
                    &comp_at,
                    i,
                    &format!("{:?}", c.clock),
                    format!("components[{i}].clock"),
                    format!("unknown clock {:?} (allowed: {})", c.clock, clock_names()),
                ));
            }
            self.check_kind(&comp_at, i, &c.kind)?;
        }
        let mut endpoints = Vec::new();
        let mut bandwidths = Vec::new();
        let mut used: std::collections::HashSet<(usize, &str)> = std::collections::HashSet::new();
        for (i, l) in cfg.links.iter().enumerate() {
            let (a, ap) = self.endpoint(&cfg, &comp_index, &link_at, i, "from", &l.from, true)?;
            let (b, bp) = self.endpoint(&cfg, &comp_index, &link_at, i, "to", &l.to, false)?;
            for (c, p, field, s) in [(a, ap, "from", &l.from), (b, bp, "to", &l.to)] {
                if !used.insert((c, p)) {
                    return Err(self.err_at(
                        &link_at,
                        i,
                        &format!("{s:?}"),
                        format!("links[{i}].{field}"),
                        format!("port {s:?} is already connected (each port takes one link)"),
                    ));
                }
            }
            let range = |field: &str, v: u64, hi: u64, unit: &str| {
                in_range(v, 1, hi, unit)
                    .map_err(|m| self.err_at(&link_at, i, &format!("{field}:"), format!("links[{i}].{field}"), m))
            };
            range("latency", l.latency, MAX_CYCLES, " sender cycles")?;
            range("depth", u64::from(l.depth), u64::from(trnsim_kernel::MAX_LINK_DEPTH), " messages")?;
            range("credit_latency", l.credit_latency, MAX_CYCLES, " receiver cycles")?;
            bandwidths.push(match &l.bandwidth {
                None => Bandwidth::Unlimited,
                Some(s) => parse_bandwidth(s).ok_or_else(|| {
                    self.err_at(
                        &link_at,
                        i,
                        &format!("{s:?}"),
                        format!("links[{i}].bandwidth"),
                        format!(
                            "invalid bandwidth {s:?} (allowed: \"<n>B/cycle\" or \"<n>msg/cycle\", n in 1..=4294967295)"
                        ),
                    )
                })?,
            });
            endpoints.push((a, ap.to_string(), b, bp.to_string()));
        }
        for (i, c) in cfg.components.iter().enumerate() {
            let (ins, outs) = c.kind.ports();
            for p in ins.iter().chain(outs) {
                if !used.contains(&(i, *p)) {
                    return Err(self.err_at(
                        &comp_at,
                        i,
                        &format!("{:?}", c.name),
                        format!("components[{i}]"),
                        format!("port {}.{p} is not connected to any link", c.name),
                    ));
                }
            }
        }
        let dur = |field: &str, s: &str| -> Result<Dur, ConfigError> {
            s.parse().map_err(|e: trnsim_kernel::QuantityError| {
                self.err("run", &format!("{s:?}"), format!("run.{field}"), e.to_string())
            })
        };
        let limit = dur("limit", &cfg.run.limit)?;
        let mut sys = System { cfg, freqs, bandwidths, limit, deadlock_window: DEFAULT_DEADLOCK_WINDOW, endpoints };
        let (silence, why) = sys.longest_silence();
        sys.deadlock_window = match &sys.cfg.run.deadlock_window {
            Some(s) => {
                let w = dur("deadlock_window", s)?;
                if w <= silence {
                    return Err(self.err(
                        "run",
                        &format!("{s:?}"),
                        "run.deadlock_window".into(),
                        format!(
                            "{w} is shorter than the longest legal silence, {silence} ({why}) (allowed: > {silence})"
                        ),
                    ));
                }
                w
            }
            None => DEFAULT_DEADLOCK_WINDOW.max(silence + silence),
        };
        Ok(sys)
    }

    fn check_kind(&self, starts: &[usize], i: usize, k: &KindCfg) -> Result<(), ConfigError> {
        let bad = |field: &str, msg: String| {
            Err(self.err_at(starts, i, &format!("{field}:"), format!("components[{i}].kind.{field}"), msg))
        };
        match *k {
            KindCfg::Source { bytes, rate, .. } => {
                if !(1..=1 << 20).contains(&bytes) {
                    return bad("bytes", format!("bytes = {bytes} is out of range (allowed: 1..=1048576)"));
                }
                if !(rate > 0.0 && rate <= 1.0) {
                    return bad("rate", format!("rate = {rate} is out of range (allowed: 0 < rate <= 1)"));
                }
            }
            KindCfg::Relay { delay, slots } => {
                if let Err(m) = in_range(delay, 1, MAX_CYCLES, " cycles") {
                    return bad("delay", m);
                }
                if let Err(m) = in_range(u64::from(slots), 1, u64::from(MAX_SLOTS), " packets") {
                    return bad("slots", m);
                }
            }
            KindCfg::Sink => {}
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn endpoint<'c>(
        &self,
        cfg: &'c SystemConfig,
        index: &std::collections::HashMap<&str, usize>,
        starts: &[usize],
        i: usize,
        field: &str,
        s: &'c str,
        sending: bool,
    ) -> Result<(usize, &'c str), ConfigError> {
        let here = |msg: String| self.err_at(starts, i, &format!("{s:?}"), format!("links[{i}].{field}"), msg);
        let Some((comp, port)) = s.rsplit_once('.') else {
            return Err(here(format!("{s:?} is not \"component.port\"")));
        };
        let Some(&ci) = index.get(comp) else {
            let mut names: Vec<&str> = cfg.components.iter().take(20).map(|c| c.name.as_str()).collect();
            if cfg.components.len() > 20 {
                names.push("...");
            }
            return Err(here(format!("unknown component {comp:?} (allowed: {})", names.join(", "))));
        };
        let (ins, outs) = cfg.components[ci].kind.ports();
        let allowed = if sending { outs } else { ins };
        let Some(p) = allowed.iter().find(|p| **p == port) else {
            let dir = if sending { "output" } else { "input" };
            let list = if allowed.is_empty() { "none".to_string() } else { allowed.join(", ") };
            return Err(here(format!("{comp:?} has no {dir} port {port:?} (allowed: {list})")));
        };
        Ok((ci, p))
    }
}

impl System {
    /// The longest time the system may legally go without progress, and what it is: the
    /// slowest link (latency, credit return and the largest packet's serialization at its
    /// bandwidth) or relay delay. The deadlock window must be longer.
    pub fn longest_silence(&self) -> (Dur, String) {
        let clock = |name: &str| {
            let i = self.cfg.clocks.iter().position(|c| c.name == name).unwrap_or(0);
            trnsim_kernel::Clock::new(name, self.freqs[i]).ok()
        };
        let comp_clock: Vec<Option<trnsim_kernel::Clock>> =
            self.cfg.components.iter().map(|c| clock(&c.clock)).collect();
        let cycles =
            |k: usize, n: u64| comp_clock[k].as_ref().map_or(Dur::ZERO, |c| c.cycles_to_dur(trnsim_kernel::Cycles(n)));
        let max_bytes = self
            .cfg
            .components
            .iter()
            .filter_map(|c| match c.kind {
                KindCfg::Source { bytes, .. } => Some(u64::from(bytes)),
                _ => None,
            })
            .max()
            .unwrap_or(1);
        let mut best = (Dur::ZERO, String::from("nothing"));
        for (i, (l, (a, _, b, _))) in self.cfg.links.iter().zip(&self.endpoints).enumerate() {
            let ser = match self.bandwidths[i] {
                Bandwidth::BytesPerCycle(n) => max_bytes.div_ceil(u64::from(n)),
                _ => 1,
            };
            let d = cycles(*a, l.latency.saturating_add(ser)) + cycles(*b, l.credit_latency);
            if d > best.0 {
                best = (d, format!("links[{i}]: latency, credits and a {max_bytes}-byte packet's serialization"));
            }
        }
        for (i, c) in self.cfg.components.iter().enumerate() {
            if let KindCfg::Relay { delay, .. } = c.kind {
                let d = cycles(i, delay);
                if d > best.0 {
                    best = (d, format!("components[{i}]: relay delay"));
                }
            }
        }
        best
    }
}

/// Parses "32B/cycle" or "2msg/cycle".
pub fn parse_bandwidth(s: &str) -> Option<Bandwidth> {
    let s = s.trim();
    let (num, unit) = s.split_once(|c: char| !c.is_ascii_digit()).map(|(n, _)| (n, &s[n.len()..]))?;
    let n: u32 = num.parse().ok().filter(|&n| n > 0)?;
    match unit.trim() {
        "B/cycle" => Some(Bandwidth::BytesPerCycle(n)),
        "msg/cycle" => Some(Bandwidth::MessagesPerCycle(n)),
        _ => None,
    }
}
