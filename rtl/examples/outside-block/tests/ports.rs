//! Port shapes a user's RTL brings: an unpacked array port (one packed port at the Rust
//! interface), a 128-bit one (the widest the harness carries), a port too wide (refused at its
//! declaration before any C++ is compiled), and an immediate assertion in `always_comb` (named
//! by its label, with the RTL's history). RTL tests are ignored without the RTL, never passed.

use std::process::Command;
use trnsim_outside_block::{LaneMax, LaneMaxStimulus, BLOCKS};
use trnsim_rtl::diff::{diff, DiffConfig, DiffError};
use trnsim_rtl::registry::DiffRequest;

fn entry(name: &str) -> &'static trnsim_rtl::registry::BlockEntry {
    BLOCKS.iter().find(|b| b.name == name).unwrap()
}

#[test]
fn lane_max_model_picks_the_lowest_of_equal_lanes() {
    use trnsim_outside_block::lane_max::port as P;
    use trnsim_rtl::block::Block;
    let mut m = LaneMax::new(4);
    m.set_input(P::RST, 0);
    m.set_input(P::VALID_I, 1);
    m.set_input(P::LANES_I, 0x07_09_09_03); // lanes 0..3: 3, 9, 9, 7
    m.posedge().unwrap();
    assert_eq!((m.output(P::VALID_O), m.output(P::MAX_O), m.output(P::IDX_O)), (1, 9, 1));
    // Against itself: deterministic, and the stimulus reaches every bin.
    let cfg =
        DiffConfig { coverage: trnsim_outside_block::lane_max::lane_max_cover(16), ..DiffConfig::every_cycle(50_000) };
    let r = diff(|| LaneMax::new(16), || Ok(LaneMax::new(16)), || LaneMaxStimulus::new(2, 16), &cfg).unwrap();
    let (cov, _) = r.coverage.unwrap();
    assert_eq!(cov.percent(), 100.0, "{}", cov.table(20));
}

#[test]
#[cfg_attr(not(trnsim_rtl), ignore = "needs the RTL: build with --features trnsim-rtl/rtl (Verilator 5)")]
fn unpacked_array_ports_diff_clean_up_to_128_bits() {
    for name in ["oot_lane_max4", "oot_lane_max16"] {
        let r = entry(name).diff(&DiffRequest::new(100_000, 3)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (model, rtl) = r.coverage.expect("coverage");
        assert_eq!(model, rtl, "{name}");
        assert_eq!(model.percent(), 100.0, "{name}: {}", model.table(20));
    }
    #[cfg(trnsim_rtl)]
    {
        use trnsim_outside_block::models::{OotLaneMax16, OotLaneMax4};
        use verilator_sys::Verilated;
        let w = |p: &[verilator_sys::PortInfo]| p.iter().find(|p| p.name == "lanes_i").map(|p| p.width);
        assert_eq!((w(OotLaneMax4::PORTS), w(OotLaneMax16::PORTS)), (Some(32), Some(128)));
        // The typed accessor is the array itself, element k = lanes_i[k].
        let mut m = OotLaneMax4::new().unwrap();
        m.set_lanes_i(&[1, 2, 3, 4]);
        assert_eq!(m.lanes_i(), [1, 2, 3, 4]);
        m.set_u128(OotLaneMax4::port("lanes_i").unwrap(), 0x0403_0201);
        assert_eq!(m.get_u128(OotLaneMax4::port("lanes_i").unwrap()), 0x0403_0201);
    }
}

#[test]
#[cfg_attr(not(trnsim_rtl), ignore = "needs the RTL: build with --features trnsim-rtl/rtl (Verilator 5)")]
fn an_immediate_assertion_in_combinational_logic_is_reported_by_its_label() {
    let e = entry("oot_lane_max4_skip_bug").diff(&DiffRequest::new(100_000, 1)).unwrap_err();
    let DiffError::Assertion(a) = &e else { panic!("expected an assertion failure, got {e}") };
    assert_eq!(a.label, "a_max_bounds_last_lane");
    assert!(a.location.starts_with("lane_max.sv:"), "{}", a.location);
    let text = e.to_string();
    assert!(text.contains("cycles (RTL side): cycle rst valid_i") && text.contains(" lanes_i"), "{text}");
}

#[test]
#[cfg_attr(not(trnsim_rtl), ignore = "needs the RTL: build with --features trnsim-rtl/rtl (Verilator 5)")]
fn ports_the_harness_cannot_carry_are_refused_at_their_declaration() {
    let Ok(vlt) = trnsim_vlt_build::find_verilator() else { panic!("the RTL build found Verilator; this must too") };
    let dir = std::env::temp_dir().join(format!("oot-ports-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sv = dir.join("wide.sv");
    std::fs::write(
        &sv,
        "module wide (\n    input  logic         clk,\n    input  logic [7:0]   lanes_i [17],\n    output logic [199:0] wide_o\n);\n    assign wide_o = '0;\nendmodule\n",
    )
    .unwrap();
    let m = trnsim_vlt_build::Model::new("oot_wide", "OotWide", "wide", [&sv]);
    let e = trnsim_vlt_build::check_model(&vlt, &m, &dir.join("obj")).unwrap_err();
    // Both, in source order, each at its declaration.
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines.len(), 2, "{e}");
    assert!(
        lines[0].starts_with(&format!(
            "{}:3:26: port lanes_i: an unpacked array [17] of 8-bit elements, 136 bits in all",
            sv.display()
        )),
        "{e}"
    );
    assert!(lines[1].starts_with(&format!("{}:4:26: port wide_o: 200 bits", sv.display())), "{e}");
    std::fs::write(&sv, "module wide (\n    input  logic         clk,\n    output logic [199:0] wide_o\n);\n    assign wide_o = '0;\nendmodule\n").unwrap();
    let e = trnsim_vlt_build::check_model(&vlt, &m, &dir.join("obj2")).unwrap_err();
    assert!(e.starts_with(&format!("{}:3:26: port wide_o: 200 bits", sv.display())), "{e}");
    // Nothing compiled: Verilator's C++ only.
    assert!(!std::fs::read_dir(dir.join("obj2")).unwrap().any(|f| f
        .unwrap()
        .path()
        .extension()
        .is_some_and(|x| x == "o")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg_attr(not(trnsim_rtl), ignore = "needs the RTL: build with --features trnsim-rtl/rtl (Verilator 5)")]
fn a_closed_pipe_ends_the_blocks_binary_quietly() {
    // `outside-block diff --list` into a pipe whose reader has gone (started after the reader
    // closed it, so the first write fails): no panic, no backtrace, killed by SIGPIPE as a
    // filter is.
    let bin = env!("CARGO_BIN_EXE_outside-block");
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("(sleep 0.3; exec '{bin}' diff --list) | (exec 0<&-; true); echo \"status ${{PIPESTATUS[0]}}\""))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "status 141", "{err}");
}
