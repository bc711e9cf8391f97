//! A system file as one tree of named fields, with `--set PATH=VALUE` overrides.
//!
//! A chip, UltraServer or fabric file names its parts by preset (`chip: "trn3-chip"`,
//! `fabric: "trn3-gen2-nl72x2"`). [`SystemDoc`] reads the file, resolves those names, and
//! holds the whole system as one tree in which every field has a path:
//!
//! ```text
//!   chip file          chip.hbm.stacks, chip.neuronlink.ports, chip.dma.start_latency, ...
//!   UltraServer file   chips, documented.servers, chip.<as above>, fabric.<as below>
//!   fabric file        fabric.packet_bytes, fabric.kind.switched.tiers[0].switch_latency, ...
//! ```
//!
//! Paths: fields joined by `.`; list elements as `[i]` (or `.i`), every element as `[*]`. A
//! field may be named without the fields it is nested in when only one field of that name
//! is reachable through plain fields (`fabric.tiers[*].switch_latency` for
//! `fabric.kind.switched.tiers[*].switch_latency`; `hbm.stacks` in a chip file). Shorthands:
//! [`ALIASES`]. A value is read as the field's type: a number for a number, text for text
//! (quantities keep their units: `200ns`), RON for a list.
//!
//! Overrides are applied before validation, so an overridden value is checked like a written
//! one; its errors are located at the field in the file, and name the `--set` that gave the
//! value. [`SystemDoc::resolve`] gives the validated [`Resolved`] system.

use crate::chip::spec::{self as chip_spec, Chip, ChipSpec};
use crate::chip::ultraserver::{self, Presets, UltraServer, UltraServerSpec};
use crate::cluster::{self, ScaleOutSwitchSpec, UltraCluster, UltraClusterSpec};
use crate::energy::{self, EnergyTable};
use serde_json::{Map, Value};
use std::path::Path;
use trnsim_fabric::topo::{self, Topology, TopologySpec};

/// How the file name of a built-in preset ends (`trn3-chip.ron (built in)`).
pub const BUILT_IN: &str = " (built in)";

/// Shorthands for common paths: (shorthand, the paths it stands for, tried in order; the
/// first that exists in the system is used).
pub const ALIASES: &[(&str, &[&str])] = &[(
    "fabric.switch.latency",
    &["fabric.kind.switched.tiers[*].switch_latency", "fabric.kind.fat_tree.switch_latency"],
)];

/// What a system file describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DocKind {
    /// One chip (`ChipSpec`).
    Chip,
    /// An UltraServer: a chip on a fabric (`UltraServerSpec`).
    UltraServer,
    /// A fabric topology alone (`TopologySpec`).
    Fabric,
    /// UltraServers joined by a scale-out network (`UltraClusterSpec`).
    UltraCluster,
}

impl DocKind {
    /// Lower-case name, as in messages.
    pub fn name(self) -> &'static str {
        match self {
            DocKind::Chip => "chip",
            DocKind::UltraServer => "UltraServer",
            DocKind::Fabric => "fabric",
            DocKind::UltraCluster => "UltraCluster",
        }
    }
}

/// The file a part of the system was read from, to locate its errors.
#[derive(Clone, Debug)]
struct Source {
    file: String,
    text: String,
}

/// One `--set` as given, and the concrete paths it wrote.
#[derive(Clone, Debug)]
struct Applied {
    flag: String,
    paths: Vec<String>,
    /// The warning when the value is far from the one it replaced (printed once the system
    /// resolves: a refused run prints only its error).
    far: Option<String>,
}

/// A system file with its presets resolved, as one tree of named fields (see the module docs).
#[derive(Clone, Debug)]
pub struct SystemDoc {
    kind: DocKind,
    tree: Value,
    top: Source,
    chip: Option<Source>,
    /// The chip's core file (or preset).
    core: Option<Source>,
    /// The chip's HBM stack file (or preset).
    stack: Option<Source>,
    fabric: Option<Source>,
    /// An UltraCluster's UltraServer file and scale-out switch file.
    ultraserver: Option<Source>,
    switch: Option<Source>,
    /// The chip's energy table.
    energy: Option<Source>,
    applied: Vec<Applied>,
}

/// A validated system, ready to build.
#[derive(Clone, Debug)]
pub enum Resolved {
    /// One chip.
    Chip(Box<Chip>),
    /// An UltraServer: its chip and its built fabric.
    UltraServer(Box<UltraServer>),
    /// A fabric alone.
    Fabric(Box<Topology>),
    /// UltraServers joined by a scale-out network: the chip, and every fabric as one.
    UltraCluster(Box<UltraCluster>),
}

impl Resolved {
    /// The chip, if the system has one.
    pub fn chip(&self) -> Option<&Chip> {
        match self {
            Resolved::Chip(c) => Some(c),
            Resolved::UltraServer(u) => Some(&u.chip),
            Resolved::Fabric(_) => None,
            Resolved::UltraCluster(c) => Some(c.chip()),
        }
    }

    /// The fabric, if the system has one.
    pub fn fabric(&self) -> Option<&Topology> {
        match self {
            Resolved::Chip(_) => None,
            Resolved::UltraServer(u) => Some(&u.topology),
            Resolved::Fabric(t) => Some(t),
            Resolved::UltraCluster(c) => Some(&c.topology),
        }
    }
}

