//! The generated Rust wrapper of a model: typed port accessors, the `Verilated` impl (ports by
//! index, VCD, public signals, cover counts, assertion messages) over the shim's C functions.

use crate::ports::Port;
use crate::{probe, Model, Reset};
use std::fmt::Write as _;

/// The reset as the wrapper declares it: the declared one, else a `rst` input (synchronous,
/// active-high, trnsim's convention), else none.
pub(crate) fn reset_of(m: &Model, ports: &[Port]) -> Option<Reset> {
    m.reset.clone().or_else(|| ports.iter().any(|p| p.name == "rst" && p.input).then(|| Reset::sync_high("rst")))
}

pub(crate) fn shim_cpp(m: &Model, prefix: &str, ports: &[Port], covers: &[probe::CoverPoint]) -> String {
    let n = &m.name;
    let mut ptrs = String::new();
    for (i, p) in ports.iter().enumerate() {
        // An unpacked array's elements are contiguous from its address (VlWide's words are its
        // only member), so its address is its first element's.
        let expr = if p.words > 0 && p.dims.is_empty() {
            format!("s->top->{}.data()", p.name)
        } else {
            format!("&s->top->{}", p.name)
        };
        writeln!(ptrs, "    out[{i}] = (void*){expr};").unwrap();
    }
    include_str!("model_shim.cpp")
        .replace("@PREFIX@", prefix)
        .replace("@M@", n)
        .replace("@TOP@", &m.top)
        .replace("@PORT_PTRS@", &ptrs)
        .replace("@COVER_BODY@", &probe::cover_code(covers).0)
}

/// A plain port's typed accessors (appended to `acc`) and its `set_u128` arm (inputs) and
/// `get_u128` expression.
fn plain_accessors(acc: &mut String, i: usize, p: &Port) -> (Option<String>, String) {
    let (name, rty, width) = (&p.name, p.elem_ty(), p.elem_width);
    let wide = p.words > 0;
    let mut set = None;
    if p.input {
        let body = if wide {
            format!("let d = self.ptrs[{i}] as *mut u32; for (k, w) in v.iter().enumerate() {{ unsafe {{ *d.add(k) = w & word_mask({width}, k) }} }}")
        } else {
            let m = if rty == "u64" { format!("mask({width})") } else { format!("(mask({width}) as {rty})") };
            format!("unsafe {{ *(self.ptrs[{i}] as *mut {rty}) = v & {m} }}")
        };
        let arg = if wide { format!("&{rty}") } else { rty.clone() };
        writeln!(acc, "    /// Sets input `{name}` ({width} bits; bits above are ignored).\n    #[inline]\n    pub fn set_{name}(&mut self, v: {arg}) {{ {body} }}").unwrap();
        set = Some(if wide {
            format!("self.set_{name}(&u128_to_words(v))")
        } else {
            format!("self.set_{name}(v as {rty})")
        });
    }
    let body = if wide {
        format!("let d = self.ptrs[{i}] as *const u32; let mut v = [0u32; {}]; for (k, w) in v.iter_mut().enumerate() {{ *w = unsafe {{ *d.add(k) }} }} v", p.words)
    } else {
        format!("unsafe {{ *(self.ptrs[{i}] as *const {rty}) }}")
    };
    writeln!(
        acc,
        "    /// Reads port `{name}` ({width} bits).\n    #[inline]\n    pub fn {name}(&self) -> {rty} {{ {body} }}"
    )
    .unwrap();
    let get = if wide { format!("words_to_u128(&self.{name}())") } else { format!("self.{name}() as u128") };
    (set, get)
}

/// An unpacked array port's accessors (`[element; N]`, elements in Verilator's storage order)
/// and its `u128` packing: element k at bits `k*W ..` (the whole array fits 128 bits: checked).
fn array_accessors(acc: &mut String, i: usize, p: &Port) -> (Option<String>, String) {
    let (name, ety, w, words, n) = (&p.name, p.elem_ty(), p.elem_width, p.words as usize, p.elems());
    let wide = words > 0;
    let dims: Vec<String> = p.dims.iter().map(|d| format!("[{d}]")).collect();
    let what = format!("unpacked array {} of {w}-bit elements", dims.join(""));
    let mut set = None;
    if p.input {
        let body = if wide {
            format!("let d = self.ptrs[{i}] as *mut u32; for (k, e) in v.iter().enumerate() {{ for (j, x) in e.iter().enumerate() {{ unsafe {{ *d.add(k * {words} + j) = x & word_mask({w}, j) }} }} }}")
        } else {
            let m = if ety == "u64" { format!("mask({w})") } else { format!("(mask({w}) as {ety})") };
            format!("let d = self.ptrs[{i}] as *mut {ety}; for (k, e) in v.iter().enumerate() {{ unsafe {{ *d.add(k) = e & {m} }} }}")
        };
        writeln!(acc, "    /// Sets input `{name}`, an {what} (bits above each element's width are ignored).\n    #[inline]\n    pub fn set_{name}(&mut self, v: &[{ety}; {n}]) {{ {body} }}").unwrap();
        let conv = if wide { "u128_to_words(x)".to_string() } else { format!("x as {ety}") };
        set = Some(format!(
            "{{ let e: [{ety}; {n}] = std::array::from_fn(|k| {{ let x = v >> (k as u32 * {w}); {conv} }}); self.set_{name}(&e) }}"
        ));
    }
    let body = if wide {
        format!("std::array::from_fn(|k| std::array::from_fn(|j| unsafe {{ *(self.ptrs[{i}] as *const u32).add(k * {words} + j) }}))")
    } else {
        format!("std::array::from_fn(|k| unsafe {{ *(self.ptrs[{i}] as *const {ety}).add(k) }})")
    };
    writeln!(
        acc,
        "    /// Reads port `{name}`, an {what}.\n    #[inline]\n    pub fn {name}(&self) -> [{ety}; {n}] {{ {body} }}"
    )
    .unwrap();
    let conv = if wide { "words_to_u128(e)" } else { "*e as u128" };
    let get = format!("self.{name}().iter().enumerate().fold(0u128, |a, (k, e)| a | ({conv}) << (k as u32 * {w}))");
    (set, get)
}

