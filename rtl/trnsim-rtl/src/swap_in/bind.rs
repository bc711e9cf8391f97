//! Which block an instance runs: the built-in one for its kind and size, or one named in its
//! `rtl` entry (`INSTANCE=BLOCK`), any registered block whose port boundary is the
//! adapter's (trnsim's, or a block crate's added with [`registry::add`]).
//!
//! A boundary is the ports an adapter drives and reads, by name, direction and width rule;
//! other ports of the block are left at 0 (inputs) or ignored (outputs), and the replay after
//! the run still compares every output against the block's own model. Leaves out: renaming
//! ports (a block must use the adapter's names) and parameters the ports cannot show (a link
//! FIFO shallower than the link is found by the run, at the first message it has no room
//! for).

use super::{parse_instance, Instance};
use crate::block::PortInfo;
use crate::registry::{self, BlockEntry};

/// One entry of a chip's `rtl` list: the instance, and the block named for it, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    /// The instance swapped in.
    pub instance: Instance,
    /// `BLOCK` of `INSTANCE=BLOCK` (None: the built-in block of the instance's kind and size).
    pub block: Option<String>,
}

/// Parses `INSTANCE` or `INSTANCE=BLOCK` (a block name is ASCII letters, digits and `_`);
/// None if the instance has none of the shapes of [`Instance`] or the block name is empty.
pub fn parse_binding(s: &str) -> Option<Binding> {
    match s.rsplit_once('=') {
        Some((inst, block)) => {
            let ok = !block.is_empty() && block.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            ok.then_some(())?;
            Some(Binding { instance: parse_instance(inst.trim_end())?, block: Some(block.to_string()) })
        }
        None => Some(Binding { instance: parse_instance(s)?, block: None }),
    }
}

/// The ports an adapter of `inst`'s kind uses: (name, input).
pub fn boundary(inst: &Instance) -> &'static [(&'static str, bool)] {
    match inst {
        Instance::Link(_) => &[
            ("in_valid", true),
            ("in_data", true),
            ("out_ready", true),
            ("in_ready", false),
            ("out_valid", false),
            ("out_data", false),
            ("credit_ret", false),
            ("count", false),
        ],
        Instance::HbmBank(_) => &[("cmd", true), ("row", true), ("violation", false), ("vcode", false)],
        Instance::SramBank(_) => &[
            ("req_valid", true),
            ("req_write", true),
            ("req_first", true),
            ("req_last", true),
            ("grant", false),
            ("stalls", false),
        ],
        Instance::DmaQueue(_) => &super::dma::BOUNDARY,
    }
}

/// What kind of block `inst` takes, for messages.
pub fn kind(inst: &Instance) -> &'static str {
    match inst {
        Instance::Link(_) => "a link receive FIFO",
        Instance::HbmBank(_) => "an HBM bank timing FSM",
        Instance::SramBank(_) => "an SRAM bank arbiter",
        Instance::DmaQueue(_) => "a DMA engine's queue arbiter",
    }
}

/// Whether `entry`'s ports (its model's, which its RTL shares) are `inst`'s boundary: every
/// port of [`boundary`] present with its direction, and the widths the adapter needs (a
/// link's `in_data` as wide as its `out_data`; an HBM bank's `cmd` wide enough for every
/// opcode of `model::HBM_OPCODES` and a 1-bit `violation`; an SRAM bank's `grant` one bit per `req_valid` slot and `req_first` of
/// at least 4 bits per slot). The error names the first port that differs.
pub fn check_boundary(inst: &Instance, entry: &BlockEntry) -> Result<(), String> {
    let model = (entry.make_model)();
    let ports = model.ports();
    let find = |n: &str| ports.iter().find(|p| p.name == n);
    for &(name, input) in boundary(inst) {
        let dir = if input { "an input" } else { "an output" };
        match find(name) {
            Some(p) if p.input == input => {}
            Some(_) => return Err(format!("block {}: port {name} is not {dir}", entry.name)),
            None => return Err(format!("block {} has no port {name} ({dir})", entry.name)),
        }
    }
    let w = |n: &str| find(n).map_or(0, |p: &PortInfo| p.width);
    let rule = match inst {
        Instance::DmaQueue(_) => {
            let q = w("ready");
            (q == 0 || q > 64 || w("empty_ret") != q || w("start") != 1 || w("start_last") != 1 || w("count") % q.max(1) != 0)
                .then(|| {
                    format!(
                        "ready {q} bits (1..=64 queues), empty_ret {} (one per queue), start and start_last {} and {} (1), count {} (a field per queue)",
                        w("empty_ret"),
                        w("start"),
                        w("start_last"),
                        w("count")
                    )
                })
        }
        Instance::Link(_) => (w("in_data") != w("out_data")).then(|| {
            format!("in_data is {} bits and out_data {}: a FIFO passes its data through", w("in_data"), w("out_data"))
        }),
        Instance::HbmBank(_) => {
            let need = usize::BITS - (crate::model::HBM_OPCODES.len() - 1).leading_zeros();
            (w("cmd") < need || w("violation") != 1)
                .then(|| format!("cmd is {} bits (at least {need}) and violation {} (1)", w("cmd"), w("violation")))
        }
        Instance::SramBank(_) => {
            let slots = w("req_valid");
            (slots == 0 || w("grant") != slots || w("req_first") < 4 * slots || w("req_last") != w("req_first")).then(
                || {
                    format!(
                        "req_valid {slots} bits, grant {} (one per slot), req_first {} and req_last {} (at least 4 per slot)",
                        w("grant"),
                        w("req_first"),
                        w("req_last")
                    )
                },
            )
        }
    };
    match rule {
        Some(m) => Err(format!("block {}: {m}", entry.name)),
        None => Ok(()),
    }
}