/// The built-in UltraServer presets, by name.
pub const BUILTIN_ULTRASERVERS: &[(&str, &str)] = &[
    ("trn2-ultraserver", ultraserver::TRN2_ULTRASERVER_RON),
    ("trn3-gen1-ultraserver", ultraserver::TRN3_GEN1_RON),
    ("trn3-gen2-ultraserver", ultraserver::TRN3_GEN2_RON),
    ("trn4-ultraserver", include_str!("../../configs/system/trn4-ultraserver.ron")),
];

/// Every built-in system preset name, by kind (for `--system` and messages).
pub fn preset_names() -> Vec<(&'static str, DocKind)> {
    let chips = ultraserver::BUILTIN_CHIPS.iter().map(|(n, _)| (*n, DocKind::Chip));
    let us = BUILTIN_ULTRASERVERS.iter().map(|(n, _)| (*n, DocKind::UltraServer));
    let fabrics = ultraserver::BUILTIN_FABRICS.iter().map(|(n, _)| (*n, DocKind::Fabric));
    let clusters = cluster::BUILTIN_CLUSTERS.iter().map(|(n, _)| (*n, DocKind::UltraCluster));
    chips.chain(us).chain(clusters).chain(fabrics).collect()
}

fn to_tree<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// `chip` with its core's name resolved into the description (checked and located in its own
/// file), and where that description was read from.
fn with_core(mut chip: ChipSpec, chip_file: &str, chip_text: &str) -> Result<(ChipSpec, Option<Source>), String> {
    use crate::chip::core_file;
    let chip_spec::CoreRef::Name(name) = &chip.core else {
        return Ok((chip, None));
    };
    let (file, text) = core_file::find(name, chip_file).map_err(|m| {
        let (line, col) = crate::located::line_col(chip_text, chip_text.find("core:").unwrap_or(0));
        format!("{chip_file}:{line}:{col}: core: {m}")
    })?;
    let core = core_file::parse(&file, &text).map_err(|e| e.to_string())?;
    chip.core = chip_spec::CoreRef::Spec(Box::new(core));
    Ok((chip, Some(Source { file, text })))
}

/// `chip` with its core's and HBM stack's names resolved into their descriptions (each
/// checked and located in its own file), and where they were read from.
fn with_parts(chip: ChipSpec, chip_file: &str, chip_text: &str) -> Result<(ChipSpec, Parts), String> {
    let (mut chip, core) = with_core(chip, chip_file, chip_text)?;
    use crate::chip::stack_file;
    let chip_spec::StackRef::Name(name) = &chip.hbm.preset else {
        return Ok((chip, Parts { core, stack: None }));
    };
    let (file, text) = stack_file::find(name, chip_file).map_err(|m| {
        let e = crate::chip::core_file::locate_path(chip_file, chip_text, "hbm.preset", m);
        e.to_string()
    })?;
    let stack = stack_file::parse(&file, &text).map_err(|e| e.to_string())?;
    chip.hbm.preset = chip_spec::StackRef::Spec(Box::new(stack));
    Ok((chip, Parts { core, stack: Some(Source { file, text }) }))
}

/// Where a chip's core and HBM stack descriptions were read from.
#[derive(Clone, Debug, Default)]
struct Parts {
    core: Option<Source>,
    stack: Option<Source>,
}

impl SystemDoc {
    /// `--system ARG`: a preset name (see [`preset_names`]) or a RON file.
    pub fn open(arg: &str) -> Result<SystemDoc, String> {
        let p = Path::new(arg);
        if arg.ends_with(".ron") || arg.contains('/') || p.is_file() {
            return SystemDoc::load(p);
        }
        let table =
            [ultraserver::BUILTIN_CHIPS, BUILTIN_ULTRASERVERS, cluster::BUILTIN_CLUSTERS, ultraserver::BUILTIN_FABRICS];
        match table.iter().flat_map(|t| t.iter()).find(|(n, _)| *n == arg) {
            Some((n, text)) => SystemDoc::parse(&format!("{n}.ron (built in)"), text, &Presets::BuiltIn),
            None => {
                let names: Vec<&str> = preset_names().iter().map(|(n, _)| *n).collect();
                Err(format!("--system {arg}: unknown preset and no such file (presets: {})", names.join(", ")))
            }
        }
    }

    /// Reads a chip, UltraServer or fabric file; names in it resolve beside it, then among the
    /// presets on disk.
    pub fn load(path: &Path) -> Result<SystemDoc, String> {
        let (file, text) = crate::located::read_ron_file(path).map_err(|e| e.to_string())?;
        SystemDoc::parse(&file, &text, &Presets::beside(path))
    }

    /// Parses system text named `file`, resolving preset names with `presets`.
    pub fn parse(file: &str, text: &str, presets: &Presets) -> Result<SystemDoc, String> {
        let top = Source { file: file.into(), text: text.into() };
        match crate::chip::top_level_name(text).as_deref() {
            Some("ChipSpec") => {
                let spec: ChipSpec = crate::located::from_ron(file, text).map_err(|e| e.to_string())?;
                let (spec, parts) = with_parts(spec, file, text)?;
                let tree = Value::Object(Map::from_iter([("chip".to_string(), to_tree(&spec))]));
                SystemDoc {
                    kind: DocKind::Chip,
                    tree,
                    core: parts.core,
                    stack: parts.stack,
                    chip: Some(top.clone()),
                    top,
                    fabric: None,
                    ultraserver: None,
                    switch: None,
                    energy: None,
                    applied: vec![],
                }
                .attach_energy()
            }
            Some("TopologySpec") => {
                let spec: TopologySpec = crate::located::from_ron(file, text).map_err(|e| e.to_string())?;
                let tree = Value::Object(Map::from_iter([("fabric".to_string(), to_tree(&spec))]));
                let fabric = Some(top.clone());
                SystemDoc {
                    kind: DocKind::Fabric,
                    tree,
                    chip: None,
                    core: None,
                    stack: None,
                    top,
                    fabric,
                    ultraserver: None,
                    switch: None,
                    energy: None,
                    applied: vec![],
                }
                .attach_energy()
            }
            Some("UltraServerSpec") => SystemDoc::ultraserver(top, presets)?.attach_energy(),
            Some("UltraClusterSpec") => SystemDoc::cluster(top, presets)?.attach_energy(),
            other => Err(format!(
                "{file}:1:1: (top level): {} is not a system file (allowed: ChipSpec, UltraServerSpec, UltraClusterSpec, TopologySpec)",
                other.map_or("an unnamed struct".to_string(), |n| format!("`{n}`"))
            )),
        }
    }

