//! Topologies as data: the RON schema ([`TopologySpec`]), parsing with located errors, and
//! validation. Every error names the file, line, column and field, worded like the harness's
//! config errors (`file:line:col: field: message`).

use crate::link::encoding::{self, BondedLink};
use serde::{Deserialize, Serialize};
use std::fmt;
use trnsim_kernel::Dur;

/// One topology: chips, switches and the links between them, plus the fixed latencies every
/// link adds. Loaded from RON (models/configs/fabric/*.ron); unknown keys are rejected.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologySpec {
    /// Name used in reports ("trn2-server-4x4").
    pub name: String,
    /// Where the numbers come from (spec section and source keys).
    #[serde(default)]
    pub source: String,
    /// Values that are estimates, with the reasoning.
    #[serde(default)]
    pub estimated: Vec<String>,
    /// The shape of the network.
    pub kind: Kind,
    /// SerDes and PHY latency of both ends of a link together (default "40ns": spec §10, 2 x 20
    /// ns, E).
    #[serde(default = "default_phy")]
    pub phy: String,
    /// Propagation on the channel (default "5ns", E).
    #[serde(default = "default_wire")]
    pub wire: String,
    /// Data-link pipeline of both ends together (default "10ns", E; as `LinkParams`).
    #[serde(default = "default_link_layer")]
    pub link_layer: String,
    /// Network packet size: messages are split into packets of this many payload bytes, in
    /// bytes (default 4096). Link efficiency is taken for transaction payloads of
    /// `min(packet_bytes, encoding max payload)`.
    #[serde(default = "default_packet_bytes")]
    pub packet_bytes: u32,
    /// The energy table a run of this fabric alone (collectives, `fabric-*`) is priced by: a
    /// built-in table's name or a `.ron` file beside this one (empty: none, and such runs
    /// report no energy). In an UltraServer the chip's table prices the whole system.
    #[serde(default)]
    pub energy: String,
}

fn default_phy() -> String {
    "40ns".into()
}
fn default_wire() -> String {
    "5ns".into()
}
fn default_link_layer() -> String {
    "10ns".into()
}
fn default_packet_bytes() -> u32 {
    4096
}

/// The shape of a network.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Kind {
    /// A k-ary n-dimensional torus of chips (Trn2: 4x4 per server, 4x4x4 per UltraServer).
    /// Chip `i` has coordinates in mixed radix, dimension 0 fastest. Routed dimension-order,
    /// shortest way round each ring (ties go the + way).
    Torus {
        /// Ring size of each dimension (each >= 1).
        dims: Vec<u32>,
        /// The lanes of one link.
        link: LinkKind,
        /// Parallel links to each neighbour, per dimension (same length as `dims`).
        links_per_neighbor: Vec<u32>,
    },
    /// Every chip linked directly to every other chip.
    FullMesh {
        /// Number of chips (>= 2).
        chips: u32,
        /// The lanes of one link.
        link: LinkKind,
        /// Parallel links between each pair (>= 1).
        links_per_pair: u32,
    },
    /// Chips on switch tiers (Trn3 NL32x2 / NL72x2): each tier has switches serving one
    /// server's chips (`server`) or all chips (`all`); routed over minimal-hop paths, each
    /// packet taking the candidate link that frees first (deterministic ties: lowest link).
    Switched {
        /// Number of chips (>= 2).
        chips: u32,
        /// Chips per server (divides `chips`).
        chips_per_server: u32,
        /// The lanes of one link.
        link: LinkKind,
        /// The switch tiers.
        tiers: Vec<Tier>,
        /// Parallel direct links from each chip to its peer in the other half of the system
        /// (chip `c` to `c + chips/2`, mod chips); 0 = none (default).
        #[serde(default)]
        direct_links: u32,
    },
    /// A k-ary n-tree (Petrini and Vanneschi 1997), a folded Clos of `levels` stages of
    /// switches with `radix` = 2k ports: each switch has k ports down and k up (the top level
    /// uses only its k down ports). `k^levels` chips, `levels x k^(levels-1)` switches; full
    /// bisection bandwidth. Chip `c`'s base-k digits `d_0..d_(n-1)` (d_0 least significant)
    /// place it: its leaf switch serves the k chips sharing `c / k`. Routed up/down,
    /// deterministically: up to the lowest common ancestor level, choosing at level `l` the
    /// up-port `d_l` of the destination (destination-mod-k routing), then down the only way.
    FatTree {
        /// Ports per switch (even, >= 4): k = radix / 2 down and k up.
        radix: u32,
        /// Switch levels n (>= 1); at most 2 x levels hops between chips.
        levels: u32,
        /// The lanes of one link (chip-to-leaf and switch-to-switch alike, one per port).
        link: LinkKind,
        /// Port-to-port latency of one switch, added to links leaving it (default "120ns":
        /// spec §10, E).
        #[serde(default = "default_switch_latency")]
        switch_latency: String,
    },
}