/// The registered block `name` for `inst`, if its ports are `inst`'s boundary; the error
/// says why not and lists the registered blocks that would fit.
pub fn bound_block(inst: &Instance, name: &str) -> Result<&'static BlockEntry, String> {
    let fits = || {
        let ok: Vec<&str> =
            registry::all().into_iter().filter(|e| check_boundary(inst, e).is_ok()).map(|e| e.name).collect();
        if ok.is_empty() {
            "none".to_string()
        } else {
            ok.join(", ")
        }
    };
    let Some(entry) = registry::find(name) else {
        return Err(format!("no block called {name:?} (blocks with {}'s ports: {})", kind(inst), fits()));
    };
    check_boundary(inst, entry)
        .map(|()| entry)
        .map_err(|e| format!("{e}: not {}'s ports (blocks with them: {})", kind(inst), fits()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bindings_parse_with_or_without_a_block() {
        let b = parse_binding("nc0.tensor.sem -> nc0.sem.tensor.op=my_fifo").unwrap();
        assert_eq!(b.instance, Instance::Link("nc0.tensor.sem -> nc0.sem.tensor.op".into()));
        assert_eq!(b.block.as_deref(), Some("my_fifo"));
        assert_eq!(parse_binding("hbm0.ch0.pc0.bank3").unwrap().block, None);
        for bad in ["hbm0.ch0.pc0.bank3=", "hbm0.ch0.pc0.bank3=a-b", "nope=link_fifo", "=link_fifo"] {
            assert_eq!(parse_binding(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_block_binds_only_where_its_ports_are_the_boundary() {
        let link = Instance::Link("a.out -> b.in".into());
        let bank = parse_instance("hbm0.ch0.pc0.bank1").unwrap();
        let sbuf = parse_instance("nc0.sbuf.bank0").unwrap();
        assert_eq!(bound_block(&link, "link_fifo_w100_d5").unwrap().name, "link_fifo_w100_d5");
        assert_eq!(bound_block(&bank, "hbm_bank_hbm2_2000").unwrap().name, "hbm_bank_hbm2_2000");
        assert_eq!(bound_block(&sbuf, "psum_bank").unwrap().name, "psum_bank");
        let e = bound_block(&link, "hbm_bank").unwrap_err();
        assert!(
            e.starts_with("block hbm_bank has no port in_valid (an input): not a link receive FIFO's ports"),
            "{e}"
        );
        assert!(e.contains("(blocks with them: link_fifo, link_fifo_w100_d5)"), "{e}");
        let dma = parse_instance("nc0.dma.engine3").unwrap();
        assert_eq!(bound_block(&dma, "dma_queue_q6_qos").unwrap().name, "dma_queue_q6_qos");
        let e = bound_block(&dma, "sbuf_bank").unwrap_err();
        assert!(
            e.starts_with("block sbuf_bank has no port enq_valid (an input): not a DMA engine's queue arbiter's ports"),
            "{e}"
        );
        assert!(e.contains("(blocks with them: dma_queue, dma_queue_q6_qos, dma_queue_q16_qos)"), "{e}");
        let e = bound_block(&bank, "nope").unwrap_err();
        assert!(e.starts_with("no block called \"nope\" (blocks with an HBM bank timing FSM's ports: hbm_bank"), "{e}");
    }
}