    fn ultraserver(top: Source, presets: &Presets) -> Result<SystemDoc, String> {
        let spec: UltraServerSpec = crate::located::from_ron(&top.file, &top.text).map_err(|e| e.to_string())?;
        // Resolve through the UltraServer's own checks first: a bad name is located in its file.
        ultraserver::check_file_names(&top.file, &top.text, &spec, presets).map_err(|e| e.to_string())?;
        let found = |f: ultraserver::Found| f.map_err(|_| format!("{}: preset vanished", top.file));
        let (cf, ct) = found(presets.chip(&spec.chip))?;
        let (ff, ft) = found(presets.fabric(&spec.fabric))?;
        let chip: ChipSpec = crate::located::from_ron(&cf, &ct).map_err(|e| e.to_string())?;
        let (chip, parts) = with_parts(chip, &cf, &ct)?;
        let fabric: TopologySpec = crate::located::from_ron(&ff, &ft).map_err(|e| e.to_string())?;
        let mut tree = to_tree(&spec);
        if let Value::Object(m) = &mut tree {
            m.insert("chip".into(), to_tree(&chip));
            m.insert("fabric".into(), to_tree(&fabric));
        }
        let (chip, fabric) = (Some(Source { file: cf, text: ct }), Some(Source { file: ff, text: ft }));
        Ok(SystemDoc {
            kind: DocKind::UltraServer,
            tree,
            top,
            chip,
            core: parts.core,
            stack: parts.stack,
            fabric,
            ultraserver: None,
            switch: None,
            energy: None,
            applied: vec![],
        })
    }

    /// An UltraCluster file: its UltraServer (with that file's chip and fabric) and its switch
    /// resolved; the tree holds `ultraserver` (the UltraServer's own fields), `chip`, `fabric`
    /// and `scale_out.switch` as their specs.
    fn cluster(top: Source, presets: &Presets) -> Result<SystemDoc, String> {
        let spec: UltraClusterSpec = crate::located::from_ron(&top.file, &top.text).map_err(|e| e.to_string())?;
        let at = |key: &str, m: String| {
            let pos = top.text.find(&format!("{key}:")).unwrap_or(0);
            let (line, col) = crate::located::line_col(&top.text, pos);
            format!("{}:{line}:{col}: {key}: {m}", top.file)
        };
        let (uf, ut) = presets.ultraserver(&spec.ultraserver).map_err(|known| {
            at(
                "ultraserver",
                format!("unknown UltraServer preset {:?} (known: {})", spec.ultraserver, known.join(", ")),
            )
        })?;
        let (sf, st) = presets.switch(&spec.scale_out.switch).map_err(|known| {
            at(
                "switch",
                format!("unknown scale-out switch preset {:?} (known: {})", spec.scale_out.switch, known.join(", ")),
            )
        })?;
        let us = SystemDoc::ultraserver(Source { file: uf.clone(), text: ut.clone() }, presets)?;
        let switch: ScaleOutSwitchSpec = crate::located::from_ron(&sf, &st).map_err(|e| e.to_string())?;
        let mut tree = to_tree(&spec);
        let mut us_tree = us.tree;
        if let (Value::Object(m), Value::Object(u)) = (&mut tree, &mut us_tree) {
            for part in ["chip", "fabric"] {
                if let Some(v) = u.remove(part) {
                    m.insert(part.into(), v);
                }
            }
            u.insert("chip".into(), Value::String(us_spec_name(&ut, "chip")));
            u.insert("fabric".into(), Value::String(us_spec_name(&ut, "fabric")));
            if let Some(Value::Object(so)) = m.get_mut("scale_out") {
                so.insert("switch".into(), to_tree(&switch));
            }
            m.insert("ultraserver".into(), us_tree);
        }
        Ok(SystemDoc {
            kind: DocKind::UltraCluster,
            tree,
            top,
            chip: us.chip,
            core: us.core,
            stack: us.stack,
            fabric: us.fabric,
            ultraserver: Some(Source { file: uf, text: ut }),
            switch: Some(Source { file: sf, text: st }),
            energy: None,
            applied: vec![],
        })
    }

