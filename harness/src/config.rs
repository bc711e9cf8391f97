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
pub use trnsim_system::located::{field_at, from_ron, line_col, read_ron_file, ConfigError};

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
        /// Pipeline delay in cycles (>= 1).
        delay: u64,
        /// Pipeline capacity (>= 1).
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
    /// Latency in the sender's cycles (>= 1).
    pub latency: u64,
    /// Receiver buffer depth in messages (>= 1).
    pub depth: u32,
    /// Credit-return latency in the receiver's cycles (>= 1; default 1).
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
    /// Deadlock window (default "100us").
    #[serde(default)]
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
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("{}:0:0: (file): cannot read: {e}", path.display()))?;
    let f = path.display();
    match trnsim_system::chip::top_level_name(&text).as_deref() {
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

/// Parses and validates config text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<System, ConfigError> {
    let cfg: SystemConfig = from_ron(file, text)?;
    Validator { file, text }.validate(cfg)
}

struct Validator<'a> {
    file: &'a str,
    text: &'a str,
}

impl Validator<'_> {
    /// Line and column of `needle`, searching after the first occurrence of `anchor`.
    fn locate(&self, anchor: &str, needle: &str) -> (usize, usize) {
        let start = self.text.find(anchor).unwrap_or(0);
        let pos = self.text[start..].find(needle).map(|p| p + start).or_else(|| self.text.find(needle)).unwrap_or(0);
        line_col(self.text, pos)
    }

    fn err(&self, anchor: &str, needle: &str, field: String, message: String) -> ConfigError {
        let (line, col) = self.locate(anchor, needle);
        ConfigError { file: self.file.into(), line, col, field, message }
    }

    fn validate(&self, cfg: SystemConfig) -> Result<System, ConfigError> {
        let mut freqs = Vec::new();
        for (i, c) in cfg.clocks.iter().enumerate() {
            let name_lit = format!("{:?}", c.name);
            if cfg.clocks[..i].iter().any(|o| o.name == c.name) {
                return Err(self.err(
                    "clocks",
                    &name_lit,
                    format!("clocks[{i}].name"),
                    format!("duplicate clock name {name_lit}"),
                ));
            }
            let f: Frequency = c.freq.parse().map_err(|e: trnsim_kernel::QuantityError| {
                self.err(&name_lit, &format!("{:?}", c.freq), format!("clocks[{i}].freq"), e.to_string())
            })?;
            freqs.push(f);
        }
        if cfg.clocks.is_empty() {
            return Err(self.err("clocks", "clocks", "clocks".into(), "at least one clock is required".into()));
        }
        let clock_names: Vec<&str> = cfg.clocks.iter().map(|c| c.name.as_str()).collect();
        for (i, c) in cfg.components.iter().enumerate() {
            let name_lit = format!("{:?}", c.name);
            let anchor = format!("name: {name_lit}");
            if cfg.components[..i].iter().any(|o| o.name == c.name) {
                return Err(self.err(
                    "components",
                    &anchor,
                    format!("components[{i}].name"),
                    format!("duplicate component name {name_lit}"),
                ));
            }
            if !clock_names.contains(&c.clock.as_str()) {
                return Err(self.err(
                    &anchor,
                    &format!("{:?}", c.clock),
                    format!("components[{i}].clock"),
                    format!("unknown clock {:?} (allowed: {})", c.clock, clock_names.join(", ")),
                ));
            }
            self.check_kind(i, &anchor, &c.kind)?;
        }
        let mut endpoints = Vec::new();
        let mut bandwidths = Vec::new();
        let mut used: Vec<(usize, String)> = Vec::new();
        for (i, l) in cfg.links.iter().enumerate() {
            let anchor = format!("from: {:?}", l.from);
            let (a, ap) = self.endpoint(&cfg, i, "from", &l.from, &anchor, true)?;
            let (b, bp) = self.endpoint(&cfg, i, "to", &l.to, &anchor, false)?;
            for (c, p, field, s) in [(a, &ap, "from", &l.from), (b, &bp, "to", &l.to)] {
                if used.contains(&(c, p.clone())) {
                    return Err(self.err(
                        &anchor,
                        &format!("{s:?}"),
                        format!("links[{i}].{field}"),
                        format!("port {s:?} is already connected (each port takes one link)"),
                    ));
                }
                used.push((c, p.clone()));
            }
            let range = |field: &str, v: u64, what: &str| {
                if v == 0 {
                    Err(self.err(
                        &anchor,
                        &format!("{field}:"),
                        format!("links[{i}].{field}"),
                        format!("{field} = 0 is out of range (allowed: {what})"),
                    ))
                } else {
                    Ok(())
                }
            };
            range("latency", l.latency, ">= 1 sender cycle")?;
            range("depth", u64::from(l.depth), ">= 1 message")?;
            range("credit_latency", l.credit_latency, ">= 1 receiver cycle")?;
            bandwidths.push(match &l.bandwidth {
                None => Bandwidth::Unlimited,
                Some(s) => parse_bandwidth(s).ok_or_else(|| {
                    self.err(
                        &anchor,
                        &format!("{s:?}"),
                        format!("links[{i}].bandwidth"),
                        format!("invalid bandwidth {s:?} (allowed: \"<n>B/cycle\" or \"<n>msg/cycle\", n >= 1)"),
                    )
                })?,
            });
            endpoints.push((a, ap, b, bp));
        }
        for (i, c) in cfg.components.iter().enumerate() {
            let (ins, outs) = c.kind.ports();
            for p in ins.iter().chain(outs) {
                if !used.contains(&(i, p.to_string())) {
                    let name_lit = format!("name: {:?}", c.name);
                    return Err(self.err(
                        &name_lit,
                        &name_lit,
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
        let deadlock_window = match &cfg.run.deadlock_window {
            Some(s) => dur("deadlock_window", s)?,
            None => Dur::from_us(100),
        };
        Ok(System { cfg, freqs, bandwidths, limit, deadlock_window, endpoints })
    }

    fn check_kind(&self, i: usize, anchor: &str, k: &KindCfg) -> Result<(), ConfigError> {
        let bad = |field: &str, msg: String| {
            Err(self.err(anchor, &format!("{field}:"), format!("components[{i}].kind.{field}"), msg))
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
                if delay == 0 {
                    return bad("delay", "delay = 0 is out of range (allowed: >= 1 cycle)".into());
                }
                if slots == 0 {
                    return bad("slots", "slots = 0 is out of range (allowed: >= 1)".into());
                }
            }
            KindCfg::Sink => {}
        }
        Ok(())
    }

    fn endpoint(
        &self,
        cfg: &SystemConfig,
        i: usize,
        field: &str,
        s: &str,
        anchor: &str,
        sending: bool,
    ) -> Result<(usize, String), ConfigError> {
        let here = |msg: String| self.err(anchor, &format!("{s:?}"), format!("links[{i}].{field}"), msg);
        let Some((comp, port)) = s.rsplit_once('.') else {
            return Err(here(format!("{s:?} is not \"component.port\"")));
        };
        let Some(ci) = cfg.components.iter().position(|c| c.name == comp) else {
            let names: Vec<&str> = cfg.components.iter().map(|c| c.name.as_str()).collect();
            return Err(here(format!("unknown component {comp:?} (allowed: {})", names.join(", "))));
        };
        let (ins, outs) = cfg.components[ci].kind.ports();
        let allowed = if sending { outs } else { ins };
        if !allowed.contains(&port) {
            let dir = if sending { "output" } else { "input" };
            let list = if allowed.is_empty() { "none".to_string() } else { allowed.join(", ") };
            return Err(here(format!("{comp:?} has no {dir} port {port:?} (allowed: {list})")));
        }
        Ok((ci, port.to_string()))
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
