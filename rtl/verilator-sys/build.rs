//! With feature `rtl`: verilate rtl/blocks (or `$TRNSIM_RTL_BLOCKS`, used by scripts/mutate.sh)
//! and link the models and the Verilator runtime (trnsim-vlt-build does the work);
//! `src/lib.rs` includes the generated wrappers. Without it: nothing.
use std::path::PathBuf;
use trnsim_vlt_build as vlt_build;
use vlt_build::Model;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for v in ["TRNSIM_RTL_BLOCKS", "VERILATOR", "VERILATOR_ROOT", "VLT_CACHE_DIR"] {
        println!("cargo:rerun-if-env-changed={v}");
    }
    if std::env::var_os("CARGO_FEATURE_RTL").is_none() {
        return;
    }
    // Crates of out-of-tree blocks (direct dependents) see DEP_TRNSIM_VLT_RTL=1 in their
    // build scripts: build your models, link against this runtime.
    println!("cargo:rtl=1");
    if let Err(e) = run() {
        // A message, not a panic: cargo prints it under "failed to run custom build command".
        eprintln!("error: verilator-sys (feature `rtl`): {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let vlt = vlt_build::find_verilator()?;
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").map_err(|e| e.to_string())?);
    let blocks = std::env::var_os("TRNSIM_RTL_BLOCKS").map(PathBuf::from).unwrap_or(manifest.join("../blocks"));
    let model = |name: &str, rust: &str, top: &str, src: PathBuf, params: &[(&str, u32)]| {
        params.iter().fold(Model::new(name, rust, top, [src]), |m, &(k, v)| m.param_int(k, v.into()))
    };
    let fifo = blocks.join("link_fifo.sv");
    // The crossbar arbiter: N ports, ITER iterations, MODE 0 = iSLIP, 1 = RRM.
    let arb = |name: &str, rust: &str, n: u32, iter: u32, mode: u32| {
        let params = [("N", n), ("ITER", iter), ("MODE", mode)];
        model(name, rust, "islip_arbiter", blocks.join("islip_arbiter.sv"), &params)
    };
    // The SRAM bank: WORDS words of WIDTH bits, R read ports, W write ports, REQ requesters.
    let bank = |name: &str, rust: &str, [words, width, r, w, req]: [u32; 5]| {
        let params = [("WORDS", words), ("WIDTH", width), ("R", r), ("W", w), ("REQ", req)];
        model(name, rust, "sram_bank", blocks.join("sram_bank.sv"), &params)
    };
    // The systolic tile (block 4): ROWS x COLS BF16 PEs with FP32 accumulation.
    let tile = |name: &str, rust: &str, rows: u32, cols: u32| {
        model(name, rust, "systolic_tile", blocks.join("systolic_tile.sv"), &[("ROWS", rows), ("COLS", cols)])
    };
    // The HBM bank timing FSM (block 5): a speed grade's TimingParams (trnsim-mem
    // models/mem/src/hbm/presets.rs), in CK cycles; tests/hbm_bank.rs checks these against the
    // presets.
    let hbm = |name: &str, rust: &str, t: &[(&str, u32)]| model(name, rust, "hbm_bank", blocks.join("hbm_bank.sv"), t);
    #[rustfmt::skip]
    let hbm3_6400 = [("ROW_BITS", 14), ("BL", 2), ("CWL", 10), ("RCD_RD", 31), ("RCD_WR", 15), ("RP", 26),
        ("RAS", 45), ("RC", 72), ("WR", 33), ("RTP", 9), ("CCD_S", 2), ("CCD_L", 4), ("RRD_S", 4), ("RRD_L", 5),
        ("WTR_S", 7), ("WTR_L", 10), ("RTW", 20), ("PPD", 2), ("RFC_PB", 320), ("RREFD", 8)];
    #[rustfmt::skip]
    let hbm3_5700 = [("ROW_BITS", 14), ("BL", 2), ("CWL", 9), ("RCD_RD", 28), ("RCD_WR", 14), ("RP", 24),
        ("RAS", 41), ("RC", 65), ("WR", 30), ("RTP", 9), ("CCD_S", 2), ("CCD_L", 4), ("RRD_S", 4), ("RRD_L", 5),
        ("WTR_S", 7), ("WTR_L", 9), ("RTW", 18), ("PPD", 2), ("RFC_PB", 285), ("RREFD", 8)];
    #[rustfmt::skip]
    let hbm2_2000 = [("ROW_BITS", 14), ("BL", 2), ("CWL", 5), ("RCD_RD", 14), ("RCD_WR", 12), ("RP", 14),
        ("RAS", 34), ("RC", 48), ("WR", 16), ("RTP", 5), ("CCD_S", 2), ("CCD_L", 4), ("RRD_S", 4), ("RRD_L", 6),
        ("WTR_S", 6), ("WTR_L", 8), ("RTW", 13), ("PPD", 0), ("RFC_PB", 160), ("RREFD", 8)];
    // The DMA descriptor queues (block 6): Q queues of D, start latency LAT cycles, QOS 0 round
    // robin / 1 four priority classes.
    let dmaq = |name: &str, rust: &str, [q, d, lat, qos]: [u32; 4]| {
        let params = [("Q", q), ("D", d), ("LAT", lat), ("QOS", qos)];
        model(name, rust, "dma_queue", blocks.join("dma_queue.sv"), &params)
    };
    // The link replay buffer (block 7): CAP units, SW-bit sequence numbers, DW-bit units,
    // replay timer TMO cycles.
    let replay = |name: &str, rust: &str, [cap, sw, dw, tmo]: [u32; 4]| {
        let params = [("CAP", cap), ("SW", sw), ("DW", dw), ("TMO", tmo)];
        model(name, rust, "replay_buf", blocks.join("replay_buf.sv"), &params)
    };
    // One bank of a banked SBUF / PSUM at the SRAM timing model's port boundary (block 8): N
    // request slots, G partition groups, R read and W write ports per group.
    let sbuf = |name: &str, rust: &str, [n, g, r, w]: [u32; 4]| {
        let params = [("N", n), ("G", g), ("R", r), ("W", w)];
        model(name, rust, "sbuf_bank", blocks.join("sbuf_bank.sv"), &params)
    };
    let models = [
        // The FIFO's pointers and count are public: cover points on them, peek and force.
        model("link_fifo", "LinkFifoW64D4", "link_fifo", fifo.clone(), &[("WIDTH", 64), ("DEPTH", 4)])
            .public("rd_ptr")
            .public("wr_ptr")
            .public("cnt"),
        model("link_fifo_w100_d5", "LinkFifoW100D5", "link_fifo", fifo, &[("WIDTH", 100), ("DEPTH", 5)])
            .public("rd_ptr")
            .public("wr_ptr")
            .public("cnt"),
        arb("islip_n4_i1", "IslipArbiterN4I1", 4, 1, 0),
        arb("islip_n4_i3", "IslipArbiterN4I3", 4, 3, 0),
        arb("islip_n8_i1", "IslipArbiterN8I1", 8, 1, 0),
        arb("islip_n8_i3", "IslipArbiterN8I3", 8, 3, 0),
        arb("rrm_n5_i2", "RrmArbiterN5I2", 5, 2, 1),
        arb("rrm_n8_i3", "RrmArbiterN8I3", 8, 3, 1),
        bank("sram_bank", "SramBankD64W32R2W2Q4", [64, 32, 2, 2, 4]),
        bank("sram_bank_d16_w8_r1w1_q3", "SramBankD16W8R1W1Q3", [16, 8, 1, 1, 3]),
        tile("systolic_tile", "SystolicTileR8C8", 8, 8),
        tile("systolic_tile_r3_c4", "SystolicTileR3C4", 3, 4),
        hbm("hbm_bank", "HbmBank6400", &hbm3_6400),
        hbm("hbm_bank_hbm2_2000", "HbmBank2000", &hbm2_2000),
        hbm("hbm_bank_hbm3_5700", "HbmBank5700", &hbm3_5700),
        dmaq("dma_queue", "DmaQueueQ16D4", [16, 4, 8, 0]),
        dmaq("dma_queue_q6_qos", "DmaQueueQ6D3Qos", [6, 3, 2, 1]),
        // Trn3's engine (nc-v4: 16 queues, QoS) as a running chip's swap-in binds it.
        dmaq("dma_queue_q16_qos", "DmaQueueQ16D16Qos", [16, 16, 8, 1]),
        replay("replay_buf", "ReplayBufC256", [256, 10, 16, 1000]),
        replay("replay_buf_c5", "ReplayBufC5", [5, 4, 8, 24]),
        // trnsim-mem's SBUF_NC_V4 (2R/2W per bank) and PSUM (1R/1W), 16 partition groups.
        sbuf("sbuf_bank", "SbufBankN32G16R2W2", [32, 16, 2, 2]),
        sbuf("psum_bank", "PsumBankN32G16R1W1", [32, 16, 1, 1]),
        model("finish_demo", "FinishDemo", "finish_demo", manifest.join("../blocks/test/finish_demo.sv"), &[]),
    ];
    vlt_build::build(&vlt, &models)
}