    /// Resolves the chip's energy table (its `energy` name) into the tree under `energy`, with
    /// the HBM figures of the chip's stack preset (models/configs/mem/hbm-energy.ron) when the
    /// table gives none. A chip that names no table leaves the tree as it is.
    fn attach_energy(mut self) -> Result<SystemDoc, String> {
        // A fabric alone names its table in the fabric file; a system with a chip, in the chip's.
        let (chip_src, part) = match (&self.chip, &self.fabric) {
            (Some(c), _) => (c, "chip"),
            (None, Some(f)) if self.kind == DocKind::Fabric => (f, "fabric"),
            _ => return Ok(self),
        };
        let chip = self.tree.get("chip");
        let name = self.tree.get(part).and_then(|c| c.get("energy")).and_then(Value::as_str).unwrap_or_default();
        let name = name.to_string();
        if name.is_empty() {
            return Ok(self);
        }
        let at = |m: String| {
            let (line, col) = crate::located::line_col(&chip_src.text, chip_src.text.find("energy:").unwrap_or(0));
            format!("{}:{line}:{col}: energy: {m}", chip_src.file)
        };
        let (file, text) = if let Some(t) = energy::builtin(&name) {
            (format!("{name}.ron{BUILT_IN}"), t.to_string())
        } else if name.ends_with(".ron") || name.contains('/') {
            let dir = if chip_src.file.ends_with(BUILT_IN) { None } else { Path::new(&chip_src.file).parent() };
            let path = dir.map_or_else(|| Path::new(&name).to_path_buf(), |d| d.join(&name));
            crate::located::read_ron_file(&path).map_err(|e| at(e.message))?
        } else {
            let known: Vec<&str> = energy::BUILTIN.iter().map(|(n, _)| *n).collect();
            return Err(at(format!("unknown energy table {name:?} (known: {}; or a .ron file)", known.join(", "))));
        };
        let mut table: EnergyTable = crate::located::from_ron(&file, &text).map_err(|e| e.to_string())?;
        if table.hbm_energy.is_none() && chip.is_some() {
            // The stack as the tree holds it: its fields (named by their `name`), or a name.
            let preset = chip
                .map(|c| &c["hbm"]["preset"])
                .and_then(|p| p.as_str().or_else(|| p["name"].as_str()))
                .unwrap_or_default();
            table.hbm_energy = trnsim_mem::hbm::energy::EnergyTable::builtin().stacks.get(preset).cloned();
            if table.hbm_energy.is_none() {
                // Not a silent zero: the reports would count no HBM energy.
                warn_once(&at(format!(
                    "HBM stack {preset:?} has no energy figures in hbm-energy.ron: its HBM energy counts as 0 (give `hbm_energy` in table {name:?})"
                )));
            }
        }
        if let Value::Object(m) = &mut self.tree {
            m.insert("energy".into(), to_tree(&table));
        }
        self.energy = Some(Source { file, text });
        Ok(self)
    }

    /// The chip's energy table with the overrides, checked (errors located in its file and
    /// naming the `--set` that gave a value); None when the chip names none.
    pub fn energy(&self) -> Result<Option<EnergyTable>, String> {
        let (Some(src), Some(v)) = (&self.energy, self.tree.get("energy")) else { return Ok(None) };
        let t: EnergyTable = serde_json::from_value(v.clone()).map_err(|e| format!("{}: energy: {e}", src.file))?;
        energy::check(&src.file, &src.text, t).map(Some).map_err(|e| {
            let field = e.field.trim_start_matches("energy.").to_string();
            self.annotate("energy", e.to_string(), &field)
        })
    }

    /// What the file describes.
    pub fn kind(&self) -> DocKind {
        self.kind
    }

    /// The system's name (the top-level `name` field).
    pub fn name(&self) -> String {
        let n = match self.kind {
            DocKind::Chip => &self.tree["chip"]["name"],
            DocKind::Fabric => &self.tree["fabric"]["name"],
            DocKind::UltraServer | DocKind::UltraCluster => &self.tree["name"],
        };
        n.as_str().unwrap_or("(unnamed)").to_string()
    }

    /// The file the system was read from.
    pub fn file(&self) -> &str {
        &self.top.file
    }

    /// Every file on disk the system was read from, with the part it gave (`system`, `chip`,
    /// `core`, `hbm stack`, `fabric`, `ultraserver`, `switch`): the inputs a run's outputs must
    /// not overwrite. Built-in presets are left out.
    pub fn files(&self) -> Vec<(&'static str, std::path::PathBuf)> {
        let parts = [
            ("system", Some(&self.top)),
            ("chip", self.chip.as_ref()),
            ("core", self.core.as_ref()),
            ("hbm stack", self.stack.as_ref()),
            ("fabric", self.fabric.as_ref()),
            ("ultraserver", self.ultraserver.as_ref()),
            ("switch", self.switch.as_ref()),
            ("energy", self.energy.as_ref()),
        ];
        let mut out: Vec<(&'static str, std::path::PathBuf)> = Vec::new();
        for (part, src) in parts {
            let Some(src) = src.filter(|s| !s.file.ends_with(BUILT_IN)) else { continue };
            if !out.iter().any(|(_, p)| p.as_os_str() == src.file.as_str()) {
                out.push((part, src.file.clone().into()));
            }
        }
        out
    }

    /// Every path that names a value (lists of numbers also by element), sorted.
    pub fn paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        leaf_paths(&self.tree, String::new(), &mut out);
        out.sort();
        out
    }

