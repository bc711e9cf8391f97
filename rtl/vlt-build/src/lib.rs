//! # trnsim-vlt-build
//!
//! Build-script helper: verilate each model, generate a flat `extern "C"` shim whose port
//! accessors are pointers into the model, compile model + shim as one translation unit and the
//! Verilator runtime once, cache everything by content hash, and emit the Rust wrappers and
//! link lines.
//!
//! verilator-sys calls [`build`] (its blocks and the Verilator runtime). A crate of its own
//! blocks, outside trnsim, calls [`build_models`] from its `build.rs` (no runtime: the one
//! verilator-sys links is shared) and includes the wrappers with
//! `verilator_sys::include_models!()`; docs/rtl.md, "A block in your own crate".
//!
//! ```no_run
//! use trnsim_vlt_build::{find_verilator, build_models, Model, Reset};
//! let m = Model::new("my_acc", "MyAcc", "acc_top", ["rtl/acc_top.sv", "rtl/acc_core.sv"])
//!     .include_dir("rtl/include")
//!     .define("ACC_STEP", "3")
//!     .param_str("MODE", "sat")
//!     .clock("clk_i")
//!     .reset(Reset::async_low("arst_ni"));
//! build_models(&find_verilator().unwrap(), &[m]).unwrap();
//! ```
#![warn(missing_docs)]

use std::collections::hash_map::DefaultHasher;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

mod ports;
mod probe;
mod profile;
mod wrapper;
use ports::Port;
pub use ports::MAX_PORT_BITS;
pub use profile::profile_advice;
use wrapper::{rust_wrapper, shim_cpp};

/// Bumped whenever the generated shim or Rust wrapper changes shape.
const GENERATOR_VERSION: u32 = 10;
const CXX_FLAGS: &[&str] = &[
    "-faligned-new",
    "-fcf-protection=none",
    "-Wno-bool-operation",
    "-Wno-sign-compare",
    "-Wno-uninitialized",
    "-Wno-unused-but-set-variable",
    "-Wno-unused-parameter",
    "-Wno-unused-variable",
    "-Wno-shadow",
    "-DVM_COVERAGE=0",
    "-DVM_SC=0",
    "-DVM_TRACE=1",
    "-DVM_TRACE_VCD=1",
    "-DVL_USER_FINISH",
    "-DVL_USER_STOP",
    "-DVL_USER_FATAL",
];

/// The Verilator found on this machine.
pub struct Verilator {
    bin: PathBuf,
    root: PathBuf,
    version: String,
}

/// Finds Verilator (`$VERILATOR` or `verilator` on PATH) and checks it is 5.x.
pub fn find_verilator() -> Result<Verilator, String> {
    let bin = env::var_os("VERILATOR").map(PathBuf::from).unwrap_or_else(|| "verilator".into());
    let out = Command::new(&bin).arg("--version").output().map_err(|e| {
        format!(
            "cannot run `{} --version` ({e}): install Verilator 5.x \
             (Debian/Ubuntu: apt-get install -y --no-install-recommends verilator) \
             or point $VERILATOR at it",
            bin.display()
        )
    })?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let version = text.split_whitespace().nth(1).unwrap_or("").to_string();
    let major: u32 = version.split('.').next().and_then(|m| m.parse().ok()).unwrap_or(0);
    if !out.status.success() || major != 5 {
        return Err(format!("`{} --version` said {text:?}: Verilator 5.x is needed (5.006 is tested)", bin.display()));
    }
    let root = match env::var_os("VERILATOR_ROOT") {
        Some(r) => PathBuf::from(r),
        None => {
            let o = Command::new(&bin).args(["--getenv", "VERILATOR_ROOT"]).output();
            let o = o.map_err(|e| format!("`verilator --getenv VERILATOR_ROOT` failed: {e}"))?;
            PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
        }
    };
    if !root.join("include/verilated.cpp").is_file() {
        return Err(format!("no include/verilated.cpp under VERILATOR_ROOT {}", root.display()));
    }
    Ok(Verilator { bin, root, version })
}

/// How a block is reset, as declared to the build (checked against the RTL's ports).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reset {
    /// The reset input's name in the RTL.
    pub name: String,
    /// Asserted at 0.
    pub active_low: bool,
    /// Takes effect without a clock edge (`always_ff @(posedge clk or negedge rst_n)`).
    pub asynchronous: bool,
}