fn default_switch_latency() -> String {
    "120ns".into()
}

impl Kind {
    /// Chips and switches per level of a fat tree (radix / 2)^levels and (radix / 2)^(levels-1).
    pub fn fat_tree_sizes(radix: u32, levels: u32) -> Option<(usize, usize)> {
        let k = (radix / 2) as usize;
        let per = k.checked_pow(levels.checked_sub(1)?)?;
        Some((per.checked_mul(k)?, per))
    }
}

/// The lanes of one link direction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkKind {
    /// Lane encoding: "pcie-gen5", "pcie-gen6" or "ualink-200g".
    pub encoding: String,
    /// Lanes bonded (x8 = 8).
    pub lanes: u32,
}

/// Which chips one switch of a tier serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The chips of one server (a tier has `switches` switches per server).
    Server,
    /// All chips (the tier has `switches` switches in total).
    All,
}

/// One tier of switches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tier {
    /// Name used in node names ("intra", "inter").
    pub name: String,
    /// Which chips each switch serves.
    pub scope: Scope,
    /// Switches per scope (>= 1).
    pub switches: u32,
    /// Parallel links from each chip to each switch of the tier (>= 1).
    pub links_per_chip_per_switch: u32,
    /// Port-to-port latency of one switch, added to links leaving it (e.g. "120ns").
    pub switch_latency: String,
}

/// A topology spec that failed to parse or validate, located in its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopoError {
    /// The file (or the name given to [`parse`]).
    pub file: String,
    /// 1-based line (0 when the file could not be read).
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// The field path, e.g. `kind.dims`.
    pub field: String,
    /// What is wrong, with the allowed values or range.
    pub message: String,
}

impl fmt::Display for TopoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}: {}", self.file, self.line, self.col, self.field, self.message)
    }
}

impl std::error::Error for TopoError {}

/// A validated spec: the fields with units parsed.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The spec as written.
    pub spec: TopologySpec,
    /// The bonded link of the topology.
    pub link: BondedLink,
    /// PHY + wire + link layer of one link, in picoseconds.
    pub link_latency_ps: u64,
    /// Per tier, the switch latency in picoseconds (empty for tori and meshes; one entry, all
    /// levels, for a fat tree).
    pub tier_latency_ps: Vec<u64>,
}

/// Reads and validates a topology file.
pub fn load(path: &std::path::Path) -> Result<Checked, TopoError> {
    let file = path.display().to_string();
    let mut text = trnsim_kernel::input::read_text(path).map_err(|e| TopoError {
        file: file.clone(),
        line: 0,
        col: 0,
        field: "(file)".into(),
        message: format!("cannot read: {e}"),
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..3); // a UTF-8 byte-order mark
    }
    parse(&file, &text)
}

/// Parses and validates topology text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Checked, TopoError> {
    let spec: TopologySpec = ron::from_str(text).map_err(|e| {
        let trnsim_kernel::input::RonError { line, col, field, message } = trnsim_kernel::input::ron_error(text, &e);
        TopoError { file: file.into(), line, col, field, message }
    })?;
    check(file, text, spec)
}