    /// The value at a concrete path, as text (for reports of what a sweep changed).
    pub fn get(&self, path: &str) -> Option<String> {
        let segs = parse_path(path).ok()?;
        let mut v = &self.tree;
        for s in &segs {
            v = match s {
                Seg::Key(k) => v.get(k)?,
                Seg::Index(i) => v.get(*i)?,
                Seg::All => return None,
            };
        }
        Some(match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    }

    /// Applies one `PATH=VALUE` override (as given to `--set`). Errors are one line naming
    /// the override: an unknown path lists the nearest valid paths; a value of the wrong type
    /// says which type the field takes.
    pub fn set(&mut self, assignment: &str) -> Result<(), String> {
        self.set_from("--set", assignment)
    }

    /// [`SystemDoc::set`] for an assignment that came from another flag (`--sweep`): errors
    /// name that flag.
    pub fn set_from(&mut self, flag: &str, assignment: &str) -> Result<(), String> {
        let flag = format!("{flag} {assignment}");
        let (path, value) = assignment
            .split_once('=')
            .ok_or_else(|| format!("{flag}: expected PATH=VALUE (e.g. chip.hbm.stacks=2)"))?;
        let path = path.trim();
        let targets = self.targets(path).map_err(|m| format!("{flag}: {m}"))?;
        let before = self.tree.clone();
        for t in &targets {
            let slot = pointer_mut(&mut self.tree, t).ok_or_else(|| format!("{flag}: {path}: no such field"))?;
            *slot = typed_value(slot, value).map_err(|m| format!("{flag}: {}: {m}", show(t)))?;
        }
        if let Err(m) = self.typecheck() {
            self.tree = before;
            return Err(format!("{flag}: {m}"));
        }
        let far: Vec<(String, String)> = targets
            .iter()
            .filter_map(|t| {
                let (old, new) = (pointer(&before, t)?, pointer(&self.tree, t)?);
                far_from(old, new).map(|m| (show(t), m))
            })
            .collect();
        let far = far.first().map(|(at, m)| {
            let more = if far.len() > 1 { format!(" (and {} more fields)", far.len() - 1) } else { String::new() };
            format!("{flag}: {at} {m}{more}; the run goes on")
        });
        self.applied.push(Applied { flag, paths: targets.iter().map(|t| show(t)).collect(), far });
        Ok(())
    }

    /// The concrete paths `path` names (an alias, a shortened path or `[*]` may name several).
    fn targets(&self, path: &str) -> Result<Vec<Vec<Seg>>, String> {
        if let Some((_, expansions)) = ALIASES.iter().find(|(a, _)| *a == path) {
            for e in expansions.iter() {
                if let Ok(t) = targets_in(&self.tree, e) {
                    return Ok(t);
                }
            }
            return Err(format!("{path}: this system has none of {}", expansions.join(", ")));
        }
        targets_in(&self.tree, path)
    }

    /// Each part read back as its typed spec: a value of the wrong type fails here.
    fn typecheck(&self) -> Result<(), String> {
        let field = |e: serde_json::Error| format!("{}", e).replace(" at line 0 column 0", "");
        if let Some(c) = self.tree.get("chip").filter(|_| self.chip.is_some()) {
            // The core and stack first: read inside the chip (an untagged name-or-description)
            // their errors would only say that neither matched.
            if let Some(core) = c.get("core").filter(|v| v.is_object()) {
                serde_json::from_value::<trnsim_core::spec::CoreSpec>(core.clone())
                    .map_err(|e| format!("chip.core: {}", field(e)))?;
            }
            if let Some(stack) = c.get("hbm").and_then(|h| h.get("preset")).filter(|v| v.is_object()) {
                serde_json::from_value::<trnsim_mem::hbm::presets::StackSpec>(stack.clone())
                    .map_err(|e| format!("chip.hbm.preset: {}", field(e)))?;
            }
            serde_json::from_value::<ChipSpec>(c.clone()).map_err(field)?;
        }
        if let Some(f) = self.tree.get("fabric").filter(|_| self.fabric.is_some()) {
            serde_json::from_value::<TopologySpec>(f.clone()).map_err(field)?;
        }
        if let Some(e) = self.tree.get("energy").filter(|_| self.energy.is_some()) {
            serde_json::from_value::<EnergyTable>(e.clone()).map_err(|e| format!("energy: {}", field(e)))?;
        }
        if self.kind == DocKind::UltraServer {
            self.ultraserver_spec()?;
        }
        if self.kind == DocKind::UltraCluster {
            self.cluster_specs()?;
        }
        Ok(())
    }

    /// An UltraCluster's own spec (the switch by name), its UltraServer's and its switch's.
    fn cluster_specs(&self) -> Result<(UltraClusterSpec, UltraServerSpec, ScaleOutSwitchSpec), String> {
        let e = |e: serde_json::Error| e.to_string().replace(" at line 0 column 0", "");
        let sw = self.tree.get("scale_out").and_then(|s| s.get("switch")).cloned().unwrap_or(Value::Null);
        let switch: ScaleOutSwitchSpec =
            serde_json::from_value(sw.clone()).map_err(|x| format!("scale_out.switch: {}", e(x)))?;
        let us = self.tree.get("ultraserver").cloned().unwrap_or(Value::Null);
        let us: UltraServerSpec = serde_json::from_value(us).map_err(|x| format!("ultraserver: {}", e(x)))?;
        let mut t = self.tree.clone();
        if let Value::Object(m) = &mut t {
            m.remove("chip");
            m.remove("fabric");
            m.remove("energy");
            m.insert("ultraserver".into(), Value::String(us.name.clone()));
            if let Some(Value::Object(so)) = m.get_mut("scale_out") {
                so.insert("switch".into(), sw.get("name").cloned().unwrap_or(Value::Null));
            }
        }
        let spec: UltraClusterSpec = serde_json::from_value(t).map_err(e)?;
        Ok((spec, us, switch))
    }

    fn ultraserver_spec(&self) -> Result<UltraServerSpec, String> {
        let mut t = self.tree.clone();
        if let Value::Object(m) = &mut t {
            let name = |v: &Value| v.get("name").cloned().unwrap_or(Value::Null);
            let (c, f) = (name(&m["chip"]), name(&m["fabric"]));
            m.remove("energy");
            m.insert("chip".into(), c);
            m.insert("fabric".into(), f);
        }
        serde_json::from_value::<UltraServerSpec>(t).map_err(|e| e.to_string().replace(" at line 0 column 0", ""))
    }

    /// `e` (an error of the part whose fields are under `prefix`) with the overrides that
    /// touched it named.
    fn annotate(&self, prefix: &str, e: String, field: &str) -> String {
        let full = if prefix.is_empty() { field.to_string() } else { format!("{prefix}.{field}") };
        let exact: Vec<&str> = self
            .applied
            .iter()
            .filter(|a| a.paths.iter().any(|p| p == &full || p.starts_with(&format!("{full}["))))
            .map(|a| a.flag.as_str())
            .collect();
        if !exact.is_empty() {
            return format!("{e} (the value of {})", exact.join(", "));
        }
        let all: Vec<&str> = self.applied.iter().map(|a| a.flag.as_str()).collect();
        if all.is_empty() {
            e
        } else {
            format!("{e} (with {})", all.join(", "))
        }
    }

    /// Validates the system with its overrides: the same checks as the files alone, every
    /// error located in the file the field was read from. A cluster is checked for the
    /// packet-level network ([`SystemDoc::resolve_for`]).
    pub fn resolve(&self) -> Result<Resolved, String> {
        self.resolve_for(cluster::Level::Packet)
    }

    /// [`SystemDoc::resolve`] with a cluster checked within the limits of the network `level`
    /// (the flow-level network takes far larger clusters).
    pub fn resolve_for(&self, level: cluster::Level) -> Result<Resolved, String> {
        let r = self.resolve_checked(level)?;
        for w in self.applied.iter().filter_map(|a| a.far.as_deref()) {
            warn_once(w);
        }
        Ok(r)
    }

    fn resolve_checked(&self, level: cluster::Level) -> Result<Resolved, String> {
        let energy = self.energy()?.map(std::sync::Arc::new);
        let chip = match (&self.chip, self.tree.get("chip")) {
            (Some(src), Some(v)) => {
                let spec: ChipSpec = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
                let checked =
                    chip_spec::check_with_parts(&src.file, &src.text, spec, part(&self.core), part(&self.stack));
                let mut c = checked.map_err(|e| {
                    let field = e.field.clone();
                    self.annotate("chip", e.to_string(), &field)
                })?;
                c.energy = energy;
                Some(c)
            }
            _ => None,
        };
        let fabric = match (&self.fabric, self.tree.get("fabric")) {
            (Some(src), Some(v)) => {
                let spec: TopologySpec = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
                let checked = topo::spec::check(&src.file, &src.text, spec).map_err(|e| {
                    let field = e.field.clone();
                    self.annotate("fabric", e.to_string(), &field)
                })?;
                Some(checked)
            }
            _ => None,
        };
        match (self.kind, chip, fabric) {
            (DocKind::Chip, Some(c), _) => Ok(Resolved::Chip(Box::new(c))),
            (DocKind::Fabric, _, Some(f)) => {
                let t =
                    Topology::build(&f).map_err(|e| self.annotate("fabric", format!("{}: {e}", self.top.file), ""))?;
                Ok(Resolved::Fabric(Box::new(t)))
            }
            (DocKind::UltraServer, Some(c), Some(f)) => {
                let spec = self.ultraserver_spec()?;
                let u = ultraserver::check_parts(&self.top.file, &self.top.text, spec, c, f).map_err(|e| {
                    let field = e.field.clone();
                    self.annotate("", e.to_string(), &field)
                })?;
                Ok(Resolved::UltraServer(Box::new(u)))
            }
            (DocKind::UltraCluster, Some(c), Some(f)) => {
                let (spec, us_spec, sw_spec) = self.cluster_specs()?;
                let (us_src, sw_src) = match (&self.ultraserver, &self.switch) {
                    (Some(u), Some(s)) => (u, s),
                    _ => return Err(format!("{}: incomplete system", self.top.file)),
                };
                let u = ultraserver::check_parts(&us_src.file, &us_src.text, us_spec, c, f).map_err(|e| {
                    let field = e.field.clone();
                    self.annotate("ultraserver", e.to_string(), &field)
                })?;
                let sw = cluster::check_switch(&sw_src.file, &sw_src.text, sw_spec).map_err(|e| {
                    let field = e.field.clone();
                    self.annotate("scale_out.switch", e.to_string(), &field)
                })?;
                let cl = cluster::check_for(&self.top.file, &self.top.text, spec, u, sw, level).map_err(|e| {
                    let field = e.field.clone();
                    self.annotate("", e.to_string(), &field)
                })?;
                Ok(Resolved::UltraCluster(Box::new(cl)))
            }
            _ => Err(format!("{}: incomplete system", self.top.file)),
        }
    }
}

/// A part's (file, text), to locate its errors.
fn part(p: &Option<Source>) -> Option<(&str, &str)> {
    p.as_ref().map(|s| (s.file.as_str(), s.text.as_str()))
}

/// The value of the top-level `key: "name"` of an UltraServer file (its chip or fabric name).
fn us_spec_name(text: &str, key: &str) -> String {
    crate::located::from_ron::<UltraServerSpec>("", text)
        .map(|s| if key == "chip" { s.chip } else { s.fabric })
        .unwrap_or_default()
}

/// The concrete paths `path` names in `tree`; an unknown path names the nearest valid ones.
fn targets_in(tree: &Value, path: &str) -> Result<Vec<Vec<Seg>>, String> {
    let segs = parse_path(path).map_err(|m| suggest::clip(&m))?;
    let mut out = Vec::new();
    resolve(tree, &segs, Vec::new(), &mut out).map_err(|why| {
        let mut all = suggest::tree_paths(tree);
        all.extend(ALIASES.iter().filter(|(_, e)| e.iter().any(|p| resolves(tree, p))).map(|(a, _)| a.to_string()));
        let near: Vec<String> = suggest::paths(path, &all, 3)
            .into_iter()
            .map(|s| Some(suggest::with_indices(&s, path)).filter(|c| resolves(tree, c)).unwrap_or(s))
            .collect();
        format!("unknown path {}: {} (nearest: {})", suggest::clip(path), suggest::clip(&why), near.join(", "))
    })?;
    if out.is_empty() {
        return Err(format!("{path}: names no value"));
    }
    Ok(out)
}

/// Whether `path` names a value in `tree`.
fn resolves(tree: &Value, path: &str) -> bool {
    let mut out = Vec::new();
    parse_path(path).is_ok_and(|segs| resolve(tree, &segs, Vec::new(), &mut out).is_ok() && !out.is_empty())
}

/// Applies `PATH=VALUE` to any serializable document `tree` (a workload, say) with the rules of
/// [`SystemDoc::set`]: the same paths, the value typed by the one it replaces. `flag` names the
/// option in errors. Returns the concrete paths written. The caller reads the tree back into
/// its type and validates it.
pub fn set_in(tree: &mut Value, flag: &str, assignment: &str) -> Result<Vec<String>, String> {
    let flag = format!("{flag} {assignment}");
    let (path, value) = assignment.split_once('=').ok_or_else(|| format!("{flag}: expected PATH=VALUE"))?;
    let path = path.trim();
    let targets = targets_in(tree, path).map_err(|m| format!("{flag}: {m}"))?;
    let mut next = tree.clone();
    for t in &targets {
        let slot = pointer_mut(&mut next, t).ok_or_else(|| format!("{flag}: {path}: no such field"))?;
        *slot = typed_value(slot, value).map_err(|m| format!("{flag}: {}: {m}", show(t)))?;
    }
    *tree = next;
    Ok(targets.iter().map(|t| show(t)).collect())
}

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
    All,
}