impl Reset {
    /// Synchronous, active-high (trnsim's own blocks: `rst`).
    pub fn sync_high(name: &str) -> Reset {
        Reset { name: name.into(), active_low: false, asynchronous: false }
    }
    /// Asynchronous, active-low (`arst_n`, `rst_ni`, ...).
    pub fn async_low(name: &str) -> Reset {
        Reset { name: name.into(), active_low: true, asynchronous: true }
    }
}

/// One Verilated model: a top module of some sources with defines and parameter overrides.
pub struct Model {
    /// Model name: the C symbols' and cache entry's stem; unique in the final binary.
    pub name: String,
    /// The generated Rust type.
    pub rust_name: String,
    /// Top module.
    pub top: String,
    /// SystemVerilog sources, in the order Verilator reads them.
    pub sources: Vec<PathBuf>,
    /// `` `include `` search directories (`-I`); every file in them is part of the cache key.
    pub include_dirs: Vec<PathBuf>,
    /// `+define+NAME=VALUE` (or `+define+NAME` for an empty value).
    pub defines: Vec<(String, String)>,
    /// `-GNAME=VALUE`, VALUE in Verilator's syntax (a string parameter's value is quoted:
    /// [`Model::param_str`] does that).
    pub params: Vec<(String, String)>,
    /// The clock input in the RTL (state changes on its rising edge); at the Rust interface it
    /// is always the port `clk`.
    pub clock: String,
    /// The reset input, if the block has one (default: `rst`, synchronous active-high, when
    /// the RTL has a port of that name).
    pub reset: Option<Reset>,
    /// Internal signals made public and writable, as (module, variable); module `None` is the
    /// top. The testbench reads them (`peek`, coverage) and deposits or forces them.
    pub public: Vec<(Option<String>, String)>,
}

impl Model {
    /// A model of `top` from `sources`, clock `clk`, reset `rst` (if present), no defines or
    /// parameters.
    pub fn new<P: Into<PathBuf>>(
        name: &str,
        rust_name: &str,
        top: &str,
        sources: impl IntoIterator<Item = P>,
    ) -> Model {
        Model {
            name: name.into(),
            rust_name: rust_name.into(),
            top: top.into(),
            sources: sources.into_iter().map(Into::into).collect(),
            include_dirs: Vec::new(),
            defines: Vec::new(),
            params: Vec::new(),
            clock: "clk".into(),
            reset: None,
            public: Vec::new(),
        }
    }
    /// Makes the top module's signal `var` public and writable (Verilator's `public_flat_rw`):
    /// the testbench can read it (`peek`, cover points on it) and deposit or force it.
    /// `/*verilator public_flat_rw*/` on a declaration in the source does the same.
    pub fn public(mut self, var: &str) -> Model {
        self.public.push((None, var.into()));
        self
    }
    /// Makes signal `var` of every instance of `module` public and writable (named by its
    /// instance path below the top at run time: `u_core.acc`).
    pub fn public_in(mut self, module: &str, var: &str) -> Model {
        self.public.push((Some(module.into()), var.into()));
        self
    }
    /// Adds an `` `include `` directory.
    pub fn include_dir(mut self, dir: impl Into<PathBuf>) -> Model {
        self.include_dirs.push(dir.into());
        self
    }
    /// Adds `+define+NAME=VALUE`.
    pub fn define(mut self, name: &str, value: &str) -> Model {
        self.defines.push((name.into(), value.into()));
        self
    }
    /// Overrides an integer parameter.
    pub fn param_int(mut self, name: &str, value: i64) -> Model {
        self.params.push((name.into(), value.to_string()));
        self
    }
    /// Overrides a string parameter.
    pub fn param_str(mut self, name: &str, value: &str) -> Model {
        self.params.push((name.into(), format!("\"{value}\"")));
        self
    }
    /// Names the clock input (default `clk`).
    pub fn clock(mut self, name: &str) -> Model {
        self.clock = name.into();
        self
    }
    /// Declares the reset input.
    pub fn reset(mut self, r: Reset) -> Model {
        self.reset = Some(r);
        self
    }
}

/// Builds every model and the Verilator runtime, writes `$OUT_DIR/vlt_models.rs` and prints
/// the link lines (verilator-sys's build). Errors are messages for the user.
pub fn build(vlt: &Verilator, models: &[Model]) -> Result<(), String> {
    build_inner(vlt, models, true)
}