/// Validates `spec`, which was read from (or overrides a spec read from) `text` of `file`:
/// errors are located at the field's place in that text.
pub fn check(file: &str, text: &str, spec: TopologySpec) -> Result<Checked, TopoError> {
    Validator { file, text }.check(spec)
}

/// The largest fat tree accepted, in chips (routing tables grow as chips x nodes).
pub const MAX_FAT_TREE_CHIPS: usize = 4096;

/// The most chips a torus or switched topology may have (routing tables grow as chips x nodes).
pub const MAX_CHIPS: u64 = 4096;

/// The most chips of a full mesh (its links grow as chips squared).
pub const MAX_MESH_CHIPS: u32 = 256;

/// The most parallel links per neighbour, pair or switch, the most switches per tier, tiers,
/// direct links, and the largest packet (bytes).
pub const MAX_PARALLEL_LINKS: u32 = 64;
/// See [`MAX_PARALLEL_LINKS`].
pub const MAX_SWITCHES_PER_TIER: u32 = 1024;
/// See [`MAX_PARALLEL_LINKS`].
pub const MAX_TIERS: usize = 8;
/// See [`MAX_PARALLEL_LINKS`].
pub const MAX_PACKET_BYTES: u32 = 1 << 20;

struct Validator<'a> {
    file: &'a str,
    text: &'a str,
}