fn show(segs: &[Seg]) -> String {
    let mut s = String::new();
    for g in segs {
        match g {
            Seg::Key(k) if s.is_empty() => s.push_str(k),
            Seg::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
            Seg::All => s.push_str("[*]"),
        }
    }
    s
}

fn parse_path(path: &str) -> Result<Vec<Seg>, String> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (name, mut rest) = part.split_once('[').map_or((part, ""), |(n, r)| (n, r));
        if name.is_empty() && out.is_empty() && rest.is_empty() {
            return Err(format!("{path:?}: empty path"));
        }
        if !name.is_empty() {
            match name.parse::<usize>() {
                Ok(i) => out.push(Seg::Index(i)),
                Err(_) if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                    out.push(Seg::Key(name.into()))
                }
                Err(_) => return Err(format!("{path:?}: {name:?} is not a field name")),
            }
        }
        while !rest.is_empty() {
            let (idx, after) = rest.split_once(']').ok_or_else(|| format!("{path:?}: `[` without `]`"))?;
            out.push(match idx {
                "*" => Seg::All,
                i => Seg::Index(i.parse().map_err(|_| format!("{path:?}: [{i}] is not an index (a number or *)"))?),
            });
            rest = after.strip_prefix('[').unwrap_or(after);
            if !after.is_empty() && !after.starts_with('[') {
                return Err(format!("{path:?}: unexpected {after:?} after ]"));
            }
        }
    }
    Ok(out)
}

