//! trnsim-rtl's integration tests: a module per block or behaviour, linked into one test binary
//! (thirteen binaries took a link each). `cargo test -p trnsim-rtl --features rtl --test all MODULE::`
//! runs one module.
mod diff_modes;
mod dma_queue;
mod fuzz_diff;
mod fuzz_islip;
mod hbm_bank;
mod islip;
mod replay_buf;
mod rtl;
mod rtl_inside;
mod sbuf_bank;
mod sram_bank;
mod swap;
mod swap_in;
mod swap_in_dma;
mod systolic_tile;