pub(crate) fn rust_wrapper(m: &Model, ports: &[Port], covers: &[probe::CoverPoint]) -> String {
    let (n, ty) = (&m.name, &m.rust_name);
    let mut s = String::new();
    let mut infos = String::new();
    let mut acc = String::new();
    let (mut set_arms, mut get_arms, mut get_all) = (String::new(), String::new(), String::new());
    for (i, p) in ports.iter().enumerate() {
        // The clock is `clk` at the Rust interface, whatever its RTL name.
        let info_name = if p.name == m.clock { "clk" } else { p.name.as_str() };
        writeln!(infos, "        PortInfo {{ name: {info_name:?}, input: {}, width: {} }},", p.input, p.width())
            .unwrap();
        let (set, get) =
            if p.dims.is_empty() { plain_accessors(&mut acc, i, p) } else { array_accessors(&mut acc, i, p) };
        if let Some(set) = set {
            writeln!(set_arms, "            {i} => {set},").unwrap();
        }
        writeln!(get_arms, "            {i} => {get},").unwrap();
        writeln!(get_all, "        out[{i}] = {get};").unwrap();
    }
    let params: Vec<String> = m.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    write!(
        s,
        r#"
mod ffi_{n} {{
    use std::os::raw::{{c_char, c_int, c_void}};
    extern "C" {{
        pub fn vlt_{n}_new() -> *mut c_void;
        pub fn vlt_{n}_delete(m: *mut c_void);
        pub fn vlt_{n}_eval(m: *mut c_void) -> c_int;
        pub fn vlt_{n}_ports(m: *mut c_void, out: *mut *mut c_void);
        pub fn vlt_{n}_trace_open(m: *mut c_void, path: *const c_char) -> c_int;
        pub fn vlt_{n}_trace_dump(m: *mut c_void, t: u64);
        pub fn vlt_{n}_trace_close(m: *mut c_void);
        pub fn vlt_{n}_signal_count(m: *mut c_void) -> c_int;
        pub fn vlt_{n}_signal(m: *mut c_void, i: c_int, name: *mut *const c_char, data: *mut *mut c_void,
            width: *mut u32, bytes: *mut u32, rw: *mut c_int);
        pub fn vlt_{n}_cover_counts(m: *mut c_void, out: *mut u32, n: c_int);
    }}
}}

/// Verilated `{top}` ({params}) from {srcs}. `!Send`: create and use it on one thread.
pub struct {ty} {{
    h: std::ptr::NonNull<std::os::raw::c_void>,
    ptrs: [*mut std::os::raw::c_void; {np}],
    time: u64,
    tracing: bool,
    signals: Vec<SignalInfo>,
    sig_ptrs: Vec<(*mut std::os::raw::c_void, u32)>,
    notes: Vec<String>,
    _not_send: std::marker::PhantomData<*mut ()>,
}}

impl {ty} {{
{acc}}}

impl Verilated for {ty} {{
    const TOP: &'static str = {top:?};
    const RESET: Option<ResetInfo> = {reset};
    const ASSERTIONS: &'static [(&'static str, u32, &'static str)] = ASSERTIONS;
    const COVERS: &'static [(&'static str, &'static str, u32)] = &[
{cover_table}    ];
    const PORTS: &'static [PortInfo] = &[
{infos}    ];
    fn new() -> Result<Self, VltError> {{
        let h = std::ptr::NonNull::new(unsafe {{ ffi_{n}::vlt_{n}_new() }}).ok_or_else(VltError::last)?;
        let mut ptrs = [std::ptr::null_mut(); {np}];
        unsafe {{ ffi_{n}::vlt_{n}_ports(h.as_ptr(), ptrs.as_mut_ptr()) }};
        let count = unsafe {{ ffi_{n}::vlt_{n}_signal_count(h.as_ptr()) }};
        let (mut signals, mut sig_ptrs) = (Vec::new(), Vec::new());
        for i in 0..count {{
            let (mut name, mut data) = (std::ptr::null(), std::ptr::null_mut());
            let (mut width, mut bytes, mut rw) = (0u32, 0u32, 0);
            unsafe {{ ffi_{n}::vlt_{n}_signal(h.as_ptr(), i, &mut name, &mut data, &mut width, &mut bytes, &mut rw) }};
            let name = unsafe {{ std::ffi::CStr::from_ptr(name) }}.to_string_lossy().into_owned();
            signals.push(SignalInfo {{ name, width, writable: rw != 0 }});
            sig_ptrs.push((data, bytes));
        }}
        Ok(Self {{ h, ptrs, time: 0, tracing: false, signals, sig_ptrs, notes: Vec::new(), _not_send: std::marker::PhantomData }})
    }}
    #[inline]
    fn eval(&mut self) -> Result<(), VltError> {{
        match unsafe {{ ffi_{n}::vlt_{n}_eval(self.h.as_ptr()) }} {{
            0 => Ok(()),
            1 => Err(VltError::Finish),
            2 => {{ take_notes(&mut self.notes); Ok(()) }}
            _ => {{ take_notes(&mut self.notes); Err(VltError::last()) }}
        }}
    }}
    fn signals(&self) -> &[SignalInfo] {{ &self.signals }}
    fn peek_signal(&self, i: usize) -> u128 {{
        let (p, bytes) = self.sig_ptrs[i];
        unsafe {{ read_signal(p, bytes, self.signals[i].width) }}
    }}
    fn poke_signal(&mut self, i: usize, v: u128) {{
        let (p, bytes) = self.sig_ptrs[i];
        unsafe {{ write_signal(p, bytes, self.signals[i].width, v) }}
    }}
    fn cover_counts(&self, out: &mut [u32]) {{
        let n = out.len().min(Self::COVERS.len()) as std::os::raw::c_int;
        unsafe {{ ffi_{n}::vlt_{n}_cover_counts(self.h.as_ptr(), out.as_mut_ptr(), n) }}
    }}
    fn take_notes(&mut self) -> Vec<String> {{ std::mem::take(&mut self.notes) }}
    #[inline]
    fn set_clk(&mut self, v: bool) {{ {ty}::set_{clock}(self, v as u8) }}
    #[inline]
    fn set_u128(&mut self, port: usize, v: u128) {{
        match port {{
{set_arms}            _ => panic!("{{}}: port {{port}} is not an input", Self::TOP),
        }}
    }}
    #[inline]
    fn get_u128(&self, port: usize) -> u128 {{
        match port {{
{get_arms}            _ => panic!("{{}}: no port {{port}}", Self::TOP),
        }}
    }}
    #[inline]
    fn get_all(&self, out: &mut [u128]) {{
        let out = &mut out[..{np}];
{get_all}    }}
    fn open_vcd(&mut self, path: &std::path::Path) -> Result<(), VltError> {{
        let c = path_cstring(path)?;
        match unsafe {{ ffi_{n}::vlt_{n}_trace_open(self.h.as_ptr(), c.as_ptr()) }} {{
            0 => {{ self.tracing = true; Ok(()) }}
            -1 => Err(VltError::TraceAlreadyOpen),
            _ => Err(VltError::TraceOpen(path.display().to_string())),
        }}
    }}
    #[inline]
    fn dump(&mut self, t: u64) {{
        if self.tracing {{ unsafe {{ ffi_{n}::vlt_{n}_trace_dump(self.h.as_ptr(), t) }} }}
    }}
    fn close_vcd(&mut self) {{
        if self.tracing {{ unsafe {{ ffi_{n}::vlt_{n}_trace_close(self.h.as_ptr()) }}; self.tracing = false; }}
    }}
    #[inline]
    fn time(&self) -> u64 {{ self.time }}
    #[inline]
    fn set_time(&mut self, t: u64) {{ self.time = t }}
}}

impl Drop for {ty} {{
    fn drop(&mut self) {{ unsafe {{ ffi_{n}::vlt_{n}_delete(self.h.as_ptr()) }} }}
}}
"#,
        top = m.top,
        clock = m.clock,
        reset = match reset_of(m, ports) {
            Some(r) => format!(
                "Some(ResetInfo {{ name: {:?}, active_low: {}, asynchronous: {} }})",
                r.name, r.active_low, r.asynchronous
            ),
            None => "None".into(),
        },
        params = if params.is_empty() { "defaults".into() } else { params.join(", ") },
        srcs = m
            .sources
            .iter()
            .map(|p| p.file_name().unwrap_or_default().to_string_lossy())
            .collect::<Vec<_>>()
            .join(", "),
        np = ports.len(),
        cover_table = probe::cover_code(covers).1,
    )
    .unwrap();
    s
}