/// The concrete paths under `v` that `segs` name, appended to `out`; `at` is the path to `v`.
fn resolve(v: &Value, segs: &[Seg], at: Vec<Seg>, out: &mut Vec<Vec<Seg>>) -> Result<(), String> {
    let Some((first, rest)) = segs.split_first() else {
        out.push(at);
        return Ok(());
    };
    let here = |at: &Vec<Seg>| if at.is_empty() { "the top level".to_string() } else { show(at) };
    match (first, v) {
        (Seg::Key(k), Value::Object(m)) => {
            if let Some(child) = m.get(k) {
                let mut a = at.clone();
                a.push(first.clone());
                return resolve(child, rest, a, out);
            }
            let mut found = Vec::new();
            find_key(v, k, at.clone(), &mut found, 4);
            match found.len() {
                1 => {
                    let a = found.remove(0);
                    let child = lookup(v, &a[at.len()..]).ok_or("internal path")?;
                    resolve(child, rest, a, out)
                }
                0 => Err(format!("{} has no field {k:?}", here(&at))),
                _ => Err(format!(
                    "{k:?} is ambiguous under {} ({})",
                    here(&at),
                    found.iter().map(|p| show(p)).collect::<Vec<_>>().join(", ")
                )),
            }
        }
        (Seg::Index(i), Value::Array(xs)) => {
            let child = xs.get(*i).ok_or_else(|| format!("{} has {} elements, no [{i}]", here(&at), xs.len()))?;
            let mut a = at;
            a.push(Seg::Index(*i));
            resolve(child, rest, a, out)
        }
        (Seg::All, Value::Array(xs)) => {
            for (i, child) in xs.iter().enumerate() {
                let mut a = at.clone();
                a.push(Seg::Index(i));
                resolve(child, rest, a, out)?;
            }
            Ok(())
        }
        (Seg::Key(k), _) => Err(format!("{} is not a struct (no field {k:?})", here(&at))),
        (_, _) => Err(format!("{} is not a list", here(&at))),
    }
}