/// Builds `models` without the Verilator runtime (a crate depending on verilator-sys with
/// feature `rtl`, which links the runtime once for the whole binary), writes
/// `$OUT_DIR/vlt_models.rs` (include it with `verilator_sys::include_models!()`) and prints the
/// link lines. Model names must be unique in the final binary.
///
/// A crate built unoptimized (cargo's default dev profile, opt-level 0) runs a lock-step diff
/// about 8x slower than trnsim's own dev profile (opt-level 1): the build prints a cargo warning
/// saying which profile lines to add ([`profile_advice`]).
pub fn build_models(vlt: &Verilator, models: &[Model]) -> Result<(), String> {
    if let Some(w) = profile_advice(env::var("OPT_LEVEL").ok().as_deref()) {
        println!("cargo:warning={w}");
    }
    build_inner(vlt, models, false)
}

fn build_inner(vlt: &Verilator, models: &[Model], runtime: bool) -> Result<(), String> {
    let out_dir = PathBuf::from(env::var("OUT_DIR").map_err(|e| e.to_string())?);
    let cache = cache_dir(&out_dir);
    fs::create_dir_all(&cache).map_err(|e| format!("{}: {e}", cache.display()))?;
    let rt_dir = std::thread::scope(|s| {
        let rt = runtime.then(|| s.spawn(|| build_runtime(vlt, &cache)));
        let built: Vec<_> = models.iter().map(|m| s.spawn(|| build_model(vlt, m, &cache))).collect();
        let mut rust = String::new();
        let mut dirs = Vec::new();
        for h in built {
            let (dir, code) = h.join().map_err(|_| "model build thread panicked".to_string())??;
            rust.push_str(&code);
            dirs.push(dir);
        }
        let rt_dir = match rt {
            Some(rt) => Some(rt.join().map_err(|_| "runtime build thread panicked".to_string())??),
            None => None,
        };
        rust.push_str(&assertion_table(models)?);
        fs::write(out_dir.join("vlt_models.rs"), rust).map_err(|e| e.to_string())?;
        for (m, d) in models.iter().zip(&dirs) {
            println!("cargo:rustc-link-search=native={}", d.display());
            println!("cargo:rustc-link-lib=static=vlt_{}", m.name);
        }
        Ok::<_, String>(rt_dir)
    })?;
    if let Some(rt_dir) = rt_dir {
        println!("cargo:rustc-link-search=native={}", rt_dir.display());
        println!("cargo:rustc-link-lib=static=vlt_runtime");
    }
    println!("cargo:rustc-link-lib=stdc++");
    Ok(())
}

/// The files of an include directory (not recursive), sorted: part of a model's cache key.
fn include_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let rd = fs::read_dir(dir).map_err(|e| format!("include dir {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file()).collect();
    files.sort();
    Ok(files)
}

/// `ASSERTIONS`: every labelled assertion (`label: assert ...`) of the models' sources, as
/// (file name, line, label), so a failure's `file:line` names its assertion.
fn assertion_table(models: &[Model]) -> Result<String, String> {
    let mut files: Vec<&PathBuf> = models.iter().flat_map(|m| &m.sources).collect();
    files.sort();
    files.dedup();
    let mut rows = String::new();
    for f in files {
        let text = fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let name = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            let t = line.trim_start();
            let Some((label, rest)) = t.split_once(':') else { continue };
            let is_label = !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if is_label && rest.trim_start().starts_with("assert") {
                rows.push_str(&format!("    ({name:?}, {}, {label:?}),\n", i + 1));
            }
        }
    }
    Ok(format!(
        "/// Labelled assertions of the Verilated sources: (file name, line, label).\npub const ASSERTIONS: &[(&str, u32, &str)] = &[\n{rows}];\n"
    ))
}

/// `target/vlt-cache`, shared by all profiles: the ancestor of OUT_DIR holding CACHEDIR.TAG.
fn cache_dir(out_dir: &Path) -> PathBuf {
    if let Some(d) = env::var_os("VLT_CACHE_DIR") {
        return PathBuf::from(d);
    }
    let target = out_dir.ancestors().find(|a| a.join("CACHEDIR.TAG").is_file());
    target.unwrap_or(out_dir).join("vlt-cache")
}

