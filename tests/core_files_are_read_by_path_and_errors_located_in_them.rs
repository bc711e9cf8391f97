//! A chip file may name its NeuronCore by path (relative to the chip file): the core file is
//! read, checked and used (its name in reports, its clocks in the model), `trnsim describe
//! core FILE` prints it, `trnsim core --core FILE` assembles and runs a program for its array, and a
//! bad field is located in the core file, not the chip file.

use crate::common::{root, scratch, trnsim};
use trnsim_core::isa::Engine;
use trnsim_system::doc::SystemDoc;

/// A chip file beside a core file `wide.ron` (nc-v4 renamed, the vector engine at `vector`).
fn write_pair(dir: &std::path::Path, vector: &str) -> std::path::PathBuf {
    let core = std::fs::read_to_string(root().join("models/configs/core/nc-v4.ron")).unwrap();
    let core = core.replacen("name: \"nc-v4\"", "name: \"wide\"", 1).replacen(
        "vector: \"1.2GHz\"",
        &format!("vector: \"{vector}\""),
        1,
    );
    std::fs::write(dir.join("wide.ron"), core).unwrap();
    let chip = std::fs::read_to_string(root().join("models/configs/system/trn3-chip.ron")).unwrap();
    let chip = chip.replacen("core: \"nc-v4\"", "core: \"wide.ron\"", 1);
    assert!(chip.contains("wide.ron"), "trn3-chip.ron names its core as core: \"nc-v4\"");
    let path = dir.join("chip.ron");
    std::fs::write(&path, chip).unwrap();
    path
}

#[test]
fn a_core_file_beside_a_chip_file_is_the_chips_core() {
    let dir = scratch("core-file-by-path");
    let chip = write_pair(&dir, "2.4GHz");
    let sys = SystemDoc::open(chip.to_str().unwrap()).unwrap().resolve().unwrap();
    let c = sys.chip().unwrap();
    assert_eq!(c.core.name, "wide");
    assert_eq!(c.core.clock(Engine::Vector).as_hz(), 2_400_000_000);
    let out = trnsim().args(["describe", "core"]).arg(dir.join("wide.ron")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("wide: ") && text.contains("mxfp8 314.6"), "{text}");
}

#[test]
fn a_bad_field_in_a_core_file_is_located_there() {
    let dir = scratch("core-file-bad");
    let chip = write_pair(&dir, "0GHz");
    let text = std::fs::read_to_string(dir.join("wide.ron")).unwrap();
    let at = format!("wide.ron:{}:", text.lines().position(|l| l.contains("vector: \"0GHz\"")).unwrap() + 1);
    let e = SystemDoc::open(chip.to_str().unwrap()).and_then(|d| d.resolve().map(|_| ())).unwrap_err().to_string();
    assert!(e.contains(&at) && e.contains("vector: invalid quantity"), "{e}");
    let out = trnsim().args(["describe", "core"]).arg(dir.join("wide.ron")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&at) && err.contains("vector: invalid quantity"), "{err}");
}

#[test]
fn trnsim_core_runs_a_program_on_a_core_file_of_its_own_array_size() {
    let dir = scratch("core-file-256");
    let core = std::fs::read_to_string(root().join("models/configs/core/nc-v4.ron")).unwrap();
    let core = core
        .replacen("name: \"nc-v4\"", "name: \"wide-256\"", 1)
        .replace("rows: 128,", "rows: 256,")
        .replace("columns: 128,", "columns: 256,")
        .replace("        partitions: 128,", "        partitions: 256,")
        .replace("partitions_per_engine: 8,", "partitions_per_engine: 16,");
    std::fs::write(dir.join("wide.ron"), core).unwrap();
    let asm = ".engine tensor\n  ldweights sbuf[0:256] [256] bf16\n  matmul sbuf[0:256] +0x2000 [512] bf16 -> psum[0:256] bank0 +0 [512] fp32, overwrite\n";
    std::fs::write(dir.join("mm.asm"), asm).unwrap();
    let out = trnsim().arg("core").arg(dir.join("mm.asm")).arg("--core").arg(dir.join("wide.ron")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // 2 x 256 x 256 x 512 flops = 0.067 GFLOP on the 256 x 256 array.
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().any(|l| l.starts_with("nc0.tensor") && l.contains(" 0.067 ")), "{text}");
    // The default core has 128 partitions: the same program is a located error.
    let out = trnsim().arg("core").arg(dir.join("mm.asm")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("mm.asm:2:17: field `src`: partition range 0..256 exceeds 128 partitions"), "{err}");
}