/// Paths to fields named `k` reachable from `v` through struct fields only (no lists), at most
/// `depth` levels down.
fn find_key(v: &Value, k: &str, at: Vec<Seg>, found: &mut Vec<Vec<Seg>>, depth: usize) {
    let Value::Object(m) = v else { return };
    if depth == 0 {
        return;
    }
    for (name, child) in m {
        let mut a = at.clone();
        a.push(Seg::Key(name.clone()));
        if name == k {
            found.push(a);
        } else {
            find_key(child, k, a, found, depth - 1);
        }
    }
}

fn lookup<'a>(v: &'a Value, segs: &[Seg]) -> Option<&'a Value> {
    segs.iter().try_fold(v, |v, s| match s {
        Seg::Key(k) => v.get(k),
        Seg::Index(i) => v.get(*i),
        Seg::All => None,
    })
}

fn pointer_mut<'a>(v: &'a mut Value, segs: &[Seg]) -> Option<&'a mut Value> {
    segs.iter().try_fold(v, |v, s| match s {
        Seg::Key(k) => v.get_mut(k),
        Seg::Index(i) => v.get_mut(*i),
        Seg::All => None,
    })
}

fn leaf_paths(v: &Value, at: String, out: &mut Vec<String>) {
    let join = |k: &str| if at.is_empty() { k.to_string() } else { format!("{at}.{k}") };
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                leaf_paths(c, join(k), out);
            }
        }
        Value::Array(xs) if xs.iter().any(|x| x.is_object()) => {
            for (i, c) in xs.iter().enumerate() {
                leaf_paths(c, format!("{at}[{i}]"), out);
            }
        }
        _ => out.push(at),
    }
}

/// `text` read as the type of the value it replaces.
/// How far an override may move a value from the one it replaces (the preset's, which is
/// documented with its source) before a warning says so: two orders of magnitude.
pub const FAR_FACTOR: f64 = 100.0;

/// The value at `path` in `tree`.
fn pointer<'a>(tree: &'a Value, path: &[Seg]) -> Option<&'a Value> {
    path.iter().try_fold(tree, |v, s| match (s, v) {
        (Seg::Key(k), Value::Object(m)) => m.get(k),
        (Seg::Index(i), Value::Array(xs)) => xs.get(*i),
        _ => None,
    })
}

/// A value's magnitude: a number as is, a time in picoseconds, a frequency in hertz.
fn magnitude(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s
            .parse::<trnsim_kernel::Dur>()
            .map(|d| d.as_ps() as f64)
            .or_else(|_| s.parse::<trnsim_kernel::Frequency>().map(|f| f.as_hz() as f64))
            .ok(),
        _ => None,
    }
}

/// When `new` is more than [`FAR_FACTOR`] times larger or smaller than `old` (both positive),
/// the words saying so.
fn far_from(old: &Value, new: &Value) -> Option<String> {
    let (o, n) = (magnitude(old)?, magnitude(new)?);
    if !(o > 0.0 && n > 0.0) {
        return None;
    }
    let ratio = n / o;
    let shown = |v: &Value| v.as_str().map_or(v.to_string(), str::to_string);
    let (how, x) = if ratio >= 1.0 { ("above", ratio) } else { ("below", 1.0 / ratio) };
    (x > FAR_FACTOR).then(|| {
        format!("is {}, {x:.0}x {how} the {} it replaces (far outside its typical range)", shown(new), shown(old))
    })
}

/// Prints `warning: {m}` on standard error once per process (a sweep sets the same value on
/// every point's copy).
fn warn_once(m: &str) {
    static SEEN: std::sync::Mutex<std::collections::BTreeSet<String>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if seen.insert(m.to_string()) {
        eprintln!("warning: {}", suggest::clip(m));
    }
}

fn typed_value(old: &Value, text: &str) -> Result<Value, String> {
    let t = text.trim();
    let number = |t: &str| -> Result<Value, String> {
        let f: f64 = t.parse().map_err(|_| format!("{t:?} is not a number (the field is a number)"))?;
        serde_json::Number::from_f64(f).map(Value::Number).ok_or_else(|| format!("{t:?} is not a finite number"))
    };
    match old {
        Value::Number(n) if n.is_u64() || n.is_i64() => {
            if let Ok(u) = t.parse::<u64>() {
                Ok(Value::from(u))
            } else if let Ok(i) = t.parse::<i64>() {
                Ok(Value::from(i))
            } else {
                Err(format!("{t:?} is not an integer (the field is a whole number)"))
            }
        }
        Value::Number(_) => number(t),
        Value::Bool(_) => t.parse::<bool>().map(Value::Bool).map_err(|_| format!("{t:?} is not true or false")),
        Value::String(_) => Ok(Value::String(text.to_string())),
        Value::Array(_) | Value::Object(_) => {
            ron::from_str::<Value>(t).map_err(|e| format!("{t:?} is not a RON value of that shape: {}", e.code))
        }
        Value::Null => Ok(t
            .parse::<u64>()
            .map(Value::from)
            .or_else(|_| number(t))
            .or_else(|_| t.parse::<bool>().map(Value::Bool))
            .unwrap_or_else(|_| Value::String(text.to_string()))),
    }
}

pub mod suggest;
#[cfg(test)]
mod tests;
