//! Model presets: published models' shapes as data (models/configs/models/*.ron, each figure
//! from the model's released config.json, keys H1.. of docs/sources.md). `trnsim workload
//! llm --model NAME|FILE` starts from one; flags override its fields.

use super::Llm;
use serde::Deserialize;
use trnsim_system::located::{from_ron, ConfigError};

/// The presets built in, by name.
pub const PRESETS: [(&str, &str); 5] = [
    ("gpt-oss-120b", include_str!("../../../configs/models/gpt-oss-120b.ron")),
    ("gpt-oss-20b", include_str!("../../../configs/models/gpt-oss-20b.ron")),
    ("llama-3.3-70b", include_str!("../../../configs/models/llama-3.3-70b.ron")),
    ("llama-3.1-405b", include_str!("../../../configs/models/llama-3.1-405b.ron")),
    ("deepseek-v3", include_str!("../../../configs/models/deepseek-v3.ron")),
];

/// A model's shape and weight formats, as a preset file holds them.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPreset {
    /// The model's name.
    pub name: String,
    /// Where the figures come from (a source key of docs/sources.md and the document).
    pub source: String,
    /// "dense" or "moe".
    pub arch: String,
    /// Transformer layers.
    pub layers: u32,
    /// Model width.
    pub hidden: u64,
    /// Query heads.
    pub heads: u64,
    /// Key/value heads.
    pub kv_heads: u64,
    /// Each head's width.
    pub head_dim: u64,
    /// MLP (or each expert's) inner width.
    pub ffn: u64,
    /// Routed experts per layer (1 for a dense model).
    pub experts: u64,
    /// Experts each token visits.
    pub top_k: u64,
    /// Shared experts per layer.
    pub shared_experts: u64,
    /// Vocabulary.
    pub vocab: u64,
    /// Sliding window in tokens (0: none).
    pub sliding_window: u64,
    /// Every this-many-th layer from layer 0 uses the window.
    pub sliding_every: u32,
    /// Gated MLP (SwiGLU).
    pub gated: bool,
    /// Format of the non-expert weights as released.
    pub weights: String,
    /// Format of the experts' weights as released.
    pub expert_weights: String,
}

impl ModelPreset {
    /// A preset by name, or a preset file (RON) by path. A file's errors are located
    /// (`file:line:col: field: message`); an unknown name is `--model NAME: ...` with the
    /// nearest presets.
    pub fn open(name_or_file: &str) -> Result<ModelPreset, String> {
        if let Some((name, text)) = PRESETS.iter().find(|(n, _)| *n == name_or_file) {
            return Self::parse(&format!("models/configs/models/{name}.ron"), text).map_err(|e| e.to_string());
        }
        let path = std::path::Path::new(name_or_file);
        if path.is_file() {
            let (file, text) = trnsim_system::located::read_ron_file(path).map_err(|e| e.to_string())?;
            return Self::parse(&file, &text).map_err(|e| e.to_string());
        }
        let names: Vec<&str> = PRESETS.iter().map(|p| p.0).collect();
        let near = trnsim_system::doc::suggest::names(name_or_file, names.iter().copied(), 2);
        let hint = match near.as_slice() {
            [] => String::new(),
            n => format!("did you mean {}? ", n.iter().map(|x| format!("`{x}`")).collect::<Vec<_>>().join(" or ")),
        };
        Err(format!(
            "--model {}: unknown model preset and no such file ({hint}presets: {})",
            trnsim_system::doc::suggest::clip(name_or_file),
            names.join(", ")
        ))
    }

    /// Parses and checks preset text named `file`.
    pub fn parse(file: &str, text: &str) -> Result<ModelPreset, ConfigError> {
        let p: ModelPreset = from_ron(file, text)?;
        let at = |key: &str, message: String| {
            let pos = text.find(&format!("{key}:")).unwrap_or(0);
            let (line, col) = trnsim_system::located::line_col(text, pos);
            ConfigError { file: file.into(), line, col, field: key.into(), message }
        };
        if p.arch != "dense" && p.arch != "moe" {
            return Err(at("arch", format!("unknown arch {:?} (allowed: dense, moe)", p.arch)));
        }
        for (key, d) in [("weights", &p.weights), ("expert_weights", &p.expert_weights)] {
            if crate::format::dtype_size(d).is_none() {
                return Err(at(key, format!("unknown dtype {d:?} (allowed: {})", crate::format::DTYPES)));
            }
        }
        // The generator's own checks, with one rank, name the rule; located at the preset.
        p.apply(Llm { tp: 1, ep: 1, dp: 1, pp: 1, ..Llm::default() }).check().map_err(|m| {
            let key = m.split_whitespace().next().unwrap_or("--layers").trim_start_matches("--").replace('-', "_");
            at(&key, m)
        })?;
        Ok(p)
    }

    /// `base` with the model's shape and formats (the layout, batch and mode kept).
    pub fn apply(&self, base: Llm) -> Llm {
        Llm {
            arch: self.arch.clone(),
            layers: self.layers,
            hidden: self.hidden,
            ffn: self.ffn,
            heads: self.heads,
            kv_heads: self.kv_heads,
            head_dim: self.head_dim,
            gated: self.gated,
            experts: self.experts,
            top_k: self.top_k,
            shared_experts: self.shared_experts,
            vocab: self.vocab,
            sliding_window: self.sliding_window,
            sliding_every: self.sliding_every,
            weights: self.weights.clone(),
            expert_weights: self.expert_weights.clone(),
            ..base
        }
    }
}