fn hash_of(parts: &[&[u8]]) -> String {
    let mut h = DefaultHasher::new();
    GENERATOR_VERSION.hash(&mut h);
    env::var("TARGET").unwrap_or_default().hash(&mut h);
    for p in parts {
        p.hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

/// Runs `f` in a fresh temporary directory and renames it to `dir`, unless `dir` exists.
fn cached(dir: &Path, f: impl FnOnce(&Path) -> Result<(), String>) -> Result<(), String> {
    if dir.join("done").is_file() {
        return Ok(());
    }
    let tmp = dir.with_extension(format!("tmp{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
    f(&tmp)?;
    fs::write(tmp.join("done"), "").map_err(|e| e.to_string())?;
    if fs::rename(&tmp, dir).is_err() {
        let _ = fs::remove_dir_all(&tmp); // another build won the race; its copy is identical
    }
    Ok(())
}

fn compiler(vlt: &Verilator) -> cc::Build {
    let mut b = cc::Build::new();
    b.cpp(true).std("c++17").opt_level(2).debug(false).cargo_metadata(false).warnings(false);
    b.include(vlt.root.join("include")).include(vlt.root.join("include/vltstd"));
    for f in CXX_FLAGS {
        b.flag(f);
    }
    b
}

fn build_runtime(vlt: &Verilator, cache: &Path) -> Result<PathBuf, String> {
    const FILES: &[&str] = &["verilated.cpp", "verilated_threads.cpp", "verilated_vcd_c.cpp", "verilated_cov.cpp"];
    let shim = include_str!("runtime_shim.cpp");
    let dir = cache.join(format!("runtime-{}", hash_of(&[vlt.version.as_bytes(), shim.as_bytes()])));
    cached(&dir, |tmp| {
        let shim_path = tmp.join("vlt_runtime_shim.cpp");
        fs::write(&shim_path, shim).map_err(|e| e.to_string())?;
        // Assertion messages go through the shim's vlt_printf (probe.rs).
        let decl = tmp.join("vlt_printf.h");
        fs::write(&decl, "#ifdef __cplusplus\nextern \"C\"\n#endif\nvoid vlt_printf(const char* fmt, ...);\n")
            .map_err(|e| e.to_string())?;
        let mut b = compiler(vlt);
        b.flag("-DVL_PRINTF=vlt_printf").flag("-include").flag(decl.display().to_string());
        b.out_dir(tmp).file(shim_path);
        for f in FILES {
            b.file(vlt.root.join("include").join(f));
        }
        b.try_compile("vlt_runtime").map_err(|e| format!("compiling the Verilator runtime: {e}"))
    })?;
    Ok(dir)
}

/// Verilator's arguments for model `m` (the C++ prefix `prefix`), sources and output folder
/// apart.
fn verilator_args(m: &Model, prefix: &str) -> Vec<String> {
    let mut args: Vec<String> =
        ["--cc", "-O3", "--x-assign", "fast", "--x-initial", "fast"].iter().map(|s| s.to_string()).collect();
    // Assertions stay on: a failing SystemVerilog assertion stops the model (`$stop`), and the
    // diff reports it by its label (ASSERTIONS, below).
    // `--coverage-user`: `cover property` statements count (probe.rs reads the counters).
    args.extend(
        ["--assert", "--coverage-user", "-Wno-fatal", "--timescale-override", "1ns/1ns", "--trace"].map(String::from),
    );
    args.extend(["--prefix".into(), prefix.to_string(), "--top-module".into(), m.top.clone()]);
    args.extend(m.params.iter().map(|(k, v)| format!("-G{k}={v}")));
    for (k, v) in &m.defines {
        args.push(if v.is_empty() { format!("+define+{k}") } else { format!("+define+{k}={v}") });
    }
    for d in &m.include_dirs {
        args.push(format!("-I{}", d.display()));
    }
    args
}

/// Verilates `m` into `mdir` and reads and checks its ports ([`ports::check`]).
fn verilate(vlt: &Verilator, m: &Model, args: &[String], mdir: &Path) -> Result<Vec<Port>, String> {
    let mut cmd = Command::new(&vlt.bin);
    cmd.args(args).arg("--Mdir").arg(mdir);
    if let Some(cfg) = probe::write_public_config(m, mdir)? {
        cmd.arg(cfg);
    }
    cmd.args(probe::sources_with_pass_covers(m, mdir)?);
    let out = cmd.output().map_err(|e| format!("running verilator: {e}"))?;
    if !out.status.success() {
        return Err(format!("verilator failed on model {}:\n{}", m.name, String::from_utf8_lossy(&out.stderr)));
    }
    let ports = ports::parse(&mdir.join(format!("V{}.h", m.name)))?;
    ports::check(m, &ports)?;
    Ok(ports)
}

/// Verilates `m` into `work_dir` (created; Verilator's C++ is left there) and checks that the
/// harness can carry its ports, without compiling anything: what [`build_models`] does first.
/// Errors name the offending port's declaration (`file:line:col: port NAME: ...`). Returns the
/// ports the harness will see, as (name, input, width), the clock named `clk`.
pub fn check_model(vlt: &Verilator, m: &Model, work_dir: &Path) -> Result<Vec<(String, bool, u32)>, String> {
    fs::create_dir_all(work_dir).map_err(|e| format!("{}: {e}", work_dir.display()))?;
    let ports = verilate(vlt, m, &verilator_args(m, &format!("V{}", m.name)), work_dir)?;
    Ok(ports
        .iter()
        .map(|p| (if p.name == m.clock { "clk".to_string() } else { p.name.clone() }, p.input, p.width()))
        .collect())
}

fn build_model(vlt: &Verilator, m: &Model, cache: &Path) -> Result<(PathBuf, String), String> {
    let prefix = format!("V{}", m.name);
    let args = verilator_args(m, &prefix);
    let mut key: Vec<Vec<u8>> = vec![
        vlt.version.clone().into_bytes(),
        args.join(" ").into_bytes(),
        include_str!("model_shim.cpp").as_bytes().to_vec(),
    ];
    for s in &m.sources {
        println!("cargo:rerun-if-changed={}", s.display());
        key.push(fs::read(s).map_err(|e| format!("{}: {e}", s.display()))?);
    }
    for d in &m.include_dirs {
        println!("cargo:rerun-if-changed={}", d.display());
        for f in include_files(d)? {
            key.push(f.display().to_string().into_bytes());
            key.push(fs::read(&f).map_err(|e| format!("{}: {e}", f.display()))?);
        }
    }
    // The clock and reset declarations shape the wrapper; the public signals the model.
    key.push(format!("{} {:?} {:?}", m.clock, m.reset, m.public).into_bytes());
    let key_refs: Vec<&[u8]> = key.iter().map(|k| k.as_slice()).collect();
    let dir = cache.join(format!("{}-{}", m.name, hash_of(&key_refs)));
    cached(&dir, |tmp| {
        let mdir = tmp.join("obj");
        // Before any C++ is compiled: a port the harness cannot carry is a located error.
        let ports = verilate(vlt, m, &args, &mdir)?;
        let classes = fs::read_to_string(mdir.join(format!("{prefix}_classes.mk"))).map_err(|e| e.to_string())?;
        let mut all = String::new();
        for var in ["VM_CLASSES_FAST", "VM_CLASSES_SLOW", "VM_SUPPORT_FAST", "VM_SUPPORT_SLOW"] {
            for f in mk_list(&classes, var) {
                writeln!(all, "#include \"{}\"", mdir.join(format!("{f}.cpp")).display()).unwrap();
            }
        }
        let covers = probe::cover_points(&mdir, &m.top)?;
        all.push_str(&shim_cpp(m, &prefix, &ports, &covers));
        let all_path = tmp.join("vlt_all.cpp");
        fs::write(&all_path, all).map_err(|e| e.to_string())?;
        fs::write(tmp.join("wrapper.rs"), rust_wrapper(m, &ports, &covers)).map_err(|e| e.to_string())?;
        let mut b = compiler(vlt);
        b.out_dir(tmp).include(&mdir).file(&all_path);
        b.try_compile(&format!("vlt_{}", m.name)).map_err(|e| format!("compiling model {}: {e}", m.name))
    })?;
    let code = fs::read_to_string(dir.join("wrapper.rs")).map_err(|e| e.to_string())?;
    Ok((dir, code))
}

/// The names listed after `VAR +=` in a Verilator `_classes.mk`.
fn mk_list(mk: &str, var: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in mk.lines() {
        let t = line.trim();
        if t.starts_with(var) && t.contains("+=") {
            inside = true;
            continue;
        }
        if inside {
            let name = t.trim_end_matches('\\').trim();
            if name.is_empty() {
                inside = false;
            } else {
                out.push(name.to_string());
            }
        }
    }
    out
}