impl Validator<'_> {
    /// An error at the first `key:` in the text (the start when absent, e.g. a defaulted field).
    fn err(&self, key: &str, field: &str, message: String) -> TopoError {
        let pos = self.text.find(&format!("{key}:")).unwrap_or(0);
        let line = self.text[..pos].matches('\n').count() + 1;
        let col = pos - self.text[..pos].rfind('\n').map_or(0, |p| p + 1) + 1;
        TopoError { file: self.file.into(), line, col, field: field.into(), message }
    }

    fn dur(&self, key: &str, field: &str, s: &str) -> Result<u64, TopoError> {
        s.parse::<Dur>().map(|d| d.as_ps()).map_err(|e| self.err(key, field, e.to_string()))
    }

    fn link(&self, l: &LinkKind) -> Result<BondedLink, TopoError> {
        let enc = encoding::find(&l.encoding).ok_or_else(|| {
            let m = format!("unknown encoding {:?} (allowed: {})", l.encoding, encoding::names());
            self.err("encoding", "kind.link.encoding", m)
        })?;
        BondedLink::new(enc, l.lanes).map_err(|e| self.err("lanes", "kind.link.lanes", e.to_string()))
    }

    fn at_least(&self, key: &str, field: &str, v: u32, min: u32) -> Result<(), TopoError> {
        if v < min {
            return Err(self.err(key, field, format!("{v} is out of range (allowed: >= {min})")));
        }
        Ok(())
    }

    fn between(&self, key: &str, field: &str, v: u32, min: u32, max: u32) -> Result<(), TopoError> {
        if !(min..=max).contains(&v) {
            return Err(self.err(key, field, format!("{v} is out of range (allowed: {min}..={max})")));
        }
        Ok(())
    }

    fn check(&self, spec: TopologySpec) -> Result<Checked, TopoError> {
        let lat = self.dur("phy", "phy", &spec.phy)?
            + self.dur("wire", "wire", &spec.wire)?
            + self.dur("link_layer", "link_layer", &spec.link_layer)?;
        if lat == 0 {
            return Err(self.err("phy", "phy", "phy + wire + link_layer = 0 (allowed: > 0)".into()));
        }
        self.between("packet_bytes", "packet_bytes", spec.packet_bytes, 64, MAX_PACKET_BYTES)?;
        let (link, tier_latency_ps) = match &spec.kind {
            Kind::Torus { dims, link, links_per_neighbor } => {
                let chips = dims.iter().try_fold(1u64, |n, &d| n.checked_mul(u64::from(d)).filter(|&n| n <= MAX_CHIPS));
                if dims.is_empty() || dims.contains(&0) || chips.is_none_or(|n| n < 2) {
                    let m = format!(
                        "{dims:?} is out of range (allowed: each >= 1, 2..={MAX_CHIPS} chips in all; asked for {})",
                        dims.iter().map(|&d| d.to_string()).collect::<Vec<_>>().join(" x ")
                    );
                    return Err(self.err("dims", "kind.dims", m));
                }
                let bad = |&n: &u32| n == 0 || n > MAX_PARALLEL_LINKS;
                if links_per_neighbor.len() != dims.len() || links_per_neighbor.iter().any(bad) {
                    let m = format!(
                        "{links_per_neighbor:?}: need one value in 1..={MAX_PARALLEL_LINKS} per dimension ({})",
                        dims.len()
                    );
                    return Err(self.err("links_per_neighbor", "kind.links_per_neighbor", m));
                }
                (self.link(link)?, vec![])
            }
            Kind::FullMesh { chips, link, links_per_pair } => {
                self.between("chips", "kind.chips", *chips, 2, MAX_MESH_CHIPS)?;
                self.between("links_per_pair", "kind.links_per_pair", *links_per_pair, 1, MAX_PARALLEL_LINKS)?;
                (self.link(link)?, vec![])
            }
            Kind::Switched { chips, chips_per_server, link, tiers, direct_links } => {
                self.between("chips", "kind.chips", *chips, 2, MAX_CHIPS as u32)?;
                self.at_least("chips_per_server", "kind.chips_per_server", *chips_per_server, 1)?;
                self.between("direct_links", "kind.direct_links", *direct_links, 0, MAX_PARALLEL_LINKS)?;
                if tiers.len() > MAX_TIERS {
                    let m = format!("{} tiers is out of range (allowed: 0..={MAX_TIERS})", tiers.len());
                    return Err(self.err("tiers", "kind.tiers", m));
                }
                if chips % chips_per_server != 0 {
                    let m = format!("{chips_per_server} does not divide chips = {chips}");
                    return Err(self.err("chips_per_server", "kind.chips_per_server", m));
                }
                if *direct_links > 0 && chips % 2 != 0 {
                    let m = format!("direct links pair chip c with c + chips/2, but chips = {chips} is odd");
                    return Err(self.err("direct_links", "kind.direct_links", m));
                }
                if tiers.is_empty() && *direct_links == 0 {
                    return Err(self.err("tiers", "kind.tiers", "no tiers and no direct links".into()));
                }
                let mut lat = Vec::new();
                for (i, t) in tiers.iter().enumerate() {
                    let f = format!("kind.tiers[{i}].switches");
                    self.between("switches", &f, t.switches, 1, MAX_SWITCHES_PER_TIER)?;
                    let f = format!("kind.tiers[{i}].links_per_chip_per_switch");
                    self.between("links_per_chip_per_switch", &f, t.links_per_chip_per_switch, 1, MAX_PARALLEL_LINKS)?;
                    lat.push(self.dur(
                        "switch_latency",
                        &format!("kind.tiers[{i}].switch_latency"),
                        &t.switch_latency,
                    )?);
                }
                (self.link(link)?, lat)
            }
            Kind::FatTree { radix, levels, link, switch_latency } => {
                if *radix < 4 || radix % 2 != 0 {
                    return Err(self.err(
                        "radix",
                        "kind.radix",
                        format!("{radix} is out of range (allowed: even, >= 4)"),
                    ));
                }
                self.at_least("levels", "kind.levels", *levels, 1)?;
                let chips = Kind::fat_tree_sizes(*radix, *levels).map_or(usize::MAX, |(c, _)| c);
                if chips > MAX_FAT_TREE_CHIPS {
                    let m =
                        format!("(radix / 2)^levels = {chips} chips is too many (allowed: <= {MAX_FAT_TREE_CHIPS})");
                    return Err(self.err("levels", "kind.levels", m));
                }
                let lat = self.dur("switch_latency", "kind.switch_latency", switch_latency)?;
                (self.link(link)?, vec![lat])
            }
        };
        Ok(Checked { spec, link, link_latency_ps: lat, tier_latency_ps })
    }
}
